/**
 * Bench data: N fake users (default 10,000) with realistic-looking fields, inserted with
 * multi-row INSERTs through `pg`. Nobody real: names come from small word lists, emails are
 * `user{n}@bench.example`, phones are in the fictional 555-01xx range. One known bench admin gets
 * a real scrypt hash (so it can sign in); everyone else shares a constant dummy hash.
 *
 * Standalone: `DATABASE_URL=postgres://… npx tsx bench/generate.ts [--count 10000] [--seed 1]`
 * (the schema must exist: start the app once against that database so it runs the migrations).
 */
import { Effect } from "effect"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import { hashPassword } from "../src/Services/Accounts/Passwords.js"

export interface GenerateOptions {
  /** How many ordinary users to insert (the bench admin comes on top). */
  readonly count?: number
  /** Seed of the pseudo-random generator, so two runs produce the same rows. */
  readonly seed?: number
  /** Rows per INSERT statement. */
  readonly batchSize?: number
  readonly adminEmail?: string
  readonly adminPassword?: string
}

export interface GenerateResult {
  readonly adminEmail: string
  readonly adminPassword: string
  readonly adminId: number
  /** Ids of every row inserted (admin included), ascending. */
  readonly userIds: ReadonlyArray<number>
  readonly elapsedMs: number
}

export const defaultAdminEmail = "admin@bench.example"
export const defaultAdminPassword = "bench-admin-password"

/** Not a hash of anything: no ordinary bench user can sign in. */
const dummyPasswordHash = "scrypt$16384$8$1$YmVuY2gtZHVtbXktc2FsdA==$YmVuY2gtZHVtbXkta2V5LW5vdC1hLXJlYWwtaGFzaA=="

const firstNames = [
  "Avery", "Blake", "Casey", "Dana", "Emery", "Finley", "Gray", "Harper", "Indy", "Jordan",
  "Kai", "Logan", "Morgan", "Noel", "Oakley", "Parker", "Quinn", "Reese", "Sage", "Taylor",
  "Umi", "Val", "Wren", "Xen", "Yael", "Zion"
] as const
const lastNames = [
  "Alder", "Birch", "Cedar", "Dune", "Elm", "Fern", "Glen", "Heath", "Ivy", "Juniper",
  "Kestrel", "Linden", "Maple", "North", "Oak", "Pine", "Quarry", "River", "Stone", "Thorn",
  "Upland", "Vale", "Willow", "Yarrow"
] as const
const languages = [["en", 0.7], ["es", 0.22], ["vi", 0.04], ["zh", 0.04]] as const
const roles = [["parent", 0.8], ["provider", 0.1], ["supervisor", 0.04], ["support", 0.03], ["billing", 0.02], ["admin", 0.01]] as const
const statuses = [["active", 0.85], ["inactive", 0.06], ["pending", 0.05], ["archived", 0.03], ["suspended", 0.01]] as const

/** mulberry32: small, fast, good enough for fake data. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const columns = [
  "email", "password_hash", "first_name", "last_name", "phone", "date_of_birth", "language", "role",
  "status", "clinical", "confirmed", "last_login", "created_at", "updated_at"
] as const
type Row = readonly [string, string, string, string, string | null, string | null, string, string, string, boolean, boolean, Date | null, Date, Date]

const dayMs = 86_400_000

const makeRow = (n: number, random: () => number, now: number): Row => {
  const pick = <T>(list: ReadonlyArray<T>): T => list[Math.floor(random() * list.length)]!
  const weighted = (list: ReadonlyArray<readonly [string, number]>): string => {
    let r = random()
    for (const [value, weight] of list) {
      if ((r -= weight) < 0) return value
    }
    return list[0]![0]
  }
  const role = weighted(roles)
  const status = weighted(statuses)
  const createdAt = new Date(now - Math.floor(random() * 730 * dayMs))
  const updatedAt = new Date(Math.min(now, createdAt.getTime() + Math.floor(random() * 120 * dayMs)))
  const lastLogin = status === "active" && random() < 0.75
    ? new Date(Math.min(now, createdAt.getTime() + Math.floor(random() * 700 * dayMs)))
    : null
  const birthYear = role === "parent" ? 1965 + Math.floor(random() * 40) : 1960 + Math.floor(random() * 40)
  const dateOfBirth = random() < 0.9
    ? `${birthYear}-${String(1 + Math.floor(random() * 12)).padStart(2, "0")}-${String(1 + Math.floor(random() * 28)).padStart(2, "0")}`
    : null
  const phone = random() < 0.85 ? `+1${pick(["212", "310", "415", "503", "617", "702"])}55501${String(Math.floor(random() * 100)).padStart(2, "0")}` : null
  return [
    `user${n}@bench.example`,
    dummyPasswordHash,
    pick(firstNames),
    pick(lastNames),
    phone,
    dateOfBirth,
    weighted(languages),
    role,
    status,
    role !== "parent" && random() < 0.6,
    random() < 0.92,
    lastLogin,
    createdAt,
    updatedAt
  ]
}

const insertRows = async (client: pg.ClientBase, rows: ReadonlyArray<Row>): Promise<Array<number>> => {
  const values: Array<unknown> = []
  const tuples = rows.map((row) => {
    const placeholders = row.map((value) => {
      values.push(value)
      return `$${values.length}`
    })
    return `(${placeholders.join(", ")})`
  })
  const result = await client.query<{ id: number }>(
    `INSERT INTO users (${columns.join(", ")}) VALUES ${tuples.join(", ")} RETURNING id`,
    values
  )
  return result.rows.map((r) => r.id)
}

/** Inserts the bench admin and `count` users in one transaction, then refreshes planner statistics. */
export const generateUsers = async (databaseUrl: string, options: GenerateOptions = {}): Promise<GenerateResult> => {
  const count = options.count ?? 10_000
  const batchSize = Math.max(1, Math.min(options.batchSize ?? 1_000, Math.floor(65_535 / columns.length)))
  const adminEmail = options.adminEmail ?? defaultAdminEmail
  const adminPassword = options.adminPassword ?? defaultAdminPassword
  const random = prng(options.seed ?? 1)
  const started = performance.now()
  const now = Date.now()

  const adminHash = await Effect.runPromise(hashPassword(adminPassword))
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "care-bench-generate" })
  // A dropped connection (e.g. the database dropped under us on Ctrl-C) fails the pending query;
  // without a listener it would also crash the process.
  client.on("error", () => undefined)
  await client.connect()
  try {
    await client.query("BEGIN")
    const admin = await client.query<{ id: number }>(
      `INSERT INTO users (email, password_hash, first_name, last_name, language, role, status, confirmed)
       VALUES ($1, $2, 'Bench', 'Admin', 'en', 'admin', 'active', true) RETURNING id`,
      [adminEmail, adminHash]
    )
    const adminId = admin.rows[0]!.id
    const userIds: Array<number> = [adminId]
    for (let start = 0; start < count; start += batchSize) {
      const rows: Array<Row> = []
      for (let n = start + 1; n <= Math.min(count, start + batchSize); n++) rows.push(makeRow(n, random, now))
      userIds.push(...await insertRows(client, rows))
    }
    await client.query("COMMIT")
    await client.query("ANALYZE users")
    userIds.sort((a, b) => a - b)
    return { adminEmail, adminPassword, adminId, userIds, elapsedMs: performance.now() - started }
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    await client.end()
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href

if (isMain) {
  const { values } = parseArgs({
    options: {
      count: { type: "string", default: "10000" },
      seed: { type: "string", default: "1" },
      "admin-email": { type: "string", default: defaultAdminEmail },
      "admin-password": { type: "string", default: defaultAdminPassword }
    }
  })
  const databaseUrl = process.env.DATABASE_URL
  if (!databaseUrl) {
    console.error("DATABASE_URL is required (a database the app has already migrated)")
    process.exit(2)
  }
  try {
    const result = await generateUsers(databaseUrl, {
      count: Number(values.count),
      seed: Number(values.seed),
      adminEmail: values["admin-email"],
      adminPassword: values["admin-password"]
    })
    console.log(
      `inserted ${result.userIds.length} users (ids ${result.userIds[0]}..${result.userIds.at(-1)}; ` +
        `bench admin ${result.adminEmail} id ${result.adminId}) in ${Math.round(result.elapsedMs)} ms`
    )
  } catch (error) {
    console.error(`generate failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
