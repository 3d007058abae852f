import * as net from "node:net"

/** A TCP port on 127.0.0.1 that nothing listens on right now (the embedded PostgreSQL, tests, benches). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")))
    })
  })
