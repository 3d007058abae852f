/**
 * Crash recovery on the real entry point: a server is killed with SIGKILL while a MIF import, a
 * report and an SMS reminder are each mid-way, then started again. With HEARTBEAT_SECONDS=1 and
 * HEARTBEAT_STALE_SECONDS=3, within the promised time after the restart the import is `failed`
 * (its rows rolled back), the report's job is released and run again to completion, and the
 * reminder — whose text may have reached Twilio — is `failed` without being sent a second time.
 */
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { pgClientLayer } from "../src/Layers/Database.js"
import { freePort } from "../src/Layers/FreePort.js"
import { interruptedImportError } from "../src/Services/Ecm/MifImport.js"
import { reminderReasons } from "../src/Services/Scheduling/RemindersRepo.js"
import { freshDatabase } from "./support/database.js"
import { insertAppointment, insertPatient, insertProvider, insertReminder } from "./support/fixtures.js"
import { dataUri, membersCsv } from "./Http/Ecm/support.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const heartbeatSeconds = 1
const staleSeconds = 3
/** The promise: a gone instance's work is settled within the stale time and one sweep; plus a rerun's and a loaded machine's slack. */
const settledWithinMs = (staleSeconds + heartbeatSeconds) * 1000 + 15_000
const admin = { email: "recovery-admin@example.test", password: "recovery-password-1" }
const accountSid = `AC${"0".repeat(32)}`

/** Polls `check` until it accepts what `read` returns; fails at the deadline with the last value read. */
const until = async <A>(what: string, deadlineMs: number, read: () => Promise<A>, check: (value: A) => boolean = Boolean): Promise<A> => {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const value = await read()
    if (check(value)) return value
    if (Date.now() > deadline) throw new Error(`not in time: ${what}; last seen ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

interface Server {
  readonly child: ChildProcess
  readonly port: number
  readonly output: () => string
}

const startServer = async (env: Record<string, string>): Promise<Server> => {
  const port = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info", LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await Promise.race([
    until("the server listens", 60_000, async () => output.includes(`Listening on http://127.0.0.1:${port}`)),
    exited.then(() => Promise.reject(new Error(`the server exited: ${output}`)))
  ])
  return { child, port, output: () => output }
}

const kill = (server: Server) =>
  new Promise<void>((resolve) => {
    server.child.once("exit", () => resolve())
    server.child.kill("SIGKILL")
  })

const api = async (port: number, method: string, path: string, token?: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { "x-user-token": token }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json().catch(() => undefined) as any }
}

/** Twilio's REST API as far as sending a text: every request is counted and none is answered. */
const silentTwilio = async () => {
  const messages: Array<string> = []
  const server = http.createServer((req) => {
    if (req.method === "POST" && req.url?.endsWith("/Messages.json")) messages.push(req.url)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  return {
    messages,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}

it.live("after a SIGKILL mid-import, mid-report and mid-send, a restart settles each within the promised time", () =>
  Effect.gen(function*() {
    const database = yield* freshDatabase()
    const twilio = yield* Effect.acquireRelease(Effect.promise(silentTwilio), (t) => Effect.sync(t.close))
    const db = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    )
    const blocker = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    )
    const env = {
      DATABASE_URL: database.url,
      BOOTSTRAP_ADMIN_EMAIL: admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      HEARTBEAT_SECONDS: String(heartbeatSeconds),
      HEARTBEAT_STALE_SECONDS: String(staleSeconds),
      JOBS_POLL_INTERVAL_MS: "200",
      CONTENT_DEMO: "false",
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: "recovery-test-token",
      TWILIO_FROM_NUMBER: "+15005550006",
      TWILIO_API_BASE_URL: twilio.url
    }
    const query = <A = any>(text: string, params: ReadonlyArray<unknown> = []) =>
      Effect.promise(() => db.query(text, [...params]).then((r) => r.rows as Array<A>))

    const first = yield* Effect.acquireRelease(Effect.promise(() => startServer(env)), (s) => Effect.sync(() => s.child.kill("SIGKILL")))
    const signedIn = yield* Effect.promise(() => api(first.port, "POST", "/v1/users/sign_in", undefined, { user: admin }))
    expect(signedIn.status).toBe(200)
    const token = signedIn.body.token as string

    // Mid-send: an SMS reminder due now, whose text Twilio receives and never answers.
    const reminder = yield* Effect.gen(function*() {
      const provider = yield* insertProvider({ first_name: "Rae", last_name: "Provider" })
      const patientId = yield* insertPatient({ phone: "+15105550100" })
      const appointment = yield* insertAppointment({
        patientId, providerId: provider.id, scheduledAt: new Date(Date.now() + 2 * 3_600_000), minutes: 60, status: "scheduled"
      })
      return yield* insertReminder({ appointmentId: appointment.id, channel: "sms", sendAt: new Date(), leadSeconds: 7200 })
    }).pipe(Effect.provide(pgClientLayer(Redacted.make(database.url), 1)))
    yield* query(`SELECT graphile_worker.add_job('reminders.send', json_build_object('reminder_id', $1::int),
      job_key => 'appointment_reminder:' || $1, max_attempts => 5)`, [reminder])
    yield* Effect.promise(() => until("the text reaches Twilio", 30_000, async () => twilio.messages.length > 0))

    // Mid-import and mid-report: the import waits for the imports' advisory lock, the report for
    // the appointments table, both held by this test until the server is dead.
    yield* Effect.promise(() => blocker.query("BEGIN"))
    yield* Effect.promise(() => blocker.query("SELECT pg_advisory_xact_lock(7340914)"))
    yield* Effect.promise(() => blocker.query("LOCK TABLE appointments IN ACCESS EXCLUSIVE MODE"))
    const csv = membersCsv([{ member_id: "R1", first_name: "Ada", last_name: "Crash", dob: "01-02-1990" }])
    void api(first.port, "POST", "/v1/admin/clinic/ecm/mifs", token, { mif: { file: dataUri("csv", csv) } }).catch(() => undefined)
    const report = yield* Effect.promise(() =>
      api(first.port, "POST", "/v1/admin/clinic/reports/patients/follow_up_schedules", token, {
        report_params: { start_date: "2026-02-02", end_date: "2026-02-08", format: "csv" }
      }))
    expect(report.status).toBe(202)
    yield* Effect.promise(() => until("the import and the report wait mid-way", 30_000, async () => {
      const { rows } = await db.query(`SELECT
          (SELECT status FROM mif_files) AS import,
          (SELECT status FROM reports) AS report,
          (SELECT count(*)::int FROM pg_locks WHERE NOT granted AND locktype IN ('advisory', 'relation')
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS waiting`)
      return rows[0]
    }, (row) => row.import === "processing" && row.report === "generating" && row.waiting >= 2))

    yield* Effect.promise(() => kill(first))
    yield* Effect.promise(() => blocker.query("ROLLBACK"))
    // What the crash left: the report's and the reminder's jobs locked by the dead worker pool.
    expect(yield* query(`SELECT status FROM mif_files`)).toEqual([{ status: "processing" }])
    expect(yield* query(`SELECT task_identifier, locked_by IS NOT NULL AS locked FROM graphile_worker.jobs
      WHERE task_identifier IN ('reports.generate', 'reminders.send') ORDER BY task_identifier`)).toEqual([
      { task_identifier: "reminders.send", locked: true },
      { task_identifier: "reports.generate", locked: true }
    ])

    const second = yield* Effect.acquireRelease(Effect.promise(() => startServer(env)), (s) => Effect.sync(() => s.child.kill("SIGKILL")))
    const settled = yield* Effect.promise(() => until("the interrupted work is settled", settledWithinMs, async () => {
      const { rows } = await db.query(`SELECT
          (SELECT row_to_json(m) FROM (SELECT status, import_errors, records_imported FROM mif_files) m) AS import,
          (SELECT row_to_json(r) FROM (SELECT status, rows_written, failure_reason FROM reports) r) AS report,
          (SELECT row_to_json(a) FROM (SELECT status, delivery_status, status_reason, provider_message_id FROM appointment_reminders) a) AS reminder,
          (SELECT count(*)::int FROM graphile_worker.jobs WHERE task_identifier IN ('reports.generate', 'reminders.send')) AS jobs`)
      return rows[0]
    }, (row) => row.import.status !== "processing" && row.report.status === "completed" && row.reminder.status !== "scheduled" && row.jobs === 0))
    expect(settled.import).toEqual({ status: "failed", import_errors: interruptedImportError, records_imported: 0 })
    expect(settled.report).toMatchObject({ status: "completed", failure_reason: null })
    expect(settled.reminder).toEqual({
      status: "failed", delivery_status: "failed", status_reason: reminderReasons.interrupted, provider_message_id: null
    })
    // Nothing of the import was kept, the text went to Twilio once, and the file is served.
    expect(yield* query(`SELECT count(*)::int AS n FROM patients WHERE member_id = 'R1'`)).toEqual([{ n: 0 }])
    expect(twilio.messages).toHaveLength(1)
    const status = yield* Effect.promise(() => api(second.port, "GET", `/v1/admin/clinic/reports/${report.body.report_id}/status`, token))
    expect(status.body).toMatchObject({ status: "completed", progress_percentage: 100 })
    // The restarted instance said what it recovered (counts only).
    expect(second.output()).toContain("recovered work of gone instances")
  }).pipe(Effect.scoped), { timeout: 120_000 })
