/**
 * Fetches a member file from a client-supplied URL without letting the URL reach inside the
 * network (SSRF). Only http and https; every address a host name resolves to, and the address the
 * socket actually connected to, must be public unicast (IPv4 and IPv6: loopback, private,
 * link-local, CGNAT, unique-local, multicast, reserved, cloud metadata and IPv4-in-IPv6 forms are
 * refused). Redirects are followed by hand, each hop checked the same way. One deadline covers
 * every hop and the body; the body is cut off past the size limit.
 */
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { Data } from "effect"
import ipaddr from "ipaddr.js"

export type FetchRefusal =
  | { readonly _tag: "Scheme" }
  | { readonly _tag: "Address" }
  | { readonly _tag: "TooManyRedirects" }
  | { readonly _tag: "Timeout" }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Status"; readonly status: number }
  | { readonly _tag: "Unreachable"; readonly code: string }

export class FetchRefused extends Data.TaggedError("FetchRefused")<{ readonly refusal: FetchRefusal }> {
  override get message() {
    return this.refusal._tag
  }
}

export interface FetchPolicy {
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly maxRedirects: number
  /** Networks exempted from the private-address refusal (CIDR). */
  readonly allowedNetworks: ReadonlyArray<string>
}

export interface Fetched {
  readonly body: Buffer
  /** The last URL of the redirect chain (its path may name the file type). */
  readonly finalUrl: URL
  readonly contentType: string | undefined
}

/** Instance metadata services: refused even inside an allowed network. */
const metadataAddresses = ["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"]
  .map((a) => ipaddr.parse(a).toNormalizedString())

const parseNetworks = (cidrs: ReadonlyArray<string>) =>
  cidrs.map((cidr) => ipaddr.parseCIDR(cidr))

/**
 * Whether a connection to this address may be made. `ipaddr.process` turns IPv4-mapped IPv6
 * (`::ffff:127.0.0.1`) into the IPv4 address it hides; only the `unicast` range (public) passes,
 * unless the address is in an allowed network.
 */
export const isAllowedAddress = (address: string, allowedNetworks: ReadonlyArray<string> = []): boolean => {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "")
  // Only the forms sockets and resolvers report (ipaddr.js also reads legacy `1.2.3`).
  if (net.isIP(bare) === 0) return false
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.process(bare)
  } catch {
    return false
  }
  if (metadataAddresses.includes(parsed.toNormalizedString())) return false
  const allowed = parseNetworks(allowedNetworks).some(([network, bits]) =>
    network.kind() === parsed.kind() && parsed.match(network as never, bits))
  return allowed || parsed.range() === "unicast"
}

const refused = (refusal: FetchRefusal) => new FetchRefused({ refusal })

/** `lookup` for the request: resolves, then refuses the host if any of its addresses is not allowed. */
const checkedLookup = (policy: FetchPolicy): net.LookupFunction => (hostname, options, callback) => {
  dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints ?? 0 }, (error, addresses) => {
    if (error) return callback(error, "", 4)
    if (addresses.length === 0 || addresses.some((a) => !isAllowedAddress(a.address, policy.allowedNetworks))) {
      return callback(refused({ _tag: "Address" }) as NodeJS.ErrnoException, "", 4)
    }
    if (options.all) return (callback as unknown as (e: null, a: Array<dns.LookupAddress>) => void)(null, addresses)
    callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}

interface Hop {
  readonly status: number
  readonly location: string | undefined
  readonly body: Buffer | undefined
  readonly contentType: string | undefined
}

const requestOnce = (url: URL, policy: FetchPolicy, signal: AbortSignal): Promise<Hop> =>
  new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, "")
    // Node skips `lookup` for IP literals: check them here (and the socket below in any case).
    if (net.isIP(host) !== 0 && !isAllowedAddress(host, policy.allowedNetworks)) return reject(refused({ _tag: "Address" }))
    const client = url.protocol === "https:" ? https : http
    const request = client.request(url, {
      method: "GET",
      agent: false,
      lookup: checkedLookup(policy),
      signal,
      headers: { "accept": "*/*", "user-agent": "care-coordination-api (MIF import)" }
    })
    request.on("socket", (socket) => {
      // The address actually connected to, whatever resolved it.
      socket.once("connect", () => {
        if (socket.remoteAddress === undefined || !isAllowedAddress(socket.remoteAddress, policy.allowedNetworks)) {
          request.destroy(refused({ _tag: "Address" }))
        }
      })
    })
    request.on("error", (error) => {
      if (error instanceof FetchRefused) return reject(error)
      if (signal.aborted) return reject(refused({ _tag: "Timeout" }))
      const cause = (error as { cause?: unknown }).cause
      if (cause instanceof FetchRefused) return reject(cause)
      reject(refused({ _tag: "Unreachable", code: (error as NodeJS.ErrnoException).code ?? "ERROR" }))
    })
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      const contentType = response.headers["content-type"]
      if (status >= 300 && status < 400) {
        response.resume()
        return resolve({ status, location: response.headers.location, body: undefined, contentType })
      }
      if (status < 200 || status >= 300) {
        response.resume()
        return reject(refused({ _tag: "Status", status }))
      }
      if (Number(response.headers["content-length"] ?? 0) > policy.maxBytes) {
        request.destroy()
        return reject(refused({ _tag: "TooLarge" }))
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > policy.maxBytes) {
          request.destroy()
          return reject(refused({ _tag: "TooLarge" }))
        }
        chunks.push(chunk)
      })
      response.on("end", () => resolve({ status, location: undefined, body: Buffer.concat(chunks), contentType }))
      response.on("error", () => reject(signal.aborted ? refused({ _tag: "Timeout" }) : refused({ _tag: "Unreachable", code: "RESET" })))
    })
    request.end()
  })

const checkScheme = (url: URL) => {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw refused({ _tag: "Scheme" })
}

/** GETs `input` under the policy; rejects with `FetchRefused`. `signal` cancels (interruption). */
export const safeFetch = async (input: string, policy: FetchPolicy, signal?: AbortSignal): Promise<Fetched> => {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    throw refused({ _tag: "Scheme" })
  }
  checkScheme(url)
  const deadline = AbortSignal.timeout(policy.timeoutMs)
  const combined = signal === undefined ? deadline : AbortSignal.any([signal, deadline])
  for (let hop = 0; hop <= policy.maxRedirects; hop++) {
    const result = await requestOnce(url, policy, combined)
    if (result.body !== undefined) return { body: result.body, finalUrl: url, contentType: result.contentType }
    if (result.location === undefined) throw refused({ _tag: "Status", status: result.status })
    try {
      url = new URL(result.location, url)
    } catch {
      throw refused({ _tag: "Unreachable", code: "BAD_REDIRECT" })
    }
    checkScheme(url)
  }
  throw refused({ _tag: "TooManyRedirects" })
}
