/**
 * `npm run bench:comms`: ECM communications under load.
 *
 * 1. Starts the app (child process, fresh database, logs at warn) with TWILIO_* settings whose
 *    API base URL is a local stand-in for Twilio's REST API (in this process, answering 201 at
 *    once), so outbound sends go through the real `twilio` client; signs in the bootstrap admin.
 * 2. Seeds 1,000 members with phones, half of them with a lead care manager.
 * 3. Throughput with autocannon (--connections, --duration), each request its own:
 *    - inbound SMS webhook, signed (signature check, patient match, record, activity, event);
 *    - SMS status callbacks `delivered` for messages sent before (lock, status machine, activity
 *      completed, event updated);
 *    - outbound `POST …/sms` (record, Twilio client round trip to the stand-in, activity, event).
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_comms_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir. Flags: --connections (20), --duration (10 s).
 */
import autocannon, { type Options, type Result } from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import pg from "pg"
import twilio from "twilio"
import { freePort } from "../src/Layers/FreePort.js"
import { benchDatabase } from "./support.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const { values: flags } = parseArgs({
  options: {
    connections: { type: "string", default: process.env.BENCH_CONNECTIONS ?? "20" },
    duration: { type: "string", default: process.env.BENCH_DURATION ?? "10" }
  }
})
const connections = Number(flags.connections)
const duration = Number(flags.duration)
const authToken = "bench-twilio-auth-token"
const publicBaseUrl = "http://bench.example.org"

const children = new Set<ChildProcess>()
process.on("exit", () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")))

const waitFor = async (url: string) => {
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error("the app did not start")
    try {
      if ((await fetch(url)).status < 500) return
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 200))
  }
}

const run = (options: Options) =>
  new Promise<Result>((resolve, reject) => autocannon(options, (error, result) => (error ? reject(error) : resolve(result))))

const summary = (name: string, result: Result) =>
  `${name}: ${result.requests.average.toFixed(0)} req/s, latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
  `${result.non2xx} non-2xx, ${result.errors} errors (${result.requests.total} requests)`

/** Twilio's REST API, as far as `messages.create` needs it: 201 with a fresh SID. */
const startStandIn = async () => {
  let sent = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.setHeader("content-type", "application/json")
      response.statusCode = 201
      response.end(JSON.stringify({ sid: `SM${(++sent).toString(16).padStart(32, "0")}`, to: "+14155550000", from: "+15550001111", status: "queued" }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const signedForm = (pathAndQuery: string, params: Record<string, string>) => ({
  body: new URLSearchParams(params).toString(),
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    "x-twilio-signature": twilio.getExpectedTwilioSignature(authToken, `${publicBaseUrl}${pathAndQuery}`, params)
  }
})

const main = async () => {
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "cc-bench-comms-"))
  const database = await benchDatabase("comms", tmp)
  const standIn = await startStandIn()
  let app: ChildProcess | undefined
  try {
    const port = await freePort()
    app = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: {
        ...process.env, DATABASE_URL: database.url, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn",
        DATA_DIR: path.join(tmp, "data"), BOOTSTRAP_ADMIN_EMAIL: "bench@example.test", BOOTSTRAP_ADMIN_PASSWORD: "bench-password-1",
        OTEL_EXPORTER_OTLP_ENDPOINT: "", PUBLIC_BASE_URL: publicBaseUrl, TWILIO_ACCOUNT_SID: "AC11111111111111111111111111111111",
        TWILIO_AUTH_TOKEN: authToken, TWILIO_FROM_NUMBER: "+15550001111", TWILIO_API_BASE_URL: standIn.url
      },
      stdio: ["ignore", "inherit", "inherit"]
    })
    children.add(app)
    const base = `http://127.0.0.1:${port}`
    await waitFor(`${base}/health`)
    const signIn = await fetch(`${base}/v1/users/sign_in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: { email: "bench@example.test", password: "bench-password-1" } })
    })
    const { token, user } = (await signIn.json()) as { token: string; user: { id: number } }

    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    await client.query(`INSERT INTO patients (first_name, last_name, phone)
      SELECT 'Bench', 'Member ' || i, '+1415555' || lpad(i::text, 4, '0') FROM generate_series(0, 999) i`)
    await client.query(`INSERT INTO case_loads (patient_id, ilcm_user_id) SELECT id, $1 FROM patients WHERE id % 2 = 0`, [user.id])
    const { rows: patients } = await client.query<{ id: number; phone: string }>(`SELECT id, phone FROM patients ORDER BY id`)
    await client.query(`VACUUM ANALYZE`)

    let next = 0
    const inbound = await run({
      url: base, connections, duration,
      requests: [{
        method: "POST",
        setupRequest: (request) => {
          const patient = patients[next++ % patients.length]!
          const form = signedForm("/v1/clinic/webhooks/telephony/sms", {
            MessageSid: `SM${randomBytes(16).toString("hex")}`, From: patient.phone, To: "+15550001111", Body: "Can you call me back?"
          })
          return { ...request, path: "/v1/clinic/webhooks/telephony/sms", ...form }
        }
      }]
    })
    console.log(summary("inbound SMS webhook (signed)", inbound))

    const outbound = await run({
      url: base, connections, duration,
      requests: [{
        method: "POST",
        headers: { "content-type": "application/json", "x-user-token": token },
        setupRequest: (request) => {
          const patient = patients[next++ % patients.length]!
          return { ...request, path: `/v1/clinic/ecm/communications/patients/${patient.id}/sms`, body: JSON.stringify({ sms: { phone_number: patient.phone, body: "Reminder: visit tomorrow at 10" } }) }
        }
      }]
    })
    console.log(summary("outbound SMS through the twilio client and the stand-in", outbound))

    const { rows: sent } = await client.query<{ id: number; telephony_sid: string }>(
      `SELECT id, telephony_sid FROM sms_messages WHERE direction = 'outbound' AND telephony_sid IS NOT NULL ORDER BY id`)
    await client.end()
    let callback = 0
    const statuses = await run({
      url: base, connections, duration,
      requests: [{
        method: "POST",
        setupRequest: (request) => {
          const message = sent[callback++ % sent.length]!
          const pathAndQuery = `/v1/clinic/webhooks/telephony/sms_status?sms_id=${message.id}`
          return { ...request, path: pathAndQuery, ...signedForm(pathAndQuery, { MessageSid: message.telephony_sid, MessageStatus: "delivered" }) }
        }
      }]
    })
    console.log(summary(`SMS status callbacks (delivered; ${sent.length} messages, repeats once each is delivered)`, statuses))
  } finally {
    if (app && app.exitCode === null) {
      const exited = new Promise((r) => app!.once("exit", r))
      app.kill("SIGTERM")
      await exited
    }
    standIn.server.close()
    await database.release()
    await fs.rm(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
