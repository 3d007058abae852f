/**
 * `npm run build` once per test run: the test files that check dist/ share one build (the test
 * worker keeps its modules between files).
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

export const root = fileURLToPath(new URL("../../", import.meta.url))
export const dist = path.join(root, "dist")

let building: Promise<void> | undefined

export const buildProduction = () =>
  (building ??= promisify(execFile)(process.execPath, ["scripts/build.mjs"], { cwd: root, maxBuffer: 16 << 20 }).then(() => undefined))

export interface Metafile {
  readonly inputs: Record<string, { readonly imports: ReadonlyArray<{ path: string; kind: string; original?: string; external?: boolean }> }>
  readonly outputs: Record<string, { readonly entryPoint?: string }>
}

export const readMetafile = (): Metafile => JSON.parse(readFileSync(path.join(dist, "meta.json"), "utf8")) as Metafile
