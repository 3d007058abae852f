/**
 * One raw HTTP/1.1 connection that sends GETs one after another on the same socket and notes
 * when the server closes it. An `http.Agent` would hide both: it picks sockets itself and drops
 * idle ones on its own, a second before the server's `Keep-Alive: timeout` hint.
 */
import * as net from "node:net"

export interface RawResponse {
  readonly status: number
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface KeepAliveConnection {
  /** Sends a GET on this connection; its response (which must carry a Content-Length). */
  readonly get: (path: string) => Promise<RawResponse>
  /** Resolves when the connection closes, with `performance.now()` at that moment. */
  readonly closed: Promise<number>
  readonly destroy: () => void
}

const headerEnd = "\r\n\r\n"

/** The first whole response in `buffered` and the bytes after it, or undefined while incomplete. */
const parseResponse = (buffered: Buffer): { response: RawResponse; rest: Buffer } | undefined => {
  const end = buffered.indexOf(headerEnd)
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = buffered.subarray(0, end).toString("latin1").split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  if (headers["content-length"] === undefined) throw new Error(`a response without Content-Length: ${statusLine}`)
  const bodyStart = end + headerEnd.length
  const bodyEnd = bodyStart + Number(headers["content-length"])
  if (buffered.length < bodyEnd) return undefined
  const response = { status: Number(statusLine.split(" ")[1]), headers, body: buffered.subarray(bodyStart, bodyEnd).toString("utf8") }
  return { response, rest: buffered.subarray(bodyEnd) }
}

export const openConnection = (port: number): Promise<KeepAliveConnection> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let buffered: Buffer = Buffer.alloc(0)
    let waiting: { resolve: (response: RawResponse) => void; reject: (error: Error) => void } | undefined
    const closed = new Promise<number>((done) => socket.once("close", () => done(performance.now())))
    const fail = (error: Error) => {
      waiting?.reject(error)
      waiting = undefined
    }
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      try {
        const parsed = waiting === undefined ? undefined : parseResponse(buffered)
        if (parsed === undefined) return
        buffered = parsed.rest
        const { resolve: answer } = waiting!
        waiting = undefined
        answer(parsed.response)
      } catch (error) {
        fail(error as Error)
      }
    })
    socket.on("error", fail)
    socket.once("close", () => fail(new Error("the server closed the connection")))
    socket.once("connect", () => {
      socket.off("error", reject)
      resolve({
        get: (path) =>
          new Promise<RawResponse>((answer, refuse) => {
            if (waiting !== undefined) return refuse(new Error("one request at a time"))
            waiting = { resolve: answer, reject: refuse }
            socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`)
          }),
        closed,
        destroy: () => socket.destroy()
      })
    })
    socket.once("error", reject)
  })
