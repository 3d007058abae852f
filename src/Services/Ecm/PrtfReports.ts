/**
 * PRTF reports (issue 16, ECM §2.7, §4.7): generation writes the CSV of `PrtfAggregator`'s rows to
 * the `ObjectStore` as the rows stream from the database, then records the report; list and
 * detail answer fresh signed links (30 minutes). Generation is synchronous: one statement and one
 * upload, within the 3-second target at 20,000 members (bench/prtf.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Stream } from "effect"
import type { GeneratePrtfRequest } from "../../Api/Ecm/PrtfReports.js"
import { CreatedPrtfReport, PrtfReport, PrtfReportDetail, PrtfReportList } from "../../Api/Ecm/PrtfReports.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { type Cell, prtfColumns, prtfFilename, reportPhone } from "../../Domain/Ecm/PrtfReport.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { applyPrtfSettings, prtfRowBatches } from "./PrtfAggregator.js"
import { writeCsv } from "./PrtfCsv.js"

/** ECM §8: PRTF list 25 a page. */
export const prtfReportsPageSize = 25
/** ECM §8: signed download links live 30 minutes. */
export const prtfUrlLifetime = "30 minutes"
/** The report's name when it covers every provider and none was given. */
export const allProvidersName = "All providers"

const phoneColumns = [prtfColumns.indexOf("ECM Provider Phone"), prtfColumns.indexOf("Member Phone Number")]

/** A row of `prtfRowBatches` (already in column order) as cells: phones as the report writes them. */
export const cellsOf = (values: ReadonlyArray<unknown>): ReadonlyArray<Cell> => {
  const cells = values as Array<Cell>
  for (const i of phoneColumns) cells[i] = reportPhone(cells[i] as string | null)
  return cells
}

interface ReportRow {
  readonly id: number
  readonly filename: string
  readonly start_date: string
  readonly end_date: string
  readonly provider_npi: string | null
  readonly provider_name: string
  readonly provider_phone: string
  readonly patient_count: number
  readonly object_key: string
  readonly created_at: Date
  readonly created_by_id: number | null
  readonly created_by_name: string | null
}

const reportColumns = `r.id, r.filename, to_char(r.start_date, 'YYYY-MM-DD') AS start_date,
  to_char(r.end_date, 'YYYY-MM-DD') AS end_date, r.provider_npi, r.provider_name, r.provider_phone, r.patient_count,
  r.object_key, r.created_at, r.created_by_id,
  CASE WHEN u.id IS NULL THEN NULL ELSE u.first_name || ' ' || u.last_name END AS created_by_name`

const fieldsOf = (row: ReportRow) => ({
  id: row.id,
  filename: row.filename,
  start_date: row.start_date,
  end_date: row.end_date,
  provider_npi: row.provider_npi,
  provider_name: row.provider_name,
  provider_phone: row.provider_phone,
  patient_count: row.patient_count,
  created_at: row.created_at,
  created_by_id: row.created_by_id
})

export class PrtfReports extends Effect.Service<PrtfReports>()("app/EcmPrtfReports", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ObjectStore
    const audit = yield* AuditLog

    /** The report's header values: the body's, else the provider with the NPI, else its files'. */
    const headerOf = (npi: string | null) =>
      Effect.gen(function*() {
        if (npi === null) return { name: allProvidersName, phone: "" }
        const [found] = yield* sql<{ name: string | null; phone: string | null }>`SELECT
            coalesce((SELECT u.first_name || ' ' || u.last_name FROM providers p JOIN users u ON u.id = p.user_id WHERE p.npi = ${npi}),
              (SELECT e.ecm_provider_name FROM ecm_eligibility_informations e
                WHERE e.ecm_npi = ${npi} AND e.ecm_provider_name IS NOT NULL ORDER BY e.id DESC LIMIT 1)) AS name,
            (SELECT u.phone FROM providers p JOIN users u ON u.id = p.user_id WHERE p.npi = ${npi}) AS phone`
        return { name: found?.name ?? "", phone: reportPhone(found?.phone ?? null) ?? "" }
      })

    const generate = (callerId: number, body: GeneratePrtfRequest) =>
      Effect.gen(function*() {
        if (body.end_date <= body.start_date) return yield* Effect.fail(ecmInvalid(["End date must be after start date"]))
        const npi = body.provider_npi ?? null
        const nowMs = yield* Clock.currentTimeMillis
        const now = new Date(nowMs)
        const producedOn = now.toISOString().slice(0, 10)
        const header = yield* headerOf(npi)
        const providerName = body.provider_name ?? header.name
        const providerPhone = body.provider_phone ?? header.phone
        const criteria = {
          startDate: body.start_date, endDate: body.end_date, npi,
          providerName: body.provider_name ?? null, providerPhone: body.provider_phone ?? null, producedOn
        }
        // Rows stream from a cursor of this transaction, which holds the settings the statement runs under.
        const { body: file, rowCount } = yield* applyPrtfSettings.pipe(
          Effect.zipRight(writeCsv(Stream.map(prtfRowBatches(criteria), (batch) => batch.map(cellsOf)))),
          sql.withTransaction
        )
        const [drawn] = yield* sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence('prtf_reports', 'id'))::int AS id`
        const id = drawn!.id
        const filename = prtfFilename(npi, body.end_date, producedOn)
        const objectKey = `prtf-reports/${id}/${filename}`
        yield* store.put(objectKey, file, "text/csv; charset=utf-8")
        const [row] = yield* sql<ReportRow>`WITH r AS (
            INSERT INTO prtf_reports (id, filename, start_date, end_date, provider_npi, provider_name, provider_phone,
              patient_count, object_key, byte_size, created_by_id, created_at, updated_at)
            OVERRIDING SYSTEM VALUE
            VALUES (${id}, ${filename}, ${body.start_date}::date, ${body.end_date}::date, ${npi}, ${providerName},
              ${providerPhone}, ${rowCount}, ${objectKey}, ${file.byteLength}, ${callerId}, ${now}, ${now})
            RETURNING *)
          SELECT ${sql.literal(reportColumns)} FROM r LEFT JOIN users u ON u.id = r.created_by_id`
        yield* audit.record({ actorId: callerId, action: "prtf_report.create", targetType: "prtf_report", targetId: id })
        yield* Effect.annotateCurrentSpan({ "prtf.patient_count": rowCount, "prtf.bytes": file.byteLength })
        const url = yield* store.signedUrl(objectKey, prtfUrlLifetime)
        return CreatedPrtfReport.make({ ...fieldsOf(row!), url }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("PrtfReports.generate"))

    const list = (request: PageRequest) =>
      Effect.gen(function*() {
        const rows = yield* sql<ReportRow>`SELECT ${sql.literal(reportColumns)} FROM prtf_reports r
          LEFT JOIN users u ON u.id = r.created_by_id
          ORDER BY r.created_at DESC, r.id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM prtf_reports`
        const reports = yield* Effect.forEach(rows, (row) =>
          Effect.map(store.signedUrl(row.object_key, prtfUrlLifetime), (file_url) => PrtfReport.make({ ...fieldsOf(row), file_url }, true)))
        return PrtfReportList.make({ prtf_reports: reports, pagination: paginationOf(request, counted?.count ?? 0) }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("PrtfReports.list"))

    const show = (id: number) =>
      Effect.gen(function*() {
        const [row] = yield* sql<ReportRow>`SELECT ${sql.literal(reportColumns)} FROM prtf_reports r
          LEFT JOIN users u ON u.id = r.created_by_id WHERE r.id = ${id}`
        if (row === undefined) return yield* Effect.fail(ecmNotFound("PRTF report"))
        const file_url = yield* store.signedUrl(row.object_key, prtfUrlLifetime)
        return PrtfReportDetail.make({ ...fieldsOf(row), file_url, created_by_name: row.created_by_name }, true)
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("PrtfReports.show", { attributes: { "prtf_report.id": id } }))

    return { generate, list, show } as const
  })
}) {}
