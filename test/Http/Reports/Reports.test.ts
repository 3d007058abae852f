/**
 * Admin reports (general §2.12, §4.13): weekly metrics against a hand-built week where
 * every figure is known; report files through the real queue (graphile-worker's `runOnce`) in each
 * format, read back (papaparse, exceljs, pdf.js); the status sequence and honest progress; a
 * failure midway; download and expiry.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { readdir } from "node:fs/promises"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { ObjectStore } from "../../../src/Services/ObjectStore.js"
import { privateTempDir } from "../../../src/Services/PrivateTemp.js"
import { failureReasons, ReportGenerator } from "../../../src/Services/Reports/ReportGenerator.js"
import { expireReportsTask, generateReportTask } from "../../../src/Services/Reports/ReportTasks.js"
import type { AppointmentsReportRequest } from "../../../src/Api/Reports/Reports.js"
import { ProviderId } from "../../../src/Domain/Ids.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertCompletedVisits } from "../../support/fixtures.js"
import {
  adminToken, auditActions, insertAppointment, insertClaim, insertPatient, insertSlot, parseCsv, pdfText, providerIn, pst, readXlsx,
  reportsPath
} from "./helpers.js"

const dayMs = 86_400_000

interface World {
  readonly token: string
  readonly avery: number
  readonly blair: number
  readonly patients: ReadonlyArray<number>
}

let world: World | undefined

/**
 * The week of Monday 2026-02-02 (Los Angeles, PST). Avery (Outpatient): Mon 10:00 P1 completed 50 min
 * (claim paid 120 of 150), Tue 10:00 P1 cancelled 60, Tue 11:00 P2 completed 30 (claim paid 80.50 of
 * 100; P2 was seen in January, so not new), Wed 10:00 P3 no-show 60. Blair (Family): Thu 10:00 P4
 * completed 60 (claim submitted, 200, unpaid), Sun 23:30 P4 scheduled 30 (still Sunday in LA, Monday
 * in UTC); Mon 2026-02-09 00:30 is the next week. Availability: Avery 09:00–13:00 Mon–Fri (1,200 min),
 * Blair Thu 09:00–17:00 and Sun 23:00–24:00 (540 min).
 */
const setUp = Effect.gen(function*() {
  if (world !== undefined) return world
  const token = yield* adminToken
  const avery = yield* providerIn(token, "Outpatient", { first_name: "Avery", last_name: "Quinn" })
  // A name a spreadsheet would run: the CSV neutralises it.
  const blair = yield* providerIn(token, "Family", { first_name: "=Blair", last_name: "Stone" })
  const p1 = yield* insertPatient("Robin", "Vale")
  const p2 = yield* insertPatient("Sam", "Lee")
  const p3 = yield* insertPatient("Kai", "Moss", false)
  const p4 = yield* insertPatient("Noa", "Reed")
  yield* insertAppointment(p2, avery, pst("2026-01-15", "10:00"), 45, "completed")
  const mon = yield* insertAppointment(p1, avery, pst("2026-02-02", "10:00"), 50, "completed")
  yield* insertAppointment(p1, avery, pst("2026-02-03", "10:00"), 60, "cancelled")
  const tue = yield* insertAppointment(p2, avery, pst("2026-02-03", "11:00"), 30, "completed", "follow_up")
  yield* insertAppointment(p3, avery, pst("2026-02-04", "10:00"), 60, "no_show")
  const thu = yield* insertAppointment(p4, blair, pst("2026-02-05", "10:00"), 60, "completed", "assessment")
  yield* insertAppointment(p4, blair, pst("2026-02-08", "23:30"), 30, "scheduled")
  yield* insertAppointment(p4, blair, pst("2026-02-09", "00:30"), 30, "scheduled")
  yield* insertClaim({ id: mon, patientId: p1, providerId: avery, day: "2026-02-02" }, 150, "paid", 120)
  yield* insertClaim({ id: tue, patientId: p2, providerId: avery, day: "2026-02-03" }, 100, "paid", 80.5)
  yield* insertClaim({ id: thu, patientId: p4, providerId: blair, day: "2026-02-05" }, 200, "submitted")
  for (const day of ["02", "03", "04", "05", "06"]) yield* insertSlot(avery, pst(`2026-02-${day}`, "09:00"), pst(`2026-02-${day}`, "13:00"))
  yield* insertSlot(blair, pst("2026-02-05", "09:00"), pst("2026-02-05", "17:00"))
  yield* insertSlot(blair, pst("2026-02-08", "23:00"), pst("2026-02-09", "00:00"))
  world = { token, avery, blair, patients: [p1, p2, p3, p4] }
  return world
})

const metrics = (token: string, query: string) => request("GET", `${reportsPath}/weekly_metrics${query}`, { token })

const runJobs = runDueJobs([generateReportTask, expireReportsTask]).pipe(Effect.provide(ReportGenerator.Default))

const requestAppointments = (token: string, params: Record<string, unknown>) =>
  request("POST", `${reportsPath}/providers/appointments_with_rates`, { token, body: { report_params: params } })

type ReportParams = Omit<AppointmentsReportRequest["report_params"], "provider_ids"> & { readonly provider_ids?: ReadonlyArray<number> }

/** A report asked for through the typed client: the decoded answer and the response (its status). */
const queueAppointments = (token: string, params: ReportParams) =>
  Effect.flatMap(clientAs(token), (client) =>
    client.reports.appointmentsWithRates({
      payload: { report_params: { ...params, provider_ids: params.provider_ids?.map((id) => ProviderId.make(id)) } },
      withResponse: true
    }))

/** A report's state as the typed client decodes it. */
const statusOf = (token: string, id: string) => Effect.flatMap(clientAs(token), (client) => client.reports.status({ path: { report_id: id } }))

/** The stored file of a completed report. */
const fileOf = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ object_key: string }>`SELECT object_key FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
    const store = yield* ObjectStore
    const object = yield* store.get(row!.object_key)
    return Option.getOrThrow(object)
  })

/** Requests a report, runs the queue, and answers its stored file (asserting completion). */
const generated = (token: string, params: ReportParams) =>
  Effect.gen(function*() {
    const [queued, response] = yield* queueAppointments(token, params)
    expect(response.status).toBe(202)
    const id = queued.report_id
    yield* runJobs
    const state = yield* statusOf(token, id)
    expect(state.status).toBe("completed")
    return { id, file: yield* fileOf(id), queued }
  })

const week = { start_date: "2026-02-02", end_date: "2026-02-08" }

layer(TestApp())("admin reports", (it) => {
  it.effect("weekly metrics: every figure of the hand-built week", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const response = yield* metrics(token, "?week_start=2026-02-02")
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        week_start: "2026-02-02",
        week_end: "2026-02-08",
        metrics: {
          total_appointments: 6,
          completed_appointments: 3,
          cancelled_appointments: 1,
          no_show_appointments: 1,
          new_patients: 3,
          total_revenue: 200.5,
          average_session_duration: 46.67,
          // Booked 50 + 30 + 60 (no-show) + 60 + 30 = 230 of 1,740 available minutes.
          provider_utilization: 0.1322
        },
        daily_breakdown: [
          { date: "2026-02-02", appointments: 1, revenue: 120 },
          { date: "2026-02-03", appointments: 2, revenue: 80.5 },
          { date: "2026-02-04", appointments: 1, revenue: 0 },
          { date: "2026-02-05", appointments: 1, revenue: 0 },
          { date: "2026-02-06", appointments: 0, revenue: 0 },
          { date: "2026-02-07", appointments: 0, revenue: 0 },
          { date: "2026-02-08", appointments: 1, revenue: 0 }
        ]
      })
    }))

  it.effect("weekly metrics by provider and by department (any case)", () =>
    Effect.gen(function*() {
      const { avery, token } = yield* setUp
      const byProvider = yield* metrics(token, `?week_start=2026-02-02&week_end=2026-02-08&provider_id=${avery}`)
      expect(byProvider.status).toBe(200)
      expect((byProvider.body as { metrics: unknown }).metrics).toEqual({
        total_appointments: 4, completed_appointments: 2, cancelled_appointments: 1, no_show_appointments: 1, new_patients: 2,
        total_revenue: 200.5, average_session_duration: 40, provider_utilization: 0.1167
      })
      const byDepartment = yield* metrics(token, "?week_end=2026-02-08&department=FAMILY")
      expect(byDepartment.status).toBe(200)
      const body = byDepartment.body as { week_start: string; metrics: unknown; daily_breakdown: Array<unknown> }
      expect(body.week_start).toBe("2026-02-02")
      expect(body.metrics).toEqual({
        total_appointments: 2, completed_appointments: 1, cancelled_appointments: 0, no_show_appointments: 0, new_patients: 1,
        total_revenue: 0, average_session_duration: 60, provider_utilization: 0.1667
      })
      expect(body.daily_breakdown).toHaveLength(7)
      const nobody = yield* (yield* clientAs(token)).reports.weeklyMetrics({ urlParams: { week_start: "2026-02-02", department: "Nowhere" } })
      expect(nobody.metrics.total_appointments).toBe(0)
    }))

  it.effect("weekly metrics default to the current week, Monday to Sunday; bad ranges and unknown providers are 422", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const body = yield* (yield* clientAs(token)).reports.weeklyMetrics({ urlParams: {} })
      expect(new Date(`${body.week_start}T12:00:00Z`).getUTCDay()).toBe(1)
      expect(body.daily_breakdown.map((d) => d.date)[6]).toBe(body.week_end)
      expect(yield* metrics(token, "?week_start=2026-02-09&week_end=2026-02-02")).toMatchObject({
        status: 422, body: { errors: { week_end: ["must be on or after week_start"] } }
      })
      expect(yield* metrics(token, "?week_start=2026-01-01&week_end=2026-03-01")).toMatchObject({
        status: 422, body: { errors: { week_end: ["must be at most 31 days after the start"] } }
      })
      expect(yield* metrics(token, "?provider_id=999999")).toMatchObject({ status: 422, body: { errors: { provider_id: ["must exist"] } } })
    }))

  it.effect("report requests: 202 queued with an unguessable id and the summary; dates and providers checked", () =>
    Effect.gen(function*() {
      const { avery, token } = yield* setUp
      const created = yield* requestAppointments(token, week)
      expect(created.status).toBe(202)
      const body = created.body as { report_id: string }
      expect(Object.keys(body).sort()).toEqual(["download_url", "generated_at", "report_id", "status", "summary"])
      expect(body.report_id).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(body).toMatchObject({
        status: "queued", generated_at: null, download_url: null,
        // 6 appointments (every status); paid 120 + 80.50; billed (150 + 100 + 200) / 3.
        summary: { total_appointments: 6, total_revenue: 200.5, average_rate: 150 }
      })
      const followUp = yield* request("POST", `${reportsPath}/patients/follow_up_schedules`, { token, body: { report_params: week } })
      expect(followUp.status).toBe(202)
      expect(Object.keys(followUp.body as object).sort()).toEqual(["download_url", "estimated_completion", "report_id", "status"])
      expect(yield* requestAppointments(token, { start_date: "2026-02-08", end_date: "2026-02-01" })).toMatchObject({
        status: 422, body: { errors: { end_date: ["must be on or after start_date"] } }
      })
      expect((yield* requestAppointments(token, { end_date: "2026-02-01" })).status).toBe(422)
      expect(yield* requestAppointments(token, { ...week, provider_ids: [avery, 999999] })).toMatchObject({
        status: 422, body: { errors: { provider_ids: ["must exist"] } }
      })
      expect((yield* requestAppointments(token, { ...week, format: "docx" })).status).toBe(422)
      expect((yield* request("GET", `${reportsPath}/${body.report_id}/status`, { token })).status).toBe(200)
      const state = yield* statusOf(token, body.report_id)
      expect(state).toMatchObject({ status: "queued", progress_percentage: 0, download_url: null, generated_at: null, failure_reason: null })
      expect(state.estimated_completion).not.toBeNull()
      // Not ready: 409; unknown: 404.
      expect(yield* request("GET", `${reportsPath}/${body.report_id}/download`, { token })).toMatchObject({
        status: 409, body: { errors: "Report is not ready yet" }
      })
      expect(yield* request("GET", `${reportsPath}/nope/status`, { token })).toMatchObject({ status: 404, body: { errors: "Report not found" } })
      yield* runJobs
    }))

  it.effect("csv: RFC 4180, formulas neutralised, every appointment with its rates; download redirects and is audited", () =>
    Effect.gen(function*() {
      const { blair, token } = yield* setUp
      const { file, id } = yield* generated(token, week)
      expect(file.contentType).toBe("text/csv; charset=utf-8")
      const rows = parseCsv(new TextDecoder().decode(file.body))
      expect(rows[0]).toEqual([
        "Date", "Time", "Appointment", "Provider ID", "Provider", "Patient ID", "Type", "Status", "Minutes", "CPT", "Billed", "Paid"
      ])
      expect(rows).toHaveLength(7)
      expect(rows[1]!.slice(0, 2)).toEqual(["2026-02-02", "10:00"])
      expect(rows[1]!.slice(7)).toEqual(["completed", "50", "90837", "150.00", "120.00"])
      const sunday = rows.find((r) => r[0] === "2026-02-08")!
      expect(sunday[3]).toBe(String(blair))
      expect(sunday[4]).toBe("'=Blair Stone")
      const state = yield* statusOf(token, id)
      expect(state).toMatchObject({ status: "completed", progress_percentage: 100, failure_reason: null })
      expect(state.download_url).toBe(`http://localhost/v1/admin/clinic/reports/${id}/download`)
      expect(state.expires_at!.getTime() - state.generated_at!.getTime()).toBe(30 * dayMs)
      const download = yield* request("GET", `${reportsPath}/${id}/download`, { token })
      expect(download.status).toBe(302)
      expect(download.headers.location).toMatch(/^memory:\/\/reports\/\d+-[0-9a-f]{16}\/provider_appointments_2026-02-02_2026-02-08\.csv\?expires=\d+$/)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ id: number }>`SELECT id FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
      expect(yield* auditActions("report", row!.id)).toEqual(["report.generate", "report.download"])
    }))

  it.effect("json: rows as objects and the totals by group", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const { file } = yield* generated(token, { ...week, format: "json", group_by: "provider" })
      const report = JSON.parse(new TextDecoder().decode(file.body)) as {
        report: { title: string; parameters: Record<string, string> }
        rows: Array<Record<string, unknown>>
        totals: Array<{ title: string; rows: Array<Record<string, unknown>> }>
      }
      expect(report.report.title).toBe("Provider appointments with rates")
      expect(report.report.parameters).toMatchObject({ start_date: "2026-02-02", end_date: "2026-02-08", group_by: "provider" })
      expect(report.rows).toHaveLength(6)
      // Grouped by provider, by last name: Quinn before Stone.
      expect(report.rows.map((r) => r.provider)).toEqual([...Array(4).fill("Avery Quinn"), ...Array(2).fill("=Blair Stone")])
      expect(report.rows[0]).toMatchObject({ date: "2026-02-02", billed_amount: 150, paid_amount: 120, duration_minutes: 50 })
      expect(report.totals[0]).toEqual({ title: "Totals", rows: [{ scope: "All appointments", appointments: 6, billed_amount: 450, paid_amount: 200.5 }] })
      expect(report.totals[1]!.title).toBe("Totals by provider")
      expect(report.totals[1]!.rows.map((r) => r.appointments)).toEqual([4, 2])
    }))

  it.effect("excel: typed cells (dates as dates, money as numbers with a currency format) and a summary sheet", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const { file } = yield* generated(token, { ...week, format: "excel", group_by: "week" })
      expect(file.contentType).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
      const workbook = yield* Effect.promise(() => readXlsx(file.body))
      const sheet = workbook.getWorksheet("Report")!
      expect(sheet.getRow(1).values).toEqual([undefined, "Week of", "Date", "Time", "Appointment", "Provider ID", "Provider", "Patient ID",
        "Type", "Status", "Minutes", "CPT", "Billed", "Paid"])
      expect(sheet.actualRowCount).toBe(7)
      const first = sheet.getRow(2)
      expect(first.getCell(1).value).toEqual(new Date("2026-02-02T00:00:00.000Z"))
      expect(first.getCell(2).value).toEqual(new Date("2026-02-02T00:00:00.000Z"))
      expect(first.getCell(2).numFmt).toBe("yyyy-mm-dd")
      expect(first.getCell(4).value).toEqual(expect.any(Number))
      expect(first.getCell(12).value).toBe(150)
      expect(first.getCell(12).numFmt).toBe("\"$\"#,##0.00")
      expect(first.getCell(13).value).toBe(120)
      const summary = workbook.getWorksheet("Summary")!
      const texts: Array<unknown> = []
      summary.eachRow((row) => texts.push(...(row.values as Array<unknown>).filter((v) => v !== undefined)))
      expect(texts).toEqual(expect.arrayContaining(["Provider appointments with rates", "Totals", "All appointments", 6, 450, 200.5, "Totals by week"]))
    }))

  it.effect("pdf: title, parameters, the table and totals", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const { file } = yield* generated(token, { ...week, format: "pdf", include_rates: false })
      expect(file.contentType).toBe("application/pdf")
      expect(new TextDecoder().decode(file.body.slice(0, 5))).toBe("%PDF-")
      const text = (yield* Effect.promise(() => pdfText(file.body))).join("\n")
      expect(text).toContain("Provider appointments with rates")
      expect(text).toContain("start_date: 2026-02-02")
      expect(text).toContain("include_rates: false")
      expect(text).toMatch(/2026-02-05\s+10:00.*=Blair\s+Stone.*assessment\s+completed\s+60/)
      expect(text).not.toContain("90837")
      expect(text).toMatch(/All appointments\s+6/)
    }))

  it.effect("follow-up schedule: patients seen in the range, next appointment or days since the last visit", () =>
    Effect.gen(function*() {
      const { avery, token } = yield* setUp
      const [created, response] = yield* (yield* clientAs(token)).reports.followUpSchedules({
        payload: { report_params: { ...week, provider_ids: [ProviderId.make(avery)], patient_status: "active" } },
        withResponse: true
      })
      expect(response.status).toBe(202)
      const id = created.report_id
      yield* runJobs
      const rows = parseCsv(new TextDecoder().decode((yield* fileOf(id)).body))
      expect(rows[0]).toEqual(["Patient ID", "Patient", "Status", "Visits", "Last visit", "Days since", "Provider", "Next appointment",
        "Next type", "Next provider"])
      // Seen by Avery in the week and active: Robin (Mon) and Sam (Tue); Kai was a no-show (and is inactive).
      expect(rows.slice(1).map((r) => [r[1], r[3], r[4], r[6], r[7]])).toEqual([
        ["Robin Vale", "1", "2026-02-02", "Avery Quinn", ""],
        ["Sam Lee", "1", "2026-02-03", "Avery Quinn", ""]
      ])
      expect(Number(rows[1]![5])).toBeGreaterThan(0)
    }))

  it.effect("status sequence and honest progress: queued → generating (rows written ÷ rows counted) → completed", () =>
    Effect.gen(function*() {
      const { avery, patients, token } = yield* setUp
      const sql = yield* SqlClient.SqlClient
      // 300 appointments in June 2025, one a day at staggered hours.
      yield* insertCompletedVisits({ patientId: patients[1]!, providerId: avery, first: new Date("2025-06-01T16:00:00Z"), everyMinutes: 90, count: 300 })
      yield* sql`CREATE TABLE report_progress_log (status text, written int, total int)`.pipe(Effect.orDie)
      yield* sql.unsafe(`CREATE FUNCTION log_report_progress() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO report_progress_log VALUES (NEW.status, NEW.rows_written, NEW.rows_total); RETURN NEW; END $$`).pipe(Effect.orDie)
      yield* sql`CREATE TRIGGER report_progress AFTER UPDATE ON reports FOR EACH ROW EXECUTE FUNCTION log_report_progress()`.pipe(Effect.orDie)
      const [created] = yield* queueAppointments(token, { start_date: "2025-06-01", end_date: "2025-06-30", provider_ids: [avery] })
      const id = created.report_id
      expect(created.summary.total_appointments).toBe(300)
      yield* runJobs
      const log = yield* sql<{ status: string; written: number; total: number | null }>`SELECT * FROM report_progress_log`.pipe(Effect.orDie)
      yield* sql`DROP TRIGGER report_progress ON reports`.pipe(Effect.orDie)
      expect(log).toEqual([
        { status: "generating", written: 0, total: null },
        { status: "generating", written: 0, total: 300 },
        // A progress update per 128 rows (one cursor read): 42 % then 85 %.
        { status: "generating", written: 128, total: 300 },
        { status: "generating", written: 256, total: 300 },
        { status: "completed", written: 300, total: 300 }
      ])
      expect((yield* statusOf(token, id)).progress_percentage).toBe(100)
    }))

  it.effect("a report with no rows shows 0 % while generating and 100 % only once completed", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const sql = yield* SqlClient.SqlClient
      const [created] = yield* queueAppointments(token, { start_date: "2024-01-01", end_date: "2024-01-07" })
      const id = created.report_id
      expect(created.summary.total_appointments).toBe(0)
      // The state the generator records once it has counted no rows to write (see the progress log above).
      yield* sql`UPDATE reports SET status = 'generating', started_at = now(), rows_written = 0, rows_total = 0
        WHERE report_id = ${id}`.pipe(Effect.orDie)
      expect(yield* statusOf(token, id)).toMatchObject({ status: "generating", progress_percentage: 0 })
      // The generator takes a `generating` report over (a crashed run's) and completes it.
      yield* runJobs
      expect(yield* statusOf(token, id)).toMatchObject({ status: "completed", progress_percentage: 100 })
    }))

  it.effect("a failure midway leaves no file and no temporary file, and marks the report failed with the reason", () =>
    Effect.gen(function*() {
      const { avery, token } = yield* setUp
      const sql = yield* SqlClient.SqlClient
      // The first progress update (after 128 rows are in the file) fails, as a lost database would.
      yield* sql.unsafe(`CREATE FUNCTION fail_report_progress() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'database went away'; END $$`).pipe(Effect.orDie)
      yield* sql`CREATE TRIGGER report_fails BEFORE UPDATE ON reports FOR EACH ROW
        WHEN (NEW.status = 'generating' AND NEW.rows_written > 0) EXECUTE FUNCTION fail_report_progress()`.pipe(Effect.orDie)
      const [created] = yield* queueAppointments(token, { start_date: "2025-06-01", end_date: "2025-06-30", provider_ids: [avery], format: "excel" })
      const id = created.report_id
      const [row] = yield* sql<{ id: number }>`SELECT id FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
      const before = yield* Effect.flatMap(MemoryObjectStore, (m) => m.objects)
      yield* runJobs
      yield* sql`DROP TRIGGER report_fails ON reports`.pipe(Effect.orDie)
      const state = yield* statusOf(token, id)
      expect(state).toMatchObject({ status: "failed", download_url: null, estimated_completion: null, failure_reason: failureReasons.write })
      expect(state.progress_percentage).toBe(0)
      const after = yield* Effect.flatMap(MemoryObjectStore, (m) => m.objects)
      expect([...after.keys()].filter((key) => key.startsWith(`reports/${row!.id}-`))).toEqual([])
      expect(after.size).toBe(before.size)
      // The file was written in the instance's private directory, and removed from it.
      const { dataDir } = yield* AppConfig
      expect(yield* Effect.promise(() => readdir(privateTempDir(dataDir)))).toEqual([])
      expect(yield* request("GET", `${reportsPath}/${id}/download`, { token })).toMatchObject({
        status: 409, body: { errors: "Report generation failed" }
      })
      // The job does not run again: the failure is recorded, not retried.
      const jobs = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM graphile_worker._private_jobs
        WHERE task_id = (SELECT id FROM graphile_worker._private_tasks WHERE identifier = 'reports.generate')`.pipe(Effect.orDie)
      expect(jobs[0]!.count).toBe(0)
    }))

  // Last: it moves the shared clock 31 days on.
  it.effect("after 30 days the report is gone: status and download 404, and the daily job deletes the file", () =>
    Effect.gen(function*() {
      const { token } = yield* setUp
      const { id } = yield* generated(token, week)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ object_key: string }>`SELECT object_key FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
      // Sessions end long before: sign in again after each move of the clock.
      yield* TestClock.adjust(29 * dayMs)
      const later = yield* signIn()
      expect((yield* request("GET", `${reportsPath}/${id}/download`, { token: later })).status).toBe(302)
      yield* TestClock.adjust(2 * dayMs)
      const expiredToken = yield* signIn()
      expect(yield* request("GET", `${reportsPath}/${id}/status`, { token: expiredToken })).toMatchObject({
        status: 404, body: { errors: "Report not found" }
      })
      expect(yield* request("GET", `${reportsPath}/${id}/download`, { token: expiredToken })).toMatchObject({
        status: 404, body: { errors: "Report not found" }
      })
      const expired = yield* Effect.flatMap(ReportGenerator, (g) => g.expire).pipe(Effect.provide(ReportGenerator.Default))
      expect(expired).toBeGreaterThanOrEqual(1)
      expect(Option.isNone(yield* Effect.flatMap(ObjectStore, (store) => store.get(row!.object_key)))).toBe(true)
      const [after] = yield* sql<{ status: string }>`SELECT status FROM reports WHERE report_id = ${id}`.pipe(Effect.orDie)
      expect(after!.status).toBe("expired")
    }))
})
