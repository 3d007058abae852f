/**
 * Session notes, addenda and sign-offs (general §2.3): representations and the status
 * machine (docs/session-notes.md draws it).
 */
import { Schema } from "effect"
import { PersonName } from "../Scheduling/Scheduling.js"
import { IsoTimestamp } from "../Time.js"

export const sessionNoteStatuses = [
  "draft", "pending_review", "pending_signature", "completed", "requires_addendum", "archived"
] as const
export const SessionNoteStatus = Schema.Literal(...sessionNoteStatuses).annotations({ message: () => "is not included in the list" })
export type SessionNoteStatus = typeof SessionNoteStatus.Type

export const supervisionStatuses = ["pending_supervision", "approved", "requires_changes", "escalated"] as const
export const SupervisionStatus = Schema.Literal(...supervisionStatuses).annotations({ message: () => "is not included in the list" })
export type SupervisionStatus = typeof SupervisionStatus.Type

/**
 * The moves of a note: draft → pending_review (the provider submits) → pending_signature
 * (review passed) → completed (signed off); pending_review and pending_signature →
 * requires_addendum (a reviewer's addendum) → pending_review (the provider answers it); every
 * status but completed → archived (admin); completed → requires_addendum (an addendum; the body
 * stays locked). archived is final.
 */
export const sessionNoteMoves: Readonly<Record<SessionNoteStatus, ReadonlyArray<SessionNoteStatus>>> = {
  draft: ["pending_review", "archived"],
  pending_review: ["pending_signature", "requires_addendum", "archived"],
  pending_signature: ["completed", "requires_addendum", "archived"],
  requires_addendum: ["pending_review", "archived"],
  completed: ["requires_addendum"],
  archived: []
}

export const canMoveNote = (from: SessionNoteStatus, to: SessionNoteStatus): boolean => sessionNoteMoves[from].includes(to)

/** What makes each move: the one trigger that may perform it. */
export type NoteTrigger = "submit" | "review" | "addendum" | "answer" | "sign_off" | "archive"

export const triggerOf = (from: SessionNoteStatus, to: SessionNoteStatus): NoteTrigger | undefined => {
  if (!canMoveNote(from, to)) return undefined
  switch (to) {
    case "pending_review":
      return from === "draft" ? "submit" : "answer"
    case "pending_signature":
      return "review"
    case "requires_addendum":
      return "addendum"
    case "completed":
      return "sign_off"
    case "archived":
      return "archive"
    case "draft":
      return undefined
  }
}

/** The moves `PUT …/session_notes/{id}` makes with `status`; the others have their own endpoint or event. */
export const putTriggers: ReadonlyArray<NoteTrigger> = ["submit", "review", "archive"]

/** Supervision moves: pending_supervision → approved | requires_changes | escalated; escalated → approved | requires_changes; requires_changes → pending_supervision (the provider answers). */
export const supervisionMoves: Readonly<Record<SupervisionStatus, ReadonlyArray<SupervisionStatus>>> = {
  pending_supervision: ["approved", "requires_changes", "escalated"],
  escalated: ["approved", "requires_changes"],
  requires_changes: ["pending_supervision"],
  approved: ["requires_changes"]
}
export const canMoveSupervision = (from: SupervisionStatus, to: SupervisionStatus): boolean => supervisionMoves[from].includes(to)

/** The note body stays editable only while it is a draft or answers an addendum, and never once signed. */
export const editableStatuses: ReadonlyArray<SessionNoteStatus> = ["draft", "requires_addendum"]

/** Only drafts may be deleted; anything else is kept for compliance. */
export const deletableStatuses: ReadonlyArray<SessionNoteStatus> = ["draft"]

/** The sections of a note: SOAP (subjective, objective, assessment, plan) plus free text. */
export const contentSections = ["subjective", "objective", "assessment", "plan", "free_text"] as const
export type ContentSection = (typeof contentSections)[number]

export class NoteContent extends Schema.Class<NoteContent>("NoteContent")({
  subjective: Schema.NullOr(Schema.String).annotations({ description: "S: what the patient and family report" }),
  objective: Schema.NullOr(Schema.String).annotations({ description: "O: what the clinician observed and measured" }),
  assessment: Schema.NullOr(Schema.String).annotations({ description: "A: the clinician's assessment of progress" }),
  plan: Schema.NullOr(Schema.String).annotations({ description: "P: next steps, homework, next session" }),
  free_text: Schema.NullOr(Schema.String).annotations({ description: "Anything else, free text" })
}, { description: "SOAP sections and free text; a section not written is null" }) {}

/** The stored form: every section, in a fixed order, null when not written. */
export const normaliseContent = (input: Partial<Record<ContentSection, string | null | undefined>>): NoteContent => {
  const out: Record<string, string | null> = {}
  for (const section of contentSections) {
    const value = input[section]
    out[section] = value === undefined || value === null || value.trim().length === 0 ? null : value
  }
  return NoteContent.make(out as Record<ContentSection, string | null>, true)
}

/** The text that is hashed and signed: the sections in their fixed order, as JSON. */
export const canonicalContent = (content: Partial<Record<ContentSection, unknown>>): string =>
  JSON.stringify(contentSections.map((section) => [section, typeof content[section] === "string" ? content[section] : null]))

export const isBlankContent = (content: NoteContent): boolean => contentSections.every((section) => content[section] === null)

/** A stored signature as the spec names it: the PNG as a base64 data URI (a signed link goes beside it). */
const SignatureData = Schema.NullOr(Schema.String).annotations({
  description: "The signature image as a base64 PNG data URI (`data:image/png;base64,…`): the PNG that was signed with, " +
    "byte for byte; null only if the stored image can no longer be read"
})
const OptionalSignatureData = Schema.NullOr(Schema.String).annotations({
  description: "The signature image as a base64 PNG data URI (`data:image/png;base64,…`): the PNG that was signed with, " +
    "byte for byte; null when none was given"
})

export class AddendumSummary extends Schema.Class<AddendumSummary>("SessionNoteAddendumSummary")({
  id: Schema.Int,
  instructions: Schema.String,
  instructions_response: Schema.NullOr(Schema.String)
}) {}

export class SignOffSummary extends Schema.Class<SignOffSummary>("SessionNoteSignOffSummary")({
  id: Schema.Int,
  reviewer_id: Schema.Int.annotations({ description: "The reviewer's user id" }),
  review_date: IsoTimestamp,
  signature: SignatureData,
  signature_url: Schema.String.annotations({ description: "A signed link to the same image, valid 30 minutes" }),
  content_sha256: Schema.String.annotations({ description: "SHA-256 (hex) of the note content the reviewer signed" }),
  content_matches: Schema.Boolean.annotations({ description: "Whether the note content today still hashes to what was signed" })
}) {}

const noteFields = {
  id: Schema.Int,
  patient_id: Schema.Int,
  provider_id: Schema.Int,
  appointment_id: Schema.Int,
  content: NoteContent,
  status: SessionNoteStatus,
  supervision_required: Schema.Boolean,
  supervisor_id: Schema.NullOr(Schema.Int).annotations({ description: "The supervising provider's id (from the provider's supervisor at creation)" }),
  content_sha256: Schema.String.annotations({ description: "SHA-256 (hex) of the content as the API last wrote it" }),
  content_intact: Schema.Boolean.annotations({ description: "false when the stored content no longer hashes to content_sha256 (changed behind the API)" }),
  signed_at: Schema.NullOr(IsoTimestamp).annotations({ description: "When the note was first signed off; the content is locked from then on" }),
  patient: PersonName,
  provider: PersonName,
  appointment_scheduled_at: IsoTimestamp,
  appointment_type: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  addendums: Schema.Array(AddendumSummary),
  sign_offs: Schema.Array(SignOffSummary)
}

export class SessionNote extends Schema.Class<SessionNote>("SessionNote")(noteFields) {}

/** The supervisor view (§2.3, §4.15): the note with its supervision status and notes. */
export class SupervisorSessionNote extends Schema.Class<SupervisorSessionNote>("SupervisorSessionNote")({
  ...noteFields,
  supervision_status: Schema.NullOr(SupervisionStatus),
  supervision_notes: Schema.NullOr(Schema.String)
}) {}

export class Addendum extends Schema.Class<Addendum>("SessionNoteAddendum")({
  id: Schema.Int,
  session_note_id: Schema.Int,
  instructions: Schema.String,
  instructions_response: Schema.NullOr(Schema.String),
  signature: OptionalSignatureData,
  signature_url: Schema.NullOr(Schema.String).annotations({ description: "Signed link to the reviewer's signature (PNG), valid 30 minutes" }),
  responded_signature: OptionalSignatureData,
  responded_signature_url: Schema.NullOr(Schema.String).annotations({ description: "Signed link to the provider's signature (PNG), valid 30 minutes" }),
  created_by_id: Schema.NullOr(Schema.Int),
  responded_by_id: Schema.NullOr(Schema.Int),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class SignOff extends Schema.Class<SignOff>("SessionNoteSignOff")({
  id: Schema.Int,
  session_note_id: Schema.Int,
  reviewer_id: Schema.Int,
  review_date: IsoTimestamp,
  signature: SignatureData,
  signature_url: Schema.String.annotations({ description: "Signed link to the signature (PNG), valid 30 minutes" }),
  instructions: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp
}) {}

/** §2.7 supervisor appointment representation. */
export class SupervisorAppointment extends Schema.Class<SupervisorAppointment>("SupervisorAppointment")({
  id: Schema.Int,
  patient_id: Schema.Int,
  provider_id: Schema.Int,
  supervisor_id: Schema.NullOr(Schema.Int),
  scheduled_at: IsoTimestamp,
  status: Schema.String,
  supervision_status: Schema.NullOr(SupervisionStatus),
  supervision_notes: Schema.NullOr(Schema.String),
  session_note: Schema.NullOr(Schema.Struct({ id: Schema.Int, status: SessionNoteStatus })),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}
