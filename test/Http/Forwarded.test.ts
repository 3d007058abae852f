/**
 * TRUSTED_PROXIES: the client address for rate limits and the public URL of a
 * request (what a webhook provider signs) come from X-Forwarded-* only through trusted proxies.
 */
import { HttpServerRequest } from "@effect/platform"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { parseTrustedProxies } from "../../src/Layers/Config.js"
import { clientAddressOf, publicRequestUrl, requestOriginOf } from "../../src/Layers/Http/Forwarded.js"
import type { TrustedProxies } from "../../src/Services/AppConfig.js"
import { testConfig } from "../Layers/fixtures.js"
import { request, TestApp } from "../support/app.js"

const none: TrustedProxies = { _tag: "None" }
const oneHop: TrustedProxies = { _tag: "Hops", hops: 1 }
const lan: TrustedProxies = { _tag: "Ranges", ranges: ["10.0.0.0/8", "fd00::/8"] }

describe("client address", () => {
  it("is the socket peer unless proxies are trusted", () => {
    expect(clientAddressOf("10.0.0.2", "203.0.113.7", none)).toBe("10.0.0.2")
    expect(clientAddressOf("::ffff:10.0.0.2", undefined, none)).toBe("10.0.0.2")
    expect(clientAddressOf(undefined, "203.0.113.7", oneHop)).toBe("unknown")
  })

  it("with a hop count, is the entry that many hops from the right; a client cannot spoof it", () => {
    expect(clientAddressOf("10.0.0.2", "203.0.113.7", oneHop)).toBe("203.0.113.7")
    expect(clientAddressOf("10.0.0.2", "1.1.1.1, 203.0.113.7", oneHop)).toBe("203.0.113.7")
    expect(clientAddressOf("10.0.0.2", "1.1.1.1, 203.0.113.7, 10.0.0.9", { _tag: "Hops", hops: 2 })).toBe("203.0.113.7")
    // Fewer entries than hops: the leftmost is the best we know.
    expect(clientAddressOf("10.0.0.2", undefined, oneHop)).toBe("10.0.0.2")
    // A proxy that forwarded garbage: the proxy, never the garbage.
    expect(clientAddressOf("10.0.0.2", "not-an-address", oneHop)).toBe("10.0.0.2")
  })

  it("with ranges, skips the trusted proxies from the right", () => {
    expect(clientAddressOf("10.0.0.2", "1.1.1.1, 203.0.113.7, 10.0.0.5", lan)).toBe("203.0.113.7")
    expect(clientAddressOf("::ffff:10.0.0.2", "203.0.113.7", lan)).toBe("203.0.113.7")
    expect(clientAddressOf("fd00::1", "2001:db8::7", lan)).toBe("2001:db8::7")
    // The peer is not a trusted proxy: its header is the client's own claim.
    expect(clientAddressOf("198.51.100.4", "203.0.113.7", lan)).toBe("198.51.100.4")
  })

  it("whatever a client prepends to X-Forwarded-For, the result stays the same", () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join("."))
    const entry = fc.oneof(ipv4, fc.string({ maxLength: 20 }).filter((s) => !s.includes(",")))
    fc.assert(fc.property(
      fc.array(entry, { maxLength: 5 }),
      fc.array(ipv4, { minLength: 3, maxLength: 4 }),
      fc.integer({ min: 1, max: 3 }),
      (spoofed, honest, hops) => {
        const trusted: TrustedProxies = { _tag: "Hops", hops }
        const peer = "10.0.0.2"
        const real = clientAddressOf(peer, honest.join(", "), trusted)
        expect(clientAddressOf(peer, [...spoofed, ...honest].join(", "), trusted)).toBe(real)
      }
    ))
  })
})

describe("request origin and public URL", () => {
  const headers = { host: "10.0.0.7:3000", "x-forwarded-proto": "https", "x-forwarded-host": "api.example.org" }

  it("takes X-Forwarded-Proto and -Host only from a trusted proxy", () => {
    expect(requestOriginOf(headers, "10.0.0.2", false, lan)).toEqual({ scheme: "https", host: "api.example.org" })
    expect(requestOriginOf(headers, "10.0.0.2", false, oneHop)).toEqual({ scheme: "https", host: "api.example.org" })
    expect(requestOriginOf(headers, "198.51.100.4", false, lan)).toEqual({ scheme: "http", host: "10.0.0.7:3000" })
    expect(requestOriginOf(headers, "10.0.0.2", false, none)).toEqual({ scheme: "http", host: "10.0.0.7:3000" })
    expect(requestOriginOf({ ...headers, "x-forwarded-proto": "gopher", "x-forwarded-host": "evil/path" }, "10.0.0.2", false, oneHop))
      .toEqual({ scheme: "http", host: "10.0.0.7:3000" })
  })

  const webhook = (trusted: TrustedProxies, peer: string) =>
    publicRequestUrl.pipe(
      Effect.provideService(
        HttpServerRequest.HttpServerRequest,
        HttpServerRequest.fromWeb(new Request("http://10.0.0.7:3000/v1/clinic/webhooks/twilio/sms?x=1", { headers }))
          .modify({ remoteAddress: peer })
      ),
      Effect.provide(testConfig({ trustedProxies: trusted, publicBaseUrl: "https://fallback.example.org" }))
    )

  it.effect("the URL a webhook provider signed: behind a trusted proxy, the public one", () =>
    Effect.gen(function*() {
      expect(yield* webhook(oneHop, "10.0.0.2")).toBe("https://api.example.org/v1/clinic/webhooks/twilio/sms?x=1")
      expect(yield* webhook(none, "10.0.0.2")).toBe("http://10.0.0.7:3000/v1/clinic/webhooks/twilio/sms?x=1")
      expect(yield* webhook(lan, "198.51.100.4")).toBe("http://10.0.0.7:3000/v1/clinic/webhooks/twilio/sms?x=1")
    }))
})

describe("TRUSTED_PROXIES", () => {
  it("is a hop count or a list of addresses and CIDR ranges", () => {
    expect(parseTrustedProxies("2")).toEqual(Either.right({ _tag: "Hops", hops: 2 }))
    expect(parseTrustedProxies("0")).toEqual(Either.right({ _tag: "None" }))
    expect(parseTrustedProxies("10.0.0.0/8, 192.168.1.4, ::1")).toEqual(
      Either.right({ _tag: "Ranges", ranges: ["10.0.0.0/8", "192.168.1.4/32", "::1/128"] })
    )
    for (const bad of ["yes", "10.0.0.0/33", "-1", "10.0.0.0/8, nope"]) expect(Either.isLeft(parseTrustedProxies(bad)), bad).toBe(true)
  })
})

/** Hits the per-address limit of `email_has_account` from one forwarded address until it answers 429. */
const exhaust = (forwardedFor: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const response = yield* request("POST", "/v1/users/email_has_account", {
        body: { email: "someone@example.test" },
        headers: { "x-forwarded-for": forwardedFor }
      })
      if (response.status === 429) return i
      expect(response.status).toBe(200)
    }
    return yield* Effect.dieMessage("no rate limit")
  })

const check = (forwardedFor: string) =>
  Effect.map(
    request("POST", "/v1/users/email_has_account", { body: { email: "someone@example.test" }, headers: { "x-forwarded-for": forwardedFor } }),
    (r) => r.status
  )

layer(TestApp({ trustedProxies: { _tag: "Hops", hops: 1 } }))("rate limits behind one trusted proxy", (it) => {
  it.effect("count each forwarded client on its own", () =>
    Effect.gen(function*() {
      yield* exhaust("203.0.113.10")
      expect(yield* check("203.0.113.10")).toBe(429)
      // A spoofed entry to the left changes nothing: the proxy appended the real address.
      expect(yield* check("198.51.100.1, 203.0.113.10")).toBe(429)
      expect(yield* check("203.0.113.11")).toBe(200)
    }))
})

layer(TestApp())("rate limits without TRUSTED_PROXIES", (it) => {
  it.effect("ignore X-Forwarded-For: every request counts against the socket address", () =>
    Effect.gen(function*() {
      yield* exhaust("203.0.113.10")
      expect(yield* check("203.0.113.11")).toBe(429)
    }))
})
