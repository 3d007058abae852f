/**
 * The caller as the record-level rules read them, and the pure checks over one record. Every
 * "may this caller see / change this row?" question is answered here or in `AccessRepo.ts` (the same
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
  /**
   * The break-glass the request asked for (`X-Access-Reason`, checked with `accessReasonOf`): a
   * staff member opening a patient outside their care relationships.
   */
  readonly breakGlass?: BreakGlass | null | undefined
}

/** A reason given to open a patient outside one's care relationships, and the request it opens. */
export interface BreakGlass {
  readonly reason: string
  readonly method: string
  /** Without the query string (search terms are no business of the review). */
  readonly path: string
}

/** A viewer whose provider profile has been looked up (null: none). */
export interface ProviderViewer extends Viewer {
  readonly providerId: number | null
}

export { isStaff }
export const isAdmin = (viewer: Viewer): boolean => viewer.role === "admin"
export const isParent = (viewer: Viewer): boolean => viewer.role === "parent"

/**
 * What a request about a patient reads or changes. `general`: demographics, scheduling, billing
 * and the other non-clinical records (help requests, waitlist spots, content assignments, documents
 * not marked clinical). `clinical`: session notes, questionnaire answers, medication history and
 * prescriptions, treatment plans, documents marked clinical, collaborator assessments.
 */
export type Purpose = "general" | "clinical"

/** Front desk and billing: every patient's demographics, scheduling and billing, no clinical content. */
export const isFrontOffice = (viewer: Viewer): boolean => viewer.role === "support" || viewer.role === "billing"

/** Providers and supervisors see the patients of their care relationships (`scope.careRelationship`). */
export const followsCareRelationships = (viewer: Viewer): boolean => viewer.role === "provider" || viewer.role === "supervisor"

/** Whether the role reads clinical content at all (admins, providers, supervisors and a parent of their own patient). */
export const readsClinicalContent = (viewer: Viewer): boolean => !isFrontOffice(viewer)

/**
 * Whether a viewer sees every patient for a purpose, with no relationship to check: admins always;
 * front desk and billing for non-clinical records.
 */
export const seesEveryPatient = (viewer: Viewer, purpose: Purpose = "general"): boolean =>
  isAdmin(viewer) || (isFrontOffice(viewer) && purpose === "general")

/**
 * Staff work on patients' records — creating and changing patients, treatment plans, moving
 * waitlist spots, deleting documents — on the patients they may see; a parent does not (403 on
 * their own patient, after the visibility check).
 */
export const canManagePatientRecords = (viewer: Viewer): boolean => isStaff(viewer.role)

/** The break-glass header, and the longest reason it may carry. */
export const accessReasonHeader = "x-access-reason"
export const accessReasonMaxLength = 500

/**
 * The break-glass reason of a request's `X-Access-Reason` header: trimmed, 1 to 500 characters, no
 * control characters. Anything else is no reason (undefined): the request is answered as without
 * the header.
 */
export const accessReasonOf = (header: string | undefined): string | undefined => {
  const reason = header?.trim()
  if (reason === undefined || reason.length === 0 || reason.length > accessReasonMaxLength) return undefined
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(reason) ? undefined : reason
}

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
