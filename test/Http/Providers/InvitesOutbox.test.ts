/**
 * The invite flow through the local default mailer (the outbox of .eml files) and a configured
 * frontend URL: the token is taken from the email file as a user's mail client would read it.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { backendLayer, httpLayer } from "../../../src/Layers/Main.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { MemoryTelephony } from "../../../src/Layers/MemoryTelephony.js"
import { MemoryPush } from "../../../src/Layers/MemoryPush.js"
import { mailOutboxDir, OutboxMailerLive } from "../../../src/Layers/OutboxMailer.js"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { request, testConfig } from "../../support/app.js"
import { adminToken } from "./helpers.js"

const frontend = "https://app.example.test/accept-invite?source=email"

const OutboxApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(MemoryPush.layer, MemoryTelephony.layer, MemoryObjectStore.layer, OutboxMailerLive)),
  Layer.provideMerge(testConfig({ inviteUrlBase: Option.some(frontend) }))
)

/** The text of a quoted-printable body part as the mail client shows it. */
const decodeQuotedPrintable = (text: string) =>
  text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

layer(OutboxApp)("provider invites through the mail outbox", (it) => {
  it.effect("the emailed link points at the configured frontend and its token accepts the invite", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const created = yield* request("POST", "/v1/admin/clinic/providers/invites", {
        token: admin,
        body: { invite: { email: "outbox.invitee@invites.test", first_name: "Out", last_name: "Box", role: "supervisor" } }
      })
      expect(created.status).toBe(201)
      const dir = mailOutboxDir((yield* AppConfig).dataDir)
      const files = yield* Effect.promise(() => fs.readdir(dir))
      expect(files).toHaveLength(1)
      const eml = yield* Effect.promise(() => fs.readFile(path.join(dir, files[0]!), "utf8"))
      expect(eml).toContain("To: outbox.invitee@invites.test")
      expect(eml).toContain("Subject: You're invited to Care Coordination")
      const text = /Content-Transfer-Encoding: quoted-printable/i.test(eml) ? decodeQuotedPrintable(eml) : eml
      const link = /https:\/\/app\.example\.test\/accept-invite\?source=email&token=([A-Za-z0-9_%-]+)/.exec(text)
      expect(link, text).not.toBeNull()
      const token = decodeURIComponent(link![1]!)

      const valid = yield* request("GET", `/v1/admin/clinic/providers/invites/validate?token=${encodeURIComponent(token)}`)
      expect(valid.status).toBe(200)
      expect(valid.body).toMatchObject({ valid: true, invite: { email: "outbox.invitee@invites.test", role: "supervisor" } })
      const accepted = yield* request("POST", "/v1/admin/clinic/providers/invites/accept", { body: { token, password: "outbox passphrase" } })
      expect(accepted.status).toBe(201)
      expect(accepted.body).toMatchObject({ user: { email: "outbox.invitee@invites.test", role: "supervisor", confirmed: true, active: true } })
      const reused = yield* request("POST", "/v1/admin/clinic/providers/invites/accept", { body: { token, password: "outbox passphrase" } })
      expect(reused.status).toBe(404)
      expect(reused.body).toEqual({ errors: "Invite not found" })
    }))
})
