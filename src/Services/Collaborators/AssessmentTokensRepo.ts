/**
 * The only SQL on `collaborator_assessment_tokens`, the single-use assessment links (ARCHITECTURE
 * "Persistence"). Tokens arrive hashed. A link is usable while unused, unrevoked and unexpired, its
 * assessment pending and its collaborator live and pending or active; the statements that test it
 * read the assessment, collaborator, question set (and patient) in the same round trip, and opening
 * the form records `opened_at` on the assessment in that statement too.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { AssessmentType } from "../../Domain/Collaborators/Collaborator.js"
import { orDefect, SqlSchema } from "../Repository.js"

/** The claimed or presented link: what the token is scoped to, with its question set. */
export const LinkRow = Schema.Struct({
  token_id: Schema.Number,
  assessment_id: Schema.Number,
  collaborator_id: Schema.Number,
  patient_id: Schema.Number,
  assessment_type: AssessmentType,
  question_set_version: Schema.Int,
  expires_at: Schema.DateFromSelf,
  questions: Schema.Unknown,
  bands: Schema.Unknown
})
export type LinkRow = typeof LinkRow.Type

/** What the public form shows: no health data, first names only. */
export const FormRow = Schema.Struct({
  token_id: Schema.Number,
  assessment_id: Schema.Number,
  assessment_type: AssessmentType,
  question_set_version: Schema.Int,
  expires_at: Schema.DateFromSelf,
  collaborator_first_name: Schema.String,
  collaborator_last_name: Schema.String,
  patient_first_name: Schema.String,
  questions: Schema.Unknown,
  bands: Schema.Unknown
})
export type FormRow = typeof FormRow.Type

const Presented = Schema.Struct({ hash: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf })
const NewToken = Schema.Struct({
  assessment_id: Schema.Number,
  token_hash: Schema.Uint8ArrayFromSelf,
  expires_at: Schema.DateFromSelf,
  issued_by: Schema.Number,
  created_at: Schema.DateFromSelf
})
const Mail = Schema.Struct({ email: Schema.String, patient_first_name: Schema.String, expires_at: Schema.DateFromSelf })

export class AssessmentTokensRepo extends Effect.Service<AssessmentTokensRepo>()("app/AssessmentTokensRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Also joins the assessment's question set `s`: the public paths read it in the same statement. */
    const usableLink = (at: Date) =>
      sql`t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ${at} AND a.id = t.assessment_id AND a.status = 'pending'
        AND c.id = a.collaborator_id AND c.deleted_at IS NULL AND c.status IN ('pending', 'active')
        AND s.assessment_type = a.assessment_type AND s.version = a.question_set_version`

    const revokeOpen = SqlSchema.void({
      Request: Schema.Struct({ assessmentIds: Schema.Array(Schema.Number), at: Schema.DateFromSelf }),
      execute: ({ assessmentIds, at }) =>
        sql`UPDATE collaborator_assessment_tokens SET revoked_at = ${at}
          WHERE assessment_id IN ${sql.in(assessmentIds)} AND used_at IS NULL AND revoked_at IS NULL`
    })

    const insertOne = SqlSchema.single({
      Request: NewToken,
      Result: Schema.Struct({ id: Schema.Number }),
      execute: (row) => sql`INSERT INTO collaborator_assessment_tokens ${sql.insert(row)} RETURNING id`
    })

    const claim = SqlSchema.findOne({
      Request: Presented,
      Result: LinkRow,
      execute: ({ at, hash }) =>
        sql`UPDATE collaborator_assessment_tokens t SET used_at = ${at}
          FROM collaborator_assessments a, collaborators c, assessment_question_sets s
          WHERE t.token_hash = ${hash} AND ${usableLink(at)}
          RETURNING t.id AS token_id, a.id AS assessment_id, a.collaborator_id, a.patient_id, a.assessment_type, a.question_set_version,
            t.expires_at, s.questions, s.bands`
    })

    const open = SqlSchema.findOne({
      Request: Presented,
      Result: FormRow,
      execute: ({ at, hash }) =>
        sql`
          WITH link AS (
            SELECT t.id AS token_id, a.id AS assessment_id, a.assessment_type, a.question_set_version, t.expires_at,
              c.first_name AS collaborator_first_name, c.last_name AS collaborator_last_name, p.first_name AS patient_first_name,
              s.questions, s.bands
            FROM collaborator_assessment_tokens t, collaborator_assessments a, collaborators c, patients p, assessment_question_sets s
            WHERE t.token_hash = ${hash} AND ${usableLink(at)} AND p.id = a.patient_id
          ), opened AS (
            UPDATE collaborator_assessments SET opened_at = COALESCE(opened_at, ${at}) WHERE id IN (SELECT assessment_id FROM link)
          )
          SELECT * FROM link`
    })

    // Still usable and not yet mailed: a link revoked or used meanwhile is not sent.
    const markMailed = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf }),
      Result: Mail,
      execute: ({ at, id }) =>
        sql`
          UPDATE collaborator_assessment_tokens t SET mailed_at = ${at}
          FROM collaborator_assessments a, collaborators c, patients p
          WHERE t.id = ${id} AND t.mailed_at IS NULL AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ${at}
            AND a.id = t.assessment_id AND a.status = 'pending' AND c.id = a.collaborator_id AND c.deleted_at IS NULL
            AND p.id = a.patient_id
          RETURNING c.email, p.first_name AS patient_first_name, t.expires_at`
    })

    return {
      /** Revokes the open links of these assessments. */
      revokeOpen: (assessmentIds: ReadonlyArray<number>, at: Date) =>
        assessmentIds.length === 0 ? Effect.void : orDefect(revokeOpen({ assessmentIds, at })),
      /** The new link's id. */
      insert: (row: typeof NewToken.Type) => Effect.map(orDefect(insertOne(row)), (r) => r.id),
      /** Uses the link (single use) if it is usable; with its question set. */
      claim: (hash: Uint8Array, at: Date) => orDefect(claim({ hash, at })),
      /** The usable link as the form shows it, its assessment's first opening recorded. */
      open: (hash: Uint8Array, at: Date) => orDefect(open({ hash, at })),
      /** Claims the link's email once while it is usable: the address and what the mail says. */
      markMailed: (id: number, at: Date) => orDefect(markMailed({ id, at }))
    } as const
  })
}) {}
