/**
 * The only SQL on `session_notes` and its append-only history `session_note_versions`
 * (ARCHITECTURE "Persistence"), and the representation of a note row. Rows are decoded with
 * schemas; SQL errors are defects except a second note for one appointment (422). It owns the
 * note status machine's writes (`insert` as draft, `update` and `move` with a move `SessionNotes`
 * or `SessionNoteReviews` has checked, `completeIfReady`). Who sees which note is the access
 * module's scope (`Access.scope.sessionNotes`), applied here. The lookups on `appointments` and
 * `providers` that notes need stay here until those areas' repositories offer them.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { invalidField } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { SessionNoteSortColumn } from "../../Api/SessionNotes/SessionNotes.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import {
  AddendumSummary, canonicalContent, type NoteContent, normaliseContent, SessionNote, SessionNoteStatus, SignOffSummary,
  SupervisionStatus, SupervisorSessionNote
} from "../../Domain/SessionNotes/SessionNote.js"
import { Access, type Viewer } from "../Access/Access.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { participantFilters, visitCriteriaFields, zonedDayFilters } from "../SqlFilters.js"
import { now } from "../Time.js"
import type { AddendumRow } from "./AddendaRepo.js"
import { sha256Hex } from "./Signatures.js"
import type { SignOffRow } from "./SignOffsRepo.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Timestamp = Schema.DateFromSelf

/** A note with its patient's and provider's names, its parties' accounts and its appointment. */
export const NoteRow = Schema.Struct({
  id: Schema.Number,
  patient_id: Schema.Number,
  provider_id: Schema.Number,
  appointment_id: Schema.Number,
  content: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  content_sha256: Text,
  status: SessionNoteStatus,
  supervision_required: Schema.Boolean,
  supervisor_id: Schema.NullOr(Schema.Number),
  supervision_status: Schema.NullOr(SupervisionStatus),
  supervision_notes: NullText,
  locked_at: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  patient_first_name: Text,
  patient_last_name: Text,
  provider_first_name: Text,
  provider_last_name: Text,
  provider_user_id: Schema.Number,
  supervisor_user_id: Schema.NullOr(Schema.Number),
  appointment_scheduled_at: Timestamp,
  appointment_type: NullText
})
export type NoteRow = typeof NoteRow.Type

/** What a note list may be narrowed and ordered by; dates are days on the clinic's wall clock. */
export const NoteCriteria = Schema.Struct({
  ...visitCriteriaFields,
  providerId: Schema.optional(Schema.Number),
  patientId: Schema.optional(Schema.Number),
  supervisorId: Schema.optional(Schema.Number),
  supervisedOnly: Schema.optional(Schema.Boolean),
  statuses: Schema.optional(Schema.Array(SessionNoteStatus)),
  sortBy: Schema.optional(SessionNoteSortColumn)
})
export type NoteCriteria = typeof NoteCriteria.Type


/** The appointment a new note is written for, with its provider's account and supervisor. */
export const NoteAppointment = Schema.Struct({
  id: Schema.Number,
  patient_id: Schema.Number,
  provider_id: Schema.Number,
  provider_user_id: Schema.Number,
  supervisor_id: Schema.NullOr(Schema.Number)
})
export type NoteAppointment = typeof NoteAppointment.Type

/** A new note (`draft`); `content` is the JSON text of its sections. */
export const NewNote = Schema.Struct({
  patient_id: Schema.Number,
  provider_id: Schema.Number,
  appointment_id: Schema.Number,
  content: Text,
  content_sha256: Text,
  supervision_required: Schema.Boolean,
  supervisor_id: Schema.NullOr(Schema.Number),
  supervision_status: Schema.NullOr(SupervisionStatus),
  created_by_id: Schema.Number
})
export type NewNote = typeof NewNote.Type

/** Every field an update writes (the service has checked the move); `content` null keeps the stored content. */
export const NoteChange = Schema.Struct({
  id: Schema.Number,
  content: NullText,
  content_sha256: Text,
  status: SessionNoteStatus,
  supervision_status: Schema.NullOr(SupervisionStatus),
  supervision_notes: NullText
})
export type NoteChange = typeof NoteChange.Type

/** A checked move of the note's status and supervision status alone (an addendum and its answer). */
export const NoteMove = Schema.Struct({
  id: Schema.Number,
  status: SessionNoteStatus,
  supervision_status: Schema.NullOr(SupervisionStatus)
})
export type NoteMove = typeof NoteMove.Type

/** One version of a note's content, appended on every change of it. */
export const NoteVersion = Schema.Struct({ session_note_id: Schema.Number, content: Text, content_sha256: Text, edited_by_id: Schema.Number })
export type NoteVersion = typeof NoteVersion.Type

const ById = Schema.Struct({ id: Schema.Number })

const noteColumns = `n.id, n.patient_id, n.provider_id, n.appointment_id, n.content, n.content_sha256, n.status,
  n.supervision_required, n.supervisor_id, n.supervision_status, n.supervision_notes, n.locked_at, n.created_at, n.updated_at,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.user_id AS provider_user_id,
  s.user_id AS supervisor_user_id, a.scheduled_at AS appointment_scheduled_at, a.appointment_type`

const noteFrom = `session_notes n JOIN patients pa ON pa.id = n.patient_id
  JOIN providers p ON p.id = n.provider_id JOIN users pu ON pu.id = p.user_id
  JOIN appointments a ON a.id = n.appointment_id
  LEFT JOIN providers s ON s.id = n.supervisor_id`

export class SessionNotesRepo extends Effect.Service<SessionNotesRepo>()("app/SessionNotesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(noteColumns)
    const from = sql.literal(noteFrom)
    const sortColumns: Record<SessionNoteSortColumn, Statement.Fragment> = {
      id: sql`n.id`,
      status: sql`n.status`,
      patient_id: sql`n.patient_id`,
      provider_id: sql`n.provider_id`,
      appointment_date: sql`a.scheduled_at`,
      created_at: sql`n.created_at`,
      updated_at: sql`n.updated_at`
    }
    /** The notes a caller may read (Access's rule). */
    const visibleTo = (viewer: Viewer) => Access.scope.sessionNotes(sql, viewer)

    const filtersOf = (criteria: NoteCriteria, zone: string): Array<ListFilter> => [
        criteria.patientId !== undefined && sql`n.patient_id = ${criteria.patientId}`,
        criteria.providerId !== undefined && sql`n.provider_id = ${criteria.providerId}`,
        criteria.supervisorId !== undefined && sql`n.supervisor_id = ${criteria.supervisorId}`,
        criteria.supervisedOnly === true && sql`n.supervisor_id IS NOT NULL`,
        criteria.statuses !== undefined && criteria.statuses.length > 0 && sql`n.status IN ${sql.in(criteria.statuses)}`,
        criteria.appointmentType != null && sql`a.appointment_type = ${criteria.appointmentType}`,
        ...zonedDayFilters(sql, "a.scheduled_at", criteria, zone),
        ...participantFilters(sql, criteria)
      ]

    /** A page of the notes the viewer may read, in the criteria's order (newest first by default); dates are days in `zone`. */
    const list = (viewer: Viewer, criteria: NoteCriteria, zone: string, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: NoteRow,
        scope: visibleTo(viewer),
        filters: filtersOf(criteria, zone),
        sort: { columns: sortColumns, by: criteria.sortBy ?? "created_at", dir: criteria.sortDir ?? "DESC", id: sortColumns.id }
      }, page)

    const findVisible = (viewer: Viewer, lock: boolean) =>
      SqlSchema.findOne({
        Request: ById,
        Result: NoteRow,
        execute: ({ id }) => sql`SELECT ${columns} FROM ${from} WHERE n.id = ${id} AND ${visibleTo(viewer)}
          ${lock ? sql`FOR UPDATE OF n` : sql``}`
      })

    const findLast = (viewer: Viewer) =>
      SqlSchema.findOne({
        Request: ById,
        Result: NoteRow,
        execute: ({ id }) => sql`SELECT ${columns} FROM ${from} WHERE n.patient_id = ${id} AND ${visibleTo(viewer)}
          ORDER BY n.created_at DESC, n.id DESC LIMIT 1`
      })

    const findAppointment = SqlSchema.findOne({
      Request: ById,
      Result: NoteAppointment,
      execute: ({ id }) =>
        sql`SELECT a.id, a.patient_id, a.provider_id, p.user_id AS provider_user_id, p.supervisor_id
          FROM appointments a JOIN providers p ON p.id = a.provider_id WHERE a.id = ${id}`
    })

    const insertOne = SqlSchema.single({
      Request: NewNote,
      Result: ById,
      execute: (n) =>
        sql`INSERT INTO session_notes (patient_id, provider_id, appointment_id, content,
            content_sha256, supervision_required, supervisor_id, supervision_status, created_by_id)
          VALUES (${n.patient_id}, ${n.provider_id}, ${n.appointment_id}, ${n.content}::jsonb, ${n.content_sha256},
            ${n.supervision_required}, ${n.supervisor_id}, ${n.supervision_status}, ${n.created_by_id})
          RETURNING id`
    })

    const insertVersion = SqlSchema.void({
      Request: NoteVersion,
      execute: (v) =>
        sql`INSERT INTO session_note_versions (session_note_id, version, content, content_sha256, edited_by_id)
          VALUES (${v.session_note_id},
            (SELECT COALESCE(max(version), 0) + 1 FROM session_note_versions WHERE session_note_id = ${v.session_note_id}),
            ${v.content}::jsonb, ${v.content_sha256}, ${v.edited_by_id})`
    })

    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ change: NoteChange, at: Timestamp }),
      execute: ({ at, change: c }) =>
        sql`UPDATE session_notes SET
            content = COALESCE(${c.content}::jsonb, content), content_sha256 = ${c.content_sha256}, status = ${c.status},
            supervision_status = ${c.supervision_status}, supervision_notes = ${c.supervision_notes}, updated_at = ${at}
          WHERE id = ${c.id}`
    })

    const moveOne = SqlSchema.void({
      Request: Schema.Struct({ move: NoteMove, at: Timestamp }),
      execute: ({ at, move: m }) =>
        sql`UPDATE session_notes SET status = ${m.status}, supervision_status = ${m.supervision_status}, updated_at = ${at}
          WHERE id = ${m.id}`
    })

    const completeOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, at: Timestamp }),
      Result: ById,
      execute: ({ at, id }) =>
        sql`UPDATE session_notes n SET status = 'completed', locked_at = COALESCE(n.locked_at, ${at}), updated_at = ${at}
          WHERE n.id = ${id} AND n.status = 'pending_signature'
            AND NOT EXISTS (SELECT 1 FROM session_note_addendums d WHERE d.session_note_id = n.id AND d.responded_at IS NULL)
            AND EXISTS (SELECT 1 FROM session_note_sign_offs o WHERE o.session_note_id = n.id
              AND o.signed_content_sha256 = n.content_sha256
              -- Signed after the last addendum: a note reopened by an addendum is signed again.
              AND o.created_at > COALESCE((SELECT max(d.created_at) FROM session_note_addendums d WHERE d.session_note_id = n.id), '-infinity')
              AND (NOT n.supervision_required OR o.reviewer_id = (SELECT user_id FROM providers WHERE id = n.supervisor_id)))
          RETURNING n.id`
    })

    const deleteOne = SqlSchema.void({
      Request: ById,
      execute: ({ id }) => sql`DELETE FROM session_notes WHERE id = ${id}`
    })

    const findActiveProviders = SqlSchema.findAll({
      Request: Schema.Void,
      Result: PersonName,
      execute: () =>
        sql`SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.active AND u.deleted_at IS NULL ORDER BY u.last_name, u.first_name, p.id`
    })

    return {
      list,
      /** The note if the viewer may read it; locked `FOR UPDATE` inside a transaction when `lock`. */
      findVisible: (viewer: Viewer, id: number, lock: boolean) => orDefect(findVisible(viewer, lock)({ id })),
      /** The patient's latest note the viewer may read. */
      lastOfPatient: (viewer: Viewer, patientId: number) => orDefect(findLast(viewer)({ id: patientId })),
      /** The appointment a note would be written for. */
      appointment: (appointmentId: number) => orDefect(findAppointment({ id: appointmentId })),
      /** A new note, `draft`: a second note for the appointment is a 422. */
      insert: (note: NewNote) =>
        insertOne(note).pipe(
          Effect.map((row) => row.id),
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "session_notes_appointment_id_key")
              ? Effect.fail(invalidField("appointment_id", "has already been taken"))
              : Effect.die(error)),
          orDefect
        ),
      /** Appends a version of the note's content. */
      addVersion: (version: NoteVersion) => orDefect(insertVersion(version)),
      /** Writes a checked change (content, status, supervision), `updated_at` from the clock. */
      update: (change: NoteChange) => Effect.flatMap(now, (at) => updateOne({ change, at })).pipe(orDefect),
      /** Writes a checked move of the status and supervision status, `updated_at` from the clock. */
      move: (move: NoteMove) => Effect.flatMap(now, (at) => moveOne({ move, at })).pipe(orDefect),
      /**
       * Inside a transaction, the note locked: a pending_signature note with no open addendum and a
       * sign-off of its current content given after its last addendum (for a supervised note, by
       * the supervisor) becomes completed, and its content is locked for good. Whether it did.
       */
      completeIfReady: (id: number) => Effect.flatMap(now, (at) => completeOne({ id, at })).pipe(Effect.map(Option.isSome), orDefect),
      delete: (id: number) => orDefect(deleteOne({ id })),
      /** Active providers by name, for the note filters. */
      activeProviders: orDefect(findActiveProviders(undefined))
    } as const
  })
}) {}

/** A sign-off with its signature as the representation carries it: the image data and a signed link. */
export interface SignOffWithImage {
  readonly row: SignOffRow
  readonly url: string
  readonly data: string | null
}

/** The hash of what is stored now: differs from `content_sha256` when the row was changed behind the API. */
export const currentHash = (row: NoteRow): string => sha256Hex(canonicalContent(row.content))

export const contentOf = (row: NoteRow): NoteContent =>
  normaliseContent(row.content as Partial<Record<keyof NoteContent, string | null>>)

const baseOf = (
  row: NoteRow,
  addendums: ReadonlyArray<AddendumRow>,
  signOffs: ReadonlyArray<SignOffWithImage>
) => {
  const hash = currentHash(row)
  return {
    id: row.id,
    patient_id: row.patient_id,
    provider_id: row.provider_id,
    appointment_id: row.appointment_id,
    content: contentOf(row),
    status: row.status,
    supervision_required: row.supervision_required,
    supervisor_id: row.supervisor_id,
    content_sha256: row.content_sha256,
    content_intact: hash === row.content_sha256,
    signed_at: row.locked_at,
    patient: PersonName.make({ id: row.patient_id, first_name: row.patient_first_name, last_name: row.patient_last_name }),
    provider: PersonName.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name }),
    appointment_scheduled_at: row.appointment_scheduled_at,
    appointment_type: row.appointment_type,
    created_at: row.created_at,
    updated_at: row.updated_at,
    addendums: addendums.map((a) => AddendumSummary.make({ id: a.id, instructions: a.instructions, instructions_response: a.instructions_response })),
    sign_offs: signOffs.map(({ row: s, url, data }) =>
      SignOffSummary.make({
        id: s.id,
        reviewer_id: s.reviewer_id,
        review_date: s.review_date,
        signature: data,
        signature_url: url,
        content_sha256: s.signed_content_sha256,
        content_matches: s.signed_content_sha256 === hash
      }))
  }
}

export const toNote = (
  row: NoteRow,
  addendums: ReadonlyArray<AddendumRow>,
  signOffs: ReadonlyArray<SignOffWithImage>
): SessionNote => SessionNote.make(baseOf(row, addendums, signOffs), true)

export const toSupervisorNote = (
  row: NoteRow,
  addendums: ReadonlyArray<AddendumRow>,
  signOffs: ReadonlyArray<SignOffWithImage>
): SupervisorSessionNote =>
  SupervisorSessionNote.make({
    ...baseOf(row, addendums, signOffs),
    supervision_status: row.supervision_status,
    supervision_notes: row.supervision_notes
  }, true)
