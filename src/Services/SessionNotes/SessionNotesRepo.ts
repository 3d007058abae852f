/** SQL shared by the session note services: a note row with its patient, provider, supervisor and appointment. */
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import {
  AddendumSummary, canonicalContent, type NoteContent, normaliseContent, SessionNote, type SessionNoteStatus, SignOffSummary,
  type SupervisionStatus, SupervisorSessionNote
} from "../../Domain/SessionNotes/SessionNote.js"
import { sha256Hex } from "./Signatures.js"

export interface NoteRow {
  readonly id: number
  readonly patient_id: number
  readonly provider_id: number
  readonly appointment_id: number
  readonly content: Record<string, unknown>
  readonly content_sha256: string
  readonly status: SessionNoteStatus
  readonly supervision_required: boolean
  readonly supervisor_id: number | null
  readonly supervision_status: SupervisionStatus | null
  readonly supervision_notes: string | null
  readonly locked_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly provider_first_name: string
  readonly provider_last_name: string
  readonly provider_user_id: number
  readonly supervisor_user_id: number | null
  readonly appointment_scheduled_at: Date
  readonly appointment_type: string | null
}

export const noteColumns = `n.id, n.patient_id, n.provider_id, n.appointment_id, n.content, n.content_sha256, n.status,
  n.supervision_required, n.supervisor_id, n.supervision_status, n.supervision_notes, n.locked_at, n.created_at, n.updated_at,
  pa.first_name AS patient_first_name, pa.last_name AS patient_last_name,
  pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.user_id AS provider_user_id,
  s.user_id AS supervisor_user_id, a.scheduled_at AS appointment_scheduled_at, a.appointment_type`

export const noteFrom = `session_notes n JOIN patients pa ON pa.id = n.patient_id
  JOIN providers p ON p.id = n.provider_id JOIN users pu ON pu.id = p.user_id
  JOIN appointments a ON a.id = n.appointment_id
  LEFT JOIN providers s ON s.id = n.supervisor_id`

export interface AddendumRow {
  readonly id: number
  readonly session_note_id: number
  readonly instructions: string
  readonly instructions_response: string | null
  readonly signature_key: string | null
  readonly responded_signature_key: string | null
  readonly created_by_id: number | null
  readonly responded_by_id: number | null
  readonly responded_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const addendumColumns = `id, session_note_id, instructions, instructions_response, signature_key, responded_signature_key,
  created_by_id, responded_by_id, responded_at, created_at, updated_at`

export interface SignOffRow {
  readonly id: number
  readonly session_note_id: number
  readonly reviewer_id: number
  readonly review_date: Date
  readonly instructions: string | null
  readonly signature_key: string
  readonly signed_content_sha256: string
  readonly created_at: Date
  readonly updated_at: Date
}

export const signOffColumns = `id, session_note_id, reviewer_id, review_date, instructions, signature_key, signed_content_sha256,
  created_at, updated_at`

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
