/**
 * List scopes: which rows a viewer may see, as one SQL condition the listing statement ANDs in
 * (and a load by id uses too, so a row outside the scope answers 404 like a missing one). Each
 * scope names the table aliases it reads; the statement's FROM must bind them.
 */
import type { SqlClient, Statement } from "@effect/sql"
import { isStaff } from "../../Domain/Accounts/User.js"
import { isAdmin, isParent, type ProviderViewer, type Viewer } from "./Viewer.js"

type Sql = SqlClient.SqlClient
type Fragment = Statement.Fragment

/** Patients (`p` = the patient): staff all; a parent those linked to their account. */
const patients = (sql: Sql, viewer: Viewer): Fragment => isStaff(viewer.role) ? sql`TRUE` : sql`p.user_id = ${viewer.id}`

/** Rows of a patient-scoped table, by its unaliased `patient_id` column: staff all; a parent their patients'. */
const patientRecords = (sql: Sql, viewer: Viewer): Fragment =>
  isStaff(viewer.role) ? sql`TRUE` : sql`patient_id IN (SELECT id FROM patients WHERE user_id = ${viewer.id})`

/** Appointments (`pa` = the patient): staff all; a parent their own patients'. */
const appointments = (sql: Sql, viewer: Viewer): Fragment => isStaff(viewer.role) ? sql`TRUE` : sql`pa.user_id = ${viewer.id}`

/**
 * The appointments whose video call a viewer joins (`pa` = the patient, `p` = the provider): the
 * patient's parent or the appointment's provider, whatever their role.
 */
const appointmentCalls = (sql: Sql, viewer: Viewer): Fragment => sql`(pa.user_id = ${viewer.id} OR p.user_id = ${viewer.id})`

/** Session notes (`p` = the provider, `s` = the supervisor): admins all; others those they write or supervise. */
const sessionNotes = (sql: Sql, viewer: Viewer): Fragment =>
  isAdmin(viewer) ? sql`TRUE` : sql`(p.user_id = ${viewer.id} OR s.user_id = ${viewer.id})`

/** Users (the `users` table, unaliased): staff everyone not deleted; a parent only themself. */
const users = (sql: Sql, viewer: Viewer): Fragment =>
  isStaff(viewer.role) ? sql`deleted_at IS NULL` : sql`deleted_at IS NULL AND id = ${viewer.id}`

/** Completed educational and training videos without a patient: any signed-in user. */
const openVideos = (sql: Sql) => sql`(v.patient_id IS NULL AND v.category IN ('educational', 'training') AND v.status = 'completed')`

/**
 * Videos a viewer may read (`v` = the video, general §5.4): admins all; a parent the open ones and
 * their patients' completed videos shared with the family; a provider or supervisor (by their
 * active provider profile) the open ones, their own, their patients' and their supervisees'; anyone
 * else the open ones and those they uploaded.
 */
const videosReadable = (sql: Sql, viewer: ProviderViewer): Fragment => {
  if (isAdmin(viewer)) return sql`TRUE`
  if (isParent(viewer)) {
    return sql`(${openVideos(sql)} OR (v.status = 'completed' AND v.shared_with_family AND
      v.patient_id IN (SELECT id FROM patients WHERE user_id = ${viewer.id})))`
  }
  if ((viewer.role === "provider" || viewer.role === "supervisor") && viewer.providerId !== null) {
    const pid = viewer.providerId
    return sql`(${openVideos(sql)} OR v.created_by_id = ${viewer.id} OR v.provider_id = ${pid}
      OR v.patient_id IN (SELECT id FROM patients WHERE provider_id = ${pid})
      OR v.provider_id IN (SELECT id FROM providers WHERE supervisor_id = ${pid})
      OR v.created_by_id IN (SELECT user_id FROM providers WHERE supervisor_id = ${pid}))`
  }
  return sql`(${openVideos(sql)} OR v.created_by_id = ${viewer.id})`
}

/** Videos a viewer may change (`v`): the uploader, the video's provider, admins. */
const videosWritable = (sql: Sql, viewer: ProviderViewer): Fragment => {
  if (isAdmin(viewer)) return sql`TRUE`
  if (viewer.providerId !== null && !isParent(viewer)) {
    return sql`(v.created_by_id = ${viewer.id} OR v.provider_id = ${viewer.providerId})`
  }
  return sql`(v.created_by_id = ${viewer.id})`
}

/**
 * Prescriptions a viewer may read (`r` = the prescription, `pa` = the patient, `p` = the
 * prescriber): admins all; a parent their patients'; a provider or supervisor theirs and their
 * supervisees'. Undefined when the role reads none at all (the caller answers 403).
 */
const prescriptions = (sql: Sql, viewer: ProviderViewer): Fragment | undefined => {
  switch (viewer.role) {
    case "admin":
      return sql`TRUE`
    case "parent":
      return sql`pa.user_id = ${viewer.id}`
    case "provider":
    case "supervisor":
      return viewer.providerId === null ? sql`FALSE` : sql`(r.provider_id = ${viewer.providerId} OR p.supervisor_id = ${viewer.providerId})`
    default:
      return undefined
  }
}

export const scope = {
  patients,
  patientRecords,
  appointments,
  appointmentCalls,
  sessionNotes,
  users,
  videos: { readable: videosReadable, writable: videosWritable },
  prescriptions
} as const
