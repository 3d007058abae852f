/**
 * Session notes (general §2.3, §4.2, §4.3, §4.15): the clinical record of a session.
 * Staff only: a provider reads and writes the notes of their own appointments, their supervisor
 * reads them, admins see everything; any other note answers 404 exactly like a missing one. Every
 * change and every read of a note's content is audited (ids and action names only). Moves follow
 * the machine of src/Domain/SessionNotes/SessionNote.ts; each change runs in one transaction with
 * the note's row locked, so concurrent moves are ordered.
 */
import { Effect, Option } from "effect"
import { type FieldMessages, invalid, invalidField, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  type ContentInput, type NewSessionNote, type SessionNoteChanges, SessionNoteFilters, SessionNoteList, sessionNoteMessages
} from "../../Api/SessionNotes/SessionNotes.js"
import { appointmentTypes } from "../../Domain/Scheduling/Scheduling.js"
import {
  canMoveSupervision, canonicalContent, editableStatuses, isBlankContent, normaliseContent, putTriggers,
  type SessionNoteStatus, sessionNoteStatuses, type SupervisionStatus, triggerOf
} from "../../Domain/SessionNotes/SessionNote.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Access, canEditNote, isAdmin, isNoteProvider, isNoteSupervisor, type Viewer } from "../Access/Access.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { AddendaRepo, type AddendumRow } from "./AddendaRepo.js"
import { type NoteCriteria, type NoteRow, SessionNotesRepo, type SignOffWithImage, toNote, toSupervisorNote } from "./SessionNotesRepo.js"
import { sha256Hex, Signatures } from "./Signatures.js"
import { SignOffsRepo } from "./SignOffsRepo.js"
import { annotatedOutside } from "../Spans.js"

export type { NoteCriteria } from "./SessionNotesRepo.js"

export const noteNotFound = () => notFound("Session note")
const m = sessionNoteMessages

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
    const notes = yield* SessionNotesRepo
    const addenda = yield* AddendaRepo
    const signOffRows = yield* SignOffsRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const access = yield* Access
    const signatures = yield* Signatures
    const zone = (yield* AppConfig).clinicTimeZone

    const record = (viewer: Viewer, action: string, noteId: number) =>
      audit.record({ actorId: viewer.id, action: `session_note.${action}`, targetType: "session_note", targetId: noteId })
    const recordReads = (viewer: Viewer, ids: ReadonlyArray<number>) =>
      audit.recordMany(ids.map((id) => ({ actorId: viewer.id, action: "session_note.read", targetType: "session_note", targetId: id })))

    /** Addenda and sign-offs (with their signature images and signed links) of many notes in two statements. */
    const represent = <A>(
      rows: ReadonlyArray<NoteRow>,
      make: (row: NoteRow, addendums: ReadonlyArray<AddendumRow>, signOffs: ReadonlyArray<SignOffWithImage>) => A
    ) =>
      Effect.gen(function*() {
        if (rows.length === 0) return [] as Array<A>
        const ids = rows.map((r) => r.id)
        const addendums = yield* addenda.ofNotes(ids)
        const signOffs = yield* signOffRows.ofNotes(ids)
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

    /** The note if the caller may read it (Access's rule), else 404; locked inside a transaction when `lock`. */
    const findRow = (viewer: Viewer, id: number, lock: boolean) =>
      Effect.flatMap(notes.findVisible(viewer, id, lock), Option.match({ onNone: () => Effect.fail(noteNotFound()), onSome: Effect.succeed }))

    const page = <A>(
      viewer: Viewer,
      criteria: NoteCriteria,
      request: PageRequest,
      make: (row: NoteRow, addendums: ReadonlyArray<AddendumRow>, signOffs: ReadonlyArray<SignOffWithImage>) => A
    ) =>
      Effect.gen(function*() {
        const { pagination, rows } = yield* notes.list(viewer, criteria, zone, request)
        yield* recordReads(viewer, rows.map((r) => r.id))
        return { items: yield* represent(rows, make), pagination }
      })

    // ---- clinic ----------------------------------------------------------------------------

    const clinicList = Effect.fn("SessionNotes.clinicList")(function*(
      viewer: Viewer,
      patientId: number | undefined,
      status: SessionNoteStatus | undefined,
      request: PageRequest
    ) {
      // Clinical content: a patient outside the caller's relationships is 404, not an empty list.
      const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
      const { items, pagination } = yield* page(viewer, { patientId: patient, statuses: status === undefined ? undefined : [status] }, request, toNote)
      return SessionNoteList.make({ session_notes: items, pagination }, true)
    })

    const last = Effect.fn("SessionNotes.last")(function*(viewer: Viewer, patientId: number | undefined) {
      const patient = yield* access.defaultPatientFor(viewer, patientId, "clinical")
      const found = yield* notes.lastOfPatient(viewer, patient)
      if (Option.isNone(found)) return yield* Effect.fail(noteNotFound())
      const row = found.value
      yield* record(viewer, "read", row.id)
      return yield* representOne(row)
    })

    const show = Effect.fn("SessionNotes.show")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "session_note.id": id })
      const row = yield* findRow(viewer, id, false)
      yield* record(viewer, "read", id)
      return yield* representOne(row)
    })

    const contentJson = (content: ContentInput | undefined) => {
      const normal = normaliseContent(content ?? {})
      const plain = { subjective: normal.subjective, objective: normal.objective, assessment: normal.assessment, plan: normal.plan, free_text: normal.free_text }
      return { content: normal, json: JSON.stringify(plain), hash: hashOf(plain) }
    }

    const addVersion = (noteId: number, editorId: number, json: string, hash: string) =>
      notes.addVersion({ session_note_id: noteId, content: json, content_sha256: hash, edited_by_id: editorId })

    const create = Effect.fn("SessionNotes.create")(function*(viewer: Viewer, input: NewSessionNote) {
      const patient = yield* access.visiblePatient(viewer, input.patient_id, "clinical")
      const appointment = Option.getOrUndefined(yield* notes.appointment(input.appointment_id))
      if (appointment === undefined || appointment.patient_id !== patient || !canEditNote(viewer, appointment)) {
        return yield* Effect.fail(invalidField("appointment_id", "must exist"))
      }
      const { hash, json } = contentJson(input.content)
      const supervised = appointment.supervisor_id !== null
      const id = yield* transaction(Effect.gen(function*() {
        const id = yield* notes.insert({
          patient_id: patient,
          provider_id: appointment.provider_id,
          appointment_id: appointment.id,
          content: json,
          content_sha256: hash,
          supervision_required: supervised,
          supervisor_id: appointment.supervisor_id,
          supervision_status: supervised ? "pending_supervision" : null,
          created_by_id: viewer.id
        })
        yield* addVersion(id, viewer.id, json, hash)
        yield* record(viewer, "create", id)
        return id
      }))
      const row = yield* findRow(viewer, id, false)
      return yield* representOne(row)
    })

    /**
     * Inside a transaction, the note locked: a pending_signature note with no open addendum and a
     * sign-off of its current content given after its last addendum (for a supervised note, by the
     * supervisor) becomes completed,
     * and its content is locked for good.
     */
    const completeIfReady = (viewer: Viewer, noteId: number) =>
      Effect.gen(function*() {
        if (yield* notes.completeIfReady(noteId)) yield* record(viewer, "completed", noteId)
      })

    const fail = (problems: FieldMessages) => Effect.fail(invalid(problems))

    const update = Effect.fn("SessionNotes.update")(function*(viewer: Viewer, id: number, changes: SessionNoteChanges) {
      yield* Effect.annotateCurrentSpan({ "session_note.id": id })
      const edited = changes.content === undefined ? undefined : contentJson(changes.content)
      yield* transaction(Effect.gen(function*() {
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
        const supervisionNotes = changes.supervision_notes === undefined ? current.supervision_notes : blankToNull(changes.supervision_notes)
        if (supervisionNotes !== current.supervision_notes && !actions.some((a) => a.startsWith("supervision_"))) actions.push("supervision_notes")

        if (actions.length === 0) return
        yield* notes.update({
          id, content: json ?? null, content_sha256: hash, status, supervision_status: supervision, supervision_notes: supervisionNotes
        })
        if (json !== undefined) yield* addVersion(id, viewer.id, json, hash)
        for (const action of actions) yield* record(viewer, action, id)
        if (status === "pending_signature") yield* completeIfReady(viewer, id)
      }))
      return yield* representOne(yield* findRow(viewer, id, false))
    })

    // ---- admin -----------------------------------------------------------------------------

    const adminList = Effect.fn("SessionNotes.adminList")(function*(viewer: Viewer, criteria: NoteCriteria, request: PageRequest) {
      const { items, pagination } = yield* page(viewer, criteria, request, toNote)
      return SessionNoteList.make({ session_notes: items, pagination }, true)
    })

    const filters = Effect.map(notes.activeProviders, (providers) =>
      SessionNoteFilters.make({
        statuses: [...sessionNoteStatuses],
        appointment_types: [...appointmentTypes],
        providers: [...providers]
      })).pipe(Effect.withSpan("SessionNotes.filters"))

    const remove = Effect.fn("SessionNotes.delete")(function*(viewer: Viewer, id: number) {
      const current = yield* findRow(viewer, id, true)
      if (current.status !== "draft") return yield* fail({ status: [m.kept(current.status)] })
      yield* notes.delete(id)
      yield* record(viewer, "delete", id)
    },
      transaction,
      annotatedOutside((_viewer: Viewer, id: number) => ({ "session_note.id": id }))
    )

    // ---- supervisors -----------------------------------------------------------------------

    const supervisorList = Effect.fn("SessionNotes.supervisorList")(function*(viewer: Viewer, criteria: NoteCriteria, request: PageRequest) {
      const { items, pagination } = yield* page(viewer, { ...criteria, supervisedOnly: true }, request, toSupervisorNote)
      return { session_notes: items, pagination }
    })

    const supervisorShow = Effect.fn("SessionNotes.supervisorShow")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "session_note.id": id })
      const row = yield* findRow(viewer, id, false)
      if (row.supervisor_id === null) return yield* Effect.fail(noteNotFound())
      yield* record(viewer, "read", id)
      const [note] = yield* represent([row], toSupervisorNote)
      return note!
    })

    return {
      clinicList, last, show, create, update, adminList, filters, remove, supervisorList, supervisorShow,
      // Shared with the reviews and PDF services.
      findRow, representOne, record, completeIfReady
    } as const
  }),
  dependencies: [SessionNotesRepo.Default, AddendaRepo.Default, SignOffsRepo.Default, AuditLog.Default, Access.Default, Signatures.Default]
}) {}
