/** Instruments, families and answers for the questionnaire tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { QuestionId } from "../../../src/Domain/Ids.js"
import { clientAs } from "../../support/app.js"
import { newPatient, signedIn } from "../Patients/helpers.js"

export interface QuestionView {
  readonly id: number
  readonly key: string
  readonly position: number
  readonly type: string
  readonly options: ReadonlyArray<string>
  readonly required: boolean
}
export interface QuestionnaireView {
  readonly id: number
  readonly slug: string
  readonly version: number
  readonly active: boolean
  readonly questions: ReadonlyArray<QuestionView>
}

/** The active version of an instrument, as the catalogue shows it. */
export const instrument = (token: string, slug: string) =>
  Effect.gen(function*() {
    const listed = yield* (yield* clientAs(token)).questionnaires.list({ urlParams: { page_size: 100, active: true } })
    const found = listed.questionnaires.find((q) => q.slug === slug)
    if (found === undefined) return yield* Effect.dieMessage(`no ${slug}`)
    const key = (k: string) => found.questions.find((q) => q.key === k)!
    return { ...found, key }
  })

/** Every scored question of a PHQ-style instrument answered with the option at `index` (0 = Not at all). */
export const allAnswered = (q: QuestionnaireView, index: (question: QuestionView, i: number) => number, keyPrefix = q.slug + "_") =>
  q.questions.filter((question) => /^\w+_\d+$/.test(question.key) && question.key.startsWith(keyPrefix) && question.required)
    .map((question, i) => ({ question_id: QuestionId.make(question.id), answer: question.options[index(question, i)]! }))

/**
 * A family: staff who see every patient (an admin: providers see only the patients of their care
 * relationships), a parent and the parent's patient (whose primary provider is `providerId` if given).
 */
export const family = (patient: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const staff = yield* signedIn("admin")
    const parent = yield* signedIn("parent")
    const patientId = yield* newPatient(staff.token, { user_id: parent.id, ...patient })
    return { staff, parent, patient: patientId }
  })

export const responseOf = (body: unknown) => (body as { questionnaire_response: Record<string, any> }).questionnaire_response

export const auditCount = (action: string, targetId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM audit_events WHERE action = ${action} AND target_id = ${targetId}`).pipe(
    Effect.map((rows) => rows[0]!.count),
    Effect.orDie
  )
