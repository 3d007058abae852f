/**
 * Claims (general §2.6, §4.6): lists with filters and totals, create/update with the claim rules,
 * the status machine, and deleting drafts. One active claim per appointment is the unique index
 * `claims_active_appointment_key`, never a look first.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect } from "effect"
import { claimMessages, type ClaimSortColumn, ClaimFilters, ClaimList, FilteredClaimList, PlanName, type CreateClaimRequest, type UpdateClaimRequest } from "../../Api/Billing/Claims.js"
import { type FieldMessages, invalid, invalidField, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  amountOfCents, canMove, centsOfAmount, centsOfDecimal, type ClaimStatus, claimStatuses, decimalOfCents, isEditable, setByEdiOnly
} from "../../Domain/Billing/Claim.js"
import { commonCptCodes, placesOfService, storedIcd10, x12Icd10 } from "../../Domain/Billing/Codes.js"
import type { AppointmentType } from "../../Domain/Scheduling/Scheduling.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { likePattern, nameMatches as sharedNameMatches } from "../SqlSearch.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { isForeignKeyViolation, isUniqueViolation } from "../SqlErrors.js"
import { claimColumns, claimFrom, type ClaimRow, toClaim } from "./ClaimsRepo.js"

export interface ClaimCriteria {
  readonly search?: string | null | undefined
  readonly status?: ClaimStatus | null | undefined
  readonly patientId?: number | undefined
  readonly providerId?: number | undefined
  readonly appointmentId?: number | null | undefined
  readonly insurancePlanId?: number | null | undefined
  readonly appointmentType?: AppointmentType | null | undefined
  readonly patientName?: string | null | undefined
  readonly providerName?: string | null | undefined
  readonly startDate?: string | null | undefined
  readonly endDate?: string | null | undefined
  readonly sortBy?: ClaimSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
}

type ClaimInput = CreateClaimRequest["claim"]
type ClaimChanges = UpdateClaimRequest["claim"]

/** The billing fields of a claim, normalised: what the rules check and the row stores. */
interface BillingFields {
  readonly patientId: number
  readonly providerId: number
  readonly appointmentId: number
  readonly cptCode: string
  readonly diagnosisCodes: ReadonlyArray<string>
  readonly serviceDate: string
  readonly amountCents: number
  readonly modifiers: ReadonlyArray<string>
  readonly placeOfService: string
}

const blank = (text: string | null | undefined): string | null => {
  const trimmed = text?.trim() ?? ""
  return trimmed === "" ? null : trimmed
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((x, i) => x === b[i])

/** The same codes billed: `F32.9` and `F329` are one code written two ways. */
const sameCodes = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => sameList(a.map(x12Icd10), b.map(x12Icd10))

const sameFields = (a: BillingFields, b: BillingFields) =>
  a.patientId === b.patientId && a.providerId === b.providerId && a.appointmentId === b.appointmentId && a.cptCode === b.cptCode &&
  sameCodes(a.diagnosisCodes, b.diagnosisCodes) && a.serviceDate === b.serviceDate && a.amountCents === b.amountCents &&
  sameList(a.modifiers, b.modifiers) && a.placeOfService === b.placeOfService

export class Claims extends Effect.Service<Claims>()("app/Claims", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const store = yield* ObjectStore
    const config = yield* AppConfig
    const zone = config.clinicTimeZone
    const cptCodes: ReadonlyArray<string> = [...new Set([...commonCptCodes, ...config.billing.extraCptCodes])]
    const columns = sql.literal(claimColumns)
    const from = sql.literal(claimFrom)

    const sortColumns: Record<ClaimSortColumn, Statement.Fragment> = {
      id: sql`c.id`,
      claim_number: sql`c.claim_number`,
      service_date: sql`c.service_date`,
      amount: sql`c.amount`,
      status: sql`c.status`,
      cpt_code: sql`c.cpt_code`,
      patient_id: sql`c.patient_id`,
      provider_id: sql`c.provider_id`,
      created_at: sql`c.created_at`,
      updated_at: sql`c.updated_at`
    }
    const directions = { ASC: sql`ASC`, DESC: sql`DESC` } as const

    const nameMatches = (first: string, last: string, text: string) => sharedNameMatches(sql, first, last, text)

    const whereOf = (criteria: ClaimCriteria) => {
      const clauses: Array<Statement.Fragment> = []
      if (criteria.status != null) clauses.push(sql`c.status = ${criteria.status}`)
      if (criteria.patientId !== undefined) clauses.push(sql`c.patient_id = ${criteria.patientId}`)
      if (criteria.providerId !== undefined) clauses.push(sql`c.provider_id = ${criteria.providerId}`)
      if (criteria.appointmentId != null) clauses.push(sql`c.appointment_id = ${criteria.appointmentId}`)
      if (criteria.insurancePlanId != null) clauses.push(sql`c.insurance_plan_id = ${criteria.insurancePlanId}`)
      if (criteria.appointmentType != null) clauses.push(sql`ap.appointment_type = ${criteria.appointmentType}`)
      if (criteria.startDate != null) clauses.push(sql`c.service_date >= ${criteria.startDate}::date`)
      if (criteria.endDate != null) clauses.push(sql`c.service_date <= ${criteria.endDate}::date`)
      const patientName = blank(criteria.patientName)
      if (patientName !== null) clauses.push(nameMatches("pa.first_name", "pa.last_name", patientName))
      const providerName = blank(criteria.providerName)
      if (providerName !== null) clauses.push(nameMatches("pu.first_name", "pu.last_name", providerName))
      const search = blank(criteria.search)
      if (search !== null) {
        const pattern = likePattern(search)
        clauses.push(sql`(${nameMatches("pa.first_name", "pa.last_name", search)} OR ${nameMatches("pu.first_name", "pu.last_name", search)}
          OR c.claim_number ILIKE ${pattern} ESCAPE '\\' OR c.cpt_code ILIKE ${pattern} ESCAPE '\\')`)
      }
      return clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
    }

    const page = (criteria: ClaimCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const where = whereOf(criteria)
        const dir = directions[criteria.sortDir ?? "DESC"]
        const order = sql`ORDER BY ${sortColumns[criteria.sortBy ?? "service_date"]} ${dir}, c.id ${dir}`
        const rows = yield* sql<ClaimRow>`SELECT ${columns} FROM ${from} WHERE ${where} ${order}
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        // The total is over every match (general §4.6), summed exactly in numeric.
        const [totals] = yield* sql<{ count: number; total: string }>`SELECT count(*)::int AS count, coalesce(sum(c.amount), 0)::text AS total
          FROM ${from} WHERE ${where}`
        yield* Effect.annotateCurrentSpan({ "claims.count": rows.length })
        return { claims: rows.map(toClaim), pagination: paginationOf(request, totals?.count ?? 0), totalCents: centsOfDecimal(totals?.total ?? "0") }
      }).pipe(Effect.orDie)

    const list = (criteria: ClaimCriteria, request: PageRequest) =>
      Effect.map(page(criteria, request), (p) => ClaimList.make({ claims: p.claims, pagination: p.pagination })).pipe(Effect.withSpan("Claims.list"))

    const filter = (criteria: ClaimCriteria, request: PageRequest) =>
      Effect.map(page(criteria, request), (p) =>
        FilteredClaimList.make({ claims: p.claims, pagination: p.pagination, total_amount: amountOfCents(p.totalCents) })).pipe(
          Effect.withSpan("Claims.filter")
        )

    const findRow = (id: number, lock = false) =>
      sql<ClaimRow>`SELECT ${columns} FROM ${from} WHERE c.id = ${id} ${lock ? sql`FOR UPDATE OF c` : sql``}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(notFound("Claim")) : Effect.succeed(rows[0]))
      )

    const show = (id: number) => Effect.map(findRow(id), toClaim).pipe(Effect.withSpan("Claims.show", { attributes: { "claim.id": id } }))

    const today = Effect.flatMap(Clock.currentTimeMillis, (ms) =>
      sql<{ day: string }>`SELECT to_char((${new Date(ms)}::timestamptz AT TIME ZONE ${zone})::date, 'YYYY-MM-DD') AS day`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]!.day)
      ))

    const fieldsOf = (input: ClaimInput): BillingFields => ({
      patientId: input.patient_id,
      providerId: input.provider_id,
      appointmentId: input.appointment_id,
      cptCode: input.cpt_code.toUpperCase(),
      diagnosisCodes: input.diagnosis_codes.map(storedIcd10),
      serviceDate: input.service_date,
      amountCents: centsOfAmount(input.amount) ?? 0,
      modifiers: (input.modifiers ?? []).map((m) => m.toUpperCase()),
      placeOfService: input.place_of_service ?? "11"
    })

    /** Every claim rule at once (Rails style): codes, people, the appointment, the date. */
    const checkFields = (fields: BillingFields) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        const add = (field: string, message: string) => (errors[field] ??= []).push(message)
        if (!cptCodes.includes(fields.cptCode)) add("cpt_code", "is invalid")
        if (new Set(fields.diagnosisCodes.map(x12Icd10)).size !== fields.diagnosisCodes.length) add("diagnosis_codes", "must not repeat a code")
        if (new Set(fields.modifiers).size !== fields.modifiers.length) add("modifiers", "must not repeat a modifier")
        if (!(placesOfService as ReadonlyArray<string>).includes(fields.placeOfService)) add("place_of_service", "is not included in the list")
        if (fields.amountCents <= 0) add("amount", claimMessages.amount)
        const [patient] = yield* sql`SELECT 1 FROM patients WHERE id = ${fields.patientId}`
        if (patient === undefined) add("patient_id", "must exist")
        const [provider] = yield* sql`SELECT 1 FROM providers WHERE id = ${fields.providerId}`
        if (provider === undefined) add("provider_id", "must exist")
        const [appointment] = yield* sql<{ patient_id: number; provider_id: number; status: string; day: string }>`
          SELECT patient_id, provider_id, status, to_char((scheduled_at AT TIME ZONE ${zone})::date, 'YYYY-MM-DD') AS day
          FROM appointments WHERE id = ${fields.appointmentId}`
        if (appointment === undefined) add("appointment_id", "must exist")
        else {
          if (appointment.patient_id !== fields.patientId || appointment.provider_id !== fields.providerId || appointment.status !== "completed") {
            add("appointment_id", "is invalid")
          } else if (appointment.day !== fields.serviceDate) add("service_date", "must be the appointment's date")
        }
        if (fields.serviceDate > (yield* today)) add("service_date", "can't be in the future")
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
      isUniqueViolation(error, "claims_active_appointment_key")
        ? Effect.fail(invalidField("appointment_id", "has already been taken"))
        : isForeignKeyViolation(error, "claims_appointment_id_fkey")
        ? Effect.fail(invalidField("appointment_id", "must exist"))
        : isForeignKeyViolation(error, "claims_patient_id_fkey")
        ? Effect.fail(invalidField("patient_id", "must exist"))
        : isForeignKeyViolation(error, "claims_provider_id_fkey")
        ? Effect.fail(invalidField("provider_id", "must exist"))
        : Effect.die(error)

    const planOf = (patientId: number) => sql`(SELECT insurance_plan_id FROM patient_coverages WHERE patient_id = ${patientId})`

    const create = (actorId: number, input: ClaimInput) =>
      Effect.gen(function*() {
        const fields = fieldsOf(input)
        yield* checkFields(fields)
        const [row] = yield* sql<{ id: number }>`INSERT INTO claims (patient_id, provider_id, appointment_id, cpt_code, modifiers,
            place_of_service, diagnosis_codes, service_date, amount, insurance_plan_id, created_by_id)
          VALUES (${fields.patientId}, ${fields.providerId}, ${fields.appointmentId}, ${fields.cptCode},
            ${fields.modifiers as Array<string>}::text[], ${fields.placeOfService}, ${fields.diagnosisCodes as Array<string>}::text[],
            ${fields.serviceDate}::date, ${decimalOfCents(fields.amountCents)}::numeric, ${planOf(fields.patientId)}, ${actorId})
          RETURNING id`.pipe(Effect.catchTag("SqlError", writeErrors))
        yield* audit.record({ actorId, action: "claim.create", targetType: "claim", targetId: row!.id })
        return toClaim(yield* Effect.orDie(findRow(row!.id)))
      }).pipe(Effect.withSpan("Claims.create", { attributes: { "actor.id": actorId } }))

    const update = (actorId: number, id: number, changes: ClaimChanges) =>
      Effect.gen(function*() {
        yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findRow(id, true)
          const before: BillingFields = {
            patientId: current.patient_id,
            providerId: current.provider_id,
            appointmentId: current.appointment_id,
            cptCode: current.cpt_code,
            diagnosisCodes: current.diagnosis_codes,
            serviceDate: current.service_date,
            amountCents: centsOfDecimal(current.amount),
            modifiers: current.modifiers,
            placeOfService: current.place_of_service
          }
          const after = fieldsOf({
            patient_id: changes.patient_id ?? current.patient_id as never,
            provider_id: changes.provider_id ?? current.provider_id as never,
            appointment_id: changes.appointment_id ?? current.appointment_id as never,
            cpt_code: changes.cpt_code ?? current.cpt_code,
            diagnosis_codes: changes.diagnosis_codes ?? current.diagnosis_codes,
            service_date: changes.service_date ?? current.service_date,
            amount: changes.amount ?? amountOfCents(before.amountCents),
            modifiers: changes.modifiers ?? current.modifiers,
            place_of_service: (changes.place_of_service ?? current.place_of_service) as never
          })
          // A claim that may not change keeps its codes as written when they come back spelt the other way.
          const edits = !sameFields(before, after)
          if (edits && !isEditable(current.status)) return yield* Effect.fail(invalidField("status", claimMessages.notEditable(current.status)))
          const status = changes.status ?? current.status
          if (status !== current.status) {
            if (setByEdiOnly.includes(status)) return yield* Effect.fail(invalidField("status", claimMessages.submittedByEdi))
            if (!canMove(current.status, status)) return yield* Effect.fail(invalidField("status", claimMessages.move(current.status, status)))
          }
          const paymentAmount = changes.payment_amount === undefined
            ? current.payment_amount
            : changes.payment_amount === null ? null : decimalOfCents(centsOfAmount(changes.payment_amount) ?? 0)
          let paymentDate = changes.payment_date === undefined ? current.payment_date : changes.payment_date
          const denialReason = changes.denial_reason === undefined ? current.denial_reason : blank(changes.denial_reason)
          if (status !== current.status && status === "paid") {
            if (paymentAmount === null) return yield* Effect.fail(invalidField("payment_amount", "can't be blank"))
            paymentDate ??= yield* today
          }
          if (status !== current.status && (status === "denied" || status === "rejected") && denialReason === null) {
            return yield* Effect.fail(invalidField("denial_reason", "can't be blank"))
          }
          if (edits) yield* checkFields(after)
          yield* sql`UPDATE claims SET
              patient_id = ${after.patientId},
              provider_id = ${after.providerId},
              appointment_id = ${after.appointmentId},
              cpt_code = ${after.cptCode},
              modifiers = ${after.modifiers as Array<string>}::text[],
              place_of_service = ${after.placeOfService},
              diagnosis_codes = ${(isEditable(current.status) ? after : before).diagnosisCodes as Array<string>}::text[],
              service_date = ${after.serviceDate}::date,
              amount = ${decimalOfCents(after.amountCents)}::numeric,
              status = ${status},
              payment_amount = ${paymentAmount}::numeric,
              payment_date = ${paymentDate}::date,
              denial_reason = ${denialReason},
              insurance_plan_id = ${edits ? planOf(after.patientId) : sql`insurance_plan_id`},
              updated_at = now()
            WHERE id = ${id}`.pipe(Effect.catchTag("SqlError", writeErrors))
          yield* audit.record({ actorId, action: "claim.update", targetType: "claim", targetId: id })
          if (status !== current.status) yield* audit.record({ actorId, action: `claim.${status}`, targetType: "claim", targetId: id })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        return toClaim(yield* findRow(id))
      }).pipe(Effect.withSpan("Claims.update", { attributes: { "claim.id": id, "actor.id": actorId } }))

    const remove = (actorId: number, id: number) =>
      Effect.gen(function*() {
        const keys = yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findRow(id, true)
          if (current.status !== "draft") return yield* Effect.fail(invalidField("status", claimMessages.deleteDraftOnly(current.status)))
          const documents = yield* sql<{ object_key: string }>`DELETE FROM claim_documents WHERE claim_id = ${id} RETURNING object_key`
          yield* sql`DELETE FROM claims WHERE id = ${id}`
          yield* audit.record({ actorId, action: "claim.delete", targetType: "claim", targetId: id })
          return documents.map((d) => d.object_key)
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        // Files go once the rows are gone: a failed delete leaves an unreachable file, never a row without its file.
        yield* Effect.forEach(keys, (key) => store.delete(key), { discard: true })
      }).pipe(Effect.withSpan("Claims.delete", { attributes: { "claim.id": id, "actor.id": actorId } }))

    const filters = Effect.gen(function*() {
      const providers = yield* sql<{ id: number; first_name: string; last_name: string }>`
        SELECT p.id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
        WHERE p.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), p.id LIMIT 1000`
      const plans = yield* sql<{ id: number; name: string }>`SELECT id, name FROM insurance_plans WHERE active
        ORDER BY lower(name), id LIMIT 1000`
      return ClaimFilters.make({
        statuses: claimStatuses,
        cpt_codes: cptCodes,
        places_of_service: placesOfService,
        insurance_plans: plans.map((p) => PlanName.make({ id: p.id as never, name: p.name })),
        providers: providers.map((p) => PersonName.make(p))
      })
    }).pipe(Effect.orDie, Effect.withSpan("Claims.filters"))

    return { list, filter, show, create, update, remove, filters, cptCodes } as const
  })
}) {}
