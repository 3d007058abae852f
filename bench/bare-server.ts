/**
 * The baseline: `node:http` + a `pg` Pool doing the same work per request as the app's
 * `GET /v1/admin/clinic/users/:id` — SHA-256 of X-User-Token, the same authentication query as
 * `Auth.authenticate`, the admin role check, the same SELECT as `AdminUsers.show` (= the one of
 * `UsersRepo.findById`: live users only), and the same JSON body. bench/run.ts checks that bodies
 * stay byte-identical, so a change to the endpoint's shape shows up there first. No framework, no schemas, no spans, no logs: what the hardware and driver allow.
 *
 * Env: DATABASE_URL (required), PORT (default 3001), HOST (default 127.0.0.1), DB_POOL_SIZE
 * (default 10, as the app). Prints `listening on <port>` once ready; SIGTERM/SIGINT close it.
 */
import { createHash } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"
import { userColumns } from "../src/Services/Accounts/UsersRepo.js"

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

// Same text as Sessions.lookup (Auth.authenticate) and AdminUsers.show / UsersRepo.findById.
const authQuery = `WITH token AS (
            SELECT user_id, (last_used_at <= $2 OR created_at <= $3) AS expired
            FROM user_tokens WHERE token_hash = $1
          ), expired AS (
            DELETE FROM user_tokens WHERE token_hash = $1 AND (last_used_at <= $2 OR created_at <= $3)
          ), touched AS (
            UPDATE user_tokens SET last_used_at = $5 WHERE token_hash = $1
              AND last_used_at < $4 AND last_used_at > $2 AND created_at > $3
          )
          SELECT u.id, u.role FROM token t JOIN users u ON u.id = t.user_id
          WHERE NOT t.expired AND u.status = 'active' AND u.deleted_at IS NULL`
/** The lookup's time parameters at the default limits (30 minutes idle, 12 hours, touch each minute). */
const sessionTimes = () => {
  const now = Date.now()
  return [new Date(now - 30 * 60_000), new Date(now - 12 * 3_600_000), new Date(now - 60_000), new Date(now)]
}
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
  const callers = await pool.query<{ id: number; role: string }>(authQuery, [hash, ...sessionTimes()])
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

const server = createServer((req, res) => {
  const url = req.url ?? "/"
  const match = req.method === "GET" ? path.exec(url) : null
  let work: Promise<void>
  if (match) {
    const token = req.headers["x-user-token"]
    work = showUser(Array.isArray(token) ? token[0] : token, match[1]!, res)
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
