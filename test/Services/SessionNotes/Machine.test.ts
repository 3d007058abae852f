/**
 * The session note machine (general §2.3, §4.3, docs/spec-decisions.md) through `SessionNotes` and
 * `SessionNoteReviews` over fake repositories: every move a PUT may make and the ones that belong
 * to addenda and sign-offs, who may make each, supervision, and a supervised note's whole way to
 * completed and locked — asserting the rows, their versions and the audit trail. The database's
 * side (row locks under concurrency, the access scopes' SQL, PDFs) is test/Http/SessionNotes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { PNG } from "pngjs"
import { type SessionNoteStatus, sessionNoteStatuses, type SupervisionStatus } from "../../../src/Domain/SessionNotes/SessionNote.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { isAdmin, type Viewer } from "../../../src/Services/Access/Viewer.js"
import { AddendaRepo, type AddendumRow } from "../../../src/Services/SessionNotes/AddendaRepo.js"
import { SessionNoteReviews } from "../../../src/Services/SessionNotes/SessionNoteReviews.js"
import { SessionNotes } from "../../../src/Services/SessionNotes/SessionNotes.js"
import { type NoteRow, type NoteVersion, SessionNotesRepo } from "../../../src/Services/SessionNotes/SessionNotesRepo.js"
import { Signatures } from "../../../src/Services/SessionNotes/Signatures.js"
import { type SignOffRow, SignOffsRepo } from "../../../src/Services/SessionNotes/SignOffsRepo.js"
import { now } from "../../../src/Services/Time.js"
import { testConfig } from "../../Layers/fixtures.js"
import {
  auditActions, type AuditRow, type BreakGlassAccess, FakeDatabase, fakeAccess, fakeAuditLog, type Table, unused
} from "../../support/fakes.js"

const patient = 10
/** The note's provider (provider 20), their supervisor (provider 24) and a provider with no part in it. */
const admin: Viewer = { id: 1, role: "admin" }
const provider: Viewer = { id: 21, role: "provider" }
const supervisor: Viewer = { id: 25, role: "supervisor" }
const stranger: Viewer = { id: 23, role: "provider" }

const content = { subjective: "Slept better", objective: null, assessment: null, plan: null, free_text: null }
const signature = `data:image/png;base64,${Buffer.from(PNG.sync.write(new PNG({ width: 4, height: 2 }))).toString("base64")}`

type Version = NoteVersion & { readonly id: number }

const noteRow = (id: number, status: SessionNoteStatus, supervised: boolean, more: Partial<NoteRow> = {}): NoteRow => ({
  id, patient_id: patient, provider_id: 20, appointment_id: 30 + id, content, content_sha256: "sha-of-content", status,
  supervision_required: supervised, supervisor_id: supervised ? 24 : null, supervision_status: supervised ? "pending_supervision" : null,
  supervision_notes: null, locked_at: null, created_at: new Date(0), updated_at: new Date(0), patient_first_name: "Pat",
  patient_last_name: "Doe", provider_first_name: "Lee", provider_last_name: "Roe", provider_user_id: provider.id,
  supervisor_user_id: supervised ? supervisor.id : null, appointment_scheduled_at: new Date(0), appointment_type: "therapy", ...more
})

/** `session_notes` as its statements read and write it; who sees a note is `scope.sessionNotes`. */
const fakeNotesRepo = (notes: Table<NoteRow>, versions: Table<Version>, addenda: Table<AddendumRow>, signOffs: Table<SignOffRow>) => {
  const visible = (viewer: Viewer, row: NoteRow) => isAdmin(viewer) || row.provider_user_id === viewer.id || row.supervisor_user_id === viewer.id
  const write = (id: number, change: (row: NoteRow) => NoteRow) => Effect.map(now, (at) => void notes.update(id, (row) => ({ ...change(row), updated_at: at })))
  return SessionNotesRepo.make({
    list: unused("SessionNotesRepo.list"),
    findVisible: (viewer, id) => Effect.succeed(Option.filter(notes.find(id), (row) => visible(viewer, row))),
    lastOfPatient: unused("SessionNotesRepo.lastOfPatient"),
    appointment: unused("SessionNotesRepo.appointment"),
    insert: unused("SessionNotesRepo.insert"),
    addVersion: (version) => Effect.sync(() => void versions.insert((id) => ({ ...version, id }))),
    update: (c) =>
      write(c.id, (row) => ({
        ...row, content: c.content === null ? row.content : JSON.parse(c.content), content_sha256: c.content_sha256, status: c.status,
        supervision_status: c.supervision_status, supervision_notes: c.supervision_notes
      })),
    move: (m) => write(m.id, (row) => ({ ...row, status: m.status, supervision_status: m.supervision_status })),
    // The statement's conditions, one by one.
    completeIfReady: (id) =>
      Effect.gen(function*() {
        const row = notes.get(id)!
        const ofNote = addenda.where((a) => a.session_note_id === id)
        const lastAddendum = Math.max(-Infinity, ...ofNote.map((a) => a.created_at.getTime()))
        const signed = signOffs.where((o) =>
          o.session_note_id === id && o.signed_content_sha256 === row.content_sha256 && o.created_at.getTime() > lastAddendum &&
          (!row.supervision_required || o.reviewer_id === row.supervisor_user_id))
        if (row.status !== "pending_signature" || ofNote.some((a) => a.responded_at === null) || signed.length === 0) return false
        const at = yield* now
        notes.update(id, (r) => ({ ...r, status: "completed", locked_at: r.locked_at ?? at, updated_at: at }))
        return true
      }),
    delete: (id) => Effect.sync(() => void notes.delete(id)),
    activeProviders: Effect.succeed([])
  })
}

const fakeAddendaRepo = (addenda: Table<AddendumRow>) =>
  AddendaRepo.make({
    ofNotes: (ids) => Effect.succeed(addenda.where((a) => ids.includes(a.session_note_id))),
    findById: (id) => Effect.succeed(addenda.find(id)),
    insert: (a) =>
      Effect.map(now, (at) =>
        addenda.insert((id) => ({
          id, session_note_id: a.session_note_id, instructions: a.instructions, instructions_response: null,
          signature_key: a.signature?.key ?? null, responded_signature_key: null, created_by_id: a.created_by_id, responded_by_id: null,
          responded_at: null, created_at: at, updated_at: at
        }))),
    answer: (a) =>
      Effect.map(now, (at) =>
        addenda.update(a.id, (row) => ({
          ...row, instructions_response: a.instructions_response, responded_signature_key: a.signature?.key ?? null,
          responded_by_id: a.responded_by_id, responded_at: at, updated_at: at
        }))!),
    hasOpen: (noteId) => Effect.succeed(addenda.all().some((a) => a.session_note_id === noteId && a.responded_at === null))
  })

const fakeSignOffsRepo = (signOffs: Table<SignOffRow>) =>
  SignOffsRepo.make({
    ofNotes: (ids) => Effect.succeed(signOffs.where((o) => ids.includes(o.session_note_id))),
    namedOfNote: unused("SignOffsRepo.namedOfNote"),
    findById: (id) => Effect.succeed(signOffs.find(id)),
    insert: (o) =>
      Effect.map(now, (at) =>
        signOffs.insert((id) => ({
          id, session_note_id: o.session_note_id, reviewer_id: o.reviewer_id, review_date: o.review_date, instructions: o.instructions,
          signature_key: o.signature_key, signed_content_sha256: o.signed_content_sha256, created_at: at, updated_at: at
        }))),
    update: (c) =>
      Effect.map(now, (at) =>
        signOffs.update(c.id, (row) => ({
          ...row, ...(c.instructions === undefined ? {} : { instructions: c.instructions }),
          ...(c.review_date === undefined ? {} : { review_date: c.review_date }), updated_at: at
        }))!),
    delete: (id) => Effect.sync(() => void signOffs.delete(id))
  })

/** A fresh world: the given notes, and both services over them. Each call runs a second after the last. */
const world = (...seed: ReadonlyArray<NoteRow>) => {
  const db = new FakeDatabase()
  const notes = db.table<NoteRow>()
  const versions = db.table<Version>()
  const addenda = db.table<AddendumRow>()
  const signOffs = db.table<SignOffRow>()
  const audit = db.table<AuditRow>()
  seed.forEach((row) => notes.put(row))
  const repos = Layer.mergeAll(
    Layer.succeed(SessionNotesRepo, fakeNotesRepo(notes, versions, addenda, signOffs)),
    Layer.succeed(AddendaRepo, fakeAddendaRepo(addenda)),
    Layer.succeed(SignOffsRepo, fakeSignOffsRepo(signOffs)),
    Signatures.Default.pipe(Layer.provide(MemoryObjectStore.layer)),
    fakeAccess({ patients: [patient], related: (viewer) => isAdmin(viewer) || viewer.id === provider.id || viewer.id === supervisor.id },
      db.table<BreakGlassAccess>()),
    fakeAuditLog(audit),
    testConfig()
  )
  const layer = SessionNoteReviews.DefaultWithoutDependencies.pipe(
    Layer.provideMerge(SessionNotes.DefaultWithoutDependencies),
    Layer.provide(repos),
    Layer.provide(db.sqlClient)
  )
  const run = <A, E>(f: (services: { notes: SessionNotes; reviews: SessionNoteReviews }) => Effect.Effect<A, E>) =>
    Effect.zipRight(
      TestClock.adjust("1 second"),
      Effect.provide(Effect.flatMap(Effect.all({ notes: SessionNotes, reviews: SessionNoteReviews }), f), layer)
    )
  const untouched = () => {
    expect(notes.all()).toEqual(seed)
    expect(versions.all()).toEqual([])
    expect(addenda.all()).toEqual([])
    expect(signOffs.all()).toEqual([])
    expect(audit.all()).toEqual([])
  }
  const actions = (id = 1) => auditActions(audit, "session_note", id).filter((a) => a !== "session_note.read")
  return { notes, versions, addenda, signOffs, audit, run, untouched, actions }
}

/** What an admin's PUT of `status` does to an unsupervised note: moves it, or why not. */
const putMoves: ReadonlyArray<readonly [SessionNoteStatus, SessionNoteStatus]> = [
  ["draft", "pending_review"], ["draft", "archived"], ["pending_review", "pending_signature"], ["pending_review", "archived"],
  ["pending_signature", "archived"], ["requires_addendum", "archived"]
]
const otherwayMessage = (from: SessionNoteStatus, to: SessionNoteStatus): string => {
  if (to === "requires_addendum" && from !== "draft" && from !== "archived" && from !== "requires_addendum") {
    return "can only become requires_addendum through an addendum"
  }
  if (from === "requires_addendum" && to === "pending_review") return "can only become pending_review when the provider answers its addenda"
  if (from === "pending_signature" && to === "completed") return "can only become completed through a sign-off"
  return `cannot change from ${from} to ${to}`
}

const refusal = (field: string, message: string) => ({ _tag: "ValidationFailed", errors: { [field]: [message] } })
const notFound = { _tag: "NotFound", errors: "Session note not found" }

describe("the session note machine over fake repositories", () => {
  describe("every PUT of a status", () => {
    for (const from of sessionNoteStatuses) {
      for (const to of sessionNoteStatuses.filter((s) => s !== from)) {
        const allows = putMoves.some(([a, b]) => a === from && b === to)
        it.effect(`${from} → ${to}: ${allows ? "moves, audited" : otherwayMessage(from, to)}`, () =>
          Effect.gen(function*() {
            const w = world(noteRow(1, from, false))
            const result = yield* Effect.either(w.run(({ notes }) => notes.update(admin, 1, { status: to })))
            if (!allows) {
              expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(refusal("status", otherwayMessage(from, to)))))
              return w.untouched()
            }
            expect(Option.map(Option.getRight(result), (n) => n.status)).toEqual(Option.some(to))
            expect(w.notes.get(1)).toMatchObject({ status: to, locked_at: null })
            expect(w.actions()).toEqual([`session_note.${to}`])
          }))
      }
    }
  })

  it.effect("who moves what: the provider submits, only an admin reviews or archives, strangers see no note", () =>
    Effect.gen(function*() {
      const w = world(noteRow(1, "draft", false), noteRow(2, "pending_review", false), noteRow(3, "pending_review", true))
      const refused = (viewer: Viewer, id: number, to: SessionNoteStatus) => Effect.flip(w.run(({ notes }) => notes.update(viewer, id, { status: to })))
      expect(yield* refused(stranger, 1, "pending_review")).toMatchObject(notFound)
      expect(yield* refused(supervisor, 1, "pending_review")).toMatchObject(notFound)
      expect(yield* refused(provider, 1, "archived")).toMatchObject(refusal("status", "can only be archived by an admin"))
      expect(yield* refused(provider, 2, "pending_signature")).toMatchObject(refusal("status", "can only be moved by an admin (the review)"))
      // A supervised note passes review by its supervisor's approval, not by a status.
      expect(yield* refused(admin, 3, "pending_signature"))
        .toMatchObject(refusal("status", "needs the supervisor's approval (supervision_status approved)"))
      expect(w.notes.all().map((n) => n.status)).toEqual(["draft", "pending_review", "pending_review"])
      expect(w.audit.all()).toEqual([])
      yield* w.run(({ notes }) => notes.update(provider, 1, { status: "pending_review" }))
      expect(w.notes.get(1)?.status).toBe("pending_review")
      expect(w.actions()).toEqual(["session_note.pending_review"])
    }))

  it.effect("a blank note is not submitted; content changes only in draft and requires_addendum, each a version", () =>
    Effect.gen(function*() {
      const blank = { subjective: "  ", objective: null, assessment: null, plan: null, free_text: null }
      const w = world(noteRow(1, "draft", false, { content: blank }), noteRow(2, "pending_review", false))
      expect(yield* Effect.flip(w.run(({ notes }) => notes.update(provider, 1, { status: "pending_review" }))))
        .toMatchObject(refusal("content", "can't be blank"))
      expect(yield* Effect.flip(w.run(({ notes }) => notes.update(provider, 2, { content: { subjective: "Changed" } }))))
        .toMatchObject(refusal("content", "can't be changed while the note is pending_review"))
      expect(w.versions.all()).toEqual([])
      yield* w.run(({ notes }) => notes.update(provider, 1, { content: { subjective: "Calmer at school" }, status: "pending_review" }))
      expect(w.notes.get(1)).toMatchObject({ status: "pending_review", content: { subjective: "Calmer at school" } })
      expect(w.versions.all()).toMatchObject([{ session_note_id: 1, edited_by_id: provider.id, content_sha256: w.notes.get(1)!.content_sha256 }])
      expect(w.actions()).toEqual(["session_note.update", "session_note.pending_review"])
      expect(w.notes.get(2)?.status).toBe("pending_review")
    }))

  it.effect("supervision: given by the supervisor (or an admin) while pending review; approval passes the review", () =>
    Effect.gen(function*() {
      const w = world(noteRow(1, "pending_review", true), noteRow(2, "draft", true), noteRow(3, "pending_review", false))
      const give = (viewer: Viewer, id: number, to: "approved" | "escalated") =>
        w.run(({ notes }) => notes.update(viewer, id, { supervision_status: to }))
      expect(yield* Effect.flip(give(provider, 1, "approved")))
        .toMatchObject(refusal("supervision_status", "can only be given by the note's supervisor or an admin"))
      expect(yield* Effect.flip(give(supervisor, 2, "approved")))
        .toMatchObject(refusal("supervision_status", "can only be given while the note is pending_review (it is draft)"))
      expect(yield* Effect.flip(give(admin, 3, "approved")))
        .toMatchObject(refusal("supervision_status", "is not applicable: the note is not supervised"))
      expect(w.audit.all()).toEqual([])
      yield* give(supervisor, 1, "escalated")
      expect(w.notes.get(1)).toMatchObject({ status: "pending_review", supervision_status: "escalated" })
      yield* give(supervisor, 1, "approved")
      expect(w.notes.get(1)).toMatchObject({ status: "pending_signature", supervision_status: "approved" })
      expect(w.actions()).toEqual(["session_note.supervision_escalated", "session_note.supervision_approved", "session_note.pending_signature"])
    }))

  it.effect("a supervised note's way: addendum, answer, approval, sign-off by the supervisor → completed and locked", () =>
    Effect.gen(function*() {
      const w = world(noteRow(1, "pending_review", true))
      const status = () => [w.notes.get(1)!.status, w.notes.get(1)!.supervision_status] as [SessionNoteStatus, SupervisionStatus | null]
      expect(yield* Effect.flip(w.run(({ reviews }) => reviews.createAddendum(provider, { session_note_id: 1, addendum: { instructions: "x" } }))))
        .toMatchObject(refusal("addendum", "can only be requested by the note's supervisor or an admin"))
      const addendum = yield* w.run(({ reviews }) =>
        reviews.createAddendum(supervisor, { session_note_id: 1, addendum: { instructions: " Add the school report ", signature } }))
      expect(addendum).toMatchObject({ instructions: "Add the school report", instructions_response: null, created_by_id: supervisor.id })
      expect(status()).toEqual(["requires_addendum", "requires_changes"])
      // Only the provider answers, with a response.
      expect(yield* Effect.flip(w.run(({ reviews }) => reviews.updateAddendum(supervisor, addendum.id, { addendum: { instructions_response: "y" } }))))
        .toMatchObject(refusal("addendum", "can only be answered by the note's provider"))
      expect(yield* Effect.flip(w.run(({ reviews }) => reviews.updateAddendum(provider, addendum.id, { addendum: {} }))))
        .toMatchObject(refusal("instructions_response", "can't be blank"))
      yield* w.run(({ notes }) => notes.update(provider, 1, { content: { subjective: "Teacher: two calm days" } }))
      yield* w.run(({ reviews }) => reviews.updateAddendum(provider, addendum.id, { addendum: { instructions_response: "Added" } }))
      expect(status()).toEqual(["pending_review", "pending_supervision"])
      expect(yield* Effect.flip(w.run(({ reviews }) => reviews.updateAddendum(provider, addendum.id, { addendum: { instructions_response: "Again" } }))))
        .toMatchObject(refusal("addendum", "has already been answered"))
      yield* w.run(({ notes }) => notes.update(supervisor, 1, { supervision_status: "approved" }))
      expect(status()).toEqual(["pending_signature", "approved"])
      // An admin's sign-off does not complete a supervised note: its supervisor's does.
      const signOff = { signature, review_date: new Date("2026-03-10") }
      yield* w.run(({ reviews }) => reviews.createSignOff(admin, { session_note_id: 1, sign_off: signOff }))
      expect(status()).toEqual(["pending_signature", "approved"])
      yield* w.run(({ reviews }) => reviews.createSignOff(supervisor, { session_note_id: 1, sign_off: signOff }))
      expect(w.notes.get(1)).toMatchObject({ status: "completed", locked_at: expect.any(Date) })
      expect(w.signOffs.all().map((o) => [o.reviewer_id, o.signed_content_sha256])).toEqual([
        [admin.id, w.notes.get(1)!.content_sha256], [supervisor.id, w.notes.get(1)!.content_sha256]
      ])
      expect(w.actions()).toEqual([
        "session_note.addendum_create", "session_note.requires_addendum", "session_note.supervision_requires_changes",
        "session_note.update", "session_note.addendum_answer", "session_note.pending_review",
        "session_note.supervision_approved", "session_note.pending_signature",
        "session_note.sign_off_create", "session_note.sign_off_create", "session_note.completed"
      ])
      // Completed: read-only, its sign-offs fixed.
      const before = w.notes.get(1)
      expect(yield* Effect.flip(w.run(({ notes }) => notes.update(provider, 1, { content: { subjective: "Later" } }))))
        .toMatchObject(refusal("status", "is completed: the note is read-only; corrections are addenda"))
      expect(yield* Effect.flip(w.run(({ reviews }) => reviews.deleteSignOff(supervisor, 2))))
        .toMatchObject(refusal("status", "is completed: the sign-offs of a completed note can't be changed"))
      expect(w.notes.get(1)).toEqual(before)
      expect(w.signOffs.all()).toHaveLength(2)
    }))

  it.effect("a sign-off given before the review completes the note as the review passes; one of other content does not", () =>
    Effect.gen(function*() {
      const w = world(noteRow(1, "pending_review", false), noteRow(2, "pending_review", false))
      w.signOffs.put({
        id: 1, session_note_id: 2, reviewer_id: admin.id, review_date: new Date(0), instructions: null, signature_key: "k",
        signed_content_sha256: "sha-of-other-content", created_at: new Date(0), updated_at: new Date(0)
      })
      yield* w.run(({ reviews }) => reviews.createSignOff(admin, { session_note_id: 1, sign_off: { signature, review_date: new Date("2026-03-10") } }))
      expect(w.notes.get(1)?.status).toBe("pending_review")
      yield* w.run(({ notes }) => notes.update(admin, 1, { status: "pending_signature" }))
      yield* w.run(({ notes }) => notes.update(admin, 2, { status: "pending_signature" }))
      expect(w.notes.all().map((n) => n.status)).toEqual(["completed", "pending_signature"])
      expect(w.actions(1)).toEqual(["session_note.sign_off_create", "session_note.pending_signature", "session_note.completed"])
      // Completed → requires_addendum through an addendum: the body stays locked.
      yield* w.run(({ reviews }) => reviews.createAddendum(admin, { session_note_id: 1, addendum: { instructions: "Correct the date" } }))
      expect(w.notes.get(1)).toMatchObject({ status: "requires_addendum", locked_at: expect.any(Date) })
      expect(yield* Effect.flip(w.run(({ notes }) => notes.update(provider, 1, { content: { subjective: "New" } }))))
        .toMatchObject(refusal("content", "is locked: the note was signed; corrections are addenda"))
    }))

  it.effect("delete: only drafts; anything else is kept", () =>
    Effect.gen(function*() {
      for (const status of sessionNoteStatuses) {
        const w = world(noteRow(1, status, false))
        const result = yield* Effect.either(w.run(({ notes }) => notes.remove(admin, 1)))
        if (status === "draft") {
          expect(w.notes.all()).toEqual([])
          expect(w.actions()).toEqual(["session_note.delete"])
        } else {
          expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(refusal("status",
            `is ${status}: notes in that status are kept for compliance; only draft notes can be deleted`))))
          w.untouched()
        }
      }
    }))
})
