/**
 * A local HTTP stand-in for Twilio's REST API (Messages and Calls), reached by the official
 * `twilio` client through TwilioTelephony's redirecting RequestClient (TWILIO_API_BASE_URL): it
 * records the requests the client really makes — path, Basic auth, form fields — and answers with
 * Twilio's JSON, or the error a test queued.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"

export interface Captured {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  readonly form: Record<string, Array<string>>
}

export interface StandInOptions {
  /** The SID of the n-th resource created (from 1); by default one fixed SID per kind. */
  readonly sid?: (kind: "SM" | "CA", n: number) => string
}

export const fixedSid = (kind: "SM" | "CA") => `${kind}0123456789abcdef0123456789abcdef`

const formOf = (text: string) => {
  const form: Record<string, Array<string>> = {}
  for (const [key, value] of new URLSearchParams(text)) (form[key] ??= []).push(value)
  return form
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (text += chunk))
    request.on("end", () => resolve(text))
  })

/**
 * Answers like Twilio: 201 with the resource, or the error the test queued (`failures`).
 * `holdNext()` keeps the next answer back until released (a test acts while the client waits):
 * `received` resolves with the SID the answer will carry once the request has arrived.
 */
export const twilioStandIn = (options: StandInOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const captured: Array<Captured> = []
      const failures: Array<{ status: number; code: number; message: string }> = []
      const holds: Array<{ arrived: (sid: string) => void; released: Promise<void> }> = []
      let created = 0
      const server = createServer(async (request, response) => {
        const form = formOf(await readBody(request))
        captured.push({
          method: request.method ?? "",
          path: request.url ?? "",
          authorization: request.headers.authorization,
          contentType: request.headers["content-type"],
          form
        })
        const failure = failures.shift()
        response.setHeader("content-type", "application/json")
        if (failure !== undefined) {
          response.statusCode = failure.status
          response.end(JSON.stringify({ code: failure.code, message: failure.message, more_info: `https://www.twilio.com/docs/errors/${failure.code}`, status: failure.status }))
          return
        }
        const kind = request.url?.endsWith("/Calls.json") === true ? "CA" : "SM"
        const sid = options.sid?.(kind, ++created) ?? fixedSid(kind)
        const hold = holds.shift()
        if (hold !== undefined) {
          hold.arrived(sid)
          await hold.released
        }
        response.statusCode = 201
        response.end(JSON.stringify({
          sid,
          account_sid: "AC11111111111111111111111111111111",
          to: form.To?.[0],
          from: form.From?.[0] ?? "+15550002222",
          body: form.Body?.[0],
          status: "queued",
          date_created: "Mon, 23 Nov 2026 14:00:00 +0000",
          uri: `/2010-04-01/Accounts/AC11111111111111111111111111111111/Messages/${sid}.json`
        }))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const holdNext = () => {
        let arrived!: (sid: string) => void
        let release!: () => void
        const received = new Promise<string>((resolve) => (arrived = resolve))
        holds.push({ arrived, released: new Promise<void>((resolve) => (release = resolve)) })
        return { received, release }
      }
      return { server, captured, failures, holdNext, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

export type TwilioStandIn = Effect.Effect.Success<ReturnType<typeof twilioStandIn>>
