/**
 * The docs page (Scalar's API reference), built on the first `GET /docs` (./Routes.ts): its script
 * is a 3 MB string (6 MB in V8) and the page embeds the whole OpenAPI document, memory an instance
 * nobody browses never needs. The page is the one `HttpApiScalar.layer` serves; the script is read
 * from @effect/platform in node_modules at run time, so no bundle chunk carries it (bundled, it
 * lands in a chunk every start loads, the platform's index re-exporting it).
 */
import { OpenApi } from "@effect/platform"
import { createRequire } from "node:module"
import * as path from "node:path"
import { Api } from "../../Api/Api.js"

/** Scalar's standalone script as @effect/platform ships it: a module holding one string constant. */
const scalarScript = (): string => {
  const require = createRequire(import.meta.url)
  const entry = require.resolve("@effect/platform/HttpApiScalar")
  return (require(path.join(path.dirname(entry), "internal", "httpApiScalar.js")) as { javascript: string }).javascript
}

/** JSON inside a `<script>`: no `</script>` breakout, no JS line terminators (as the platform does). */
const scriptJson = (value: unknown) =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** The page's HTML. System fonts: the page's CSP allows no third-party font host. */
export const docsPageHtml = (): string => {
  const spec = OpenApi.fromApi(Api)
  const description = spec.info.description
    ? `<meta name="description" content="${escapeAttribute(spec.info.description)}"/>\n    <meta name="og:description" content="${escapeAttribute(spec.info.description)}"/>`
    : ""
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeText(spec.info.title)}</title>
    ${description}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${scriptJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${scriptJson({ _integration: "html", withDefaultFonts: false })})
    </script>
    <script>${scalarScript()}</script>
  </body>
</html>`
}
