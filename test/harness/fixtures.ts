/**
 * What the document cannot say: how to make a request that succeeds. Race mode wants each copy
 * of its request to be one that would succeed alone, so that "exactly one success" and "never a
 * 5xx" mean something; for most operations a generated valid request aimed at a fresh target is
 * such a request, but some need a secret the server sends out of band (a confirmation code, a
 * reset token), credentials that exist, or an email no one has. A fixture, keyed by operationId,
 * prepares that and returns how to put it into the generated draft. Fixtures use the Api itself
 * (and the inbox) rather than the database, so they do not depend on how the server stores codes.
 */
import { Effect } from "effect"
import type { Case } from "./cases.js"
import { tokensOf, toWire } from "./cases.js"
import type { Received } from "./checks.js"
import { type Draft, withBodyValue } from "./generate.js"
import type { Harness } from "./harness.js"
import type { Inbox } from "./inbox.js"
import type { Seeder, World } from "./world.js"

export class FixtureError {
  readonly _tag = "FixtureError"
  constructor(readonly message: string) {}
}

export interface CallOptions {
  /** As the world's admin rather than anonymously. */
  readonly asAdmin?: boolean
  readonly pathParams?: Readonly<Record<string, string>>
  readonly query?: ReadonlyArray<readonly [string, string]>
}

export interface FixtureTools {
  readonly harness: Harness
  readonly seeder: Seeder
  readonly inbox: Inbox
  /** The world of the copy being prepared: its callers and its target. */
  readonly world: World
  /** An email no user has. */
  readonly freshEmail: Effect.Effect<string>
  /**
   * Sends `body` to another operation, throttles forgotten first, anonymously or as the world's
   * admin (`asAdmin`, for admin-only operations such as sending an invite); fails unless 2xx.
   */
  readonly call: (operationId: string, body: unknown, options?: CallOptions) => Effect.Effect<Received, FixtureError>
}

export type Fixture = (tools: FixtureTools) => Effect.Effect<(draft: Draft) => Draft, FixtureError>

/** Emails made by fixtures: a counter keeps them apart from every other email of the run. */
let freshEmails = 0

export const makeFixtureTools = (
  harness: Harness,
  seeder: Seeder,
  inbox: Inbox,
  world: World
): FixtureTools => ({
  harness,
  seeder,
  inbox,
  world,
  freshEmail: Effect.sync(() => harness.secrets.add("email", `fixture.${process.pid}.${++freshEmails}@example.test`)),
  call: (operationId, body, options = {}) =>
    Effect.gen(function*() {
      const operation = harness.operations.find((o) => o.id === operationId)
      if (operation === undefined) return yield* Effect.fail(new FixtureError(`${operationId} is not in the document`))
      yield* seeder.resetThrottles
      const testCase: Case = {
        operation,
        caller: options.asAdmin === true ? "admin" : "anonymous",
        badToken: "",
        variant: "fixture",
        draft: {
          pathParams: options.pathParams ?? {},
          query: options.query ?? [],
          headers: {},
          body: body === undefined ? { kind: "none" } : { kind: "json", value: body }
        },
        refusedByConstruction: false
      }
      const sent = yield* Effect.either(harness.send(toWire(testCase, tokensOf(world), harness.tokenHeader)))
      if (sent._tag === "Left") return yield* Effect.fail(new FixtureError(`${operationId}: ${sent.left.message}`))
      if (sent.right.status >= 300) {
        return yield* Effect.fail(new FixtureError(`${operationId} answered ${sent.right.status} ${sent.right.text.slice(0, 200)}`))
      }
      return sent.right
    })
})

/** The last match of `pattern` (its first group) in what was sent to `address`. */
const lastSecret = (inbox: Inbox, address: string, pattern: RegExp, what: string) =>
  Effect.flatMap(inbox.to(address), (messages) => {
    const found = messages.flatMap((m) => [...m.matchAll(new RegExp(pattern, "g"))].map((match) => match[1]!))
    const last = found.at(-1)
    return last === undefined
      ? Effect.fail(new FixtureError(`no ${what} in the ${messages.length} messages sent to the user`))
      : Effect.succeed(last)
  })

/** Sends a provider invite (as the world's admin) to a fresh address; the token of the emailed link. */
const inviteToken = ({ call, freshEmail, harness, inbox }: FixtureTools) =>
  Effect.gen(function*() {
    const email = yield* freshEmail
    yield* call("providerInvites.create", { invite: { email, first_name: "Invited", last_name: "Provider", role: "provider" } }, { asAdmin: true })
    const token = decodeURIComponent(yield* lastSecret(inbox, email, /[?&]token=([^\s&]+)/, "invite token"))
    harness.secrets.add("token", token)
    return token
  })

/**
 * The world's parent made a provider by the world's admin (the role change creates the profile),
 * and the profile's id, found through the provider list.
 */
const providerProfile = ({ call, world }: FixtureTools) =>
  Effect.gen(function*() {
    const target = world.principals.parent
    yield* call("adminUsers.update", { user: { role: "provider" } }, { asAdmin: true, pathParams: { id: String(target.id) } })
    const listed = yield* call("providers.list", undefined, { asAdmin: true, query: [["search", target.email]] })
    const id = (listed.json as { providers?: Array<{ id: number; user_id: number }> }).providers?.find((p) => p.user_id === target.id)?.id
    if (id === undefined) return yield* Effect.fail(new FixtureError("no provider profile after giving the provider role"))
    return id
  })

/**
 * A free future slot of a fresh provider (the world's parent given the provider role), made by the
 * world's admin through the Api: what a booking needs.
 */
const hourMs = 3_600_000
const futureHour = (days: number) => new Date(Math.ceil(Date.now() / hourMs) * hourMs + days * 24 * hourMs)
const freeSlot = (tools: FixtureTools) =>
  Effect.gen(function*() {
    const providerId = yield* providerProfile(tools)
    const created = yield* tools.call("availability.createSlot", {
      available_slot: { provider_id: providerId, start_time: futureHour(30).toISOString(), end_time: futureHour(30.04).toISOString() }
    }, { asAdmin: true })
    const id = (created.json as { available_slot?: { id: number } }).available_slot?.id
    if (id === undefined) return yield* Effect.fail(new FixtureError("no slot after creating one"))
    return id
  })

/** The draft with query parameter `name` set to `value` (replacing any). */
const withQueryValue = (draft: Draft, name: string, value: string): Draft =>
  ({ ...draft, query: [...draft.query.filter(([key]) => key !== name), [name, value]] })

/** One ECM member per harness (imported through the Api as a MIF file), shared by the activity fixtures. */
const ecmPatients = new WeakMap<Harness, number>()
const ecmPatient = ({ call, harness }: FixtureTools) =>
  Effect.gen(function*() {
    const known = ecmPatients.get(harness)
    if (known !== undefined) return known
    const csv = "MEMBER_ID,FIRST_NAME,LAST_NAME,DOB\nHRACE11,Race,Member,01-02-1990\n"
    const imported = yield* call("ecmMifs.import", { mif: { file: `data:text/csv;base64,${Buffer.from(csv).toString("base64")}` } }, { asAdmin: true })
    const fileId = (imported.json as { mif_file_id: number }).mif_file_id
    const shown = yield* call("ecmMifs.show", undefined, { asAdmin: true, pathParams: { id: String(fileId) } })
    const id = (shown.json as { mif_file?: { eligibility_informations?: Array<{ patient_id: number }> } }).mif_file?.eligibility_informations?.[0]?.patient_id
    if (id === undefined) return yield* Effect.fail(new FixtureError("the MIF import made no patient"))
    ecmPatients.set(harness, id)
    return id
  })

/** A task of the member, created through the Api by the world's admin. */
const ecmActivity = (tools: FixtureTools) =>
  Effect.gen(function*() {
    const patient = yield* ecmPatient(tools)
    const created = yield* tools.call("ecmActivities.create", { activity: { activity_type: "task", message: "Race task", assigned_to_id: tools.world.principals.admin.id } }, { asAdmin: true, pathParams: { patient_id: String(patient) } })
    return { patient, id: (created.json as { activity: { id: number } }).activity.id }
  })

/** The event of a new task: the member's newest event (fixtures run one at a time). */
const ecmEvent = (tools: FixtureTools) =>
  Effect.gen(function*() {
    const { patient } = yield* ecmActivity(tools)
    const listed = yield* tools.call("ecmEvents.list", undefined, { asAdmin: true, pathParams: { patient_id: String(patient) }, query: [["per_page", "1"]] })
    const id = (listed.json as { events?: Array<{ id: number }> }).events?.[0]?.id
    if (id === undefined) return yield* Effect.fail(new FixtureError("the new task has no event"))
    return { patient, id }
  })

const withPath = (draft: Draft, params: Readonly<Record<string, number>>): Draft =>
  ({ ...draft, pathParams: { ...draft.pathParams, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) } })

/** ECM activities and events on a member that exists, with bodies that pass the rules. */
const ecmActivityFixtures: Readonly<Record<string, Fixture>> = {
  "ecmActivities.list": (tools) => Effect.map(ecmPatient(tools), (patient) => (draft) => withPath(draft, { patient_id: patient })),
  "ecmActivities.create": (tools) =>
    Effect.map(ecmPatient(tools), (patient) => (draft) =>
      withBodyValue(withPath(draft, { patient_id: patient }), ["activity"], {
        activity_type: "task", message: "Race task", assigned_to_id: tools.world.principals.admin.id
      })),
  "ecmActivities.show": (tools) => Effect.map(ecmActivity(tools), (a) => (draft) => withPath(draft, { patient_id: a.patient, id: a.id })),
  "ecmActivities.update": (tools) =>
    Effect.map(ecmActivity(tools), (a) => (draft) => withBodyValue(withPath(draft, { patient_id: a.patient, id: a.id }), ["activity"], { status: "complete", subject: "Raced" })),
  "ecmActivities.delete": (tools) => Effect.map(ecmActivity(tools), (a) => (draft) => withPath(draft, { patient_id: a.patient, id: a.id })),
  "ecmActivities.comment": (tools) =>
    Effect.map(ecmActivity(tools), (a) => (draft) => withBodyValue(withPath(draft, { patient_id: a.patient, activity_id: a.id }), ["comment"], { body: "Race comment" })),
  "ecmEvents.list": (tools) => Effect.map(ecmPatient(tools), (patient) => (draft) => withPath(draft, { patient_id: patient })),
  "ecmEvents.counts": (tools) =>
    Effect.map(ecmPatient(tools), (patient) => (draft) =>
      withQueryValue(withQueryValue(withPath(draft, { patient_id: patient }), "start_date", "2000-01-01"), "end_date", "2100-12-31")),
  "ecmEvents.show": (tools) => Effect.map(ecmEvent(tools), (e) => (draft) => withPath(draft, { patient_id: e.patient, id: e.id })),
  // The ECM SMS and call: a patient that exists, and a number that parses.
  "ecmCommunications.sendSms": (tools) =>
    Effect.map(ecmPatient(tools), (patient) => (draft) =>
      withBodyValue(withPath(draft, { patient_id: patient }), ["sms"], { phone_number: "(415) 555-0132", body: "Race message" })),
  "ecmCommunications.placeCall": (tools) =>
    Effect.map(ecmPatient(tools), (patient) => (draft) =>
      withBodyValue(withPath(draft, { patient_id: patient }), ["call"], { phone_number: "415-555-0133" }))
}

/**
 * A clinic patient, a collaborator linked to it (both made by the world's admin) and an
 * assessment link for them, its token taken from the response (the emailed copy goes through the
 * job queue): what the public link operations need to succeed.
 */
const assessedPatients = new WeakMap<Harness, number>()
const assessedPatient = ({ call, harness }: FixtureTools) =>
  Effect.gen(function*() {
    const known = assessedPatients.get(harness)
    if (known !== undefined) return known
    const created = yield* call("clinicPatients.create", { patient: { first_name: "Assessed", last_name: "Fixture", date_of_birth: "2015-06-01" } }, { asAdmin: true })
    const id = (created.json as { patient?: { id?: number } }).patient?.id
    if (id === undefined) return yield* Effect.fail(new FixtureError("no patient id in the create response"))
    assessedPatients.set(harness, id)
    return id
  })

const assessmentLink = (tools: FixtureTools) =>
  Effect.gen(function*() {
    const { call, freshEmail, harness } = tools
    // One patient per harness; a collaborator per link, so no link revokes another copy's.
    const patientId = yield* assessedPatient(tools)
    const email = yield* freshEmail
    const collaborator = yield* call("collaborators.create", {
      collaborator: { first_name: "Casey", last_name: "Fixture", email, organization: "Fixture School", type: "school", patient_ids: [patientId] }
    }, { asAdmin: true })
    const collaboratorId = (collaborator.json as { collaborator?: { id?: number } }).collaborator?.id
    if (collaboratorId === undefined) return yield* Effect.fail(new FixtureError("no collaborator id in the create response"))
    const issued = yield* call("collaboratorAssessments.token", undefined, {
      asAdmin: true,
      query: [["collaborator_id", String(collaboratorId)], ["patient_id", String(patientId)], ["assessment_type", "social_skills"]]
    })
    const token = (issued.json as { token?: string }).token
    if (token === undefined) return yield* Effect.fail(new FixtureError("no token in the token response"))
    harness.secrets.add("token", token)
    return token
  })

/** Answers the social skills set accepts. */
const socialSkillsAnswers = ["starts_conversations", "takes_turns", "cooperates", "resolves_conflict", "empathy"]
  .map((question_id) => ({ question_id, answer: "Sometimes" }))

/** The public assessment link operations with a link that works. */
const collaboratorFixtures: Readonly<Record<string, Fixture>> = {
  "collaboratorAssessments.form": (tools) => Effect.map(assessmentLink(tools), (token) => (draft) => withQueryValue(draft, "token", token)),
  "collaboratorAssessments.decline": (tools) => Effect.map(assessmentLink(tools), (token) => (draft) => withBodyValue(draft, ["token"], token)),
  "collaboratorAssessments.create": (tools) =>
    Effect.map(assessmentLink(tools), (token) => (draft) =>
      withBodyValue(withBodyValue(draft, ["token"], token), ["collaborator_assessment"], { responses: socialSkillsAnswers }))
}

export const fixtures: Readonly<Record<string, Fixture>> = {
  /** The copy's own parent signs in: existing credentials. */
  "users.signIn": ({ seeder, world }) =>
    Effect.succeed((draft) => withBodyValue(draft, ["user"], { email: world.principals.parent.email, password: seeder.password })),

  /** An email no one has, so the registration can succeed. */
  "users.register": ({ freshEmail }) => Effect.map(freshEmail, (email) => (draft) => withBodyValue(draft, ["user", "email"], email)),

  /** An unconfirmed account, named by id and email as a caller without a token must. */
  "users.resendConfirmation": ({ seeder }) =>
    Effect.map(seeder.user({ role: "parent", confirmed: false, signedIn: false }), (user) => (draft) =>
      withBodyValue(withBodyValue(draft, ["user_id"], user.id), ["email"], user.email)),

  /** An unconfirmed account and the code texted to it after a resend. */
  "users.confirm": ({ call, inbox, seeder }) =>
    Effect.gen(function*() {
      const user = yield* seeder.user({ role: "parent", confirmed: false, signedIn: false })
      yield* call("users.resendConfirmation", { user_id: user.id, email: user.email })
      const code = yield* lastSecret(inbox, user.phone, /\b(\d{6})\b/, "confirmation code")
      return (draft) => withBodyValue(withBodyValue(draft, ["user_id"], user.id), ["confirmation_code"], code)
    }),

  /** The token of a provider invite an admin sent to a fresh address, read from the email. */
  "providerInvites.validate": (tools) => Effect.map(inviteToken(tools), (token) => (draft) => withQueryValue(draft, "token", token)),

  /** The same, to accept: the copy creates the invitee's account. */
  "providerInvites.accept": (tools) => Effect.map(inviteToken(tools), (token) => (draft) => withBodyValue(draft, ["token"], token)),

  /** The target as a provider with a profile: show it. */
  "providers.show": (tools) => Effect.map(providerProfile(tools), (id) => (draft) => ({ ...draft, pathParams: { ...draft.pathParams, id: String(id) } })),

  /** The target as a provider with a profile, and changes that pass the update rules. */
  "providers.update": (tools) =>
    Effect.map(providerProfile(tools), (id) => (draft) =>
      withBodyValue({ ...draft, pathParams: { ...draft.pathParams, id: String(id) } }, ["provider"], {
        roles: ["provider", "trainee"],
        specialty: "counseling",
        license_number: "LIC-1"
      })),

  /** A provider of the copy's own and a future time: the slot is created once (overlaps are 409). */
  "availability.createSlot": (tools) =>
    Effect.map(providerProfile(tools), (providerId) => (draft) =>
      withBodyValue(draft, ["available_slot"], {
        provider_id: providerId,
        start_time: futureHour(40).toISOString(),
        end_time: futureHour(40.5).toISOString(),
        appointment_type: "therapy"
      })),

  /** A free slot and a patient of the copy's own: the slot is booked once. */
  "availability.createBook": (tools) =>
    Effect.gen(function*() {
      const slotId = yield* freeSlot(tools)
      const created = yield* tools.call("clinicPatients.create", { patient: { first_name: "Booking", last_name: "Fixture", date_of_birth: "2015-06-01" } }, { asAdmin: true })
      const patientId = (created.json as { patient?: { id?: number } }).patient?.id
      if (patientId === undefined) return yield* Effect.fail(new FixtureError("no patient id in the create response"))
      return (draft) => withBodyValue(draft, ["book"], { available_slot_id: slotId, patient_id: patientId, notes: "Harness booking" })
    }),

  /**
   * A clinic patient the copy's admin creates: the waitlist's one-open-spot rule is about a patient
   * that exists.
   */
  "spots.create": ({ call }) =>
    Effect.gen(function*() {
      const created = yield* call("clinicPatients.create", { patient: { first_name: "Waitlist", last_name: "Fixture", date_of_birth: "2015-06-01" } }, { asAdmin: true })
      const id = (created.json as { patient?: { id?: number } }).patient?.id
      if (id === undefined) return yield* Effect.fail(new FixtureError("no patient id in the create response"))
      return (draft) => ({ ...draft, pathParams: { ...draft.pathParams, patient_id: String(id) } })
    }),

  /** A reset token emailed after a reset request. */
  "users.resetPassword": ({ call, harness, inbox, seeder }) =>
    Effect.gen(function*() {
      const user = yield* seeder.user({ role: "parent", signedIn: false })
      yield* call("users.requestPasswordReset", { email: user.email })
      const token = decodeURIComponent(yield* lastSecret(inbox, user.email, /[?&]token=([^\s&]+)/, "reset token"))
      harness.secrets.add("token", token)
      return (draft) => withBodyValue(draft, ["token"], token)
    }),

  ...ecmActivityFixtures,
  ...collaboratorFixtures
}
