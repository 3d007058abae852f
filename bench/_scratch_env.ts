// TEMPORARY scratch (deleted after use): bring up db + app + bare and keep them running.
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { startEmbeddedPostgres } from "../src/Layers/EmbeddedPostgres.js"
import { generateUsers } from "./generate.js"
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "cc-scratch-"))
await fs.chmod(dir, 0o755)
const running = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), persistent: false })
const c = new pg.Client({ connectionString: running.url }); await c.connect(); await c.query("CREATE DATABASE b"); await c.end()
const url = running.url.replace(/\/postgres$/, "/b")
const env = { ...process.env, DATABASE_URL: url, HOST: "127.0.0.1", LOG_LEVEL: "Warn", DB_POOL_SIZE: "10", DATA_DIR: path.join(dir, "data") }
const app = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { env: { ...env, PORT: "39001" }, stdio: "inherit" })
for (;;) { try { if ((await fetch("http://127.0.0.1:39001/health")).ok) break } catch { /* */ } await new Promise((r) => setTimeout(r, 200)) }
const g = await generateUsers(url, {})
const bare = spawn(process.execPath, ["--import", "tsx", "bench/bare-server.ts"], { env: { ...env, PORT: "39002" }, stdio: "inherit" })
const r = await fetch("http://127.0.0.1:39001/v1/users/sign_in", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: { email: g.adminEmail, password: g.adminPassword } }) })
const token = ((await r.json()) as { token: string }).token
await fs.writeFile("/tmp/ccscratch/info.json", JSON.stringify({ url, token, app: app.pid, bare: bare.pid, pgPort: running.port }))
console.log("READY", JSON.stringify({ url, token, app: app.pid, bare: bare.pid }))
const stop = async () => { app.kill(); bare.kill(); await new Promise((r) => setTimeout(r, 1000)); await running.stop(); await fs.rm(dir, { recursive: true, force: true }); process.exit(0) }
process.on("SIGTERM", () => void stop()); process.on("SIGINT", () => void stop())
setInterval(() => undefined, 1 << 30)
