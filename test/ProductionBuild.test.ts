/**
 * The built server as the image runs it (`node dist/main.js`), started once with every optional
 * adapter configured — OTLP export to a local collector, S3 on s3rver, SMTP to smtp-server, Twilio
 * and FCM settings — and each path that loads a module on first use taken once over HTTP: a signed
 * Twilio webhook, report PDF and XLSX, an XLSX MIF import, a sniffed content upload (to S3), an
 * invite mail (SMTP), the docs page, and spans reaching the collector. Tests otherwise run the
 * TypeScript through tsx, where a bundling fault cannot show (test/BundleImports.test.ts checks
 * each dynamic import's names; this checks they work end to end).
 */
import S3rver from "@20minutes/s3rver"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { SMTPServer } from "smtp-server"
import twilio from "twilio/lib/webhooks/webhooks.js"
import { inject } from "vitest"
import { freePort } from "../src/Layers/FreePort.js"
import { adminQuery } from "./support/database.js"
import { withDatabase } from "./support/databaseUrl.js"
import { buildProduction, root } from "./support/productionBuild.js"

const admin = { email: "production-admin@example.test", password: "production-admin-password" }
const authToken = "production-test-auth-token"
const bucket = "care-files"

let work: string
let database: string
let baseUrl: string
let server: { child: ChildProcess; output: () => string } | undefined
let token: string
const closers: Array<() => Promise<unknown>> = []
const mails: Array<{ to: Array<string>; data: string }> = []
const exported: Array<string> = []

const listening = (target: http.Server | SMTPServer["server"]) => (target.address() as AddressInfo).port

/** An OTLP/HTTP collector: records the path of each export it receives. */
const startCollector = async () => {
  const collector = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      exported.push(`${req.method} ${req.url}`)
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise((resolve) => collector.close(resolve)))
  return listening(collector)
}

const startSmtp = async () => {
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString("utf8") })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise((resolve) => smtp.close(() => resolve(undefined))))
  return listening(smtp.server)
}

const startS3 = async () => {
  const s3 = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: path.join(work, "s3"), configureBuckets: [{ name: bucket }] })
  const { port } = await s3.run()
  closers.push(() => s3.close())
  return port
}

/** A service account key of the shape FCM_SERVICE_ACCOUNT_FILE names (never used to sign in anywhere). */
const writeServiceAccount = async () => {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const file = path.join(work, "fcm-service-account.json")
  await fs.writeFile(file, JSON.stringify({
    type: "service_account",
    project_id: "demo-project",
    private_key_id: "stand-in",
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
    client_email: "push@demo-project.iam.gserviceaccount.com",
    token_uri: "http://127.0.0.1:9/token"
  }))
  return file
}

const startServer = async (env: Record<string, string>) => {
  database = `cc_test_${randomBytes(6).toString("hex")}`
  await adminQuery(`CREATE DATABASE ${database} TEMPLATE ${inject("templateDatabase")}`)
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  const inherited = { ...process.env }
  for (const key of Object.keys(inherited)) if (/^(OTEL_|TWILIO_|S3_|SMTP_|FCM_|NODE_OPTIONS$)/.test(key)) delete inherited[key]
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: root,
    env: {
      ...inherited,
      NODE_ENV: "production",
      DATABASE_URL: withDatabase(inject("databaseUrl"), database),
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: baseUrl,
      DATA_DIR: path.join(work, "data"),
      LOG_LEVEL: "warn",
      BOOTSTRAP_ADMIN_EMAIL: admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      JOBS_POLL_INTERVAL_MS: "100",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  server = { child, output: () => output }
  await until("dist/main.js healthy", 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}:\n${output}`)
    return (await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)) === 200
  })
}

/** Polls `check` every 100 ms until it holds. */
const until = async (what: string, ms: number, check: () => Promise<boolean> | boolean) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms\n${server?.output() ?? ""}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const call = async (method: string, url: string, body?: unknown) => {
  const response = await fetch(`${baseUrl}${url}`, {
    method,
    redirect: "manual",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { "x-user-token": token }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, body: text.startsWith("{") ? JSON.parse(text) as Record<string, unknown> : text }
}

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), "cc-production-"))
  const [collector, smtp, s3, serviceAccount] = await Promise.all([startCollector(), startSmtp(), startS3(), writeServiceAccount(), buildProduction()])
  await startServer({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector}`,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    S3_BUCKET: bucket,
    S3_ENDPOINT: `http://127.0.0.1:${s3}`,
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    S3_FORCE_PATH_STYLE: "true",
    SMTP_URL: `smtp://127.0.0.1:${smtp}`,
    TWILIO_ACCOUNT_SID: `AC${"0".repeat(32)}`,
    TWILIO_AUTH_TOKEN: authToken,
    TWILIO_FROM_NUMBER: "+15550001111",
    // Nothing here sends through Twilio's REST API; a closed port makes sure nothing reaches Twilio.
    TWILIO_API_BASE_URL: "http://127.0.0.1:9",
    FCM_SERVICE_ACCOUNT_FILE: serviceAccount
  })
  const signedIn = await call("POST", "/v1/users/sign_in", { user: admin })
  expect(signedIn.status, signedIn.text).toBe(200)
  token = (signedIn.body as { token: string }).token
}, 180_000)

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    await new Promise((resolve) => {
      server!.child.once("exit", resolve)
      server!.child.kill("SIGTERM")
    })
  }
  for (const close of closers) await close()
  if (database !== undefined) await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  if (work !== undefined) await fs.rm(work, { recursive: true, force: true })
})

describe("node dist/main.js with every adapter configured", () => {
  it("checks Twilio webhook signatures: signed is accepted, wrongly signed is 403", async () => {
    const hook = "/v1/clinic/webhooks/telephony/sms"
    const params = { MessageSid: "SMprod0000000000000000000000000001", From: "+14155550100", To: "+15550001111", Body: "hello" }
    const post = (signature: string) =>
      fetch(`${baseUrl}${hook}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
        body: new URLSearchParams(params).toString()
      })
    const signed = await post(twilio.getExpectedTwilioSignature(authToken, `${baseUrl}${hook}`, params))
    expect(signed.status, await signed.clone().text()).toBe(200)
    expect(signed.headers.get("content-type")).toContain("text/xml")
    expect((await post(twilio.getExpectedTwilioSignature("another-token", `${baseUrl}${hook}`, params))).status).toBe(403)
  })

  it("serves the docs page", async () => {
    const docs = await fetch(`${baseUrl}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(await docs.text()).toContain("<html")
  })

  it("imports an XLSX MIF", async () => {
    const xlsx = readFileSync(path.join(root, "test/fixtures/mif/members.xlsx"))
    const dataUri = "data:application/vnd.openxmlformats-officedocument.spreadsheetml.sheet;base64," + xlsx.toString("base64")
    const imported = await call("POST", "/v1/admin/clinic/ecm/mifs", { mif: { file: dataUri } })
    expect(imported.status, imported.text).toBe(200)
    expect(imported.body).toMatchObject({ imported_count: 2 })
    // The server's temporary files (exceljs' included) live in its private directory, removed when done.
    const privateDir = path.join(work, "data", "tmp")
    expect((await fs.stat(privateDir)).mode & 0o777).toBe(0o700)
    await until("the private temp directory emptied", 5_000, async () => (await fs.readdir(privateDir)).length === 0)
  })

  it("sniffs a content upload's type and stores it in S3", async () => {
    const pdf = Buffer.from("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    const uploaded = await call("POST", "/v1/admin/content/files", {
      file: `data:application/octet-stream;base64,${pdf.toString("base64")}`,
      filename: "worksheet.pdf"
    })
    expect(uploaded.status, uploaded.text).toBe(201)
    const key = (uploaded.body as { object_key: string }).object_key
    expect(key).toMatch(/^content\/files\/[0-9a-f-]+\.pdf$/)
    const stored = await fs.readdir(path.join(work, "s3", bucket, ...path.posix.dirname(key).split("/")))
    expect(stored.some((name) => name.startsWith(path.posix.basename(key)))).toBe(true)
  })

  it("generates report PDF and XLSX files, stored in S3 and downloaded through a presigned link", { timeout: 60_000 }, async () => {
    for (const [format, magic] of [["pdf", "%PDF-"], ["excel", "PK\u0003\u0004"]] as const) {
      const queued = await call("POST", "/v1/admin/clinic/reports/providers/appointments_with_rates", {
        report_params: { start_date: "2026-02-02", end_date: "2026-02-08", format }
      })
      expect(queued.status, queued.text).toBe(202)
      const id = (queued.body as { report_id: string }).report_id
      let state: Record<string, unknown> = {}
      await until(`${format} report`, 30_000, async () => {
        state = (await call("GET", `/v1/admin/clinic/reports/${id}/status`)).body as Record<string, unknown>
        return state["status"] === "completed" || state["status"] === "failed"
      })
      expect(state, format).toMatchObject({ status: "completed" })
      const download = await call("GET", `/v1/admin/clinic/reports/${id}/download`)
      expect(download.status).toBe(302)
      const file = Buffer.from(await (await fetch(download.headers.get("location")!)).arrayBuffer())
      expect(file.subarray(0, magic.length).toString("latin1"), format).toBe(magic)
    }
  })

  it("sends mail through SMTP", async () => {
    const invited = await call("POST", "/v1/admin/clinic/providers/invites", {
      invite: { email: "production.invitee@invites.test", first_name: "Pro", last_name: "Duction", role: "supervisor" }
    })
    expect(invited.status, invited.text).toBe(201)
    await until("the invite mail", 10_000, () => mails.some((mail) => mail.to.includes("production.invitee@invites.test")))
  })

  it("exports spans to the OTLP collector", async () => {
    await until("an OTLP export", 10_000, () => exported.includes("POST /v1/traces"))
  })

  it("logged no failure on the way", () => {
    expect(server!.output()).not.toMatch(/TypeError|is not a function|is not a constructor/)
  })
})
