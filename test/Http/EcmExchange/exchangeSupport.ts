/** Shared by the return-file tests: plans, members of a plan, running the job, reading the files back. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import Papa from "papaparse"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { ExchangeGenerator } from "../../../src/Services/EcmExchange/ExchangeGenerator.js"
import { generateExchangeTask } from "../../../src/Services/EcmExchange/ExchangeTasks.js"
import { request } from "../../support/app.js"
import { download, insertMember, type MemberSpec } from "../Ecm/prtfSupport.js"
import { query } from "../Ecm/support.js"

export const runExchangeJobs = runDueJobs([generateExchangeTask]).pipe(Effect.provide(ExchangeGenerator.Default))

export const createPlan = (token: string, body: Record<string, unknown>) =>
  Effect.map(request("POST", "/v1/admin/clinic/ecm/health_plans", { token, body }), (r) => {
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return (r.body as { health_plan: { id: number } }).health_plan
  })

/** A member whose eligibility record came in a MIF file of the plan; the record's address and phone as given. */
export const insertPlanMember = (planId: number, spec: MemberSpec, mif: { address?: string; city?: string; state?: string; zip?: string; phone?: string } = {}) =>
  Effect.gen(function*() {
    const id = yield* insertMember(spec)
    yield* query(`UPDATE mif_files SET health_plan_id = $1 WHERE id = (SELECT mif_file_id FROM ecm_eligibility_informations WHERE patient_id = $2)`,
      planId, id)
    yield* query(`UPDATE ecm_eligibility_informations SET address = $2, city = $3, state = $4, zip = $5, phone = $6 WHERE patient_id = $1`,
      id, mif.address ?? spec.address ?? null, mif.city ?? spec.city ?? null, mif.state ?? spec.state ?? null, mif.zip ?? spec.zip ?? null,
      mif.phone ?? null)
    return id
  })

export interface ReportBody {
  readonly id: number
  readonly status: string
  readonly progress_percentage: number
  readonly row_count: number | null
  readonly filename: string | null
  readonly file_url: string | null
  readonly failure_reason: string | null
  readonly profile: Record<string, unknown>
}

/** Asks for a report, runs the queue, and answers the completed report. */
export const generated = (token: string, kind: "rtf" | "otf", body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const created = yield* request("POST", `/v1/admin/clinic/ecm/${kind}_reports`, { token, body })
    expect(created.status, JSON.stringify(created.body)).toBe(202)
    const queued = (created.body as { report: ReportBody }).report
    expect(queued).toMatchObject({ status: "queued", progress_percentage: 0, file_url: null, filename: null })
    yield* runExchangeJobs
    const shown = yield* request("GET", `/v1/admin/clinic/ecm/${kind}_reports/${queued.id}`, { token })
    expect(shown.status).toBe(200)
    const report = (shown.body as { report: ReportBody }).report
    expect(report.status, JSON.stringify(report)).toBe("completed")
    expect(report.progress_percentage).toBe(100)
    return report
  })

export const fileBytes = (url: string) => Effect.map(download(url), (o) => o.body)

/** Rows (header first) of a delimited file. */
export const parseFile = (bytes: Uint8Array, delimiter = ",") =>
  Papa.parse<Array<string>>(new TextDecoder("utf-8", { fatal: true }).decode(bytes), { skipEmptyLines: true, delimiter, newline: "\r\n" }).data

/** Rows (header first) of the first sheet of an XLSX file, cells as exceljs reads them. */
export const parseXlsx = (bytes: Uint8Array) =>
  Effect.promise(async () => {
    const { default: ExcelJS } = await import("exceljs")
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer)
    const rows: Array<Array<unknown>> = []
    workbook.worksheets[0]!.eachRow((row) => {
      rows.push((row.values as Array<unknown>).slice(1))
    })
    return rows
  })
