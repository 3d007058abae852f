/**
 * Addenda and sign-offs (general §2.3, §4.3). A reviewer (the note's supervisor or an
 * admin) asks for changes with an addendum, which moves the note to requires_addendum; the note's
 * provider answers it, and with no addendum left open the note goes back to pending_review. A
 * sign-off records the reviewer's signature and the SHA-256 of the content they signed; it
 * completes a pending_signature note with nothing pending. Every signature is a checked PNG kept
 * in the object store. All audited.
 */
import { Effect, Option } from "effect"
import { invalid, notFound } from "../../Api/Errors.js"
import {
  type CreateAddendumRequest, type CreateSignOffRequest, sessionNoteMessages, type UpdateAddendumRequest, type UpdateSignOffRequest
} from "../../Api/SessionNotes/SessionNotes.js"
import { Addendum, canMoveNote, canMoveSupervision, SignOff } from "../../Domain/SessionNotes/SessionNote.js"
import { canChangeSignOff, canReviewNote, isNoteProvider, type Viewer } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import { AddendaRepo, type AddendumRow } from "./AddendaRepo.js"
import { SessionNotesRepo } from "./SessionNotesRepo.js"
import { type SignOffRow, SignOffsRepo } from "./SignOffsRepo.js"
import { SessionNotes } from "./SessionNotes.js"
import { Signatures } from "./Signatures.js"
import { annotatedOutside } from "../Spans.js"

const m = sessionNoteMessages
const reviewStatuses = ["pending_review", "pending_signature"] as const

export class SessionNoteReviews extends Effect.Service<SessionNoteReviews>()("app/SessionNoteReviews", {
  effect: Effect.gen(function*() {
    const notes = yield* SessionNotes
    const noteRows = yield* SessionNotesRepo
    const addenda = yield* AddendaRepo
    const signOffs = yield* SignOffsRepo
    const transaction = yield* makeTransaction
    const signatures = yield* Signatures

    const toAddendum = (row: AddendumRow) =>
      Effect.gen(function*() {
        return Addendum.make({
          id: row.id,
          session_note_id: row.session_note_id,
          instructions: row.instructions,
          instructions_response: row.instructions_response,
          signature: yield* signatures.dataUriOrNull(row.signature_key),
          signature_url: yield* signatures.urlOrNull(row.signature_key),
          responded_signature: yield* signatures.dataUriOrNull(row.responded_signature_key),
          responded_signature_url: yield* signatures.urlOrNull(row.responded_signature_key),
          created_by_id: row.created_by_id,
          responded_by_id: row.responded_by_id,
          created_at: row.created_at,
          updated_at: row.updated_at
        }, true)
      })

    const toSignOff = (row: SignOffRow) =>
      Effect.map(Effect.all([signatures.dataUri(row.signature_key), signatures.url(row.signature_key)]), ([data, url]) =>
        SignOff.make({
          id: row.id,
          session_note_id: row.session_note_id,
          reviewer_id: row.reviewer_id,
          review_date: row.review_date,
          signature: data,
          signature_url: url,
          instructions: row.instructions,
          created_at: row.created_at
        }, true))

    const createAddendum = Effect.fn("SessionNoteReviews.createAddendum")(function*(viewer: Viewer, input: CreateAddendumRequest) {
      const image = input.addendum.signature === undefined ? undefined : yield* signatures.check("signature", input.addendum.signature)
      const row = yield* transaction(Effect.gen(function*() {
        const note = yield* notes.findRow(viewer, input.session_note_id, true)
        if (!canReviewNote(viewer, note)) {
          return yield* Effect.fail(invalid({ addendum: ["can only be requested by the note's supervisor or an admin"] }))
        }
        if (!canMoveNote(note.status, "requires_addendum")) {
          return yield* Effect.fail(invalid({ status: [m.move(note.status, "requires_addendum")] }))
        }
        const stored = image === undefined ? undefined : yield* signatures.store(note.id, image)
        const row = yield* addenda.insert({
          session_note_id: note.id,
          instructions: input.addendum.instructions.trim(),
          signature: stored === undefined ? null : { key: stored.key, sha256: stored.sha256, content_sha256: note.content_sha256 },
          created_by_id: viewer.id
        })
        const supervision = note.supervision_status !== null && canMoveSupervision(note.supervision_status, "requires_changes")
          ? "requires_changes"
          : note.supervision_status
        yield* noteRows.move({ id: note.id, status: "requires_addendum", supervision_status: supervision })
        yield* notes.record(viewer, "addendum_create", note.id)
        yield* notes.record(viewer, "requires_addendum", note.id)
        if (supervision !== note.supervision_status) yield* notes.record(viewer, "supervision_requires_changes", note.id)
        return row
      }))
      return yield* toAddendum(row)
    })

    /**
     * An addendum or sign-off and its note (locked), when the caller may read the note; else 404
     * "<thing> not found". The row is read again under the note's lock, which every change of a
     * note's addenda and sign-offs holds, so what the caller acts on is current.
     */
    const childOf = <R extends { readonly session_note_id: number }, E, R2>(
      viewer: Viewer,
      read: Effect.Effect<Option.Option<R>, E, R2>,
      thing: string
    ) =>
      Effect.gen(function*() {
        const first = yield* read
        if (Option.isNone(first)) return yield* Effect.fail(notFound(thing))
        const note = yield* notes.findRow(viewer, first.value.session_note_id, true).pipe(Effect.mapError(() => notFound(thing)))
        const row = yield* read
        if (Option.isNone(row)) return yield* Effect.fail(notFound(thing))
        return { row: row.value, note }
      })

    const updateAddendum = Effect.fn("SessionNoteReviews.updateAddendum")(function*(viewer: Viewer, id: number, input: UpdateAddendumRequest) {
      yield* Effect.annotateCurrentSpan({ "addendum.id": id })
      const signature = input.addendum.responded_signature
      const image = signature === undefined ? undefined : yield* signatures.check("responded_signature", signature)
      const row = yield* transaction(Effect.gen(function*() {
        const { note, row: current } = yield* childOf(viewer, addenda.findById(id), "Addendum")
        if (!isNoteProvider(viewer, note)) {
          return yield* Effect.fail(invalid({ addendum: ["can only be answered by the note's provider"] }))
        }
        if (current.responded_at !== null) return yield* Effect.fail(invalid({ addendum: ["has already been answered"] }))
        const response = input.addendum.instructions_response?.trim()
        if (response === undefined || response.length === 0) {
          return yield* Effect.fail(invalid({ instructions_response: ["can't be blank"] }))
        }
        const stored = image === undefined ? undefined : yield* signatures.store(note.id, image)
        const row = yield* addenda.answer({
          id,
          instructions_response: response,
          signature: stored === undefined ? null : { key: stored.key, sha256: stored.sha256, content_sha256: note.content_sha256 },
          responded_by_id: viewer.id
        })
        yield* notes.record(viewer, "addendum_answer", note.id)
        if (note.status === "requires_addendum" && !(yield* addenda.hasOpen(note.id))) {
          const supervision = note.supervision_status === "requires_changes" ? "pending_supervision" : note.supervision_status
          yield* noteRows.move({ id: note.id, status: "pending_review", supervision_status: supervision })
          yield* notes.record(viewer, "pending_review", note.id)
        }
        return row
      }))
      return yield* toAddendum(row)
    })

    const createSignOff = Effect.fn("SessionNoteReviews.createSignOff")(function*(viewer: Viewer, input: CreateSignOffRequest) {
      const image = yield* signatures.check("signature", input.sign_off.signature)
      const row = yield* transaction(Effect.gen(function*() {
        const note = yield* notes.findRow(viewer, input.session_note_id, true)
        if (!canReviewNote(viewer, note)) {
          return yield* Effect.fail(invalid({ sign_off: ["can only be given by the note's supervisor or an admin"] }))
        }
        if (!(reviewStatuses as ReadonlyArray<string>).includes(note.status)) {
          return yield* Effect.fail(invalid({ status: [`is ${note.status}: only notes pending review or signature can be signed off`] }))
        }
        const stored = yield* signatures.store(note.id, image)
        const row = yield* signOffs.insert({
          session_note_id: note.id,
          reviewer_id: viewer.id,
          review_date: input.sign_off.review_date,
          instructions: input.sign_off.instructions?.trim() || null,
          signature_key: stored.key,
          signature_sha256: stored.sha256,
          signed_content_sha256: note.content_sha256
        })
        yield* notes.record(viewer, "sign_off_create", note.id)
        yield* notes.completeIfReady(viewer, note.id)
        return row
      }))
      return yield* toSignOff(row)
    })

    /** The sign-off, its note locked, when the caller may change it (its reviewer or an admin, note not completed). */
    const changeableSignOff = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const { note, row } = yield* childOf(viewer, signOffs.findById(id), "Sign off")
        if (!canChangeSignOff(viewer, row)) {
          return yield* Effect.fail(invalid({ sign_off: ["can only be changed by its reviewer or an admin"] }))
        }
        if (note.status === "completed") {
          return yield* Effect.fail(invalid({ status: ["is completed: the sign-offs of a completed note can't be changed"] }))
        }
        return { row, note }
      })

    const updateSignOff = Effect.fn("SessionNoteReviews.updateSignOff")(function*(viewer: Viewer, id: number, input: UpdateSignOffRequest) {
      const { note } = yield* changeableSignOff(viewer, id)
      const changes = input.sign_off
      const row = yield* signOffs.update({
        id,
        ...(changes.instructions === undefined ? {} : { instructions: changes.instructions?.trim() || null }),
        ...(changes.review_date === undefined ? {} : { review_date: changes.review_date })
      })
      yield* notes.record(viewer, "sign_off_update", note.id)
      return row
    },
      transaction,
      Effect.flatMap(toSignOff),
      annotatedOutside((_viewer: Viewer, id: number) => ({ "sign_off.id": id }))
    )

    const deleteSignOff = Effect.fn("SessionNoteReviews.deleteSignOff")(function*(viewer: Viewer, id: number) {
      const { note } = yield* changeableSignOff(viewer, id)
      yield* signOffs.delete(id)
      yield* notes.record(viewer, "sign_off_delete", note.id)
    },
      transaction,
      annotatedOutside((_viewer: Viewer, id: number) => ({ "sign_off.id": id }))
    )

    return { createAddendum, updateAddendum, createSignOff, updateSignOff, deleteSignOff } as const
  }),
  dependencies: [SessionNotes.Default, SessionNotesRepo.Default, AddendaRepo.Default, SignOffsRepo.Default, Signatures.Default]
}) {}
