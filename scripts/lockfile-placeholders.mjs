#!/usr/bin/env node
// The registry this project installs from mirrors only some platforms' builds of packages such as
// rollup and msgpackr-extract. `npm install` then leaves those optional platform packages out of
// package-lock.json, and `npm ci` refuses the lockfile as out of sync. This adds an entry for each
// missing optional dependency that no platform matches, so `npm ci` accepts the lockfile and skips
// them. Run after any `npm install` that rewrites the lockfile: `node scripts/lockfile-placeholders.mjs`.
import { readFileSync, writeFileSync } from "node:fs"

const file = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(file, "utf8"))
let added = 0
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${key ? `${key}/` : ""}node_modules/${name}`
    if (lock.packages[nested] || lock.packages[`node_modules/${name}`]) continue
    lock.packages[`node_modules/${name}`] = {
      version,
      optional: true,
      ...(entry.dev ? { dev: true } : {}),
      os: ["none"],
      cpu: ["none"]
    }
    added++
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`lockfile placeholders added: ${added}`)
