/** A hand-built clinic week and bulk appointments for the report tests; files read back in each format. */
import { Effect } from "effect"
import Papa from "papaparse"
import type { AppointmentStatus, AppointmentType } from "../../../src/Domain/Scheduling/Scheduling.js"
import { request } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { makeProvider } from "../Providers/helpers.js"

export { adminToken, auditActions } from "../Providers/helpers.js"
export { insertClaim, insertSlot } from "../../support/fixtures.js"

export const reportsPath = "/v1/admin/clinic/reports"

/** A wall-clock time in Los Angeles in February 2026 (PST, UTC−8). */
export const pst = (day: string, time: string) => new Date(`${day}T${time}:00-08:00`)

export const insertPatient = (first: string, last: string, active = true) =>
  fixtures.insertPatient({ first_name: first, last_name: last, date_of_birth: "2012-04-05", active })

export const insertAppointment = (patientId: number, providerId: number, at: Date, minutes: number, status: AppointmentStatus, type: AppointmentType = "therapy") =>
  Effect.map(fixtures.insertAppointment({ patientId, providerId, scheduledAt: at, minutes, status, type }), (a) => a.id)

/** A provider (made by the admin) with a department set through the provider update. */
export const providerIn = (token: string, department: string, name: { first_name: string; last_name: string }) =>
  Effect.gen(function*() {
    const provider = yield* makeProvider(token, "provider", name)
    const updated = yield* request("PUT", `/v1/admin/clinic/providers/${provider.id}`, { token, body: { provider: { department } } })
    if (updated.status !== 200 || (updated.body as { provider: { department: string } }).provider.department !== department) {
      return yield* Effect.dieMessage(`department: ${updated.status} ${JSON.stringify(updated.body)}`)
    }
    return provider.id
  })

export const parseCsv = (text: string) => Papa.parse<Array<string>>(text, { skipEmptyLines: true }).data

/** Every text item of every page of a PDF, a line per page. */
export const pdfText = async (bytes: Uint8Array): Promise<Array<string>> => {
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs")
  const document = await pdfjs.getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise
  const pages: Array<string> = []
  for (let n = 1; n <= document.numPages; n++) {
    const page = await document.getPage(n)
    const content = await page.getTextContent()
    pages.push(content.items.map((item) => ("str" in item ? item.str : "")).join(" "))
  }
  await document.destroy()
  return pages
}

export const readXlsx = async (bytes: Uint8Array) => {
  const { default: ExcelJS } = await import("exceljs")
  const workbook = new ExcelJS.Workbook()
  await workbook.xlsx.load(Buffer.from(bytes) as unknown as ArrayBuffer)
  return workbook
}
