import { describe, expect, it } from "@effect/vitest"
import * as http from "node:http"
import { FetchRefused, isAllowedAddress, safeFetch } from "../../../src/Services/Ecm/SafeFetch.js"

describe("SSRF policy", () => {
  it("allows public unicast addresses only, IPv4 and IPv6", () => {
    for (const address of ["8.8.8.8", "93.184.216.34", "2001:4860:4860::8888", "::ffff:8.8.8.8"]) expect(isAllowedAddress(address), address).toBe(true)
    const refused = {
      loopback: ["127.0.0.1", "127.255.255.254", "::1"],
      private: ["10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1"],
      linkLocal: ["169.254.0.1", "fe80::1"],
      metadata: ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"],
      cgnat: ["100.64.0.1", "100.127.255.254"],
      uniqueLocal: ["fc00::1", "fd12:3456::1"],
      unspecified: ["0.0.0.0", "::"],
      multicastAndBroadcast: ["224.0.0.1", "ff02::1", "255.255.255.255"],
      reserved: ["240.0.0.1", "192.0.2.1", "198.18.0.1"],
      hiddenIPv4: ["::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:7f00:1::", "64:ff9b::7f00:1"],
      notAnAddress: ["", "localhost", "1.2.3"]
    }
    for (const [kind, addresses] of Object.entries(refused)) {
      for (const address of addresses) expect(isAllowedAddress(address), `${kind} ${address}`).toBe(false)
    }
  })

  it("lets allowed networks through, but never a metadata address", () => {
    expect(isAllowedAddress("10.1.2.3", ["10.1.0.0/16"])).toBe(true)
    expect(isAllowedAddress("10.2.0.1", ["10.1.0.0/16"])).toBe(false)
    expect(isAllowedAddress("169.254.169.254", ["169.254.0.0/16"])).toBe(false)
  })

  it("stops waiting at the deadline", async () => {
    const server = http.createServer(() => { /* never answers */ })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve))
    const port = (server.address() as { port: number }).port
    try {
      const outcome = await safeFetch(`http://127.0.0.2:${port}/slow.csv`, { timeoutMs: 200, maxBytes: 100, maxRedirects: 1, allowedNetworks: ["127.0.0.2/32"] })
        .then(() => "fetched", (error: unknown) => (error instanceof FetchRefused ? error.refusal._tag : String(error)))
      expect(outcome).toBe("Timeout")
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
