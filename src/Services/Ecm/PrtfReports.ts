/**
 * PRTF reports (ECM §2.7, §4.7): generation writes the CSV of `PrtfRowsRepo`'s rows to
 * the `ObjectStore` as the rows stream from the database, then records the report; list and
 * detail answer fresh signed links (30 minutes). Generation is synchronous: one statement and one
 * upload, within the 3-second target at 20,000 members (bench/prtf.ts).
 */
import { Effect, Option, Stream } from "effect"
import type { GeneratePrtfRequest } from "../../Api/Ecm/PrtfReports.js"
import { CreatedPrtfReport, PrtfReport, PrtfReportDetail, PrtfReportList } from "../../Api/Ecm/PrtfReports.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type Cell, prtfColumns, prtfFilename, reportPhone } from "../../Domain/Ecm/PrtfReport.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { now } from "../Time.js"
import { writeCsv } from "./PrtfCsv.js"
import { PrtfReportsRepo, type ReportRow } from "./PrtfReportsRepo.js"
import { type PrtfCells, PrtfRowsRepo } from "./PrtfRowsRepo.js"

/** ECM §8: PRTF list 25 a page. */
export const prtfReportsPageSize = 25
/** ECM §8: signed download links live 30 minutes. */
export const prtfUrlLifetime = "30 minutes"
/** The report's name when it covers every provider and none was given. */
export const allProvidersName = "All providers"

const phoneColumns = [prtfColumns.indexOf("ECM Provider Phone"), prtfColumns.indexOf("Member Phone Number")]

/** A row of `PrtfRowsRepo` (already in column order) as the file's cells: phones as the report writes them. */
export const cellsOf = (row: PrtfCells): ReadonlyArray<Cell> => {
  const cells = row as Array<Cell>
  for (const i of phoneColumns) cells[i] = reportPhone(cells[i] as string | null)
  return cells
}

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
    const reports = yield* PrtfReportsRepo
    const rows = yield* PrtfRowsRepo
    const store = yield* ObjectStore
    const audit = yield* AuditLog

    /** The report's header values: the body's, else the provider with the NPI, else its files'. */
    const headerOf = (npi: string | null) =>
      Effect.gen(function*() {
        if (npi === null) return { name: allProvidersName, phone: "" }
        const found = yield* reports.providerHeader(npi)
        return { name: found.name ?? "", phone: reportPhone(found.phone) ?? "" }
      })

    const generate = Effect.fn("PrtfReports.generate")(function*(callerId: number, body: GeneratePrtfRequest) {
      if (body.end_date <= body.start_date) return yield* Effect.fail(ecmInvalid(["End date must be after start date"]))
      const npi = body.provider_npi ?? null
      const at = yield* now
      const producedOn = at.toISOString().slice(0, 10)
      const header = yield* headerOf(npi)
      const providerName = body.provider_name ?? header.name
      const providerPhone = body.provider_phone ?? header.phone
      const criteria = {
        startDate: body.start_date, endDate: body.end_date, npi,
        providerName: body.provider_name ?? null, providerPhone: body.provider_phone ?? null, producedOn
      }
      // Rows stream from a cursor of the repository's transaction, which holds the settings the statement runs under.
      const { body: file, rowCount } = yield* rows.withRows(criteria, (batches) => writeCsv(Stream.map(batches, (batch) => batch.map(cellsOf))))
      const id = yield* reports.nextId
      const filename = prtfFilename(npi, body.end_date, producedOn)
      const objectKey = `prtf-reports/${id}/${filename}`
      yield* store.put(objectKey, file, "text/csv; charset=utf-8")
      const row = yield* reports.insert({
        id, filename, startDate: body.start_date, endDate: body.end_date, providerNpi: npi, providerName, providerPhone,
        patientCount: rowCount, objectKey, byteSize: file.byteLength, createdById: callerId, at
      })
      yield* audit.record({ actorId: callerId, action: "prtf_report.create", targetType: "prtf_report", targetId: id })
      yield* Effect.annotateCurrentSpan({ "prtf.patient_count": rowCount, "prtf.bytes": file.byteLength })
      const url = yield* store.signedUrl(objectKey, prtfUrlLifetime)
      return CreatedPrtfReport.make({ ...fieldsOf(row), url }, true)
    })

    const list = Effect.fn("PrtfReports.list")(function*(request: PageRequest) {
      const { pagination, rows } = yield* reports.list(request)
      const listed = yield* Effect.forEach(rows, (row) =>
        Effect.map(store.signedUrl(row.object_key, prtfUrlLifetime), (file_url) => PrtfReport.make({ ...fieldsOf(row), file_url }, true)))
      return PrtfReportList.make({ prtf_reports: listed, pagination }, true)
    })

    const show = Effect.fn("PrtfReports.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "prtf_report.id": id })
      const found = yield* reports.find(id)
      if (Option.isNone(found)) return yield* Effect.fail(ecmNotFound("PRTF report"))
      const row = found.value
      const file_url = yield* store.signedUrl(row.object_key, prtfUrlLifetime)
      return PrtfReportDetail.make({ ...fieldsOf(row), file_url, created_by_name: row.created_by_name }, true)
    })

    return { generate, list, show } as const
  }),
  dependencies: [PrtfReportsRepo.Default, PrtfRowsRepo.Default]
}) {}
