/**
 * `src/Api` is the client package `care-coordination-api-client` (packages/api): everything it reaches
 * must be effect, @effect/platform (not the platform-specific packages) or src/Domain.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))
const pkg = JSON.parse(readFileSync(path.join(root, "packages", "api", "package.json"), "utf8")) as {
  exports: Record<string, Record<string, string>>
}

/** The source the built entry is compiled from: packages/api/dist/Api/Api.js ← src/Api/Api.ts (packages/api/tsconfig.json). */
const sourceOf = (built: string) => built.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts")

const importsOf = (file: string): Array<string> =>
  [...readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)[^'"]*?from\s+["']([^"']+)["']/gm)].map((m) => m[1]!)

const reachable = (entry: string): { files: Set<string>; packages: Set<string> } => {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith(".")) visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")))
      else packages.add(specifier)
    }
  }
  visit(entry)
  return { files, packages }
}

describe("client-safe Api", () => {
  it("the client package exports the built Api declaration, with types", () => {
    expect(pkg.exports["."]).toEqual({ types: "./dist/Api/Api.d.ts", import: "./dist/Api/Api.js" })
    expect(sourceOf(pkg.exports["."]!.import!)).toBe("./src/Api/Api.ts")
  })

  it("reaches only effect, @effect/platform, src/Api and src/Domain", () => {
    const { files, packages } = reachable(path.join(root, sourceOf(pkg.exports["."]!.import!)))
    for (const file of files) {
      expect(path.relative(root, file), "file outside src/Api and src/Domain").toMatch(/^src\/(Api|Domain)\//)
    }
    for (const name of packages) {
      expect(name, "server-side package").toMatch(/^(effect|@effect\/platform)(\/|$)/)
    }
    expect(files.size).toBeGreaterThan(3)
  })
})
