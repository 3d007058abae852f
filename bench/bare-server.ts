/**
 * The bare floor: `node:http` + a `pg` Pool answering what `npm run bench` times — `GET /health`,
 * `GET /v1/clinic/patients/{id}` and `POST /v1/clinic/patients` with the statements of
 * ./floor-statements.ts — and, for bench/ecm-events.ts, `GET /v1/admin/clinic/users/:id`. For that one it does the same work per request as the app's — SHA-256 of X-User-Token, the same authentication query as
 * `Auth.authenticate`, the admin role check, the same SELECT as `AdminUsers.show` (= the one of
 * `UsersRepo.findById`: live users only), and the same JSON body. bench/run.ts checks that bodies
 * stay byte-identical, so a change to the endpoint's shape shows up there first. No framework, no schemas, no spans, no logs: what the hardware and driver allow.
 *
 * Env: DATABASE_URL (required), PORT (default 3001), HOST (default 127.0.0.1), DB_POOL_SIZE
 * (default 10, as the app). Prints `listening on <port>` once ready; SIGTERM/SIGINT close it.
 */
import { createHash } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { userColumns } from "../src/Services/Accounts/UsersRepo.js"
import { auditInsert, isStaffRole, patientInsert, patientLoad, type PatientRow, sessionTimes, tokenLookup } from "./floor-statements.js"

const databaseUrl = process.env.DATABASE_URL
if (!databaseUrl) {
  console.error("DATABASE_URL is required")
  process.exit(2)
}
const port = Number(process.env.PORT ?? 3001)
const host = process.env.HOST ?? "127.0.0.1"
const poolSize = Number(process.env.DB_POOL_SIZE ?? 10)

// Same driver settings as src/Layers/Database.ts `pgClientLayer` (pool size, idle defaults).
const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize, application_name: "care-bench-bare" })

// The token lookup is Sessions.lookup's (./floor-statements.ts); the user load AdminUsers.show's / UsersRepo.findById's.
const userQuery = `SELECT ${userColumns} FROM users WHERE id = $1 AND deleted_at IS NULL`

interface UserRow {
  readonly id: number
  readonly email: string
  readonly first_name: string
  readonly last_name: string
  readonly phone: string | null
  readonly date_of_birth: string | null
  readonly language: string
  readonly role: string
  readonly status: string
  readonly clinical: boolean
  readonly confirmed: boolean
  readonly last_login: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const unauthorized = { errors: "You are not authorized to perform this action." }
const path = /^\/v1\/admin\/clinic\/users\/([^/?]+)(?:\?.*)?$/

const showUser = async (token: string | undefined, rawId: string, res: ServerResponse) => {
  if (!token || token.length > 256) return send(res, 401, unauthorized)
  const hash = createHash("sha256").update(token, "utf8").digest()
  const callers = await pool.query<{ id: number; role: string }>(tokenLookup, [hash, ...sessionTimes()])
  const caller = callers.rows[0]
  if (!caller) return send(res, 401, unauthorized)
  if (caller.role !== "admin") return send(res, 403, { errors: "Admin access required" })
  const id = Number(rawId)
  if (!/^\d+$/.test(rawId) || !Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647) {
    return send(res, 422, { errors: { id: ["is invalid"] } })
  }
  const rows = await pool.query<UserRow>(userQuery, [id])
  const row = rows.rows[0]
  if (!row) return send(res, 404, { errors: "User not found" })
  send(res, 200, {
    user: {
      id: row.id,
      email: row.email,
      first_name: row.first_name,
      last_name: row.last_name,
      phone: row.phone,
      date_of_birth: row.date_of_birth,
      language: row.language,
      role: row.role,
      active: row.status === "active",
      clinical: row.clinical,
      confirmed: row.confirmed,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      status: row.status,
      last_login: row.last_login === null ? null : row.last_login.toISOString(),
      patient: null
    }
  })
}

const patientPath = /^\/v1\/clinic\/patients\/([^/?]+)(?:\?.*)?$/

const toPatient = (row: PatientRow) => ({
  id: row.id,
  first_name: row.first_name,
  last_name: row.last_name,
  date_of_birth: row.date_of_birth,
  gender: row.gender,
  phone: row.phone,
  email: row.email,
  address: row.address,
  city: row.city,
  state: row.state,
  zip: row.zip,
  language: row.language,
  member_id: row.member_id,
  active: row.active,
  user_id: row.user_id,
  provider_id: row.provider_id,
  provider: row.provider_id === null || row.provider_first_name === null
    ? null
    : { id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name ?? "" },
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

/** The signed-in caller, or undefined when the 401 was sent. */
const authenticate = async (req: IncomingMessage, res: ServerResponse) => {
  const header = req.headers["x-user-token"]
  const token = Array.isArray(header) ? header[0] : header
  if (!token || token.length > 256) return void send(res, 401, unauthorized)
  const hash = createHash("sha256").update(token, "utf8").digest()
  const callers = await pool.query<{ id: number; role: string }>(tokenLookup, [hash, ...sessionTimes()])
  const caller = callers.rows[0]
  if (!caller) return void send(res, 401, unauthorized)
  return caller
}

const showPatient = async (req: IncomingMessage, rawId: string, res: ServerResponse) => {
  const caller = await authenticate(req, res)
  if (!caller) return
  const id = Number(rawId)
  if (!/^\d+$/.test(rawId) || !Number.isSafeInteger(id) || id < 1 || id > 2_147_483_647) {
    return send(res, 422, { errors: { id: ["is not a number"] } })
  }
  if (!isStaffRole(caller.role)) return send(res, 404, { errors: "Patient not found" })
  const rows = await pool.query<PatientRow>(patientLoad, [id])
  const row = rows.rows[0]
  if (!row) return send(res, 404, { errors: "Patient not found" })
  send(res, 200, { patient: toPatient(row) })
}

const readJson = (req: IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (error) {
        reject(error)
      }
    })
    req.on("error", reject)
  })

/** The bench's create body only: names and date of birth (anything else is not this floor's job). */
const createPatient = async (req: IncomingMessage, res: ServerResponse) => {
  const body = await readJson(req) as { patient?: { first_name?: string; last_name?: string; date_of_birth?: string } }
  const caller = await authenticate(req, res)
  if (!caller) return
  if (!isStaffRole(caller.role)) return send(res, 403, { errors: "Staff access required" })
  const input = body.patient ?? {}
  const inserted = await pool.query<{ id: number }>(patientInsert, [input.first_name?.trim(), input.last_name?.trim(), input.date_of_birth])
  const id = inserted.rows[0]!.id
  await pool.query(auditInsert, [caller.id, "patient.create", "patient", id, null, new Date()])
  const rows = await pool.query<PatientRow>(patientLoad, [id])
  send(res, 201, { patient: toPatient(rows.rows[0]!) })
}

const server = createServer((req, res) => {
  const url = req.url ?? "/"
  const match = req.method === "GET" ? path.exec(url) : null
  const patient = req.method === "GET" ? patientPath.exec(url) : null
  let work: Promise<void>
  if (match) {
    const token = req.headers["x-user-token"]
    work = showUser(Array.isArray(token) ? token[0] : token, match[1]!, res)
  } else if (patient) {
    work = showPatient(req, patient[1]!, res)
  } else if (req.method === "POST" && url === "/v1/clinic/patients") {
    work = createPatient(req, res)
  } else if (req.method === "GET" && url === "/health") {
    work = pool.query("SELECT 1").then(() => send(res, 200, { status: "ok", database: "ok" }))
  } else {
    send(res, 404, { errors: "Route not found" })
    return
  }
  work.catch((error: unknown) => {
    console.error("bare-server: request failed:", error instanceof Error ? error.message : error)
    if (!res.headersSent) send(res, 500, { errors: ["Internal server error"] })
  })
})
server.keepAliveTimeout = 5_000

const shutdown = () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)

server.listen(port, host, () => {
  console.log(`listening on ${port}`)
})
