/**
 * An email activity through the production SMTP layer to a local SMTP server (smtp-server): the
 * message a member receives, and a refused recipient as the 422 that saves nothing.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, TestClock } from "effect"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { SmtpMailerLive } from "../../../src/Layers/SmtpMailer.js"
import { testConfig } from "../../support/app.js"
import { createActivity, insertPatient, staffUser } from "./activitySupport.js"
import { query } from "./support.js"

interface Received {
  readonly to: ReadonlyArray<string>
  readonly data: string
}

class SmtpInbox extends Context.Tag("test/SmtpInbox")<SmtpInbox, { readonly port: number; readonly received: Array<Received> }>() {}

/** A real SMTP server on a random local port; refuses recipients at blocked.test. */
const SmtpInboxLive = Layer.scoped(SmtpInbox, Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly received: Array<Received>; readonly server: SMTPServer }>((resume) => {
    const received: Array<Received> = []
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onRcptTo: (address, _session, callback) =>
        address.address.endsWith("@blocked.test")
          ? callback(Object.assign(new Error("Mailbox unavailable"), { responseCode: 550 }))
          : callback(),
      onData: (stream, session, callback) => {
        const chunks: Array<Buffer> = []
        stream.on("data", (chunk: Buffer) => chunks.push(chunk))
        stream.on("end", () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString("utf8") })
          callback()
        })
      }
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ port: (server.server.address() as AddressInfo).port, received, server })))
  }),
  ({ server }) => Effect.async<void>((resume) => server.close(() => resume(Effect.void)))
))

const SmtpApp = Layer.unwrapEffect(Effect.map(SmtpInbox, ({ port }) =>
  httpLayer(NodeHttpServer.layerTest).pipe(
    Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
    Layer.provideMerge(backendLayer),
    Layer.provideMerge(Layer.mergeAll(MemoryTelephony.layer, MemoryObjectStore.layer, SmtpMailerLive)),
    Layer.provideMerge(testConfig({ smtpUrl: Option.some(Redacted.make(`smtp://127.0.0.1:${port}`)) }))
  ))).pipe(Layer.provideMerge(SmtpInboxLive))

layer(SmtpApp)("email activities through SMTP", (it) => {
  it.effect("the member receives the email; a refused recipient is a 422 and nothing is saved", () =>
    Effect.gen(function*() {
      const inbox = yield* SmtpInbox
      const patient = yield* insertPatient()
      const me = yield* staffUser()
      const sent = yield* createActivity(me.token, patient, {
        activity_type: "email", email_to: "member@example.test", subject: "Your care plan", body: "Here is your plan.",
        email_attachments: ["https://files.example.test/plan.pdf"], assigned_to_id: me.id
      })
      expect(sent.status).toBe(201)
      expect(inbox.received).toHaveLength(1)
      const [message] = inbox.received
      expect(message!.to).toEqual(["member@example.test"])
      expect(message!.data).toContain("Subject: Your care plan")
      expect(message!.data).toContain("Here is your plan.")
      expect(message!.data).toContain("https://files.example.test/plan.pdf")

      const refused = yield* createActivity(me.token, patient, { activity_type: "email", email_to: "someone@blocked.test", body: "b", assigned_to_id: me.id })
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 422, body: { errors: ["Email could not be sent: SMTP delivery failed (EENVELOPE 550)"] }
      })
      expect(inbox.received).toHaveLength(1)
      expect(yield* query(`SELECT email_to FROM ecm_activities WHERE patient_id = $1`, patient)).toEqual([{ email_to: "member@example.test" }])
    }))
})
