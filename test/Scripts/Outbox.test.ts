import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { makeOutboxMailer } from "../../src/Layers/OutboxMailer.js"
import { makeOutboxTelephony } from "../../src/Layers/OutboxTelephony.js"
import { formatItem, readOutbox } from "../../scripts/outbox/read.js"

// Long enough, and with `=` and `&`, that quoted-printable folds it and escapes its `=` as `=3D`.
const inviteLink =
  "http://localhost:3000/v1/admin/clinic/providers/invites/validate?token=Zm9vYmFyYmF6cXV4cXV1eHF1dXpxdXV4eHh4eHh4eHh4eHh4eHh4eA&source=mail"

describe("npm run outbox", () => {
  it.scoped("decodes a quoted-printable mail's link whole and lists a text's code", () =>
    Effect.gen(function*() {
      const dataDir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(path.join(os.tmpdir(), "cc-outbox-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const mailer = yield* makeOutboxMailer({ dataDir, mailFrom: "Clinic <no-reply@localhost>" })
      yield* mailer.send({
        to: ["new.provider@example.org"],
        subject: "You are invited to the clinic — café",
        text: `Welcome, Zoë! Accept your invitation: ${inviteLink}\nThe link works for 7 days.`
      })
      const telephony = makeOutboxTelephony({ dataDir, twilio: Option.none() })
      yield* telephony.sendSms({ to: "+14155550123", body: "Your confirmation code is 482913. It expires in 10 minutes." })

      // The raw file really is encoded: a naive grep for the link finds nothing.
      const [eml] = yield* Effect.promise(() => readdir(path.join(dataDir, "outbox", "mail")))
      const raw = yield* Effect.promise(() => readFile(path.join(dataDir, "outbox", "mail", eml!), "utf8"))
      expect(raw).toContain("quoted-printable")
      expect(raw).not.toContain(inviteLink)

      const items = yield* Effect.promise(() => readOutbox(dataDir, 5))
      const mail = items.find((item) => item.kind === "mail")
      const text = items.find((item) => item.kind === "sms")
      expect(mail?.links).toEqual([inviteLink])
      expect(mail?.subject).toBe("You are invited to the clinic — café")
      expect(mail?.text).toContain("Welcome, Zoë!")
      expect(text?.codes).toEqual(["482913"])
      expect(formatItem(mail!)).toContain(`link: ${inviteLink}`)
      expect(formatItem(text!)).toContain("code: 482913")
    }))

  it.effect("an empty or missing outbox reads as nothing", () =>
    Effect.promise(() => readOutbox(path.join(os.tmpdir(), "cc-outbox-none-" + process.pid), 5)).pipe(
      Effect.map((items) => expect(items).toEqual([]))
    ))
})
