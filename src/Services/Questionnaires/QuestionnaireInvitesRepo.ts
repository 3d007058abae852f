/**
 * The only SQL on `questionnaire_invites` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. An invite is found by the hash of its token, never by the token.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { InviteStatus } from "../../Domain/Questionnaires/Questionnaire.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

/** An invite as shown to staff; the due date as `YYYY-MM-DD`. */
export const InviteRow = Schema.Struct({
  id: Schema.Int,
  questionnaire_id: Schema.Int,
  patient_id: Schema.Int,
  email: Schema.String,
  due_date: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String),
  status: InviteStatus,
  expires_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf
})
export type InviteRow = typeof InviteRow.Type

const columns = `id, questionnaire_id, patient_id, email, to_char(due_date, 'YYYY-MM-DD') AS due_date, message, status, expires_at, created_at`

/** The SHA-256 of a token (`Tokens.hashToken`), as `bytea`. */
const TokenHash = Schema.Uint8ArrayFromSelf

export const NewInvite = Schema.Struct({
  questionnaireId: Schema.Number,
  patientId: Schema.Number,
  email: Schema.String,
  dueDate: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String),
  tokenHash: TokenHash,
  expiresAt: Schema.DateFromSelf,
  invitedById: Schema.Number,
  at: Schema.DateFromSelf
})

const OpenInvites = Schema.Struct({ patientId: Schema.Number, questionnaireId: Schema.Number, at: Schema.DateFromSelf })
const ByToken = Schema.Struct({ tokenHash: TokenHash, at: Schema.DateFromSelf })
const Completion = Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf })
const MailClaim = Schema.Struct({ id: Schema.Number, tokenHash: TokenHash })

/** What the invite mail says: the address, the instrument's title, the due date (`YYYY-MM-DD`) and the note. */
export const InviteMail = Schema.Struct({
  email: Schema.String,
  title: Schema.String,
  due_date: Schema.NullOr(Schema.String),
  message: Schema.NullOr(Schema.String)
})

/** Arbitrary constant, the first key of the advisory lock serialising invites of one patient and questionnaire. */
const inviteLockSpace = 7_340_221

export class QuestionnaireInvitesRepo extends Effect.Service<QuestionnaireInvitesRepo>()("app/QuestionnaireInvitesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const lockPatient = SqlSchema.void({
      Request: Schema.Number,
      execute: (patientId) => sql`SELECT pg_advisory_xact_lock(${inviteLockSpace}, ${patientId})`
    })

    const revokeOpen = SqlSchema.void({
      Request: OpenInvites,
      execute: ({ at, patientId, questionnaireId }) =>
        sql`UPDATE questionnaire_invites SET status = 'revoked', revoked_at = ${at}, updated_at = ${at}
            WHERE patient_id = ${patientId} AND questionnaire_id = ${questionnaireId} AND status IN ('sent', 'opened')`
    })

    const insertOne = SqlSchema.single({
      Request: NewInvite,
      Result: InviteRow,
      execute: (i) =>
        sql`INSERT INTO questionnaire_invites (questionnaire_id, patient_id, email, due_date, message,
              token_hash, expires_at, invited_by_id, created_at, updated_at)
            VALUES (${i.questionnaireId}, ${i.patientId}, ${i.email}, ${i.dueDate}, ${i.message},
              ${i.tokenHash}, ${i.expiresAt}, ${i.invitedById}, ${i.at}, ${i.at})
            RETURNING ${cols}`
    })

    const open = SqlSchema.findOne({
      Request: ByToken,
      Result: InviteRow,
      execute: ({ at, tokenHash }) =>
        sql`UPDATE questionnaire_invites SET status = 'opened', opened_at = coalesce(opened_at, ${at}),
            updated_at = ${at}
          WHERE token_hash = ${tokenHash} AND status IN ('sent', 'opened') AND expires_at > ${at}
          RETURNING ${cols}`
    })

    const lockUsable = SqlSchema.findOne({
      Request: ByToken,
      Result: InviteRow,
      execute: ({ at, tokenHash }) =>
        sql`SELECT ${cols} FROM questionnaire_invites
            WHERE token_hash = ${tokenHash} AND status IN ('sent', 'opened') AND expires_at > ${at} FOR UPDATE`
    })

    const complete = SqlSchema.void({
      Request: Completion,
      execute: ({ at, id }) => sql`UPDATE questionnaire_invites SET status = 'completed', completed_at = ${at}, updated_at = ${at} WHERE id = ${id}`
    })

    const claimForMail = SqlSchema.findOne({
      Request: Schema.Struct({ ...MailClaim.fields, at: Schema.DateFromSelf }),
      Result: InviteMail,
      execute: ({ at, id, tokenHash }) =>
        sql`
          UPDATE questionnaire_invites i SET mailed_at = ${at}
          FROM questionnaires q
          WHERE i.id = ${id} AND q.id = i.questionnaire_id AND i.mailed_at IS NULL
            AND i.status IN ('sent', 'opened') AND i.token_hash = ${tokenHash}
          RETURNING i.email, q.title, to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.message`
    })

    return {
      /** Call inside the transaction that invites: invites of one patient queue here. */
      lockPatient: (patientId: number) => orDefect(lockPatient(patientId)),
      /** The patient's open invites to the questionnaire are revoked (at most one is open). */
      revokeOpen: (patientId: number, questionnaireId: number, at: Date) => orDefect(revokeOpen({ patientId, questionnaireId, at })),
      insert: (invite: typeof NewInvite.Type) => orDefect(insertOne(invite)),
      /** The usable invite of this token, marked opened; none when there is no such invite. */
      open: (tokenHash: Uint8Array, at: Date) => orDefect(open({ tokenHash, at })),
      /** The usable invite of this token, locked until the transaction ends. */
      lockUsable: (tokenHash: Uint8Array, at: Date) => orDefect(lockUsable({ tokenHash, at })),
      complete: (id: number, at: Date) => orDefect(complete({ id, at })),
      /** Marks the invite mailed if it is still open with this token; none when it was mailed already or is no longer open. */
      claimForMail: (id: number, tokenHash: Uint8Array) => Effect.flatMap(now, (at) => orDefect(claimForMail({ id, tokenHash, at })))
    } as const
  })
}) {}
