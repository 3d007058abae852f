/**
 * The caller as the record-level rules read them, and the pure checks over one record. Every
 * "may this caller see / change this row?" question is answered here or in `Scopes.ts` (the same
 * rules as SQL conditions for lists), so narrowing who sees what is a change to this folder only.
 */
import { isStaff, type Role } from "../../Domain/Accounts/User.js"

/**
 * Who is asking: the signed-in user (`Caller` from src/Api/Security.ts fits) and, for the rules
 * that follow provider relationships, their provider profile (`Access.withActiveProvider`,
 * `Access.withPrescriberProfile`).
 */
export interface Viewer {
  readonly id: number
  readonly role: Role
  readonly providerId?: number | null | undefined
}

/** A viewer whose provider profile has been looked up (null: none). */
export interface ProviderViewer extends Viewer {
  readonly providerId: number | null
}

export { isStaff }
export const isAdmin = (viewer: Viewer): boolean => viewer.role === "admin"
export const isParent = (viewer: Viewer): boolean => viewer.role === "parent"

/** A parent sees the patients linked to their account; staff see every patient. */
export const canSeePatient = (viewer: Viewer, patient: { readonly user_id: number | null }): boolean =>
  isStaff(viewer.role) || patient.user_id === viewer.id

/** The session-note people: the note's provider and, when it has one, its supervisor. */
interface NoteParties {
  readonly provider_user_id: number
  readonly supervisor_user_id: number | null
}

export const isNoteProvider = (viewer: Viewer, note: Pick<NoteParties, "provider_user_id">): boolean => note.provider_user_id === viewer.id
export const isNoteSupervisor = (viewer: Viewer, note: NoteParties): boolean =>
  note.supervisor_user_id !== null && note.supervisor_user_id === viewer.id

/** A note's content is written (created, edited, submitted) by its provider or an admin. */
export const canEditNote = (viewer: Viewer, note: Pick<NoteParties, "provider_user_id">): boolean =>
  isNoteProvider(viewer, note) || isAdmin(viewer)

/** Addenda and sign-offs on a note: its supervisor or an admin. */
export const canReviewNote = (viewer: Viewer, note: NoteParties): boolean => isNoteSupervisor(viewer, note) || isAdmin(viewer)

/** A sign-off is changed by the reviewer who gave it, or an admin. */
export const canChangeSignOff = (viewer: Viewer, signOff: { readonly reviewer_id: number }): boolean =>
  signOff.reviewer_id === viewer.id || isAdmin(viewer)

/** The prescription parties: its prescriber's provider profile and that provider's supervisor, and the patient's account. */
interface PrescriptionParties {
  readonly provider_id: number
  readonly provider_supervisor_id: number | null
  readonly patient_user_id: number | null
}

/** Admins; a parent their own patients'; a prescriber theirs and their supervisees'. */
export const canReadPrescription = (viewer: ProviderViewer, row: PrescriptionParties): boolean =>
  isAdmin(viewer) ||
  (isParent(viewer) && row.patient_user_id === viewer.id) ||
  (viewer.providerId !== null && (row.provider_id === viewer.providerId || row.provider_supervisor_id === viewer.providerId))

/** Admins; a prescriber the prescriptions they wrote. */
export const canWritePrescription = (viewer: ProviderViewer, row: PrescriptionParties): boolean =>
  isAdmin(viewer) || (viewer.providerId !== null && row.provider_id === viewer.providerId)

/** Another user's account is acted on by staff (resending a confirmation …); a parent only their own. */
export const canActForUser = (viewer: Viewer, userId: number): boolean => viewer.id === userId || isStaff(viewer.role)

/** An account's settings and devices are changed by the user themself or an admin. */
export const canManageAccount = (viewer: Viewer, userId: number): boolean => viewer.id === userId || isAdmin(viewer)

/** Videos are uploaded by admins, providers and supervisors. */
export const canCreateVideo = (viewer: Viewer): boolean => ["admin", "provider", "supervisor"].includes(viewer.role)
