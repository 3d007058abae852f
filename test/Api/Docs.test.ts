/**
 * The docs page reads like documentation: every operation has a summary and a
 * description that says who may call it and which spec section it implements, sits under one
 * human tag with a description, and every request body has an example; `redocly lint`
 * (recommended ruleset, redocly.yaml) finds no error and only the warnings redocly.yaml keeps.
 */
import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { Api } from "../../src/Api/Api.js"
import { accessHeading, specHeading } from "../../src/Api/Docs.js"

type Json = Record<string, any>

const document = OpenApi.fromApi(Api) as unknown as Json
const root = path.resolve(import.meta.dirname, "../..")

const operations = Object.entries<Json>(document.paths).flatMap(([route, item]) =>
  Object.entries<Json>(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${route}`, operation }))
)

/** Area and section in words, joined by " · ": `Users`, `Admin · Users`, `ECM · Activities`. */
const humanTag = /^[A-Z][A-Za-z]*(?: [A-Za-z]+)*(?: · [A-Z][A-Za-z]*(?: [A-Za-z]+)*)*$/

const resolve = (schema: Json): Json =>
  typeof schema.$ref === "string" ? resolve(document.components.schemas[schema.$ref.replace("#/components/schemas/", "")]) : schema

describe("the API documentation", () => {
  it("every operation has a summary, and a description saying who may call it and the spec section", () => {
    expect(operations.length).toBeGreaterThan(20)
    const missing = operations.flatMap(({ name, operation }) => {
      const problems: Array<string> = []
      if (typeof operation.summary !== "string" || operation.summary.trim().length < 4) problems.push(`${name}: summary`)
      const description: unknown = operation.description
      if (typeof description !== "string") return [...problems, `${name}: description`]
      const [what] = description.split(accessHeading)
      if ((what ?? "").trim().length < 20) problems.push(`${name}: description says what it does`)
      if (!new RegExp(`\\n\\n${escape(accessHeading)} \\S`).test(description)) problems.push(`${name}: who may call`)
      if (!new RegExp(`\\n\\n${escape(specHeading)} (?:general|ECM) §\\d`).test(description)) problems.push(`${name}: spec section`)
      return problems
    })
    expect(missing).toEqual([])
  })

  it("every operation sits under one human tag, and every tag is described", () => {
    const tags = new Map<string, Json>((document.tags as Array<Json>).map((tag) => [tag.name, tag]))
    for (const { name, operation } of operations) {
      expect(operation.tags, name).toHaveLength(1)
      expect(operation.tags[0], name).toMatch(humanTag)
      expect(tags.has(operation.tags[0]), name).toBe(true)
    }
    for (const tag of tags.values()) {
      expect(tag.name).toMatch(humanTag)
      expect(String(tag.description ?? "").length, tag.name).toBeGreaterThan(20)
    }
    expect([...tags.keys()]).toEqual(expect.arrayContaining(["Users", "Admin · Users"]))
    expect("users").not.toMatch(humanTag)
    expect("adminUsers").not.toMatch(humanTag)
  })

  it("every request body has an example (redocly checks it against the schema)", () => {
    const withoutExample = operations.filter(({ operation }) => operation.requestBody !== undefined).flatMap(({ name, operation }) =>
      Object.values<Json>(operation.requestBody.content).every((media) => (resolve(media.schema).examples ?? []).length > 0)
        ? []
        : [name]
    )
    expect(withoutExample).toEqual([])
  })

  it("redocly lint: no errors, and warnings only from the rules redocly.yaml keeps", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "cc-api-openapi-"))
    try {
      const file = path.join(dir, "openapi.json")
      await writeFile(file, JSON.stringify(document, null, 2))
      const config = path.join(root, "redocly.yaml")
      const run = promisify(execFile)
      const lint = await run(path.join(root, "node_modules/.bin/redocly"), ["lint", file, "--config", config, "--format", "json"], {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", REDOCLY_SUPPRESS_NOTIFICATIONS: "true" },
        maxBuffer: 16 * 1024 * 1024
      }).catch((failure: { stdout?: string }) => ({ stdout: failure.stdout ?? "" }))
      const report = JSON.parse(lint.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> }
      expect(report.problems.filter((p) => p.severity === "error")).toEqual([])
      expect(report.totals.errors).toBe(0)
      const kept = [...(await readFile(config, "utf8")).matchAll(/^\s+([a-z0-9-]+):\s*warn\s*$/gm)].map((m) => m[1])
      const unexpected = report.problems.filter((p) => p.severity === "warn" && !kept.includes(p.ruleId))
      expect(unexpected).toEqual([])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
}
