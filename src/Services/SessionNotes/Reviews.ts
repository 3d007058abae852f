/**
 * Addenda and sign-offs (general §2.3, §4.3). A reviewer (the note's supervisor or an
 * admin) asks for changes with an addendum, which moves the note to requires_addendum; the note's
 * provider answers it, and with no addendum left open the note goes back to pending_review. A
 * sign-off records the reviewer's signature and the SHA-256 of the content they signed; it
 * completes a pending_signature note with nothing pending. Every signature is a checked PNG kept
 * in the object store. All audited.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { invalid, notFound } from "../../Api/Errors.js"
import {
  type CreateAddendumRequest, type CreateSignOffRequest, sessionNoteMessages, type UpdateAddendumRequest, type UpdateSignOffRequest
} from "../../Api/SessionNotes/SessionNotes.js"
import { Addendum, canMoveNote, canMoveSupervision, SignOff } from "../../Domain/SessionNotes/SessionNote.js"
import { addendumColumns, type AddendumRow, signOffColumns, type SignOffRow } from "./SessionNotesRepo.js"
import { canChangeSignOff, canReviewNote, isNoteProvider, type Viewer } from "../Access/Access.js"
import { SessionNotes } from "./SessionNotes.js"
import { Signatures } from "./Signatures.js"

const m = sessionNoteMessages
const reviewStatuses = ["pending_review", "pending_signature"] as const

export class SessionNoteReviews extends Effect.Service<SessionNoteReviews>()("app/SessionNoteReviews", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notes = yield* SessionNotes
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

    const createAddendum = (viewer: Viewer, input: CreateAddendumRequest) =>
      Effect.gen(function*() {
        const image = input.addendum.signature === undefined ? undefined : yield* signatures.check("signature", input.addendum.signature)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const note = yield* notes.findRow(viewer, input.session_note_id, true)
          if (!canReviewNote(viewer, note)) {
            return yield* Effect.fail(invalid({ addendum: ["can only be requested by the note's supervisor or an admin"] }))
          }
          if (!canMoveNote(note.status, "requires_addendum")) {
            return yield* Effect.fail(invalid({ status: [m.move(note.status, "requires_addendum")] }))
          }
          const stored = image === undefined ? undefined : yield* signatures.store(note.id, image)
          const [row] = yield* sql<AddendumRow>`INSERT INTO session_note_addendums (session_note_id, instructions, signature_key,
              signature_sha256, signed_content_sha256, signed_at, created_by_id)
            VALUES (${note.id}, ${input.addendum.instructions.trim()}, ${stored?.key ?? null}, ${stored?.sha256 ?? null},
              ${stored === undefined ? null : note.content_sha256}, ${stored === undefined ? null : sql`now()`}, ${viewer.id})
            RETURNING ${sql.literal(addendumColumns)}`
          const supervision = note.supervision_status !== null && canMoveSupervision(note.supervision_status, "requires_changes")
            ? "requires_changes"
            : note.supervision_status
          yield* sql`UPDATE session_notes SET status = 'requires_addendum', supervision_status = ${supervision}, updated_at = now()
            WHERE id = ${note.id}`
          yield* notes.record(viewer, "addendum_create", note.id)
          yield* notes.record(viewer, "requires_addendum", note.id)
          if (supervision !== note.supervision_status) yield* notes.record(viewer, "supervision_requires_changes", note.id)
          return row!
        }))
        return yield* toAddendum(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNoteReviews.createAddendum"))

    /**
     * An addendum or sign-off and its note (locked), when the caller may read the note; else 404
     * "<thing> not found". The row is read again under the note's lock, which every change of a
     * note's addenda and sign-offs holds, so what the caller acts on is current.
     */
    const childOf = <R extends { readonly session_note_id: number }>(viewer: Viewer, table: string, columns: string, id: number, thing: string) =>
      Effect.gen(function*() {
        const read = sql<R>`SELECT ${sql.literal(columns)} FROM ${sql.literal(table)} WHERE id = ${id}`
        const [first] = yield* read
        if (first === undefined) return yield* Effect.fail(notFound(thing))
        const note = yield* notes.findRow(viewer, first.session_note_id, true).pipe(Effect.mapError(() => notFound(thing)))
        const [row] = yield* read
        if (row === undefined) return yield* Effect.fail(notFound(thing))
        return { row, note }
      })

    const updateAddendum = (viewer: Viewer, id: number, input: UpdateAddendumRequest) =>
      Effect.gen(function*() {
        const signature = input.addendum.responded_signature
        const image = signature === undefined ? undefined : yield* signatures.check("responded_signature", signature)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const { note, row: current } = yield* childOf<AddendumRow>(viewer, "session_note_addendums", addendumColumns, id, "Addendum")
          if (!isNoteProvider(viewer, note)) {
            return yield* Effect.fail(invalid({ addendum: ["can only be answered by the note's provider"] }))
          }
          if (current.responded_at !== null) return yield* Effect.fail(invalid({ addendum: ["has already been answered"] }))
          const response = input.addendum.instructions_response?.trim()
          if (response === undefined || response.length === 0) {
            return yield* Effect.fail(invalid({ instructions_response: ["can't be blank"] }))
          }
          const stored = image === undefined ? undefined : yield* signatures.store(note.id, image)
          const [row] = yield* sql<AddendumRow>`UPDATE session_note_addendums SET instructions_response = ${response},
              responded_signature_key = ${stored?.key ?? null}, responded_signature_sha256 = ${stored?.sha256 ?? null},
              responded_content_sha256 = ${stored === undefined ? null : note.content_sha256},
              responded_signed_at = ${stored === undefined ? null : sql`now()`},
              responded_by_id = ${viewer.id}, responded_at = now(), updated_at = now()
            WHERE id = ${id} RETURNING ${sql.literal(addendumColumns)}`
          yield* notes.record(viewer, "addendum_answer", note.id)
          const [open] = yield* sql`SELECT 1 FROM session_note_addendums WHERE session_note_id = ${note.id} AND responded_at IS NULL`
          if (open === undefined && note.status === "requires_addendum") {
            const supervision = note.supervision_status === "requires_changes" ? "pending_supervision" : note.supervision_status
            yield* sql`UPDATE session_notes SET status = 'pending_review', supervision_status = ${supervision}, updated_at = now()
              WHERE id = ${note.id}`
            yield* notes.record(viewer, "pending_review", note.id)
          }
          return row!
        }))
        return yield* toAddendum(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNoteReviews.updateAddendum", { attributes: { "addendum.id": id } }))

    const createSignOff = (viewer: Viewer, input: CreateSignOffRequest) =>
      Effect.gen(function*() {
        const image = yield* signatures.check("signature", input.sign_off.signature)
        const row = yield* sql.withTransaction(Effect.gen(function*() {
          const note = yield* notes.findRow(viewer, input.session_note_id, true)
          if (!canReviewNote(viewer, note)) {
            return yield* Effect.fail(invalid({ sign_off: ["can only be given by the note's supervisor or an admin"] }))
          }
          if (!(reviewStatuses as ReadonlyArray<string>).includes(note.status)) {
            return yield* Effect.fail(invalid({ status: [`is ${note.status}: only notes pending review or signature can be signed off`] }))
          }
          const stored = yield* signatures.store(note.id, image)
          const [row] = yield* sql<SignOffRow>`INSERT INTO session_note_sign_offs (session_note_id, reviewer_id, review_date,
              instructions, signature_key, signature_sha256, signed_content_sha256)
            VALUES (${note.id}, ${viewer.id}, ${input.sign_off.review_date}, ${input.sign_off.instructions?.trim() || null},
              ${stored.key}, ${stored.sha256}, ${note.content_sha256})
            RETURNING ${sql.literal(signOffColumns)}`
          yield* notes.record(viewer, "sign_off_create", note.id)
          yield* notes.completeIfReady(viewer, note.id)
          return row!
        }))
        return yield* toSignOff(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNoteReviews.createSignOff"))

    /** The sign-off, its note locked, when the caller may change it (its reviewer or an admin, note not completed). */
    const changeableSignOff = (viewer: Viewer, id: number) =>
      Effect.gen(function*() {
        const { note, row } = yield* childOf<SignOffRow>(viewer, "session_note_sign_offs", signOffColumns, id, "Sign off")
        if (!canChangeSignOff(viewer, row)) {
          return yield* Effect.fail(invalid({ sign_off: ["can only be changed by its reviewer or an admin"] }))
        }
        if (note.status === "completed") {
          return yield* Effect.fail(invalid({ status: ["is completed: the sign-offs of a completed note can't be changed"] }))
        }
        return { row, note }
      })

    const updateSignOff = (viewer: Viewer, id: number, input: UpdateSignOffRequest) =>
      sql.withTransaction(Effect.gen(function*() {
        const { note } = yield* changeableSignOff(viewer, id)
        const changes = input.sign_off
        const [row] = yield* sql<SignOffRow>`UPDATE session_note_sign_offs SET
            instructions = ${changes.instructions === undefined ? sql`instructions` : sql`${changes.instructions?.trim() || null}`},
            review_date = ${changes.review_date === undefined ? sql`review_date` : sql`${changes.review_date}`},
            updated_at = now()
          WHERE id = ${id} RETURNING ${sql.literal(signOffColumns)}`
        yield* notes.record(viewer, "sign_off_update", note.id)
        return row!
      })).pipe(
        Effect.flatMap(toSignOff),
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("SessionNoteReviews.updateSignOff", { attributes: { "sign_off.id": id } })
      )

    const deleteSignOff = (viewer: Viewer, id: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const { note } = yield* changeableSignOff(viewer, id)
        yield* sql`DELETE FROM session_note_sign_offs WHERE id = ${id}`
        yield* notes.record(viewer, "sign_off_delete", note.id)
      })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("SessionNoteReviews.deleteSignOff", { attributes: { "sign_off.id": id } }))

    return { createAddendum, updateAddendum, createSignOff, updateSignOff, deleteSignOff } as const
  }),
  dependencies: [SessionNotes.Default, Signatures.Default]
}) {}
