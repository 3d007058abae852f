/**
 * Who sent a request and how it reached us, through the proxies `TRUSTED_PROXIES` names. Headers
 * a client can write (`X-Forwarded-For`, `-Proto`, `-Host`) are believed only as far as trusted
 * proxies vouch for them; without TRUSTED_PROXIES the socket peer is the client and the `Host`
 * header with plain `http` is how it reached us.
 *
 * Used for per-address rate limits (`clientAddress`), webhook signatures (`publicRequestUrl`: the
 * URL a provider such as Twilio signed) and span attributes (`requestOrigin`).
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import ipaddr from "ipaddr.js"
import { AppConfig, type TrustedProxies } from "../../Services/AppConfig.js"

type Address = ipaddr.IPv4 | ipaddr.IPv6

/** `::ffff:10.0.0.1` and `10.0.0.1` are one address; anything unparsable is `undefined`. */
const parseAddress = (text: string): Address | undefined => {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, "$1")
  return ipaddr.isValid(trimmed) ? ipaddr.process(trimmed) : undefined
}

const rangesCache = new WeakMap<ReadonlyArray<string>, ReadonlyArray<[Address, number]>>()
const rangesOf = (ranges: ReadonlyArray<string>) => {
  let parsed = rangesCache.get(ranges)
  if (parsed === undefined) {
    parsed = ranges.map((range) => {
      const [address, bits] = ipaddr.parseCIDR(range)
      // A v4 range also covers v4-mapped v6 peers, which `parseAddress` has already unmapped.
      return [address, bits] as [Address, number]
    })
    rangesCache.set(ranges, parsed)
  }
  return parsed
}

const inRanges = (address: Address, ranges: ReadonlyArray<[Address, number]>) =>
  ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))

/** The comma-separated values of a header that may be repeated (`a, b` and two `a`/`b` lines). */
const listOf = (value: string | undefined): Array<string> =>
  value === undefined ? [] : value.split(",").map((part) => part.trim()).filter((part) => part !== "")

/**
 * How many entries of the chain `[...X-Forwarded-For, socket peer]`, from the right, were written
 * by trusted proxies. With N hops, the N rightmost are proxies; with ranges, the proxies are the
 * rightmost run of addresses inside them. `chain.length - proxies - 1` is the client.
 */
const trustedHops = (chain: ReadonlyArray<string>, trusted: TrustedProxies): number => {
  switch (trusted._tag) {
    case "None":
      return 0
    case "Hops":
      return trusted.hops
    case "Ranges": {
      const ranges = rangesOf(trusted.ranges)
      let hops = 0
      for (let i = chain.length - 1; i >= 0; i--) {
        const address = parseAddress(chain[i]!)
        if (address === undefined || !inRanges(address, ranges)) break
        hops++
      }
      return hops
    }
  }
}

/**
 * The client's address: the entry just left of the trusted proxies in
 * `[...X-Forwarded-For, socket peer]`. When every entry is trusted (or the header is shorter
 * than the hop count) the leftmost is the best we know. An entry that is not an IP address
 * cannot be the client: the last trusted proxy is reported instead.
 */
export const clientAddressOf = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies
): string => {
  const socket = peer === undefined ? undefined : parseAddress(peer)?.toString() ?? peer
  if (trusted._tag === "None" || socket === undefined) return socket ?? "unknown"
  const chain = [...listOf(forwardedFor), socket]
  const hops = trustedHops(chain, trusted)
  if (hops === 0) return socket
  const index = Math.max(0, chain.length - 1 - hops)
  const client = parseAddress(chain[index]!)
  if (client !== undefined) return client.toString()
  return parseAddress(chain[index + 1] ?? socket)?.toString() ?? socket
}

/** Whether the socket peer is a proxy we trust, so its `X-Forwarded-Proto`/`-Host` count. */
const peerIsTrusted = (peer: string | undefined, trusted: TrustedProxies): boolean => {
  switch (trusted._tag) {
    case "None":
      return false
    case "Hops":
      return true
    case "Ranges": {
      const address = peer === undefined ? undefined : parseAddress(peer)
      return address !== undefined && inRanges(address, rangesOf(trusted.ranges))
    }
  }
}

/** A host name, IPv4 or bracketed IPv6, with an optional port: nothing else passes as a host. */
const validHost = (value: string | undefined): string | undefined =>
  value !== undefined && /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(value)
    ? value.toLowerCase()
    : undefined

export interface RequestOrigin {
  readonly scheme: "http" | "https"
  /** `api.example.org` or `api.example.org:8443`, as the client addressed us. */
  readonly host: string | undefined
}

/**
 * Scheme and host the client used. Behind trusted proxies, the first `X-Forwarded-Proto` and
 * `X-Forwarded-Host` values (set by the edge proxy) win; otherwise the connection's own.
 */
export const requestOriginOf = (
  headers: Readonly<Record<string, string | undefined>>,
  peer: string | undefined,
  encrypted: boolean,
  trusted: TrustedProxies
): RequestOrigin => {
  const own: RequestOrigin = { scheme: encrypted ? "https" : "http", host: validHost(headers["host"]) }
  if (!peerIsTrusted(peer, trusted)) return own
  const proto = listOf(headers["x-forwarded-proto"])[0]?.toLowerCase()
  return {
    scheme: proto === "https" || proto === "http" ? proto : own.scheme,
    host: validHost(listOf(headers["x-forwarded-host"])[0]) ?? own.host
  }
}

const isEncrypted = (request: HttpServerRequest.HttpServerRequest) =>
  (request.source as { socket?: { encrypted?: boolean } } | undefined)?.socket?.encrypted === true

/** The origin of the current request (see `requestOriginOf`). */
export const requestOrigin = (request: HttpServerRequest.HttpServerRequest, trusted: TrustedProxies): RequestOrigin =>
  requestOriginOf(request.headers, Option.getOrUndefined(request.remoteAddress), isEncrypted(request), trusted)

/** The client's address of the current request, for per-address rate limits. */
export const clientAddress = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  return clientAddressOf(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.trustedProxies)
})

/**
 * The public URL of the current request, path and query included, as the client (a webhook
 * provider) requested it: what Twilio signs. Without a usable Host, PUBLIC_BASE_URL's host.
 */
export const publicRequestUrl = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  const origin = requestOrigin(request, config.trustedProxies)
  const host = origin.host ?? new URL(config.publicBaseUrl).host
  return `${origin.scheme}://${host}${pathAndQuery(request.originalUrl)}`
})

/** Node gives the request target as sent (`/path?query`); a web Request gives an absolute URL. */
const pathAndQuery = (url: string) => {
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)
  return absolute === null ? url : url.slice(absolute[0].length) || "/"
}
