/**
 * A signed session note as a PDF (beyond the spec): what a clinic hands to auditors and
 * payers. The note's content, its addenda and sign-offs with their signature images, and the
 * content hashes that show whether the signed content is still what is stored. Admins only; the
 * download is audited.
 */
import { Effect } from "effect"
import { invalid } from "../../Api/Errors.js"
import { sessionNoteMessages } from "../../Api/SessionNotes/SessionNotes.js"
import { contentSections } from "../../Domain/SessionNotes/SessionNote.js"
import type { Viewer } from "../Access/Access.js"
import { now } from "../Time.js"
import { AddendaRepo, type AddendumRow } from "./AddendaRepo.js"
import { contentOf, currentHash, type NoteRow } from "./SessionNotesRepo.js"
import { SessionNotes } from "./SessionNotes.js"
import { Signatures } from "./Signatures.js"
import { type NamedSignOffRow, SignOffsRepo } from "./SignOffsRepo.js"

const sectionTitles: Record<(typeof contentSections)[number], string> = {
  subjective: "Subjective",
  objective: "Objective",
  assessment: "Assessment",
  plan: "Plan",
  free_text: "Notes"
}

interface PdfInput {
  readonly note: NoteRow
  readonly addendums: ReadonlyArray<AddendumRow & { readonly image?: Uint8Array | undefined; readonly respondedImage?: Uint8Array | undefined }>
  readonly signOffs: ReadonlyArray<NamedSignOffRow & { readonly image?: Uint8Array | undefined }>
  readonly generatedAt: Date
}

/** Renders the document: pure apart from pdfkit's buffers. */
export const renderNotePdf = async (input: PdfInput): Promise<Uint8Array> => {
  // Loaded on first use: pdfkit and its font machinery are tens of MB an idle instance never needs.
  const { default: PDFDocument } = await import("pdfkit")
  const { isStandardText, writeParagraph } = await import("../Pdf/PdfText.js")
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: "LETTER", margin: 54, info: { Title: `Session note ${input.note.id}`, Producer: "Care Coordination API" } })
    const chunks: Array<Buffer> = []
    doc.on("data", (chunk: Buffer) => chunks.push(chunk))
    doc.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))))
    doc.on("error", reject)
    const { note } = input
    const hash = currentHash(note)
    /** A paragraph at the size: in Helvetica, or in the fonts of every language when Helvetica cannot draw it. */
    const say = (text: string, size = 10) => {
      doc.fontSize(size)
      if (isStandardText(text)) doc.text(text)
      else writeParagraph(doc, text, size)
    }
    const image = (bytes: Uint8Array | undefined) => {
      if (bytes === undefined) return
      try {
        doc.image(Buffer.from(bytes), { fit: [200, 80] })
        doc.moveDown(0.5)
      } catch {
        doc.text("(signature image unreadable)")
      }
    }
    say(`Session note ${note.id}`, 18)
    doc.moveDown(0.5)
    say(`Patient: ${note.patient_first_name} ${note.patient_last_name} (id ${note.patient_id})`)
    say(`Provider: ${note.provider_first_name} ${note.provider_last_name} (id ${note.provider_id})`)
    say(`Appointment: ${note.appointment_id}, ${note.appointment_scheduled_at.toISOString()}${note.appointment_type === null ? "" : `, ${note.appointment_type}`}`)
    say(`Status: ${note.status}${note.supervision_required ? `; supervision: ${note.supervision_status ?? "-"}` : ""}`)
    say(`Signed: ${note.locked_at?.toISOString() ?? "-"}`)
    say(`Content SHA-256: ${note.content_sha256}${hash === note.content_sha256 ? "" : " (STORED CONTENT DIFFERS: altered outside the API)"}`)
    doc.moveDown()
    const content = contentOf(note)
    for (const section of contentSections) {
      const text = content[section]
      if (text === null) continue
      say(sectionTitles[section], 13)
      say(text)
      doc.moveDown(0.5)
    }
    if (note.supervision_notes !== null) {
      say("Supervision notes", 13)
      say(note.supervision_notes)
      doc.moveDown(0.5)
    }
    if (input.addendums.length > 0) {
      doc.moveDown()
      say("Addenda", 14)
      for (const a of input.addendums) {
        doc.moveDown(0.5)
        say(`Addendum ${a.id} (${a.created_at.toISOString()}, requested by user ${a.created_by_id ?? "-"})`, 11)
        say(`Instructions: ${a.instructions}`)
        image(a.image)
        say(`Response: ${a.instructions_response ?? "(not answered)"}${a.responded_by_id === null ? "" : ` (user ${a.responded_by_id}, ${a.responded_at?.toISOString() ?? ""})`}`)
        image(a.respondedImage)
      }
    }
    if (input.signOffs.length > 0) {
      doc.moveDown()
      say("Sign-offs", 14)
      for (const s of input.signOffs) {
        doc.moveDown(0.5)
        say(`Sign-off ${s.id} by ${s.reviewer} (user ${s.reviewer_id}), review date ${s.review_date.toISOString()}`, 11)
        if (s.instructions !== null) say(`Instructions: ${s.instructions}`)
        say(`Signed content SHA-256: ${s.signed_content_sha256} (${s.signed_content_sha256 === hash ? "matches the stored content" : "DOES NOT MATCH the stored content"})`)
        image(s.image)
      }
    }
    doc.moveDown().fontSize(8).text(`Generated ${input.generatedAt.toISOString()}`)
    doc.end()
  })
}

export class NotePdfs extends Effect.Service<NotePdfs>()("app/NotePdfs", {
  effect: Effect.gen(function*() {
    const addenda = yield* AddendaRepo
    const signOffs = yield* SignOffsRepo
    const notes = yield* SessionNotes
    const signatures = yield* Signatures

    const imageOf = (key: string | null) => key === null ? Effect.succeed(undefined) : signatures.image(key)

    const pdf = Effect.fn("NotePdfs.pdf")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "session_note.id": id })
      const note = yield* notes.findRow(viewer, id, false)
      if (note.locked_at === null) return yield* Effect.fail(invalid({ status: [sessionNoteMessages.notSigned(note.status)] }))
      const addendumRows = yield* addenda.ofNotes([id])
      const signOffRows = yield* signOffs.namedOfNote(id)
      const addendums = yield* Effect.forEach(addendumRows, (a) =>
        Effect.map(Effect.all([imageOf(a.signature_key), imageOf(a.responded_signature_key)]), ([image, respondedImage]) => ({ ...a, image, respondedImage })))
      const signed = yield* Effect.forEach(signOffRows, (s) => Effect.map(imageOf(s.signature_key), (image) => ({ ...s, image })))
      yield* notes.record(viewer, "pdf", id)
      const generatedAt = yield* now
      return yield* Effect.promise(() => renderNotePdf({ note, addendums, signOffs: signed, generatedAt }))
    })

    return { pdf } as const
  }),
  dependencies: [SessionNotes.Default, AddendaRepo.Default, SignOffsRepo.Default, Signatures.Default]
}) {}
