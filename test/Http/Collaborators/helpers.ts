/** The people of the collaborator tests: owners, other parents, a patient's primary provider and another provider. */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { LinkSealKeyLive } from "../../../src/Layers/Http/Collaborators/index.js"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryMailer } from "../../../src/Layers/MemoryMailer.js"
import { AssessmentJobs } from "../../../src/Services/Collaborators/AssessmentJobs.js"
import { incidentAlertTask, sendAssessmentLinkTask } from "../../../src/Services/Collaborators/AssessmentTasks.js"
import type { CreateCollaboratorRequest } from "../../../src/Api/Collaborators/Collaborators.js"
import type { AssessmentType } from "../../../src/Domain/Collaborators/Collaborator.js"
import type { CollaboratorId, PatientId } from "../../../src/Domain/Ids.js"
import { clientAs, signIn } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { adminToken, insertUser, makeProvider, password } from "../Providers/helpers.js"

export { adminToken, auditActions } from "../Providers/helpers.js"

let counter = 0

/** A signed-in user of the role; id, email and token. */
export const person = (role: "parent" | "provider" = "parent") =>
  Effect.gen(function*() {
    const email = `person${++counter}.${Date.now()}@collaborators.test`
    if (role === "parent") {
      const id = yield* insertUser({ email })
      return { id, email, token: yield* signIn(email, password), providerId: undefined as number | undefined }
    }
    const provider = yield* makeProvider(yield* adminToken, "provider", { email })
    return { id: provider.userId, email, token: yield* signIn(email, password), providerId: provider.id as number | undefined }
  })

/** A child named Robin (the mails must name no one but the first name), born 2015-06-01. */
export const insertPatient = (options: { userId?: number | null; providerId?: number | null; first?: string } = {}) =>
  fixtures.insertPatient({
    first_name: options.first ?? "Robin",
    last_name: `Child${++counter}`,
    date_of_birth: "2015-06-01",
    user_id: options.userId ?? null,
    provider_id: options.providerId ?? null
  })

export type Person = Effect.Effect.Success<ReturnType<typeof person>>

/**
 * A family (the owner parent and their child) whose child's primary provider is `primary`; staff
 * owner, other parent and other provider beside them.
 */
export const cast = Effect.gen(function*() {
  const admin = yield* adminToken
  const ownerParent = yield* person("parent")
  const otherParent = yield* person("parent")
  const primary = yield* person("provider")
  const otherProvider = yield* person("provider")
  const staffOwner = yield* person("provider")
  const patientId = yield* insertPatient({ userId: ownerParent.id, providerId: primary.providerId! })
  return { admin, ownerParent, otherParent, primary, otherProvider, staffOwner, patientId }
})

type NewCollaborator = CreateCollaboratorRequest["collaborator"]

/** A teacher at Lincoln Elementary with a unique email, changed by `extra` (which a raw request may make invalid). */
export const collaboratorBody = (extra: Record<string, unknown> = {}) => ({
  first_name: "Jordan",
  last_name: "Rivera",
  email: `teacher${++counter}@school.test`,
  organization: "Lincoln Elementary",
  type: "school",
  ...extra
})

/** A collaborator added through the typed client. */
export const createCollaborator = (token: string, extra: Partial<NewCollaborator> = {}) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const collaborator: NewCollaborator = {
      first_name: "Jordan", last_name: "Rivera", email: `teacher${++counter}@school.test`, organization: "Lincoln Elementary", type: "school", ...extra
    }
    return (yield* client.collaborators.create({ payload: { collaborator } })).collaborator
  }).pipe(Effect.orDie)

export const tokenPath = (collaboratorId: number, patientId: number, type: string, send = false) =>
  `/v1/collaborator_assessments/token?collaborator_id=${collaboratorId}&patient_id=${patientId}&assessment_type=${type}${send ? "&send=true" : ""}`

/** An assessment link issued through the typed client. */
export const issueToken = (token: string, collaboratorId: CollaboratorId, patientId: PatientId, type: AssessmentType, send = false) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    return yield* client.collaboratorAssessments.token({
      urlParams: { collaborator_id: collaboratorId, patient_id: patientId, assessment_type: type, ...(send ? { send } : {}) }
    })
  }).pipe(Effect.orDie)

/** Runs the queued link and alert mails. */
export const runMailJobs = runDueJobs([sendAssessmentLinkTask, incidentAlertTask]).pipe(
  Effect.provide(AssessmentJobs.Default.pipe(Layer.provide(LinkSealKeyLive)))
)

export const assessmentJobs = AssessmentJobs.pipe(Effect.provide(AssessmentJobs.Default.pipe(Layer.provide(LinkSealKeyLive))))

/** The token of the last link mailed to an address. */
export const mailedToken = (email: string) =>
  Effect.gen(function*() {
    const mails = (yield* (yield* MemoryMailer).sent).filter((m) => m.to.includes(email))
    const match = /[?&]token=([^\s&]+)/.exec(mails.at(-1)?.text ?? "")
    if (match === null) return yield* Effect.dieMessage(`no link mailed to ${email}`)
    return decodeURIComponent(match[1]!)
  })

export const forgetThrottles = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM rate_limits`).pipe(Effect.orDie)

export const answers = {
  social_skills: (labels: ReadonlyArray<string>) =>
    ["starts_conversations", "takes_turns", "cooperates", "resolves_conflict", "empathy"].map((question_id, i) => ({ question_id, answer: labels[i]! }))
}

export const forbiddenBody = { errors: "You are not authorized to perform this action." }
export const invalidLinkBody = { errors: "Assessment link is invalid or has expired" }
