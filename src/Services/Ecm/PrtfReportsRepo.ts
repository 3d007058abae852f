/**
 * The only SQL on `prtf_reports` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects.
 * Reports are never edited. The header look-up of a provider by NPI (providers, users, eligibility
 * records) stays here until those tables have repositories of their own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)

/** A report with its author's name; days as `YYYY-MM-DD`. */
export const ReportRow = Schema.Struct({
  id: Schema.Int,
  filename: Schema.String,
  start_date: Schema.String,
  end_date: Schema.String,
  provider_npi: NullText,
  provider_name: Schema.String,
  provider_phone: Schema.String,
  patient_count: Schema.Int,
  object_key: Schema.String,
  created_at: Schema.DateFromSelf,
  created_by_id: Schema.NullOr(Schema.Int),
  created_by_name: NullText
})
export type ReportRow = typeof ReportRow.Type

const NewReport = Schema.Struct({
  id: Schema.Int,
  filename: Schema.String,
  startDate: Schema.String,
  endDate: Schema.String,
  providerNpi: NullText,
  providerName: Schema.String,
  providerPhone: Schema.String,
  patientCount: Schema.Int,
  objectKey: Schema.String,
  byteSize: Schema.Int,
  createdById: Schema.Int,
  at: Schema.DateFromSelf
})
export type NewReport = typeof NewReport.Type

/** What the files and records say of the provider with an NPI. */
export const ProviderHeader = Schema.Struct({ name: NullText, phone: NullText })
export type ProviderHeader = typeof ProviderHeader.Type

const reportColumns = `r.id, r.filename, to_char(r.start_date, 'YYYY-MM-DD') AS start_date,
  to_char(r.end_date, 'YYYY-MM-DD') AS end_date, r.provider_npi, r.provider_name, r.provider_phone, r.patient_count,
  r.object_key, r.created_at, r.created_by_id,
  CASE WHEN u.id IS NULL THEN NULL ELSE u.first_name || ' ' || u.last_name END AS created_by_name`

export class PrtfReportsRepo extends Effect.Service<PrtfReportsRepo>()("app/EcmPrtfReportsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(reportColumns)

    const providerHeader = SqlSchema.single({
      Request: Schema.String,
      Result: ProviderHeader,
      execute: (npi) =>
        sql`SELECT
            coalesce((SELECT u.first_name || ' ' || u.last_name FROM providers p JOIN users u ON u.id = p.user_id WHERE p.npi = ${npi}),
              (SELECT e.ecm_provider_name FROM ecm_eligibility_informations e
                WHERE e.ecm_npi = ${npi} AND e.ecm_provider_name IS NOT NULL ORDER BY e.id DESC LIMIT 1)) AS name,
            (SELECT u.phone FROM providers p JOIN users u ON u.id = p.user_id WHERE p.npi = ${npi}) AS phone`
    })

    const nextId = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.Int }),
      execute: () => sql`SELECT nextval(pg_get_serial_sequence('prtf_reports', 'id'))::int AS id`
    })

    const insert = SqlSchema.single({
      Request: NewReport,
      Result: ReportRow,
      execute: (r) =>
        sql`WITH r AS (
            INSERT INTO prtf_reports (id, filename, start_date, end_date, provider_npi, provider_name, provider_phone,
              patient_count, object_key, byte_size, created_by_id, created_at, updated_at)
            OVERRIDING SYSTEM VALUE
            VALUES (${r.id}, ${r.filename}, ${r.startDate}::date, ${r.endDate}::date, ${r.providerNpi}, ${r.providerName},
              ${r.providerPhone}, ${r.patientCount}, ${r.objectKey}, ${r.byteSize}, ${r.createdById}, ${r.at}, ${r.at})
            RETURNING *)
          SELECT ${columns} FROM r LEFT JOIN users u ON u.id = r.created_by_id`
    })

    const find = SqlSchema.findOne({
      Request: Schema.Int,
      Result: ReportRow,
      execute: (id) => sql`SELECT ${columns} FROM prtf_reports r LEFT JOIN users u ON u.id = r.created_by_id WHERE r.id = ${id}`
    })

    return {
      /** The name (the provider's, else the latest eligibility record's) and phone of the provider with the NPI. */
      providerHeader: (npi: string) => orDefect(providerHeader(npi)),
      /** Draws the next report id (the file's key names it before the row is written). */
      nextId: Effect.map(orDefect(nextId(undefined)), (row) => row.id),
      /** Records a generated report under a drawn id. */
      insert: (report: NewReport) => orDefect(insert(report)),
      /** A page of reports, newest first. */
      list: (request: PageRequest) =>
        listPage({
          select: columns,
          from: sql`prtf_reports r LEFT JOIN users u ON u.id = r.created_by_id`,
          countFrom: sql`prtf_reports r`,
          row: ReportRow,
          sort: { columns: { created_at: sql`r.created_at` }, by: "created_at", dir: "DESC", id: sql`r.id` }
        }, request),
      /** The report, if it exists. */
      find: (id: number): Effect.Effect<Option.Option<ReportRow>> => orDefect(find(id))
    } as const
  })
}) {}
