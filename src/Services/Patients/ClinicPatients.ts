/**
 * Clinic patients (general §4.2): the one `patients` table as the clinic sees it, ECM members
 * included. Staff see and edit every patient; a parent sees the patients linked to their account
 * (Access). `PatientsRepo` holds the SQL.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { forbidden, invalid, type FieldMessages } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  type CreatePatientRequest,
  PatientFilterOptions,
  PatientList,
  type PatientChanges,
  ProviderOption
} from "../../Api/Patients/Patients.js"
import { ClinicPatient, PatientProvider, patientSortColumns, patientStatuses } from "../../Domain/Patients/Patient.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { UsersRepo } from "../Accounts/UsersRepo.js"
import { AuditLog } from "../AuditLog.js"
import { ProvidersRepo } from "../Providers/ProvidersRepo.js"
import { Access, canManagePatientRecords, followsCareRelationships, patientNotFound, type Viewer } from "../Access/Access.js"
import { now } from "../Time.js"
import { type ClinicPatientRow, type PatientCriteria, PatientsRepo, type PatientValues } from "./PatientsRepo.js"
import { blankToNull } from "../Repository.js"

export type { PatientCriteria } from "./PatientsRepo.js"

export const staffRequired = () => forbidden("Staff access required")

const toPatient = (row: ClinicPatientRow): ClinicPatient =>
  ClinicPatient.make({
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    date_of_birth: row.date_of_birth,
    gender: row.gender,
    phone: row.phone,
    email: row.email,
    address: row.address,
    city: row.city,
    state: row.state,
    zip: row.zip,
    language: row.language,
    member_id: row.member_id,
    active: row.active,
    user_id: row.user_id,
    provider_id: row.provider_id,
    provider: row.provider_id === null || row.provider_first_name === null
      ? null
      : PatientProvider.make({ id: row.provider_id, first_name: row.provider_first_name, last_name: row.provider_last_name ?? "" }, true),
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

export class ClinicPatients extends Effect.Service<ClinicPatients>()("app/ClinicPatients", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog
    const patients = yield* PatientsRepo
    const providers = yield* ProvidersRepo
    const users = yield* UsersRepo

    const list = Effect.fn("ClinicPatients.list")(function*(viewer: Viewer, criteria: PatientCriteria, request: PageRequest) {
      const { pagination, rows, sortedFewMatches } = yield* patients.list(Access.scope.patients(sql, viewer, yield* now), criteria, request)
      yield* Effect.annotateCurrentSpan({
        "patients.count": rows.length,
        "patients.total_count": pagination.total_count,
        "patients.few_matches": sortedFewMatches
      })
      return PatientList.make({ patients: rows.map(toPatient), pagination }, true)
    })

    const load = (id: number) => Effect.map(patients.findById(id), (row) => toPatient(Option.getOrThrow(row)))

    /**
     * The visibility check and the load in one statement: a patient out of scope is not found. A
     * provider or supervisor who gave a reason (break-glass) and found nothing in their scope goes
     * through `Access.visiblePatient`, which lets them in and records the access.
     */
    const show = Effect.fn("ClinicPatients.show", { captureStackTrace: false })(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": id })
      const at = yield* now
      const found = yield* patients.findVisibleById(id, Access.scope.patientsOf(sql, viewer, at, "general", "p", "one"))
      return yield* Option.match(found, {
        onNone: () =>
          viewer.breakGlass !== undefined && viewer.breakGlass !== null && followsCareRelationships(viewer)
            ? Effect.flatMap(access.visiblePatient(viewer, id), load)
            : Effect.fail(patientNotFound()),
        onSome: (row) => Effect.succeed(toPatient(row))
      })
    })

    const filterOptions = providers.activeOptions.pipe(
      Effect.map((rows) =>
        PatientFilterOptions.make({
          providers: rows.map((r) => ProviderOption.make(r, true)),
          sort_fields: patientSortColumns,
          sort_directions: ["ASC", "DESC"],
          statuses: patientStatuses
        }, true)),
      Effect.withSpan("ClinicPatients.filterOptions")
    )

    /**
     * The columns a create or update writes, checked: phone to E.164, the linked account a parent,
     * the provider an active profile. Every problem at once, Rails style.
     */
    const columnsOf = (changes: PatientChanges) =>
      Effect.gen(function*() {
        const problems: Record<string, Array<string>> = {}
        const values: { -readonly [K in keyof PatientValues]: PatientValues[K] } = {}
        for (const key of ["first_name", "last_name"] as const) {
          if (changes[key] !== undefined) values[key] = changes[key].trim()
        }
        if (changes.date_of_birth !== undefined) values.date_of_birth = changes.date_of_birth
        for (const key of ["gender", "address", "city", "state", "zip", "member_id", "email"] as const) {
          if (changes[key] !== undefined) values[key] = blankToNull(changes[key])
        }
        if (changes.language !== undefined) values.language = changes.language
        if (changes.active !== undefined) values.active = changes.active
        if (changes.phone !== undefined) {
          const phone = blankToNull(changes.phone)
          if (phone === null) values.phone = null
          else {
            const normalized = normalizePhone(phone)
            if (Option.isNone(normalized)) problems.phone = ["is invalid"]
            else values.phone = normalized.value
          }
        }
        if (changes.user_id !== undefined) {
          values.user_id = changes.user_id
          if (changes.user_id !== null) {
            const user = yield* users.findById(changes.user_id)
            if (Option.isNone(user)) problems.user_id = ["must exist"]
            else if (user.value.role !== "parent") problems.user_id = ["must be a parent account"]
          }
        }
        if (changes.provider_id !== undefined) {
          values.provider_id = changes.provider_id
          if (changes.provider_id !== null) {
            const active = yield* providers.activeOf(changes.provider_id)
            if (Option.isNone(active)) problems.provider_id = ["must exist"]
            else if (!active.value) problems.provider_id = ["must be an active provider"]
          }
        }
        if (Object.keys(problems).length > 0) return yield* Effect.fail(invalid(problems as FieldMessages))
        return values
      })

    const create = Effect.fn("ClinicPatients.create")(function*(viewer: Viewer, input: CreatePatientRequest["patient"]) {
      if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
      const values = yield* columnsOf(input)
      const entry = yield* audit.rowFor({ actorId: viewer.id, action: "patient.create", targetType: "patient" })
      return toPatient(yield* patients.insertAudited(values, entry))
    })

    const update = Effect.fn("ClinicPatients.update")(function*(viewer: Viewer, id: number, changes: PatientChanges) {
      yield* Effect.annotateCurrentSpan({ "patient.id": id })
      yield* access.visiblePatient(viewer, id)
      if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
      const values = yield* columnsOf(changes)
      if (Object.keys(values).length > 0) {
        yield* patients.update(id, values)
        yield* audit.record({ actorId: viewer.id, action: "patient.update", targetType: "patient", targetId: id })
      }
      return yield* load(id)
    })

    return { list, show, filterOptions, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, PatientsRepo.Default, ProvidersRepo.Default, UsersRepo.Default]
}) {}
