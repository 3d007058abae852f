/**
 * The deployment files agree with the README: every variable the Dockerfile and the compose file
 * set (or read from the shell) is documented in a README table, every file of the repository they
 * copy or cite exists (a cited section too), and the compose stack's bootstrap admin is the one
 * the README signs in with.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))
const read = (file: string) => readFileSync(path.join(root, file), "utf8")

const readme = read("README.md")
const dockerfile = read("Dockerfile")
const compose = read("docker-compose.yml")

/** Names in backticks in the first cell of the README's table rows (`| \`A\`, \`B\` | … |`). */
const documented = new Set(
  readme.split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => [...line.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!))
)

/** `ENV A=1 B=2` pairs and `ARG NAME[=default]`. */
const dockerfileVariables = (text: string) => [
  ...[...text.matchAll(/^ENV\s+(.+)$/gm)].flatMap((m) => [...m[1]!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=/g)].map((p) => p[1]!)),
  ...[...text.matchAll(/^ARG\s+([A-Za-z_][A-Za-z0-9_]*)/gm)].map((m) => m[1]!)
]

/**
 * Environment entries of every service (upper-case mapping keys: compose's own keys and service
 * names are lower case) and the shell variables it interpolates (`${NAME:-default}`).
 */
const composeVariables = (text: string) => [
  ...[...text.matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!),
  ...[...text.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!)
]

/**
 * Files of the repository a text names: relative paths with a file extension. Absolute paths are
 * the image's or URLs; `dist/` is built, never committed.
 */
const citedFiles = (text: string) =>
  [...text.matchAll(/(?<![\w/.:-])((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:md|ts|mjs|js|json|ya?ml|sql))\b/g)]
    .map((m) => m[1]!)
    .filter((file) => !file.startsWith("dist/"))

/** Sections cited as `FILE.md "Title"` or `README "Title"`. */
const citedSections = (text: string) =>
  [...text.matchAll(/\b([\w./-]+\.md|README)\s+"([^"]+)"/g)].map((m) => ({
    file: m[1] === "README" ? "README.md" : m[1]!,
    title: m[2]!
  }))

/** `COPY` sources from the build context (not `--from` another stage). */
const copiedFromContext = (text: string) =>
  [...text.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/).slice(0, -1))

const hasHeading = (file: string, title: string) =>
  read(file).split("\n").some((line) => /^#+\s/.test(line) && line.replace(/^#+\s+/, "").trim() === title)

describe("deployment files", () => {
  it("set only variables the README documents", () => {
    const variables = new Set([...dockerfileVariables(dockerfile), ...composeVariables(compose)])
    // The parsers find what they should (a parser that finds nothing would pass vacuously).
    expect([...variables]).toEqual(expect.arrayContaining([
      "NODE_IMAGE", "PORT", "DATA_DIR", "MALLOC_ARENA_MAX", "DATABASE_URL", "BOOTSTRAP_ADMIN_EMAIL", "MINIO_ROOT_USER", "POSTGRES_PORT"
    ]))
    expect([...variables].filter((name) => !documented.has(name))).toEqual([])
  })

  it("copy and cite only files and sections that exist", () => {
    const files = new Set([...citedFiles(dockerfile), ...citedFiles(compose)])
    expect([...files]).toEqual(expect.arrayContaining(["scripts/build.mjs", "src/Layers/Database.ts"]))
    expect([...files].filter((file) => !existsSync(path.join(root, file)))).toEqual([])

    const copied = copiedFromContext(dockerfile)
    expect(copied).toEqual(expect.arrayContaining(["package.json", "src", "sql", "seeds"]))
    expect(copied.filter((source) => !existsSync(path.join(root, source)))).toEqual([])

    const sections = [...citedSections(dockerfile), ...citedSections(compose)]
    expect(sections.length).toBeGreaterThan(0)
    expect(sections.filter(({ file, title }) => !existsSync(path.join(root, file)) || !hasHeading(file, title))).toEqual([])

    for (const context of [...compose.matchAll(/^\s+build:\s*(\S+)\s*$/gm)].map((m) => m[1]!)) {
      expect(statSync(path.join(root, context, "Dockerfile")).isFile()).toBe(true)
    }
  })

  it("give the compose stack the bootstrap admin the README signs in with", () => {
    const defaults = Object.fromEntries(
      [...compose.matchAll(/\$\{(BOOTSTRAP_ADMIN_[A-Z]+):-([^}]+)\}/g)].map((m) => [m[1]!, m[2]!])
    )
    expect(defaults["BOOTSTRAP_ADMIN_EMAIL"]).toBeDefined()
    expect(readme).toContain(`BOOTSTRAP_ADMIN_EMAIL=${defaults["BOOTSTRAP_ADMIN_EMAIL"]}`)
    expect(readme).toContain(`"email":"${defaults["BOOTSTRAP_ADMIN_EMAIL"]}","password":"${defaults["BOOTSTRAP_ADMIN_PASSWORD"]}"`)
  })
})
