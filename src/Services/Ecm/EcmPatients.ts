/**
 * Admin ECM patients: the patients with at least one eligibility record (members some MIF file
 * brought in), with their latest record, case load, eligibility history and engagement status.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
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
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { likePattern, patientSearchText } from "../SqlSearch.js"

export const ecmPatientsPageSize = 25

export interface EcmPatientCriteria {
  readonly search?: string | undefined
  readonly status?: string | undefined
  readonly providerId?: number | undefined
}

interface ListRow {
  readonly id: number
  readonly first_name: string
  readonly last_name: string
  readonly date_of_birth: string | null
  readonly e_id: number | null
  readonly e_member_id: string | null
  readonly e_cin: string | null
  readonly e_ecm_service_auth_id: string | null
  readonly e_ecm_provider_name: string | null
  readonly e_eff: string | null
  readonly e_end: string | null
  readonly e_acuity_level: string | null
  readonly e_member_record_status: string | null
  readonly c_id: number | null
  readonly provider_id: number | null
  readonly provider_name: string | null
  readonly olcm_user_id: number | null
  readonly olcm_name: string | null
  readonly ilcm_user_id: number | null
  readonly ilcm_name: string | null
}


const caseLoadOf = (row: ListRow): PatientCaseLoad | null =>
  row.c_id === null ? null : PatientCaseLoad.make({
    provider_id: row.provider_id,
    provider_name: row.provider_name,
    olcm_user_id: row.olcm_user_id,
    olcm_name: row.olcm_name,
    ilcm_user_id: row.ilcm_user_id,
    ilcm_name: row.ilcm_name
  }, true)

const latestOf = (row: ListRow): LatestEligibility | null =>
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
    const sql = yield* SqlClient.SqlClient

    const listColumns = sql`p.id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth,
      e.id AS e_id, e.member_id AS e_member_id, e.cin AS e_cin, e.ecm_service_auth_id AS e_ecm_service_auth_id,
      e.ecm_provider_name AS e_ecm_provider_name,
      to_char(e.ecm_benefit_auth_eff_date, 'YYYY-MM-DD') AS e_eff, to_char(e.ecm_benefit_auth_end_date, 'YYYY-MM-DD') AS e_end,
      e.acuity_level AS e_acuity_level, e.member_record_status AS e_member_record_status,
      c.id AS c_id, c.provider_id, c.provider_name, c.olcm_user_id,
      CASE WHEN o.id IS NULL THEN NULL ELSE o.first_name || ' ' || o.last_name END AS olcm_name,
      c.ilcm_user_id,
      CASE WHEN i.id IS NULL THEN NULL ELSE i.first_name || ' ' || i.last_name END AS ilcm_name`
    const listFrom = sql`patients p
      JOIN ecm_eligibility_informations e ON e.id = p.ecm_eligibility_information_id
      LEFT JOIN case_loads c ON c.patient_id = p.id
      LEFT JOIN users o ON o.id = c.olcm_user_id
      LEFT JOIN users i ON i.id = c.ilcm_user_id`

    const whereOf = (criteria: EcmPatientCriteria) => {
      const clauses: Array<Statement.Fragment> = []
      const search = criteria.search?.trim() ?? ""
      if (search !== "") {
        const pattern = likePattern(search)
        // The ECM search covers names and member id only. Its text begins the indexed patient text
        // (names, member id, phone), so what it matches the indexed text matches too: the index
        // narrows, the second condition keeps phone digits out.
        clauses.push(sql`${patientSearchText(sql)} ILIKE ${pattern} ESCAPE '\\'`)
        clauses.push(sql`(p.first_name || ' ' || p.last_name || ' ' || coalesce(p.member_id, '')) ILIKE ${pattern} ESCAPE '\\'`)
      }
      const status = criteria.status?.trim() ?? ""
      if (status !== "") clauses.push(sql`e.member_record_status = ${status}`)
      if (criteria.providerId !== undefined) clauses.push(sql`c.provider_id = ${criteria.providerId}`)
      return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
    }

    const list = (criteria: EcmPatientCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const where = whereOf(criteria)
        const rows = yield* sql<ListRow>`SELECT ${listColumns} FROM ${listFrom} WHERE ${where}
          ORDER BY lower(p.last_name), lower(p.first_name), p.id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${listFrom} WHERE ${where}`
        yield* Effect.annotateCurrentSpan({ "patients.count": rows.length, "patients.total_count": counted?.count ?? 0 })
        return EcmPatientList.make({
          patients: rows.map((row) =>
            EcmPatientListItem.make({
              id: row.id,
              name: `${row.first_name} ${row.last_name}`,
              date_of_birth: row.date_of_birth,
              ecm_eligibility_information: latestOf(row),
              case_load: caseLoadOf(row)
            }, true)),
          pagination: paginationOf(request, counted?.count ?? 0)
        }, true)
      }).pipe(Effect.orDie, Effect.withSpan("EcmPatients.list"))

    const show = (id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<ListRow & {
          gender: string | null
          phone: string | null
          email: string | null
          address: string | null
          city: string | null
          state: string | null
          zip: string | null
          language: string
          active: boolean
          member_id: string | null
          cin: string | null
          created_at: Date
          updated_at: Date
        }>`SELECT ${listColumns}, p.gender, p.phone, p.email, p.address, p.city, p.state, p.zip, p.language, p.active,
            p.member_id, p.cin, p.created_at, p.updated_at
          FROM ${listFrom} WHERE p.id = ${id}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(ecmNotFound("Patient"))
        const eligibility = yield* sql<{
          id: number
          mif_file_id: number
          member_id: string | null
          cin: string | null
          ecm_service_auth_id: string | null
          ecm_provider_name: string | null
          ecm_npi: string | null
          eff: string | null
          end: string | null
          acuity_level: string | null
          member_record_status: string
          created_at: Date
        }>`SELECT id, mif_file_id, member_id, cin, ecm_service_auth_id, ecm_provider_name, ecm_npi,
            to_char(ecm_benefit_auth_eff_date, 'YYYY-MM-DD') AS eff, to_char(ecm_benefit_auth_end_date, 'YYYY-MM-DD') AS end,
            acuity_level, member_record_status, created_at
          FROM ecm_eligibility_informations WHERE patient_id = ${id} ORDER BY id DESC`.pipe(Effect.orDie)
        const history = yield* sql<{
          id: number
          status: string
          effective_date: string
          source: "mif" | "user" | "system"
          reason: string | null
          actor_id: number | null
          created_at: Date
          replaced_status: string | null
          replaced_effective_date: string | null
        }>`SELECT id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source, reason, actor_id, created_at,
            replaced_status, to_char(replaced_effective_date, 'YYYY-MM-DD') AS replaced_effective_date
          FROM ecm_status_histories WHERE patient_id = ${id} ORDER BY effective_date DESC, id DESC`.pipe(Effect.orDie)
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
      }).pipe(Effect.withSpan("EcmPatients.show", { attributes: { "patient.id": id } }))

    return { list, show } as const
  })
}) {}
