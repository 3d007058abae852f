/**
 * The only SQL on `questionnaire_responses` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. Which responses a viewer sees is the access module's list scope (clinical content).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { Role } from "../../Domain/Accounts/User.js"
import { QuestionnaireId, QuestionnaireResponseId } from "../../Domain/Ids.js"
import { AnswerValue, Subscales } from "../../Domain/Questionnaires/Questionnaire.js"
import { ResponseStatus } from "../../Domain/Questionnaires/Scoring.js"
import { Access } from "../Access/Access.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema, textArray } from "../Repository.js"

/** Answers as stored in `answers` jsonb: question id (as text) → answer. */
export const StoredAnswers = Schema.Record({ key: Schema.String, value: AnswerValue })

const NullDate = Schema.NullOr(Schema.DateFromSelf)

export const ResponseRow = Schema.Struct({
  id: QuestionnaireResponseId,
  questionnaire_id: QuestionnaireId,
  questionnaire_version: Schema.Int,
  patient_id: Schema.Int,
  status: ResponseStatus,
  answers: StoredAnswers,
  score: Schema.NullOr(Schema.Int),
  severity: Schema.NullOr(Schema.String),
  subscales: Subscales,
  flags: Schema.Array(Schema.String),
  review_notes: Schema.NullOr(Schema.String),
  reviewed_by_id: Schema.NullOr(Schema.Int),
  reviewed_at: NullDate,
  completed_at: NullDate,
  submitted_at: NullDate,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ResponseRow = typeof ResponseRow.Type

const columns = `id, questionnaire_id, questionnaire_version, patient_id, status, answers, score, severity, subscales,
  flags, review_notes, reviewed_by_id, reviewed_at, completed_at, submitted_at, created_at, updated_at`

/** The scored state a save writes. */
const Scored = {
  answers: StoredAnswers,
  score: Schema.NullOr(Schema.Int),
  severity: Schema.NullOr(Schema.String),
  subscales: Subscales,
  flags: Schema.Array(Schema.String),
  completedAt: NullDate,
  submittedAt: NullDate
}

export const NewResponse = Schema.Struct({
  questionnaireId: Schema.Number,
  version: Schema.Int,
  patientId: Schema.Number,
  status: ResponseStatus,
  ...Scored,
  createdById: Schema.NullOr(Schema.Number),
  inviteId: Schema.NullOr(Schema.Number),
  at: Schema.DateFromSelf
})

export const ResponseChange = Schema.Struct({
  id: Schema.Number,
  status: ResponseStatus,
  ...Scored,
  reviewNotes: Schema.NullOr(Schema.String),
  reviewedById: Schema.NullOr(Schema.Number),
  reviewedAt: NullDate,
  at: Schema.DateFromSelf
})

/**
 * Whose responses a statement reads: every patient's (a load by id, whose patient the service then
 * checks), or those of the patients a viewer sees clinical content of at a time (`Access.scope`).
 */
export const ResponseScope = Schema.Union(
  Schema.TaggedStruct("All", {}),
  Schema.TaggedStruct("Viewer", { id: Schema.Number, role: Role, at: Schema.DateFromSelf })
)
export type ResponseScope = typeof ResponseScope.Type

export const ResponseCriteria = Schema.Struct({
  scope: ResponseScope,
  /** One patient the caller may see (checked by the service); else the scope decides. */
  patientId: Schema.optional(Schema.Number),
  questionnaireId: Schema.optional(Schema.Number),
  status: Schema.optional(ResponseStatus)
})
export type ResponseCriteria = typeof ResponseCriteria.Type

const ResponseLookup = Schema.Struct({ id: Schema.Number, scope: ResponseScope, lock: Schema.Boolean })

export class QuestionnaireResponsesRepo extends Effect.Service<QuestionnaireResponsesRepo>()("app/QuestionnaireResponsesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const listPage = yield* makeListPage
    const byCreation = { created_at: sql`created_at` }

    const insertOne = SqlSchema.single({
      Request: NewResponse,
      Result: ResponseRow,
      execute: (r) =>
        sql`INSERT INTO questionnaire_responses (questionnaire_id, questionnaire_version, patient_id,
            status, answers, score, severity, subscales, flags, created_by_id, invite_id, completed_at, submitted_at, created_at, updated_at)
          VALUES (${r.questionnaireId}, ${r.version}, ${r.patientId}, ${r.status}, ${JSON.stringify(r.answers)}::jsonb, ${r.score},
            ${r.severity}, ${JSON.stringify(r.subscales)}::jsonb, ${textArray(r.flags)}::text[], ${r.createdById},
            ${r.inviteId}, ${r.completedAt}, ${r.submittedAt}, ${r.at}, ${r.at})
          RETURNING ${cols}`
    })

    const findById = SqlSchema.findOne({
      Request: ResponseLookup,
      Result: ResponseRow,
      execute: ({ id, lock, scope }) =>
        sql`SELECT ${cols} FROM questionnaire_responses WHERE id = ${id}
          AND ${scope._tag === "All" ? sql`true` : Access.scope.patientRecords(sql, scope, scope.at, "clinical")}
          ${lock ? sql`FOR UPDATE` : sql``}`
    })

    const updateOne = SqlSchema.single({
      Request: ResponseChange,
      Result: ResponseRow,
      execute: (c) =>
        sql`UPDATE questionnaire_responses SET status = ${c.status},
            answers = ${JSON.stringify(c.answers)}::jsonb, score = ${c.score}, severity = ${c.severity},
            subscales = ${JSON.stringify(c.subscales)}::jsonb, flags = ${textArray(c.flags)}::text[],
            completed_at = ${c.completedAt}, submitted_at = ${c.submittedAt},
            review_notes = ${c.reviewNotes},
            reviewed_by_id = ${c.reviewedById}, reviewed_at = ${c.reviewedAt},
            updated_at = ${c.at}
          WHERE id = ${c.id} RETURNING ${cols}`
    })

    /** A page of responses, newest first: of one patient (checked by the service), else of the scope. */
    const list = (criteria: ResponseCriteria, page: PageRequest) =>
      listPage({
        select: cols,
        from: sql`questionnaire_responses`,
        row: ResponseRow,
        scope: criteria.patientId !== undefined || criteria.scope._tag === "All"
          ? undefined
          : Access.scope.patientRecords(sql, criteria.scope, criteria.scope.at, "clinical"),
        filters: [
          criteria.patientId !== undefined && sql`patient_id = ${criteria.patientId}`,
          criteria.questionnaireId !== undefined && sql`questionnaire_id = ${criteria.questionnaireId}`,
          criteria.status !== undefined && sql`status = ${criteria.status}`
        ],
        sort: { columns: byCreation, by: "created_at", dir: "DESC", id: sql`id` }
      }, page)

    return {
      insert: (response: typeof NewResponse.Type) => orDefect(insertOne(response)),
      /** The response when it is in the scope, optionally locked for an update. */
      findById: (id: number, scope: ResponseScope, lock: boolean) => orDefect(findById({ id, scope, lock })),
      /** The response as changed (it must exist: callers hold its lock). */
      update: (change: typeof ResponseChange.Type) => orDefect(updateOne(change)),
      list
    } as const
  })
}) {}
