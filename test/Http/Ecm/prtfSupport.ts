/** Shared by the PRTF and engagement status tests: members built row by row, events, downloads. */
import { Effect, Option } from "effect"
import Papa from "papaparse"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { query } from "./support.js"

let files = 0

export interface MemberSpec {
  readonly first_name: string
  readonly last_name: string
  readonly member_id?: string | null
  readonly cin?: string | null
  readonly dob?: string
  readonly gender?: string | null
  readonly address?: string | null
  readonly city?: string | null
  readonly state?: string | null
  readonly zip?: string | null
  readonly phone?: string | null
  readonly auth_id?: string | null
  readonly provider_name?: string | null
  readonly npi?: string | null
  readonly auth_from?: string | null
  readonly auth_to?: string | null
  readonly acuity?: string | null
  readonly record_status?: string
}

/** An ECM member: the patient, one eligibility record (from a MIF file of its own) pointed at as latest. */
export const insertMember = (m: MemberSpec) =>
  Effect.gen(function*() {
    const n = ++files
    const [file] = yield* query<{ id: number }>(`INSERT INTO mif_files (filename, file_type, source_type, status, records_imported)
      VALUES ($1, 'csv', 'base64', 'completed', 1) RETURNING id`, `MIF_prtf_${n}.csv`)
    const [patient] = yield* query<{ id: number }>(`INSERT INTO patients (member_id, cin, first_name, last_name, date_of_birth, gender,
        address, city, state, zip, phone) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
      m.member_id ?? null, m.cin ?? null, m.first_name, m.last_name, m.dob ?? "1980-01-02", m.gender ?? null,
      m.address ?? null, m.city ?? null, m.state ?? null, m.zip ?? null, m.phone ?? null)
    const [record] = yield* query<{ id: number }>(`INSERT INTO ecm_eligibility_informations (patient_id, mif_file_id, line,
        member_id, cin, first_name, last_name, date_of_birth, ecm_service_auth_id, ecm_provider_name, ecm_npi,
        ecm_benefit_auth_eff_date, ecm_benefit_auth_end_date, acuity_level, member_record_status)
      VALUES ($1, $2, 2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
      patient!.id, file!.id, m.member_id ?? null, m.cin ?? null, m.first_name, m.last_name, m.dob ?? "1980-01-02",
      m.auth_id ?? null, m.provider_name ?? null, m.npi ?? null, m.auth_from === undefined ? "2025-01-01" : m.auth_from,
      m.auth_to ?? null, m.acuity ?? null, m.record_status ?? "new_member")
    yield* query(`UPDATE patients SET ecm_eligibility_information_id = $1 WHERE id = $2`, record!.id, patient!.id)
    return patient!.id
  })

/** A status history entry as a past import or user wrote it. */
export const insertStatus = (patientId: number, status: string, effectiveDate: string, reason: string | null = null, source = "user") =>
  query(`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source, reason) VALUES ($1, $2, $3, $4, $5)`,
    patientId, status, effectiveDate, source, reason)

const activityTypeOf: Record<string, string> = {
  sms: "sms", call: "call", email: "email", task: "task", appointment: "in_person_appointment", meeting: "task"
}

/** An event with its activity, written directly (the EventGenerator's own tests cover generation). */
export const insertEvent = (
  patientId: number,
  assigneeId: number,
  eventType: string,
  status: string,
  occurredAt: string,
  duration: number | null = null
) =>
  Effect.gen(function*() {
    const [activity] = yield* query<{ id: number }>(`INSERT INTO ecm_activities (patient_id, activity_type, status, occurred_at, duration, assigned_to_id, message)
      VALUES ($1, $2, $3, $4, $5, $6, 'm') RETURNING id`,
      patientId, activityTypeOf[eventType], status === "complete" ? "complete" : status === "cancelled" ? "cancelled" : "created", occurredAt, duration, assigneeId)
    yield* query(`INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, duration) VALUES ($1, $2, $3, $4, $5, $6)`,
      patientId, activity!.id, eventType, status, occurredAt, duration)
  })

/** The stored file a signed `memory://` link points at, as text. */
export const download = (url: string) =>
  Effect.gen(function*() {
    const memory = yield* MemoryObjectStore
    const key = url.replace(/^memory:\/\//, "").replace(/\?.*$/, "")
    const found = (yield* memory.objects).get(key)
    return Option.getOrThrow(Option.fromNullable(found))
  })

export const csvText = (url: string) => Effect.map(download(url), (o) => new TextDecoder("utf-8", { fatal: true }).decode(o.body))

/** Parsed rows (header first) of a CSV text. */
export const parseCsv = (text: string) => Papa.parse<Array<string>>(text, { skipEmptyLines: true, delimiter: ",", newline: "\r\n" }).data

export const expiresOf = (url: string) => Number(new URL(url).searchParams.get("expires"))
