/** Shared by the return-file tests: plans, members of a plan, running the job, reading the files back. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import Papa from "papaparse"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { ExchangeGenerator } from "../../../src/Services/EcmExchange/ExchangeGenerator.js"
import { generateExchangeTask } from "../../../src/Services/EcmExchange/ExchangeTasks.js"
import type { CreateHealthPlanRequest } from "../../../src/Api/EcmExchange/HealthPlans.js"
import { clientAs } from "../../support/app.js"
import { download, insertMember, type MemberSpec } from "../Ecm/prtfSupport.js"
import { query } from "../Ecm/support.js"

export const runExchangeJobs = runDueJobs([generateExchangeTask]).pipe(Effect.provide(ExchangeGenerator.Default))

/** A plan made through the typed client (a 201); the plan as decoded. */
export const createPlan = (token: string, body: Omit<CreateHealthPlanRequest, "provider_npis"> & { readonly provider_npis?: ReadonlyArray<string> }) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const [created, response] = yield* client.ecmHealthPlans.create({ payload: body as CreateHealthPlanRequest, withResponse: true })
    expect(response.status).toBe(201)
    return created.health_plan
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

/** Asks for a report through the typed client (a 202), runs the queue, and answers the completed report. */
export const generated = (token: string, kind: "rtf" | "otf", body: { health_plan_id: number; start_date: string; end_date: string }) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const reports = kind === "rtf" ? client.ecmRtfReports : client.ecmOtfReports
    const [created, response] = yield* reports.create({ payload: body, withResponse: true })
    expect(response.status).toBe(202)
    expect(created.report).toMatchObject({ status: "queued", progress_percentage: 0, file_url: null, filename: null })
    yield* runExchangeJobs
    const { report } = yield* reports.show({ path: { id: created.report.id } })
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
