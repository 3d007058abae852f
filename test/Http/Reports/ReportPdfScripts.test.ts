/**
 * Report PDFs draw every patient's name, whatever its script: read back with pdf.js, each sample
 * name is there whole, drawn in its column, and the row's other columns (Courier) are intact.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { ObjectStore } from "../../../src/Services/ObjectStore.js"
import { ReportGenerator } from "../../../src/Services/Reports/ReportGenerator.js"
import { expireReportsTask, generateReportTask } from "../../../src/Services/Reports/ReportTasks.js"
import { request, TestApp } from "../../support/app.js"
import { fullName, type PdfItem, pdfItems, sampleNames } from "../../support/pdfText.js"
import { adminToken, insertAppointment, insertPatient, providerIn, pst, reportsPath } from "./helpers.js"

const runJobs = runDueJobs([generateReportTask, expireReportsTask]).pipe(Effect.provide(ReportGenerator.Default))

const storedFile = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ object_key: string }>`SELECT object_key FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
    return Option.getOrThrow(yield* (yield* ObjectStore).get(row!.object_key)).body
  })

/** The follow-up schedule's columns' widths in characters (ReportRowsRepo.ts), each followed by a space. */
const widths = [10, 24, 8, 6, 10, 10, 22, 16, 17, 22]

/** The page's left margin (ReportWriters.ts), where each table line starts. */
const margin = 36

/**
 * The texts of the columns of the monospaced (Courier) line on a baseline: pdf.js splits a line at
 * runs of spaces, so each piece is put back at its character offset. Items in other fonts (the
 * names) are left out.
 */
const courierColumns = (items: ReadonlyArray<PdfItem>, y: number, characterWidth: number, others: ReadonlySet<string>) => {
  let line = ""
  for (const item of items.filter((i) => Math.abs(i.y - y) < 0.5 && !others.has(i.str)).sort((a, b) => a.x - b.x)) {
    line = line.padEnd(Math.round((item.x - margin) / characterWidth)) + item.str
  }
  let offset = 0
  return widths.map((width) => {
    const text = line.slice(offset, offset + width).trim()
    offset += width + 1
    return text
  })
}

layer(TestApp())("report PDFs in every script", (it) => {
  it.effect("follow-up schedule as PDF: each sample name whole in its column, the row's other columns intact", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* providerIn(token, "Outpatient", { first_name: "Анна", last_name: "Смирнова" })
      const patients: Array<number> = []
      for (const [i, [first, last]] of sampleNames.entries()) {
        const patient = yield* insertPatient(first, last)
        patients.push(patient)
        yield* insertAppointment(patient, provider, pst("2026-03-03", `${String(8 + i).padStart(2, "0")}:00`), 50, "completed")
      }
      const created = yield* request("POST", `${reportsPath}/patients/follow_up_schedules`, {
        token, body: { report_params: { start_date: "2026-03-02", end_date: "2026-03-08", provider_ids: [provider], format: "pdf" } }
      })
      expect(created.status).toBe(202)
      yield* runJobs
      const file = yield* storedFile((created.body as { report_id: string }).report_id)
      const items = yield* Effect.promise(() => pdfItems(file))
      const others = new Set([...sampleNames.map(fullName), "Анна Смирнова"])
      for (const [i, sample] of sampleNames.entries()) {
        const name = fullName(sample)
        const drawn = items.filter((item) => item.str === name)
        expect(drawn.map((item) => item.str), name).toEqual([name])
        const { page, x, y } = drawn[0]!
        // Courier's characters are all as wide: the row's date gives their width.
        const date = items.find((item) => item.page === page && Math.abs(item.y - y) < 0.5 && item.str === "2026-03-03")
        expect(date, name).toBeDefined()
        const characterWidth = date!.width / date!.str.length
        // The name and the provider (Cyrillic) in their columns; Courier's columns blank there, the others intact.
        const rowItems = items.filter((item) => item.page === page)
        expect(courierColumns(rowItems, y, characterWidth, others), name).toEqual([
          String(patients[i]), "", "active", "1", "2026-03-03", expect.stringMatching(/^\d+$/), "", "", "", ""
        ])
        expect(x - margin, name).toBeCloseTo(11 * characterWidth, 1)
        const providerCell = rowItems.find((item) => item.str === "Анна Смирнова" && Math.abs(item.y - y) < 0.5)
        expect(providerCell, name).toBeDefined()
        expect(providerCell!.x - margin, name).toBeCloseTo((11 + 25 + 9 + 7 + 11 + 11) * characterWidth, 1)
      }
    }))
})
