/**
 * The only writer of `patients` (ARCHITECTURE "Persistence", "People"): the one table of ECM
 * members and clinic patients, read by the clinic (`ClinicPatients`) and the ECM admin
 * (`EcmPatients`) through this repository. Rows are decoded with schemas; SQL errors are defects
 * except the violations a caller can fix (a member id taken, an account or provider deleted
 * meanwhile), which become 422s. The MIF import's set-based statements (`Ecm/MifStagingRepo.ts`)
 * still write members in bulk on their own.
 *
 * The ECM view reads a member's eligibility records and status history with the patient; those
 * tables are written by the MIF import and `EngagementStatuses`.
 */
import { SqlClient, Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { invalid, type ValidationFailed } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { PatientSortColumn } from "../../Domain/Patients/Patient.js"
import { PatientId, ProviderId, UserId } from "../../Domain/Ids.js"
import { AuditEntryOfWrite, auditInsertOf } from "../AuditLogRepo.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { blankToNull, orDefect, prepared, SqlSchema } from "../Repository.js"
import { isForeignKeyViolation, isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlFilters.js"
import { now } from "../Time.js"

/**
 * A patient's searchable text (alias `p`): names, member id and phone (E.164). The expression of
 * the one trigram index on patients, patients_search_trgm_idx (sql/0026): every patient search
 * filters on it, so the index serves it.
 */
const patientSearchText = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql`(p.first_name || ' ' || p.last_name || ' ' || coalesce(p.member_id, '') || ' ' || coalesce(p.phone, ''))`

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

/** The person and contact columns a clinic patient is read with and written from; the birth date as `YYYY-MM-DD`. */
const demographicFields = {
  first_name: Text,
  last_name: Text,
  date_of_birth: NullText,
  gender: NullText,
  phone: NullText,
  email: NullText,
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText,
  language: Text,
  member_id: NullText,
  active: Schema.Boolean
}

/** A patient as the clinic sees it, with the primary provider's names; the birth date as `YYYY-MM-DD`. */
export const ClinicPatientRow = Schema.Struct({
  id: PatientId,
  ...demographicFields,
  user_id: Schema.NullOr(UserId),
  provider_id: Schema.NullOr(ProviderId),
  provider_first_name: NullText,
  provider_last_name: NullText,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ClinicPatientRow = typeof ClinicPatientRow.Type

/** What a clinic patient list may be narrowed and ordered by (general §4.2). */
export interface PatientCriteria {
  readonly search?: string | null | undefined
  readonly sortBy?: PatientSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
  readonly providerName?: string | null | undefined
  readonly providerId?: number | null | undefined
  readonly status?: "active" | "inactive" | null | undefined
}

/** The columns a clinic create or update writes, checked and normalised by `ClinicPatients`. */
export const PatientValues = Schema.partialWith(Schema.Struct({
  ...demographicFields,
  user_id: Schema.NullOr(Schema.Number),
  provider_id: Schema.NullOr(Schema.Number)
}), { exact: true })
export type PatientValues = typeof PatientValues.Type

/** What an ECM patient list may be narrowed by (ECM "Patients"). */
export interface EcmPatientCriteria {
  readonly search?: string | undefined
  readonly status?: string | undefined
  readonly providerId?: number | undefined
}

/** A member with their latest eligibility record and case load; dates as `YYYY-MM-DD`. */
export const EcmPatientRow = Schema.Struct({
  id: PatientId,
  first_name: Text,
  last_name: Text,
  date_of_birth: NullText,
  e_id: Schema.NullOr(Schema.Int),
  e_member_id: NullText,
  e_cin: NullText,
  e_ecm_service_auth_id: NullText,
  e_ecm_provider_name: NullText,
  e_eff: NullText,
  e_end: NullText,
  e_acuity_level: NullText,
  e_member_record_status: NullText,
  c_id: Schema.NullOr(Schema.Int),
  provider_id: Schema.NullOr(Schema.Int),
  provider_name: NullText,
  olcm_user_id: Schema.NullOr(Schema.Int),
  olcm_name: NullText,
  ilcm_user_id: Schema.NullOr(Schema.Int),
  ilcm_name: NullText
})
export type EcmPatientRow = typeof EcmPatientRow.Type

/** One member with their contact details besides the list's columns. */
export const EcmPatientDetailRow = Schema.Struct({
  ...EcmPatientRow.fields,
  gender: NullText,
  phone: NullText,
  email: NullText,
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText,
  language: Text,
  active: Schema.Boolean,
  member_id: NullText,
  cin: NullText,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type EcmPatientDetailRow = typeof EcmPatientDetailRow.Type

/** One eligibility record of a member, newest first; dates as `YYYY-MM-DD`. */
export const EligibilityRow = Schema.Struct({
  id: Schema.Int,
  mif_file_id: Schema.Int,
  member_id: NullText,
  cin: NullText,
  ecm_service_auth_id: NullText,
  ecm_provider_name: NullText,
  ecm_npi: NullText,
  eff: NullText,
  end: NullText,
  acuity_level: NullText,
  member_record_status: Text,
  created_at: Schema.DateFromSelf
})
export type EligibilityRow = typeof EligibilityRow.Type

/** One engagement status of a member, latest effective first; dates as `YYYY-MM-DD`. */
export const StatusHistoryRow = Schema.Struct({
  id: Schema.Int,
  status: Text,
  effective_date: Text,
  source: Schema.Literal("mif", "user", "system"),
  reason: NullText,
  actor_id: Schema.NullOr(Schema.Int),
  created_at: Schema.DateFromSelf,
  replaced_status: NullText,
  replaced_effective_date: NullText
})
export type StatusHistoryRow = typeof StatusHistoryRow.Type

/** Up to this many matches, a searched list sorts the matches rather than walking a sort index. */
const fewMatches = 5000

/**
 * The digits of a search that looks like (part of) a phone number in any format — digits with
 * spaces, dashes, dots, parentheses or a plus — three at least (fewer match everything). Other
 * text ("MIF900") is matched as typed only.
 */
const searchDigits = (text: string): string | null => {
  if (!/^[\d\s().+-]+$/.test(text)) return null
  const digits = text.replace(/\D/g, "")
  return digits.length >= 3 ? digits : null
}

/** Constraint violations a caller can fix: a member id taken, an account or provider deleted meanwhile. */
const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
  isUniqueViolation(error, "patients_member_id_key")
    ? Effect.fail(invalid({ member_id: ["has already been taken"] }))
    : isForeignKeyViolation(error, "patients_provider_id_fkey")
    ? Effect.fail(invalid({ provider_id: ["must exist"] }))
    : isForeignKeyViolation(error)
    ? Effect.fail(invalid({ user_id: ["must exist"] }))
    : Effect.die(error)

const clinicColumns = `p.id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth, p.gender,
      p.phone, p.email, p.address, p.city, p.state, p.zip, p.language, p.member_id, p.active, p.user_id, p.provider_id,
      pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.created_at, p.updated_at`
const clinicJoins = `LEFT JOIN providers pr ON pr.id = p.provider_id LEFT JOIN users pu ON pu.id = pr.user_id`
const clinicFrom = `patients p ${clinicJoins}`

const ecmColumns = `p.id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth,
      e.id AS e_id, e.member_id AS e_member_id, e.cin AS e_cin, e.ecm_service_auth_id AS e_ecm_service_auth_id,
      e.ecm_provider_name AS e_ecm_provider_name,
      to_char(e.ecm_benefit_auth_eff_date, 'YYYY-MM-DD') AS e_eff, to_char(e.ecm_benefit_auth_end_date, 'YYYY-MM-DD') AS e_end,
      e.acuity_level AS e_acuity_level, e.member_record_status AS e_member_record_status,
      c.id AS c_id, c.provider_id, c.provider_name, c.olcm_user_id,
      CASE WHEN o.id IS NULL THEN NULL ELSE o.first_name || ' ' || o.last_name END AS olcm_name,
      c.ilcm_user_id,
      CASE WHEN i.id IS NULL THEN NULL ELSE i.first_name || ' ' || i.last_name END AS ilcm_name`
const ecmFrom = `patients p
      JOIN ecm_eligibility_informations e ON e.id = p.ecm_eligibility_information_id
      LEFT JOIN case_loads c ON c.patient_id = p.id
      LEFT JOIN users o ON o.id = c.olcm_user_id
      LEFT JOIN users i ON i.id = c.ilcm_user_id`

export class PatientsRepo extends Effect.Service<PatientsRepo>()("app/PatientsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(clinicColumns)
    const from = sql.literal(clinicFrom)
    const searchable = patientSearchText(sql)

    const listPage = yield* makeListPage

    // A sort name each; with none asked, by name: last, then first.
    const sortColumns: Record<PatientSortColumn | "name", Statement.Fragment | ReadonlyArray<Statement.Fragment>> = {
      id: sql`p.id`,
      first_name: sql`lower(p.first_name)`,
      last_name: sql`lower(p.last_name)`,
      date_of_birth: sql`p.date_of_birth`,
      created_at: sql`p.created_at`,
      name: [sql`lower(p.last_name)`, sql`lower(p.first_name)`]
    }
    const searchFilter = (search: string) => {
      const digits = searchDigits(search)
      const byText = sql`${searchable} ILIKE ${likePattern(search)} ESCAPE '\\'`
      return digits === null || digits === search ? byText : sql`(${byText} OR ${searchable} LIKE ${likePattern(digits)} ESCAPE '\\')`
    }
    const joins = sql.literal(clinicJoins)

    /**
     * A search or provider filter usually matches few patients: they are counted and sorted apart
     * (`sortFewMatches`), since PostgreSQL, which cannot estimate a trigram match well, may walk a
     * sort index past most of the table looking for 25 matches (bench/patients-list.ts: 75 ms
     * against 2 ms). Many matches, or no search: an exact count, and the sort index stopping after
     * the page.
     */
    const list = (scope: Statement.Fragment, criteria: PatientCriteria, page: PageRequest) => {
      const search = blankToNull(criteria.search)
      const providerName = blankToNull(criteria.providerName)
      return listPage({
        select: columns,
        from,
        // The provider join only narrows when filtering by provider name.
        countFrom: providerName === null ? sql`patients p` : undefined,
        row: ClinicPatientRow,
        scope,
        filters: [
          search !== null && searchFilter(search),
          providerName !== null && sql`(pu.first_name || ' ' || pu.last_name) ILIKE ${likePattern(providerName)} ESCAPE '\\'`,
          criteria.providerId !== undefined && criteria.providerId !== null && sql`p.provider_id = ${criteria.providerId}`,
          criteria.status === "active" && sql`p.active`,
          criteria.status === "inactive" && sql`NOT p.active`
        ],
        sort: { columns: sortColumns, by: criteria.sortBy ?? "name", dir: criteria.sortDir ?? "ASC", id: sql`p.id` },
        sortFewMatches: search === null && providerName === null ? undefined : { atMost: fewMatches, table: "p", joins }
      }, page)
    }

    // Loads by id are fixed-shape and the clinic's hottest reads of a patient: named (prepared),
    // one name per text (the load, and the load within each kind of viewer's scope).
    const byId = prepared("patient_by_id")
    const findById = SqlSchema.findOne({
      Request: Schema.Number,
      Result: ClinicPatientRow,
      execute: (id) => byId(sql`SELECT ${columns} FROM ${from} WHERE p.id = ${id}`)
    })
    /** The visibility check and the load in one statement: a patient out of `scope` is none. */
    const findVisibleById = (id: number, scope: Statement.Fragment) =>
      SqlSchema.findOne({
        Request: Schema.Number,
        Result: ClinicPatientRow,
        execute: (id) => byId(sql`SELECT ${columns} FROM ${from} WHERE p.id = ${id} AND ${scope}`)
      })(id)

    const findExists = SqlSchema.single({
      Request: Schema.Number,
      Result: Schema.Struct({ exists: Schema.Boolean }),
      execute: (id) => sql`SELECT EXISTS (SELECT 1 FROM patients WHERE id = ${id}) AS exists`
    })

    const insertOne = SqlSchema.single({
      Request: PatientValues,
      Result: Schema.Struct({ id: PatientId }),
      execute: (values) => sql`INSERT INTO patients ${sql.insert(values)} RETURNING id`
    })

    /**
     * Insert, audit entry and read back in one statement (one round trip, one transaction). Its text
     * follows the columns given, so it stays unnamed.
     */
    const insertAuditedOne = SqlSchema.single({
      Request: Schema.Struct({ values: PatientValues, audit: AuditEntryOfWrite }),
      Result: ClinicPatientRow,
      execute: ({ audit, values }) =>
        sql`WITH p AS (INSERT INTO patients ${sql.insert(values)} RETURNING *),
            audited AS (${auditInsertOf(sql, audit, sql`(SELECT id FROM p)`)})
          SELECT ${columns} FROM p ${joins}`
    })

    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, values: PatientValues, at: Schema.DateFromSelf }),
      execute: ({ at, id, values }) => sql`UPDATE patients SET ${sql.update(values)}, updated_at = ${at} WHERE id = ${id}`
    })

    const ecmColumnsLiteral = sql.literal(ecmColumns)
    const ecmFromLiteral = sql.literal(ecmFrom)
    const ecmFiltersOf = (criteria: EcmPatientCriteria): ReadonlyArray<ListFilter> => {
      const text = criteria.search?.trim() ?? ""
      const pattern = text === "" ? null : likePattern(text)
      const status = criteria.status?.trim() ?? ""
      return [
        // The ECM search covers names and member id only. Its text begins the indexed patient text
        // (names, member id, phone), so what it matches the indexed text matches too: the index
        // narrows, the second condition keeps phone digits out.
        pattern !== null && sql`${searchable} ILIKE ${pattern} ESCAPE '\\'`,
        pattern !== null && sql`(p.first_name || ' ' || p.last_name || ' ' || coalesce(p.member_id, '')) ILIKE ${pattern} ESCAPE '\\'`,
        status !== "" && sql`e.member_record_status = ${status}`,
        criteria.providerId !== undefined && sql`c.provider_id = ${criteria.providerId}`
      ]
    }
    const ecmByName = { name: sortColumns.name }
    const ecmList = (criteria: EcmPatientCriteria, page: PageRequest) =>
      listPage({
        select: ecmColumnsLiteral,
        from: ecmFromLiteral,
        row: EcmPatientRow,
        filters: ecmFiltersOf(criteria),
        sort: { columns: ecmByName, by: "name", dir: "ASC", id: sql`p.id` }
      }, page)
    const findEcmById = SqlSchema.findOne({
      Request: Schema.Number,
      Result: EcmPatientDetailRow,
      execute: (id) =>
        sql`SELECT ${ecmColumnsLiteral}, p.gender, p.phone, p.email, p.address, p.city, p.state, p.zip, p.language, p.active,
            p.member_id, p.cin, p.created_at, p.updated_at
          FROM ${ecmFromLiteral} WHERE p.id = ${id}`
    })
    const findEligibility = SqlSchema.findAll({
      Request: Schema.Number,
      Result: EligibilityRow,
      execute: (id) =>
        sql`SELECT id, mif_file_id, member_id, cin, ecm_service_auth_id, ecm_provider_name, ecm_npi,
            to_char(ecm_benefit_auth_eff_date, 'YYYY-MM-DD') AS eff, to_char(ecm_benefit_auth_end_date, 'YYYY-MM-DD') AS end,
            acuity_level, member_record_status, created_at
          FROM ecm_eligibility_informations WHERE patient_id = ${id} ORDER BY id DESC`
    })
    const findStatusHistory = SqlSchema.findAll({
      Request: Schema.Number,
      Result: StatusHistoryRow,
      execute: (id) =>
        sql`SELECT id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source, reason, actor_id, created_at,
            replaced_status, to_char(replaced_effective_date, 'YYYY-MM-DD') AS replaced_effective_date
          FROM ecm_status_histories WHERE patient_id = ${id} ORDER BY effective_date DESC, id DESC`
    })

    return {
      /**
       * One page of the clinic patient list within the access scope (`Access.scope.patients`), with
       * the count of every match; `sortedFewMatches` when they were counted and sorted in one statement.
       */
      list,
      /** The patient as the clinic sees it. */
      findById: (id: number) => orDefect(findById(id)),
      /** The patient as the clinic sees it, if `scope` (the viewer's, from the access module) lets them. */
      findVisibleById: (id: number, scope: Statement.Fragment) => orDefect(findVisibleById(id, scope)),
      /** Whether the patient exists (whoever may see it). */
      exists: (id: number) => Effect.map(orDefect(findExists(id)), (row) => row.exists),
      /** A new patient's id. */
      insert: (values: PatientValues) =>
        insertOne(values).pipe(Effect.map((row) => row.id), Effect.catchTag("SqlError", writeErrors), orDefect),
      /** A new patient as the clinic sees it, its audit entry (`audit`, for this patient) written with it. */
      insertAudited: (values: PatientValues, audit: AuditEntryOfWrite) =>
        insertAuditedOne({ values, audit }).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** Writes the given columns (at least one), `updated_at` from the clock. */
      update: (id: number, values: PatientValues) =>
        Effect.flatMap(now, (at) => updateOne({ id, values, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** One page of ECM members (the patients with an eligibility record), by name, with the count of every match. */
      ecmList,
      /** The ECM member with their eligibility records and status history; none for a patient that is no member. */
      ecmFindById: (id: number) => orDefect(findEcmById(id)),
      eligibilityOf: (id: number) => orDefect(findEligibility(id)),
      statusHistoryOf: (id: number) => orDefect(findStatusHistory(id))
    } as const
  })
}) {}
