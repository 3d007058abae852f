/**
 * Session notes (general §2.3, §4.2, §4.3, §4.15): the clinical record of a session.
 * Staff only: a provider reads and writes the notes of their own appointments, their supervisor
 * reads them, admins see everything; any other note answers 404 exactly like a missing one. Every
 * change and every read of a note's content is audited (ids and action names only). Moves follow
 * the machine of src/Domain/SessionNotes/SessionNote.ts; each change runs in one transaction with
 * the note's row locked, so concurrent moves are ordered.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { type FieldMessages, invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  type ContentInput, type NewSessionNote, type SessionNoteChanges, SessionNoteFilters, SessionNoteList, sessionNoteMessages,
  type SessionNoteSortColumn
} from "../../Api/SessionNotes/SessionNotes.js"
import { appointmentTypes, PersonName } from "../../Domain/Scheduling/Scheduling.js"
import {
  canMoveSupervision, canonicalContent, editableStatuses, isBlankContent, normaliseContent, putTriggers,
  type SessionNoteStatus, sessionNoteStatuses, type SupervisionStatus, triggerOf
} from "../../Domain/SessionNotes/SessionNote.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Access, canEditNote, isAdmin, isNoteProvider, isNoteSupervisor, type Viewer } from "../Access/Access.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { nameMatches } from "../SqlSearch.js"
import {
  type AddendumRow, addendumColumns, type NoteRow, noteColumns, noteFrom, type SignOffRow, signOffColumns, type SignOffWithImage,
  toNote, toSupervisorNote
} from "./SessionNotesRepo.js"
import { sha256Hex, Signatures } from "./Signatures.js"

export interface NoteCriteria {
  readonly search?: string | null | undefined
  readonly providerId?: number | undefined
  readonly patientId?: number | undefined
  readonly supervisorId?: number | undefined
  readonly supervisedOnly?: boolean | undefined
  readonly statuses?: ReadonlyArray<SessionNoteStatus> | undefined
  readonly appointmentType?: string | null | undefined
  readonly patientName?: string | null | undefined
  readonly providerName?: string | null | undefined
  readonly startDate?: string | null | undefined
  readonly endDate?: string | null | undefined
  readonly sortBy?: SessionNoteSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
}

export const noteNotFound = () => notFound("Session note")
const m = sessionNoteMessages

const blankToNull = (s: string | null | undefined): string | null => {
  const trimmed = s?.trim() ?? ""
  return trimmed.length === 0 ? null : trimmed
}

const triggerMessages = {
  addendum: (to: string) => `can only become ${to} through an addendum`,
  answer: (to: string) => `can only become ${to} when the provider answers its addenda`,
  sign_off: (to: string) => `can only become ${to} through a sign-off`
} as const

/** Signature images read from the object store at once while a response is built. */
const signatureReads = 8

const hashOf = (content: Record<string, unknown>) => sha256Hex(canonicalContent(content))

export class SessionNotes extends Effect.Service<SessionNotes>()("app/SessionNotes", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const signatures = yield* Signatures
    const zone = (yield* AppConfig).clinicTimeZone
    const columns = sql.literal(noteColumns)
    const from = sql.literal(noteFrom)
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const
    const sortColumns: Record<SessionNoteSortColumn, Statement.Fragment> = {
      id: sql`n.id`,
      status: sql`n.status`,
      patient_id: sql`n.patient_id`,
      provider_id: sql`n.provider_id`,
      appointment_date: sql`a.scheduled_at`,
      created_at: sql`n.created_at`,
      updated_at: sql`n.updated_at`
    }

    const record = (viewer: Viewer, action: string, noteId: number) =>
      audit.record({ actorId: viewer.id, action: `session_note.${action}`, targetType: "session_note", targetId: noteId })
    const recordReads = (viewer: Viewer, ids: ReadonlyArray<number>) =>
      audit.recordMany(ids.map((id) => ({ actorId: viewer.id, action: "session_note.read", targetType: "session_note", targetId: id })))

    /** The notes a caller may read (Access's rule). */
    const visibleTo = (viewer: Viewer) => Access.scope.sessionNotes(sql, viewer)

    /** Addenda and sign-offs (with their signature images and signed links) of many notes in two statements. */
    const represent = <A>(
      rows: ReadonlyArray<NoteRow>,
      make: (row: NoteRow, addendums: ReadonlyArray<AddendumRow>, signOffs: ReadonlyArray<SignOffWithImage>) => A
    ) =>
      Effect.gen(function*() {
        if (rows.length === 0) return [] as Array<A>
        const ids = rows.map((r) => r.id)
        const addendums = yield* sql<AddendumRow>`SELECT ${sql.literal(addendumColumns)} FROM session_note_addendums
          WHERE session_note_id IN ${sql.in(ids)} ORDER BY id`
        const signOffs = yield* sql<SignOffRow>`SELECT ${sql.literal(signOffColumns)} FROM session_note_sign_offs
          WHERE session_note_id IN ${sql.in(ids)} ORDER BY id`
        // The images are read from the object store, a few at a time, each once per response.
        const keys = [...new Set(signOffs.map((row) => row.signature_key))]
        const images = new Map(yield* Effect.forEach(keys, (key) =>
          Effect.map(Effect.all([signatures.url(key), signatures.dataUri(key)]), ([url, data]) => [key, { url, data }] as const),
          { concurrency: signatureReads }))
        const signed = signOffs.map((row): SignOffWithImage => ({ row, ...images.get(row.signature_key)! }))
        return rows.map((row) =>
          make(row, addendums.filter((a) => a.session_note_id === row.id), signed.filter((s) => s.row.session_note_id === row.id)))
      })

    const representOne = (row: NoteRow) => Effect.map(represent([row], toNote), (notes) => notes[0]!)

    const findRow = (viewer: Viewer, id: number, lock: boolean) =>
      Effect.gen(function*() {
        const [row] = yield* sql<NoteRow>`SELECT ${columns} FROM ${from} WHERE n.id = ${id} AND ${visibleTo(viewer)}
          ${lock ? sql`FOR UPDATE OF n` : sql``}`
        if (row === undefined) return yield* Effect.fail(noteNotFound())
        return row
      })

    const whereOf = (criteria: NoteCriteria) => {
      const clauses: Array<Statement.Fragment> = []
      if (criteria.patientId !== undefined) clauses.push(sql`n.patient_id = ${criteria.patientId}`)
      if (criteria.providerId !== undefined) clauses.push(sql`n.provider_id = ${criteria.providerId}`)
      if (criteria.supervisorId !== undefined) clauses.push(sql`n.supervisor_id = ${criteria.supervisorId}`)
      if (criteria.supervisedOnly === true) clauses.push(sql`n.supervisor_id IS NOT NULL`)
      if (criteria.statuses !== undefined && criteria.statuses.length > 0) clauses.push(sql`n.status IN ${sql.in(criteria.statuses)}`)
      if (criteria.appointmentType != null) clauses.push(sql`a.appointment_type = ${criteria.appointmentType}`)
      if (criteria.startDate != null) clauses.push(sql`a.scheduled_at >= ((${criteria.startDate}::date)::timestamp AT TIME ZONE ${zone})`)
      if (criteria.endDate != null) clauses.push(sql`a.scheduled_at < (((${criteria.endDate}::date) + 1)::timestamp AT TIME ZONE ${zone})`)
      const patientName = blankToNull(criteria.patientName)
      if (patientName !== null) clauses.push(nameMatches(sql, "pa.first_name", "pa.last_name", patientName))
      const providerName = blankToNull(criteria.providerName)
      if (providerName !== null) clauses.push(nameMatches(sql, "pu.first_name", "pu.last_name", providerName))
      const search = blankToNull(criteria.search)
      if (search !== null) {
        clauses.push(sql`(${nameMatches(sql, "pa.first_name", "pa.last_name", search)} OR ${nameMatches(sql, "pu.first_name", "pu.last_name", search)})`)
      }
      return clauses
    }

    const page = <A>(
      viewer: Viewer,
      criteria: NoteCriteria,
      request: PageRequest,
      make: (row: NoteRow, addendums: ReadonlyArray<AddendumRow>, signOffs: ReadonlyArray<SignOffWithImage>) => A
    ) =>
      Effect.gen(function*() {
        const where = sql.and([visibleTo(viewer), ...whereOf(criteria)])
        const dir = directions[criteria.sortDir ?? "DESC"]
        const rows = yield* sql<NoteRow>`SELECT ${columns} FROM ${from} WHERE ${where}
          ORDER BY ${sortColumns[criteria.sortBy ?? "created_at"]} ${dir}, n.id ${dir} LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${from} WHERE ${where}`
        yield* recordReads(viewer, rows.map((r) => r.id))
        return { items: yield* represent(rows, make), pagination: paginationOf(request, counted?.count ?? 0) }
      })

    // ---- clinic ----------------------------------------------------------------------------

    const clinicList = (viewer: Viewer, patientId: number | undefined, status: SessionNoteStatus | undefined, request: PageRequest) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, patientId)
        const { items, pagination } = yield* page(viewer, { patientId: patient, statuses: status === undefined ? undefined : [status] }, request, toNote)
        return SessionNoteList.make({ session_notes: items, pagination }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.clinicList"))

    const last = (viewer: Viewer, patientId: number | undefined) =>
      Effect.gen(function*() {
        const patient = yield* access.defaultPatientFor(viewer, patientId)
        const [row] = yield* sql<NoteRow>`SELECT ${columns} FROM ${from} WHERE n.patient_id = ${patient} AND ${visibleTo(viewer)}
          ORDER BY n.created_at DESC, n.id DESC LIMIT 1`
        if (row === undefined) return yield* Effect.fail(noteNotFound())
        yield* record(viewer, "read", row.id)
        return yield* representOne(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.last"))

    const show = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* findRow(viewer, id, false)
        yield* record(viewer, "read", id)
        return yield* representOne(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.show", { attributes: { "session_note.id": id } }))

    const contentJson = (content: ContentInput | undefined) => {
      const normal = normaliseContent(content ?? {})
      const plain = { subjective: normal.subjective, objective: normal.objective, assessment: normal.assessment, plan: normal.plan, free_text: normal.free_text }
      return { content: normal, json: JSON.stringify(plain), hash: hashOf(plain) }
    }

    const addVersion = (noteId: number, editorId: number, json: string, hash: string) =>
      sql`INSERT INTO session_note_versions (session_note_id, version, content, content_sha256, edited_by_id)
        VALUES (${noteId}, (SELECT COALESCE(max(version), 0) + 1 FROM session_note_versions WHERE session_note_id = ${noteId}),
          ${json}::jsonb, ${hash}, ${editorId})`

    const create = (viewer: Viewer, input: NewSessionNote) =>
      Effect.gen(function*() {
        const patient = yield* access.visiblePatient(viewer, input.patient_id)
        const [appointment] = yield* sql<{ id: number; patient_id: number; provider_id: number; provider_user_id: number; supervisor_id: number | null }>`
          SELECT a.id, a.patient_id, a.provider_id, p.user_id AS provider_user_id, p.supervisor_id
          FROM appointments a JOIN providers p ON p.id = a.provider_id WHERE a.id = ${input.appointment_id}`
        if (appointment === undefined || appointment.patient_id !== patient || !canEditNote(viewer, appointment)) {
          return yield* Effect.fail(invalidField("appointment_id", "must exist"))
        }
        const { hash, json } = contentJson(input.content)
        const supervised = appointment.supervisor_id !== null
        const id = yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<{ id: number }>`INSERT INTO session_notes (patient_id, provider_id, appointment_id, content,
              content_sha256, supervision_required, supervisor_id, supervision_status, created_by_id)
            VALUES (${patient}, ${appointment.provider_id}, ${appointment.id}, ${json}::jsonb, ${hash}, ${supervised},
              ${appointment.supervisor_id}, ${supervised ? "pending_supervision" : null}, ${viewer.id})
            RETURNING id`
          yield* addVersion(row!.id, viewer.id, json, hash)
          yield* record(viewer, "create", row!.id)
          return row!.id
        })).pipe(Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error, "session_notes_appointment_id_key")
            ? Effect.fail(invalidField("appointment_id", "has already been taken"))
            : Effect.die(error)))
        const row = yield* findRow(viewer, id, false)
        return yield* representOne(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.create"))

    /**
     * Inside a transaction, the note locked: a pending_signature note with no open addendum and a
     * sign-off of its current content given after its last addendum (for a supervised note, by the
     * supervisor) becomes completed,
     * and its content is locked for good.
     */
    const completeIfReady = (viewer: Viewer, noteId: number) =>
      Effect.gen(function*() {
        const [done] = yield* sql<{ id: number }>`UPDATE session_notes n SET status = 'completed', locked_at = COALESCE(n.locked_at, now()),
            updated_at = now()
          WHERE n.id = ${noteId} AND n.status = 'pending_signature'
            AND NOT EXISTS (SELECT 1 FROM session_note_addendums d WHERE d.session_note_id = n.id AND d.responded_at IS NULL)
            AND EXISTS (SELECT 1 FROM session_note_sign_offs o WHERE o.session_note_id = n.id
              AND o.signed_content_sha256 = n.content_sha256
              -- Signed after the last addendum: a note reopened by an addendum is signed again.
              AND o.created_at > COALESCE((SELECT max(d.created_at) FROM session_note_addendums d WHERE d.session_note_id = n.id), '-infinity')
              AND (NOT n.supervision_required OR o.reviewer_id = (SELECT user_id FROM providers WHERE id = n.supervisor_id)))
          RETURNING n.id`
        if (done !== undefined) yield* record(viewer, "completed", noteId)
      })

    const fail = (problems: FieldMessages) => Effect.fail(invalid(problems))

    const update = (viewer: Viewer, id: number, changes: SessionNoteChanges) =>
      Effect.gen(function*() {
        const edited = changes.content === undefined ? undefined : contentJson(changes.content)
        yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findRow(viewer, id, true)
          const admin = isAdmin(viewer)
          const provider = isNoteProvider(viewer, current)
          const supervisor = isNoteSupervisor(viewer, current)
          const target = changes.status !== undefined && changes.status !== current.status ? changes.status : undefined
          if (target !== undefined) {
            const trigger = triggerOf(current.status, target)
            if (trigger === undefined) return yield* fail({ status: [m.move(current.status, target)] })
            if (!putTriggers.includes(trigger)) {
              return yield* fail({ status: [triggerMessages[trigger as keyof typeof triggerMessages](target)] })
            }
          }
          if (current.status === "completed") return yield* fail({ status: [m.completedReadOnly] })

          let status: SessionNoteStatus = current.status
          let supervision: SupervisionStatus | null = current.supervision_status
          let hash = current.content_sha256
          let json: string | undefined
          const actions: Array<string> = []

          if (edited !== undefined && edited.hash !== current.content_sha256) {
            if (current.locked_at !== null) return yield* fail({ content: [m.locked] })
            if (!editableStatuses.includes(current.status)) return yield* fail({ content: [m.notEditable(current.status)] })
            if (!provider && !admin) return yield* fail({ content: ["can only be changed by the note's provider or an admin"] })
            hash = edited.hash
            json = edited.json
            actions.push("update")
          }

          if (target !== undefined) {
            const trigger = triggerOf(current.status, target)!
            if (trigger === "submit") {
              if (!provider && !admin) return yield* fail({ status: ["can only be submitted by the note's provider or an admin"] })
              const content = edited?.content ?? normaliseContent(current.content as ContentInput)
              if (isBlankContent(content)) return yield* fail({ content: ["can't be blank"] })
            }
            if (trigger === "review") {
              if (current.supervision_required) {
                return yield* fail({ status: ["needs the supervisor's approval (supervision_status approved)"] })
              }
              if (!admin) return yield* fail({ status: ["can only be moved by an admin (the review)"] })
            }
            if (trigger === "archive" && !admin) return yield* fail({ status: ["can only be archived by an admin"] })
            status = target
            actions.push(target)
          }

          if (changes.supervision_status !== undefined || changes.supervision_notes !== undefined) {
            if (!current.supervision_required) return yield* fail({ supervision_status: ["is not applicable: the note is not supervised"] })
            if (!supervisor && !admin) {
              return yield* fail({ supervision_status: ["can only be given by the note's supervisor or an admin"] })
            }
          }
          if (changes.supervision_status !== undefined && changes.supervision_status !== current.supervision_status) {
            const to = changes.supervision_status
            const from = current.supervision_status!
            if (!canMoveSupervision(from, to)) return yield* fail({ supervision_status: [m.move(from, to)] })
            if (status !== "pending_review") {
              return yield* fail({ supervision_status: [`can only be given while the note is pending_review (it is ${status})`] })
            }
            supervision = to
            actions.push(`supervision_${to}`)
            if (to === "approved") {
              status = "pending_signature"
              actions.push("pending_signature")
            }
          }
          const notes = changes.supervision_notes === undefined ? current.supervision_notes : blankToNull(changes.supervision_notes)
          if (notes !== current.supervision_notes && !actions.some((a) => a.startsWith("supervision_"))) actions.push("supervision_notes")

          if (actions.length === 0) return
          yield* sql`UPDATE session_notes SET
              content = COALESCE(${json ?? null}::jsonb, content), content_sha256 = ${hash}, status = ${status},
              supervision_status = ${supervision}, supervision_notes = ${notes}, updated_at = now()
            WHERE id = ${id}`
          if (json !== undefined) yield* addVersion(id, viewer.id, json, hash)
          for (const action of actions) yield* record(viewer, action, id)
          if (status === "pending_signature") yield* completeIfReady(viewer, id)
        }))
        return yield* representOne(yield* findRow(viewer, id, false))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.update", { attributes: { "session_note.id": id } }))

    // ---- admin -----------------------------------------------------------------------------

    const adminList = (viewer: Viewer, criteria: NoteCriteria, request: PageRequest) =>
      Effect.map(page(viewer, criteria, request, toNote), ({ items, pagination }) =>
        SessionNoteList.make({ session_notes: items, pagination }, true)).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("SessionNotes.adminList")
      )

    const filters = Effect.gen(function*() {
      const providers = yield* sql<{ id: number; first_name: string; last_name: string }>`
        SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
        WHERE p.active AND u.deleted_at IS NULL ORDER BY u.last_name, u.first_name, p.id`
      return SessionNoteFilters.make({
        statuses: [...sessionNoteStatuses],
        appointment_types: [...appointmentTypes],
        providers: providers.map((p) => PersonName.make(p))
      })
    }).pipe(Effect.orDie, Effect.withSpan("SessionNotes.filters"))

    const remove = (viewer: Viewer, id: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const current = yield* findRow(viewer, id, true)
        if (current.status !== "draft") return yield* fail({ status: [m.kept(current.status)] })
        yield* sql`DELETE FROM session_notes WHERE id = ${id}`
        yield* record(viewer, "delete", id)
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.delete", { attributes: { "session_note.id": id } }))

    // ---- supervisors -----------------------------------------------------------------------

    const supervisorList = (viewer: Viewer, criteria: NoteCriteria, request: PageRequest) =>
      page(viewer, { ...criteria, supervisedOnly: true }, request, toSupervisorNote).pipe(
        Effect.map(({ items, pagination }) => ({ session_notes: items, pagination })),
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("SessionNotes.supervisorList")
      )

    const supervisorShow = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const row = yield* findRow(viewer, id, false)
        if (row.supervisor_id === null) return yield* Effect.fail(noteNotFound())
        yield* record(viewer, "read", id)
        const [note] = yield* represent([row], toSupervisorNote)
        return note!
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNotes.supervisorShow", { attributes: { "session_note.id": id } }))

    return {
      clinicList, last, show, create, update, adminList, filters, remove, supervisorList, supervisorShow,
      // Shared with the reviews and PDF services.
      findRow, representOne, record, completeIfReady
    } as const
  }),
  dependencies: [AuditLog.Default, Access.Default, Signatures.Default]
}) {}
