/**
 * Clinic patients (general §4.2, issue 13): the one `patients` table as the clinic sees it, ECM
 * members included. Staff see and edit every patient; a parent sees the patients linked to their
 * account (Access).
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option } from "effect"
import { forbidden, invalid, type FieldMessages } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  type CreatePatientRequest,
  PatientFilterOptions,
  PatientList,
  type PatientChanges,
  ProviderOption
} from "../../Api/Patients/Patients.js"
import { isStaff } from "../../Domain/Accounts/User.js"
import { ClinicPatient, PatientProvider, type PatientSortColumn, patientSortColumns, patientStatuses } from "../../Domain/Patients/Patient.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { likePattern, patientSearchText } from "../SqlSearch.js"
import { AuditLog } from "../AuditLog.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { Access, patientNotFound, type Viewer } from "../Access/Access.js"
import { prepared } from "../Repository.js"

/** Up to this many matches, a searched list sorts the matches rather than walking a sort index. */
const fewMatches = 5000

export const staffRequired = () => forbidden("Staff access required")

export interface PatientCriteria {
  readonly search?: string | null | undefined
  readonly sortBy?: PatientSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
  readonly providerName?: string | null | undefined
  readonly providerId?: number | null | undefined
  readonly status?: "active" | "inactive" | null | undefined
}

interface PatientRow {
  readonly id: number
  readonly first_name: string
  readonly last_name: string
  readonly date_of_birth: string | null
  readonly gender: string | null
  readonly phone: string | null
  readonly email: string | null
  readonly address: string | null
  readonly city: string | null
  readonly state: string | null
  readonly zip: string | null
  readonly language: string
  readonly member_id: string | null
  readonly active: boolean
  readonly user_id: number | null
  readonly provider_id: number | null
  readonly provider_first_name: string | null
  readonly provider_last_name: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const toPatient = (row: PatientRow): ClinicPatient =>
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

const blankToNull = (s: string | null | undefined): string | null => {
  const trimmed = s?.trim() ?? ""
  return trimmed.length === 0 ? null : trimmed
}

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

export class ClinicPatients extends Effect.Service<ClinicPatients>()("app/ClinicPatients", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* Access
    const audit = yield* AuditLog

    const columns = sql`p.id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth, p.gender,
      p.phone, p.email, p.address, p.city, p.state, p.zip, p.language, p.member_id, p.active, p.user_id, p.provider_id,
      pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.created_at, p.updated_at`
    const from = sql`patients p LEFT JOIN providers pr ON pr.id = p.provider_id LEFT JOIN users pu ON pu.id = pr.user_id`
    const searchable = patientSearchText(sql)

    const sortColumns: Record<PatientSortColumn, Statement.Fragment> = {
      id: sql`p.id`,
      first_name: sql`lower(p.first_name)`,
      last_name: sql`lower(p.last_name)`,
      date_of_birth: sql`p.date_of_birth`,
      created_at: sql`p.created_at`
    }
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const
    const orderBy = (criteria: PatientCriteria) => {
      const dir = directions[criteria.sortDir ?? "ASC"]
      return criteria.sortBy === undefined
        ? sql`ORDER BY lower(p.last_name) ${dir}, lower(p.first_name) ${dir}, p.id ${dir}`
        : sql`ORDER BY ${sortColumns[criteria.sortBy]} ${dir}, p.id ${dir}`
    }

    const whereOf = (viewer: Viewer, criteria: PatientCriteria) => {
      const clauses: Array<Statement.Fragment> = [Access.scope.patients(sql, viewer)]
      const search = blankToNull(criteria.search)
      if (search !== null) {
        const digits = searchDigits(search)
        const byText = sql`${searchable} ILIKE ${likePattern(search)} ESCAPE '\\'`
        clauses.push(digits === null || digits === search ? byText : sql`(${byText} OR ${searchable} LIKE ${likePattern(digits)} ESCAPE '\\')`)
      }
      const providerName = blankToNull(criteria.providerName)
      if (providerName !== null) clauses.push(sql`(pu.first_name || ' ' || pu.last_name) ILIKE ${likePattern(providerName)} ESCAPE '\\'`)
      if (criteria.providerId !== undefined && criteria.providerId !== null) clauses.push(sql`p.provider_id = ${criteria.providerId}`)
      if (criteria.status === "active") clauses.push(sql`p.active`)
      if (criteria.status === "inactive") clauses.push(sql`NOT p.active`)
      return sql.and(clauses)
    }

    /**
     * A search or provider filter usually matches few patients: they are read through the search
     * index once (a materialised CTE, capped at `fewMatches` + 1 rows), counted and sorted there,
     * in one statement. Left to itself PostgreSQL, which cannot estimate a trigram match well, may
     * walk a sort index past most of the table looking for 25 matches (bench/patients-list.ts:
     * 75 ms against 2 ms). Many matches, or no search: an exact count, and the sort index stopping
     * after the page.
     */
    const list = (viewer: Viewer, criteria: PatientCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const where = whereOf(viewer, criteria)
        // The provider join only narrows when filtering by provider name.
        const countFrom = blankToNull(criteria.providerName) === null ? sql`patients p` : from
        const page = sql`${orderBy(criteria)} LIMIT ${request.perPage} OFFSET ${request.offset}`
        const narrowing = blankToNull(criteria.search) !== null || blankToNull(criteria.providerName) !== null
        const narrowed = narrowing
          ? yield* sql<PatientRow & { matched: number }>`WITH matched AS MATERIALIZED (
                SELECT p.* FROM ${countFrom} WHERE ${where} LIMIT ${fewMatches + 1})
              SELECT ${columns}, (SELECT count(*) FROM matched)::int AS matched FROM matched p
                LEFT JOIN providers pr ON pr.id = p.provider_id LEFT JOIN users pu ON pu.id = pr.user_id
              ${page}`
          : []
        const few = narrowed.length > 0 && narrowed[0]!.matched <= fewMatches
        let rows: ReadonlyArray<PatientRow> = narrowed
        let total = few ? narrowed[0]!.matched : 0
        if (!few) {
          const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM ${countFrom} WHERE ${where}`
          total = counted?.count ?? 0
          rows = total <= request.offset || (narrowing && total <= fewMatches)
            ? [] // past the end (the narrowed statement found no row on this page)
            : yield* sql<PatientRow>`SELECT ${columns} FROM ${from} WHERE ${where} ${page}`
        }
        yield* Effect.annotateCurrentSpan({ "patients.count": rows.length, "patients.total_count": total, "patients.few_matches": few })
        return PatientList.make({ patients: rows.map(toPatient), pagination: paginationOf(request, total) }, true)
      }).pipe(Effect.orDie, Effect.withSpan("ClinicPatients.list"))

    // Loads by id are fixed-shape and frequent: prepared (one name per text: staff's and parents' scopes).
    const byId = prepared("patient_by_id")
    const load = (id: number) =>
      byId(sql<PatientRow>`SELECT ${columns} FROM ${from} WHERE p.id = ${id}`).pipe(
        Effect.orDie,
        Effect.map((rows) => toPatient(rows[0]!))
      )

    /** The visibility check and the load in one statement: a patient out of scope is not found. */
    const show = (viewer: Viewer, id: number) =>
      byId(sql<PatientRow>`SELECT ${columns} FROM ${from} WHERE p.id = ${id} AND ${Access.scope.patients(sql, viewer)}`).pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(patientNotFound()) : Effect.succeed(toPatient(rows[0]!))),
        Effect.withSpan("ClinicPatients.show", { attributes: { "patient.id": id }, captureStackTrace: false })
      )

    const filterOptions = sql<{ id: number; name: string }>`SELECT pr.id, u.first_name || ' ' || u.last_name AS name
      FROM providers pr JOIN users u ON u.id = pr.user_id
      WHERE pr.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), pr.id`.pipe(
      Effect.orDie,
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
        const values: Record<string, unknown> = {}
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
            const [user] = yield* sql<{ role: string }>`SELECT role FROM users WHERE id = ${changes.user_id} AND deleted_at IS NULL`
            if (user === undefined) problems.user_id = ["must exist"]
            else if (user.role !== "parent") problems.user_id = ["must be a parent account"]
          }
        }
        if (changes.provider_id !== undefined) {
          values.provider_id = changes.provider_id
          if (changes.provider_id !== null) {
            const [provider] = yield* sql<{ active: boolean }>`SELECT pr.active FROM providers pr JOIN users u ON u.id = pr.user_id
              WHERE pr.id = ${changes.provider_id} AND u.deleted_at IS NULL`
            if (provider === undefined) problems.provider_id = ["must exist"]
            else if (!provider.active) problems.provider_id = ["must be an active provider"]
          }
        }
        if (Object.keys(problems).length > 0) return yield* Effect.fail(invalid(problems as FieldMessages))
        return values
      })

    /** Constraint violations a caller can fix: a member id taken, an account or provider deleted meanwhile. */
    const constraintProblem = (error: unknown): FieldMessages | undefined => {
      if (isUniqueViolation(error, "patients_member_id_key")) return { member_id: ["has already been taken"] }
      const cause = (error as { cause?: { code?: string; constraint?: string } }).cause
      if (cause?.code === "23503") {
        return cause.constraint === "patients_provider_id_fkey" ? { provider_id: ["must exist"] } : { user_id: ["must exist"] }
      }
      return undefined
    }
    const writeFailure = (error: unknown) => {
      const problem = constraintProblem(error)
      return problem === undefined ? Effect.die(error) : Effect.fail(invalid(problem))
    }

    const create = (viewer: Viewer, input: CreatePatientRequest["patient"]) =>
      Effect.gen(function*() {
        if (!isStaff(viewer.role)) return yield* Effect.fail(staffRequired())
        const values = yield* columnsOf(input)
        const [row] = yield* sql<{ id: number }>`INSERT INTO patients ${sql.insert(values)} RETURNING id`.pipe(
          Effect.catchTag("SqlError", writeFailure)
        )
        yield* audit.record({ actorId: viewer.id, action: "patient.create", targetType: "patient", targetId: row!.id })
        return yield* load(row!.id)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("ClinicPatients.create"))

    const update = (viewer: Viewer, id: number, changes: PatientChanges) =>
      Effect.gen(function*() {
        yield* access.visiblePatient(viewer, id)
        if (!isStaff(viewer.role)) return yield* Effect.fail(staffRequired())
        const values = yield* columnsOf(changes)
        if (Object.keys(values).length > 0) {
          yield* sql`UPDATE patients SET ${sql.update(values)}, updated_at = now() WHERE id = ${id}`.pipe(
            Effect.catchTag("SqlError", writeFailure)
          )
          yield* audit.record({ actorId: viewer.id, action: "patient.update", targetType: "patient", targetId: id })
        }
        return yield* load(id)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("ClinicPatients.update", { attributes: { "patient.id": id } }))

    return { list, show, filterOptions, create, update } as const
  }),
  dependencies: [Access.Default, AuditLog.Default]
}) {}
