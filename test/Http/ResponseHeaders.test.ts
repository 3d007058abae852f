/**
 * Headers on every response: no caching of personal data, no MIME sniffing, no
 * referrer, a CSP that gives JSON nothing and the docs page exactly its own scripts; HSTS when
 * the public URL is https.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { addResponseHeaders, docsCspFor, inlineScriptHashes } from "../../src/Layers/Http/ResponseHeaders.js"
import { request, signIn, TestApp } from "../support/app.js"

const common = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

layer(TestApp())("response headers over http", (it) => {
  it.effect("every API response, success or error, carries them; no HSTS over http", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const responses = [
        yield* request("GET", "/v1/users", { token }),
        yield* request("GET", "/v1/users"),
        yield* request("POST", "/v1/users/sign_in", { body: "{not json" }),
        yield* request("GET", "/v1/no/such/route"),
        yield* request("GET", "/health"),
        yield* request("GET", "/v1/openapi.json")
      ]
      expect(responses.map((r) => r.status)).toEqual([200, 401, 422, 404, 200, 200])
      for (const response of responses) {
        expect(response.headers).toMatchObject({ ...common, "content-security-policy": "default-src 'none'; frame-ancestors 'none'" })
        expect(response.headers["strict-transport-security"]).toBeUndefined()
      }
    }))

  it.effect("the docs page may run its own inline scripts and nothing else", () =>
    Effect.gen(function*() {
      const docs = yield* request("GET", "/docs")
      expect(docs.status).toBe(200)
      expect(docs.headers).toMatchObject(common)
      const html = String(docs.body)
      const csp = docs.headers["content-security-policy"]!
      const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1)]))
      expect(directives["default-src"]).toEqual(["'none'"])
      // Every script the page runs is allowed by hash; none is loaded from elsewhere; no eval.
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
      const executable = scripts.filter(([, attributes]) => !/application\/json/.test(attributes!))
      expect(executable.length).toBeGreaterThanOrEqual(2)
      for (const [, attributes, body] of executable) {
        expect(attributes).not.toMatch(/\bsrc=/)
        expect(directives["script-src"]).toContain(`'sha256-${createHash("sha256").update(body!).digest("base64")}'`)
      }
      // Beside the hashes only WebAssembly compilation (Scalar's xxhash-wasm), never JavaScript eval.
      expect(directives["script-src"]!.filter((s: string) => !s.startsWith("'sha256-"))).toEqual(["'wasm-unsafe-eval'"])
      expect(directives["script-src"]!.length).toBe(executable.length + 1)
      expect(csp.replace("'wasm-unsafe-eval'", "")).not.toMatch(/unsafe-eval|\*|https:/)
      // The page really compiles WebAssembly: drop the allowance only when this stops holding.
      expect(html).toContain("WebAssembly.instantiate")
      expect(directives["connect-src"]).toEqual(["'self'"])
      expect(directives["frame-ancestors"]).toEqual(["'none'"])
      // Fonts from the page's own CDN are switched off: the policy allows no third-party host.
      expect(html).toContain("\"withDefaultFonts\":false")
    }))
})

layer(TestApp({ publicBaseUrl: "https://api.example.org" }))("response headers over https", (it) => {
  it.effect("adds Strict-Transport-Security", () =>
    Effect.gen(function*() {
      for (const response of [yield* request("GET", "/health"), yield* request("GET", "/v1/users")]) {
        expect(response.headers["strict-transport-security"]).toBe("max-age=31536000")
        expect(response.headers).toMatchObject(common)
      }
    }))
})

describe("addResponseHeaders", () => {
  it("keeps a header a route set itself (the download route's sandbox policy)", () => {
    const request = HttpServerRequest.fromWeb(new Request("http://localhost/objects/a?expires=1&signature=x"))
    const response = HttpServerResponse.text("file", {
      headers: { "content-security-policy": "sandbox", "cache-control": "private, no-store" }
    })
    const out = addResponseHeaders(request, response, { https: false, draining: () => false })
    expect(out.headers["content-security-policy"]).toBe("sandbox")
    expect(out.headers["cache-control"]).toBe("private, no-store")
    expect(out.headers["x-content-type-options"]).toBe("nosniff")
    expect(out.headers["connection"]).toBeUndefined()
    expect(addResponseHeaders(request, response, { https: false, draining: () => true }).headers["connection"]).toBe("close")
  })

  it("hashes inline scripts only", () => {
    const html = `<script type="application/json">{"a":1}</script><script>run()</script><script src="x.js"></script>`
    expect(inlineScriptHashes(html)).toEqual([`'sha256-${createHash("sha256").update("run()").digest("base64")}'`])
    expect(docsCspFor(html)).toContain("script-src 'sha256-")
  })
})
