// TEMPORARY scratch (deleted after use)
import autocannon, { type Result } from "autocannon"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
const info = JSON.parse(readFileSync("/tmp/ccscratch/info.json", "utf8")) as { url: string; token: string }
const variants = ["baseline", "notracer", "noobserve", "bare-ish"]
const children = variants.map((v, i) => spawn(process.execPath, ["--import", "tsx", "bench/_scratch_main.ts"], {
  env: { ...process.env, VARIANT: v, PORT: String(39010 + i), HOST: "127.0.0.1", DATABASE_URL: info.url, LOG_LEVEL: "Warn", DB_POOL_SIZE: "10" }, stdio: "inherit" }))
const targets = [...variants.map((v, i) => [v, 39010 + i] as const), ["bare", 39002] as const]
for (const [, port] of targets) for (;;) { try { if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break } catch { /* */ } await new Promise((r) => setTimeout(r, 200)) }
const headers = { "x-user-token": info.token }
const run = (port: number, duration: number) => new Promise<Result>((res, rej) => autocannon({ url: `http://127.0.0.1:${port}`, connections: 50, duration,
  requests: [{ method: "GET", headers, setupRequest: (r) => ({ ...r, headers, path: `/v1/admin/clinic/users/${2 + Math.floor(Math.random() * 10000)}` }) }] }, (e, r) => e ? rej(e) : res(r)))
for (const [, port] of targets) await run(port, 2)
const results = new Map<string, number[]>()
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  for (const [name, port] of targets) {
    const r = await run(port, 4)
    if (r.non2xx) throw new Error(`${name} non2xx ${r.non2xx}`)
    results.set(name, [...(results.get(name) ?? []), Math.round(r.requests.total / r.duration)])
  }
}
for (const [name, xs] of results) console.log(name.padEnd(10), xs.join(" "), "median", [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)])
for (const c of children) c.kill()
