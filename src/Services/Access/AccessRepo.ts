/**
 * The access module's SQL (ARCHITECTURE "Access"), the one place it lives.
 *
 * List scopes (`scope`): which rows a viewer may see, as one SQL condition the listing statement
 * ANDs in (and a load by id uses too, so a row outside the scope answers 404 like a missing one).
 * Each scope names the table aliases it reads; the statement's FROM must bind them. Repositories
 * apply them; the rules they encode are written beside each.
 *
 * The reads the access rules need (`AccessRepo`): a patient with the caller's care relationship
 * computed beside it (`scope.patientsOf`: one indexed statement), an appointment's patient, a
 * parent's linked patients, a user's provider profile. They read tables other areas own
 * (patients, appointments, providers) and never write.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { isStaff } from "../../Domain/Accounts/User.js"
import { PatientId, ProviderId } from "../../Domain/Ids.js"
import { dayMs } from "../../Domain/Time.js"
import { orDefect, ScopeAnswer, SqlSchema } from "../Repository.js"
import { followsCareRelationships, isAdmin, isParent, type ProviderViewer, type Purpose, seesEveryPatient, type Viewer } from "./Viewer.js"

type Sql = SqlClient.SqlClient
type Fragment = Statement.Fragment

/** How far ahead a booked appointment makes a care relationship. */
export const appointmentHorizonDays = 90

/** The end of the appointment horizon: appointments before it (past ones included) count. */
export const appointmentHorizon = (now: Date): Date => new Date(now.getTime() + appointmentHorizonDays * dayMs)

/**
 * A provider's team: their own provider profile and the profiles they supervise (one level), by
 * `providers.user_id` (unique) and `providers.supervisor_id` (indexed).
 */
const teamProfiles = (sql: Sql, viewer: Viewer): Fragment =>
  sql`(SELECT id FROM providers WHERE user_id = ${viewer.id}
    UNION ALL SELECT s.id FROM providers me JOIN providers s ON s.supervisor_id = me.id WHERE me.user_id = ${viewer.id})`

/** The users of the team: the viewer and the users of the profiles they supervise. */
const teamUsers = (sql: Sql, viewer: Viewer): Fragment =>
  sql`(SELECT ${viewer.id}::int UNION ALL SELECT s.user_id FROM providers me JOIN providers s ON s.supervisor_id = me.id WHERE me.user_id = ${viewer.id})`

/**
 * The care relationship of a provider or supervisor with the patient aliased `alias`: the team
 * (their profile, and the profiles they supervise) is the patient's primary provider, has an
 * appointment with the patient (of any status) scheduled before `now` + 90 days, or holds a role in
 * the patient's case load (ECM provider, oLCM, iLCM).
 *
 * Two forms with the same meaning: `one` for a check of one patient (EXISTS over the patient's own
 * appointments and case load: `appointments_patient_id_idx`, `case_loads.patient_id` unique) and
 * `many` for lists (the team's patients computed once as hashed sets:
 * `appointments_provider_scheduled_idx`, the case-load role indexes).
 */
const careRelationship = (sql: Sql, viewer: Viewer, now: Date, alias: string, form: "one" | "many"): Fragment => {
  const p = sql(alias)
  const team = teamProfiles(sql, viewer)
  const users = teamUsers(sql, viewer)
  const until = appointmentHorizon(now)
  if (form === "one") {
    return sql`(${p}.provider_id IN ${team}
      OR EXISTS (SELECT 1 FROM appointments ca WHERE ca.patient_id = ${p}.id AND ca.scheduled_at < ${until} AND ca.provider_id IN ${team})
      OR EXISTS (SELECT 1 FROM case_loads cl WHERE cl.patient_id = ${p}.id
        AND (cl.provider_id IN ${team} OR cl.olcm_user_id IN ${users} OR cl.ilcm_user_id IN ${users})))`
  }
  return sql`(${p}.provider_id IN ${team}
    OR ${p}.id IN (SELECT ca.patient_id FROM appointments ca WHERE ca.provider_id IN ${team} AND ca.scheduled_at < ${until})
    OR ${p}.id IN (SELECT cl.patient_id FROM case_loads cl WHERE cl.provider_id IN ${team})
    OR ${p}.id IN (SELECT cl.patient_id FROM case_loads cl WHERE cl.olcm_user_id IN ${users})
    OR ${p}.id IN (SELECT cl.patient_id FROM case_loads cl WHERE cl.ilcm_user_id IN ${users}))`
}

/**
 * Patients the viewer may see for a purpose, over the patient aliased `alias` (default `p`):
 * admins all; front desk and billing all for non-clinical records, none for clinical ones;
 * providers and supervisors those of their care relationships; a parent those linked to their
 * account. Break-glass opens one patient at a time (`Access.visiblePatient`), never a list.
 */
const patientsOf = (sql: Sql, viewer: Viewer, now: Date, purpose: Purpose = "general", alias = "p", form: "one" | "many" = "many"): Fragment => {
  if (isParent(viewer)) return sql`${sql(alias)}.user_id = ${viewer.id}`
  if (seesEveryPatient(viewer, purpose)) return sql`TRUE`
  if (followsCareRelationships(viewer)) return careRelationship(sql, viewer, now, alias, form)
  return sql`FALSE`
}

/** Patients (`p` = the patient): see `patientsOf`. */
const patients = (sql: Sql, viewer: Viewer, now: Date, purpose: Purpose = "general"): Fragment => patientsOf(sql, viewer, now, purpose)

/** Rows of a patient-scoped table, by its unaliased `patient_id` column: those of the patients the viewer sees. */
const patientRecords = (sql: Sql, viewer: Viewer, now: Date, purpose: Purpose = "general"): Fragment => {
  if (seesEveryPatient(viewer, purpose) && !isParent(viewer)) return sql`TRUE`
  return sql`patient_id IN (SELECT rp.id FROM patients rp WHERE ${patientsOf(sql, viewer, now, purpose, "rp")})`
}

/**
 * Content assignments (user pieces and collections, the row aliased `alias`): not clinical, so
 * admins, front desk and billing all; a parent those assigned to their account; a provider or
 * supervisor those of the patients of their care relationships, those of the accounts linked to
 * such a patient, and those assigned to them or by them.
 */
const contentAssignments = (sql: Sql, viewer: Viewer, now: Date, alias: string): Fragment => {
  const a = sql(alias)
  if (isParent(viewer)) return sql`${a}.user_id = ${viewer.id}`
  if (seesEveryPatient(viewer, "general")) return sql`TRUE`
  if (!followsCareRelationships(viewer)) return sql`(${a}.user_id = ${viewer.id} OR ${a}.assigned_by = ${viewer.id})`
  const related = careRelationship(sql, viewer, now, "cp", "many")
  return sql`(${a}.user_id = ${viewer.id} OR ${a}.assigned_by = ${viewer.id}
    OR ${a}.patient_id IN (SELECT cp.id FROM patients cp WHERE ${related})
    OR (${a}.patient_id IS NULL AND ${a}.user_id IN (SELECT cp.user_id FROM patients cp WHERE cp.user_id IS NOT NULL AND ${related})))`
}

/** Appointments (`pa` = the patient): those of the patients the viewer sees (scheduling is not clinical). */
const appointments = (sql: Sql, viewer: Viewer, now: Date): Fragment => patientsOf(sql, viewer, now, "general", "pa", "one")

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

/**
 * The patients (aliased `alias`) through whom a viewer reaches records that are not theirs
 * (collaborators, their assessments, videos): a provider's or supervisor's care relationships;
 * nobody else's (admins read everything anyway; a parent's own patients are their rules' business).
 */
const caredFor = (sql: Sql, viewer: Viewer, now: Date, alias: string, form: "one" | "many" = "many"): Fragment =>
  followsCareRelationships(viewer) ? careRelationship(sql, viewer, now, alias, form) : sql`FALSE`

/**
 * Collaborator assessments (`c` = the collaborator, `p` = the patient): admins all; others those
 * of the collaborators they own and those of their patients — a parent's linked patients (through
 * `patients.user_id`), a provider's or supervisor's care relationships.
 */
const collaboratorAssessments = (sql: Sql, viewer: Viewer, now: Date, form: "one" | "many" = "many"): Fragment =>
  isAdmin(viewer)
    ? sql`TRUE`
    : sql`(c.owner_id = ${viewer.id} OR p.user_id = ${viewer.id} OR ${caredFor(sql, viewer, now, "p", form)})`

/** Completed educational and training videos without a patient: any signed-in user. */
const openVideos = (sql: Sql) => sql`(v.patient_id IS NULL AND v.category IN ('educational', 'training') AND v.status = 'completed')`

/**
 * Videos a viewer may read (`v` = the video, general §5.4): admins all; a parent the open ones and
 * their patients' completed videos shared with the family; a provider or supervisor (by their
 * active provider profile) the open ones, their own, their supervisees', and those of the patients
 * of their care relationships; anyone else the open ones and those they uploaded.
 */
const videosReadable = (sql: Sql, viewer: ProviderViewer, now: Date): Fragment => {
  if (isAdmin(viewer)) return sql`TRUE`
  if (isParent(viewer)) {
    return sql`(${openVideos(sql)} OR (v.status = 'completed' AND v.shared_with_family AND
      v.patient_id IN (SELECT id FROM patients WHERE user_id = ${viewer.id})))`
  }
  if ((viewer.role === "provider" || viewer.role === "supervisor") && viewer.providerId !== null) {
    const pid = viewer.providerId
    return sql`(${openVideos(sql)} OR v.created_by_id = ${viewer.id} OR v.provider_id = ${pid}
      OR v.patient_id IN (SELECT cp.id FROM patients cp WHERE ${caredFor(sql, viewer, now, "cp")})
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
  patientsOf,
  patientRecords,
  contentAssignments,
  appointments,
  appointmentCalls,
  sessionNotes,
  users,
  caredFor,
  collaboratorAssessments,
  videos: { readable: videosReadable, writable: videosWritable },
  prescriptions
} as const

const Related = Schema.Struct({ id: PatientId, related: ScopeAnswer })
const PatientOf = Schema.Struct({ patient_id: PatientId })
const PatientRow = Schema.Struct({ id: PatientId })
const ProviderRow = Schema.Struct({ id: ProviderId })

export class AccessRepo extends Effect.Service<AccessRepo>()("app/AccessRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const relatedOne = (viewer: Viewer, purpose: Purpose, at: Date) =>
      SqlSchema.findOne({
        Request: Schema.Number,
        Result: Related,
        execute: (id) => sql`SELECT p.id, ${scope.patientsOf(sql, viewer, at, purpose, "p", "one")} AS related
          FROM patients p WHERE p.id = ${id}`
      })

    const relatedMany = (viewer: Viewer, purpose: Purpose, at: Date) =>
      SqlSchema.findAll({
        Request: Schema.Array(Schema.Number),
        Result: Related,
        execute: (ids) => sql`SELECT p.id, ${scope.patientsOf(sql, viewer, at, purpose, "p", "many")} AS related
          FROM patients p WHERE p.id IN ${sql.in(ids)}`
      })

    const appointmentPatient = SqlSchema.findOne({
      Request: Schema.Number,
      Result: PatientOf,
      execute: (id) => sql`SELECT patient_id FROM appointments WHERE id = ${id}`
    })

    const linkedPatients = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.Number, limit: Schema.Int }),
      Result: PatientRow,
      execute: ({ limit, userId }) => sql`SELECT id FROM patients WHERE user_id = ${userId} ORDER BY id LIMIT ${limit}`
    })

    const providerProfile = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.Number, activeOnly: Schema.Boolean }),
      Result: ProviderRow,
      execute: ({ activeOnly, userId }) =>
        sql`SELECT id FROM providers WHERE user_id = ${userId}${activeOnly ? sql` AND active` : sql``}`
    })

    return {
      /** The patient, if it exists, and whether the viewer sees it for the purpose at `at` without breaking the glass. */
      related: (viewer: Viewer, patientId: number, purpose: Purpose, at: Date) => orDefect(relatedOne(viewer, purpose, at)(patientId)),
      /** `related` for several patients in one statement; unknown ids are not among the rows. */
      relatedAll: (viewer: Viewer, patientIds: ReadonlyArray<number>, purpose: Purpose, at: Date) =>
        orDefect(relatedMany(viewer, purpose, at)(patientIds)),
      /** The appointment's patient, if the appointment exists. */
      appointmentPatient: (appointmentId: number) => Effect.map(orDefect(appointmentPatient(appointmentId)), Option.map((row) => row.patient_id)),
      /** The ids of the patients linked to a user's account, oldest first (at most `limit`). */
      linkedPatients: (userId: number, limit: number) =>
        Effect.map(orDefect(linkedPatients({ userId, limit })), (rows) => rows.map((row) => row.id)),
      /** The user's provider profile (only an active one when `activeOnly`), if any. */
      providerProfile: (userId: number, activeOnly: boolean) =>
        Effect.map(orDefect(providerProfile({ userId, activeOnly })), Option.map((row) => row.id))
    } as const
  })
}) {}
