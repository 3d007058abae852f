/**
 * Admin ECM patients: the patients with at least one eligibility record (members some MIF file
 * brought in), with their latest record, case load, eligibility history and engagement status.
 */
import { Effect, Option } from "effect"
import {
  EcmPatient,
  EcmPatientList,
  EcmPatientListItem,
  EcmPatientResponse,
  LatestEligibility,
  PatientCaseLoad,
  PatientEligibility,
  StatusHistoryEntry
} from "../../Api/Ecm/Patients.js"
import { ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type EcmPatientCriteria, type EcmPatientRow, PatientsRepo } from "../Patients/PatientsRepo.js"

export type { EcmPatientCriteria }

export const ecmPatientsPageSize = 25

const caseLoadOf = (row: EcmPatientRow): PatientCaseLoad | null =>
  row.c_id === null ? null : PatientCaseLoad.make({
    provider_id: row.provider_id,
    provider_name: row.provider_name,
    olcm_user_id: row.olcm_user_id,
    olcm_name: row.olcm_name,
    ilcm_user_id: row.ilcm_user_id,
    ilcm_name: row.ilcm_name
  }, true)

const latestOf = (row: EcmPatientRow): LatestEligibility | null =>
  row.e_id === null ? null : LatestEligibility.make({
    id: row.e_id,
    member_id: row.e_member_id,
    cin: row.e_cin,
    ecm_service_auth_id: row.e_ecm_service_auth_id,
    ecm_provider_name: row.e_ecm_provider_name,
    ecm_benefit_auth_eff_date: row.e_eff,
    ecm_benefit_auth_end_date: row.e_end,
    acuity_level: row.e_acuity_level,
    member_record_status: row.e_member_record_status ?? ""
  }, true)

export class EcmPatients extends Effect.Service<EcmPatients>()("app/EcmPatients", {
  effect: Effect.gen(function*() {
    const patients = yield* PatientsRepo

    const list = Effect.fn("EcmPatients.list")(function*(criteria: EcmPatientCriteria, request: PageRequest) {
      const { pagination, rows } = yield* patients.ecmList(criteria, request)
      yield* Effect.annotateCurrentSpan({ "patients.count": rows.length, "patients.total_count": pagination.total_count })
      return EcmPatientList.make({
        patients: rows.map((row) =>
          EcmPatientListItem.make({
            id: row.id,
            name: `${row.first_name} ${row.last_name}`,
            date_of_birth: row.date_of_birth,
            ecm_eligibility_information: latestOf(row),
            case_load: caseLoadOf(row)
          }, true)),
        pagination
      }, true)
    })

    const show = Effect.fn("EcmPatients.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "patient.id": id })
      const found = yield* patients.ecmFindById(id)
      if (Option.isNone(found)) return yield* Effect.fail(ecmNotFound("Patient"))
      const row = found.value
      const eligibility = yield* patients.eligibilityOf(id)
      const history = yield* patients.statusHistoryOf(id)
      const entries = history.map((h) => StatusHistoryEntry.make(h, true))
      return EcmPatientResponse.make({
        patient: EcmPatient.make({
          id: row.id,
          name: `${row.first_name} ${row.last_name}`,
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
          active: row.active,
          member_id: row.member_id,
          cin: row.cin,
          eligibility_informations: eligibility.map((e) =>
            PatientEligibility.make({
              id: e.id,
              mif_file_id: e.mif_file_id,
              member_id: e.member_id,
              cin: e.cin,
              ecm_service_auth_id: e.ecm_service_auth_id,
              ecm_provider_name: e.ecm_provider_name,
              ecm_npi: e.ecm_npi,
              ecm_benefit_auth_eff_date: e.eff,
              ecm_benefit_auth_end_date: e.end,
              acuity_level: e.acuity_level,
              member_record_status: e.member_record_status,
              created_at: e.created_at
            }, true)),
          case_load: caseLoadOf(row),
          engagement_status: entries[0] ?? null,
          status_histories: entries,
          created_at: row.created_at,
          updated_at: row.updated_at
        }, true)
      }, true)
    })

    return { list, show } as const
  }),
  dependencies: [PatientsRepo.Default]
}) {}
