/**
 * The state's return files (docs/ecm-exchange.md): a small world of two plans where every cell is
 * known, compared cell by cell with the files read back (papaparse, exceljs); each column's
 * source; a member with no activity; a member enrolled mid-period; two plans kept apart; profiles
 * (rename, reorder, omit, date format, delimiter, file name, xlsx) snapshotted into the report.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { otfStandard, rtfStandard } from "../../../src/Domain/EcmExchange/Files.js"
import { request, signIn, TestApp } from "../../support/app.js"
import { insertEvent, insertStatus } from "../Ecm/prtfSupport.js"
import { query } from "../Ecm/support.js"
import { insertCaseLoad, insertFormCSubmissions, insertInboundSms } from "../../support/fixtures.js"
import { insertUser } from "../Ecm/users.js"
import { createPlan, fileBytes, generated, insertPlanMember, parseFile, parseXlsx } from "./exchangeSupport.js"

const npi = "1234567893"
const period = { start_date: "2026-01-01", end_date: "2026-03-31" }

const rtfRow = (cells: Partial<Record<(typeof rtfStandard)[number][0], string>>) => rtfStandard.map(([source]) => cells[source] ?? "")
const otfRow = (cells: Partial<Record<(typeof otfStandard)[number][0], string>>) => otfStandard.map(([source]) => cells[source] ?? "")

const world = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-04-02T12:00:00Z"))
  const token = yield* signIn()
  const alpha = yield* createPlan(token, {
    name: "Alpha Health", mcp_id: "MCP-A", provider_npis: [npi], provider_tin: "941234567", provider_type: "ECM Provider"
  })
  const beta = yield* createPlan(token, { name: "Beta Care", mcp_id: "MCP-B" })
  const staff = yield* insertUser({ email: "cm@rtf.test", role: "provider", first_name: "Casey", last_name: "Manager" })
  const ilcm = yield* insertUser({ email: "ian@rtf.test", role: "provider", first_name: "Ian", last_name: "Intensive" })
  yield* query(`UPDATE users SET phone = '+15105550199' WHERE id = $1`, ilcm.id)

  // Ana: outreach before her enrolment on Feb 1, encounters after; moved since the plan's last file.
  const ana = yield* insertPlanMember(alpha.id, {
    first_name: "Ana", last_name: "Alvarez", member_id: "M1", cin: "C1", address: "1 Main St, Apt 2", city: "Oakland",
    state: "CA", zip: "94612", phone: "+15105550101", provider_name: "Good Care", npi, auth_from: "2025-07-01",
    auth_to: "2026-12-31", acuity: "High"
  }, { address: "9 Old Rd", phone: "(510) 555-0101" })
  yield* insertStatus(ana, "new_member", "2025-12-01", null, "mif")
  yield* insertStatus(ana, "outreach_in_progress", "2026-01-05")
  yield* insertStatus(ana, "enrolled", "2026-02-01", "Consented")
  yield* insertCaseLoad({ patientId: ana, npi, providerName: "Good Care", olcmUserId: staff.id, ilcmUserId: ilcm.id })
  yield* insertFormCSubmissions(ana, staff.id, ["2026-02-10T15:00:00Z", "2026-03-15T10:00:00Z", "2026-04-01T10:00:00Z"])
  const event = (type: string, status: string, at: string, duration: number | null = null) => insertEvent(ana, staff.id, type, status, at, duration)
  yield* event("sms", "attempted", "2025-12-31T23:59:59Z") // before the period
  yield* event("sms", "attempted", "2026-01-06T09:00:00Z") // outreach; answered by text the next day
  yield* insertInboundSms({ patientId: ana, from: "+15105550101", to: "+15105550000", body: "yes", at: "2026-01-07T08:00:00Z" })
  yield* event("call", "complete", "2026-01-10T10:00:00Z", 0) // outreach: not connected
  yield* event("appointment", "complete", "2026-01-20T10:00:00Z", 45) // in-person outreach (not enrolled yet)
  yield* event("call", "complete", "2026-02-05T10:00:00Z", 15) // telephonic encounter
  yield* event("call", "attempted", "2026-02-06T10:00:00Z", 5) // outreach: no answer
  yield* event("appointment", "complete", "2026-02-20T10:00:00Z", 30) // in-person encounter
  yield* event("email", "complete", "2026-03-01T10:00:00Z") // outreach; the activity recorded 7 minutes
  yield* query(`UPDATE ecm_activities SET duration = 7 WHERE patient_id = $1 AND activity_type = 'email'`, ana)
  yield* event("task", "complete", "2026-03-02T10:00:00Z") // neither
  yield* event("meeting", "complete", "2026-03-03T10:00:00Z") // in-person encounter (most recent)
  yield* event("call", "complete", "2026-04-01T00:00:00Z", 60) // after the period

  // Ben: no activity at all; disenrolled in the period; the plan's file has his address and phone.
  const ben = yield* insertPlanMember(alpha.id, {
    first_name: "Ben", last_name: "Brown", member_id: "M2", cin: "=C2", address: "2 Oak Ave", city: "Berkeley", state: "CA",
    zip: "94704", phone: "+15105550102", provider_name: "Good Care", npi, auth_from: "2025-01-01", auth_to: null, acuity: "Low"
  }, { phone: "510-555-0102" })
  yield* insertStatus(ben, "enrolled", "2025-06-01")
  yield* insertStatus(ben, "disenrolled", "2026-02-15", "Moved out of area")

  // Cara: the other plan's member, with outreach of her own.
  const cara = yield* insertPlanMember(beta.id, {
    first_name: "Cara", last_name: "Cruz", member_id: "M3", cin: "C3", provider_name: "Good Care", npi, auth_from: "2026-01-01"
  })
  yield* insertEvent(cara, staff.id, "sms", "attempted", "2026-01-15T10:00:00Z")

  // Dan: Alpha's, but his authorization ended before the period.
  const dan = yield* insertPlanMember(alpha.id, {
    first_name: "Dan", last_name: "Diaz", member_id: "M4", cin: "C4", npi, auth_from: "2025-01-01", auth_to: "2025-12-31"
  })
  yield* insertEvent(dan, staff.id, "sms", "attempted", "2026-01-15T10:00:00Z")

  // Staff keep what the record cannot know.
  const fields = yield* request("PUT", `/v1/clinic/ecm/patients/${ana}/exchange_fields`, {
    token, body: { homelessness_indicator: "Y", pof_indicator: "Y", pof: "Adults experiencing homelessness" }
  })
  expect(fields.status, JSON.stringify(fields.body)).toBe(200)
  expect(fields.body).toEqual({
    exchange_fields: { patient_id: ana, homelessness_indicator: "Y", pof_indicator: "Y", pof: "Adults experiencing homelessness" }
  })
  return { token, alpha, beta, ana, ben, cara, dan }
})

const anaRtf = rtfRow({
  mcp_id: "MCP-A", mcp_name: "Alpha Health", cin: "C1", last_name: "Alvarez", first_name: "Ana", new_address_indicator: "Y",
  homelessness_indicator: "Y", address: "1 Main St, Apt 2", city: "Oakland", state: "CA", zip: "94612", new_phone_indicator: "N",
  phone: "5105550101", pof_indicator: "Y", pof: "Adults experiencing homelessness", ecm_status: "enrolled", acuity_level: "High",
  enrollment_start: "2026-02-01", assessment_started: "2026-02-10", assessment_completed: "2026-03-15",
  last_encounter: "2026-03-03", lcm_name: "Ian Intensive", lcm_phone: "5105550199", lcm_email: "ian@rtf.test", in_person: "2",
  telephonic_video: "1", production_date: "2026-04-02", reporting_period: "2026-01-01 to 2026-03-31", provider_name: "Good Care",
  provider_npi: npi, provider_tin: "941234567"
})
const benRtf = rtfRow({
  mcp_id: "MCP-A", mcp_name: "Alpha Health", cin: "'=C2", last_name: "Brown", first_name: "Ben", new_address_indicator: "N",
  address: "2 Oak Ave", city: "Berkeley", state: "CA", zip: "94704", new_phone_indicator: "N", phone: "5105550102",
  ecm_status: "disenrolled", acuity_level: "Low", enrollment_start: "2025-06-01", enrollment_end: "2026-02-15",
  discontinuation_date: "2026-02-15", discontinuation_reason: "Moved out of area", in_person: "0", telephonic_video: "0",
  production_date: "2026-04-02", reporting_period: "2026-01-01 to 2026-03-31", provider_name: "Good Care", provider_npi: npi,
  provider_tin: "941234567"
})
const anaOtf = (date: string, method: string, successful: string, minutes: string) =>
  otfRow({
    mcp_id: "MCP-A", mcp_name: "Alpha Health", provider_name: "Good Care", provider_npi: npi, provider_tin: "941234567",
    client_name: "Ana Alvarez", cin: "C1", provider_type: "ECM Provider", outreach_date: date, outreach_method: method,
    outreach_successful: successful, minutes
  })

layer(TestApp())("return files", (it) => {
  it.effect("RTF and OTF in the DHCS standard, cell by cell; two plans kept apart; a profile snapshotted into its report", () =>
    Effect.gen(function*() {
      const w = yield* world

      const rtf = yield* generated(w.token, "rtf", { health_plan_id: w.alpha.id, ...period })
      expect(rtf.filename).toBe("RTF_MCP-A_202603_20260402.csv")
      expect(rtf.row_count).toBe(2)
      expect(rtf.file_url).toMatch(/^memory:\/\//)
      expect(parseFile(yield* fileBytes(rtf.file_url!))).toEqual([rtfStandard.map(([, header]) => header), anaRtf, benRtf])

      // Ana's outreach before and after her enrolment (texts and failed calls stay attempts); Ben has none; Dan and Cara are not Alpha's.
      const otf = yield* generated(w.token, "otf", { health_plan_id: w.alpha.id, ...period })
      expect(otf.filename).toBe("OTF_MCP-A_202603_20260402.csv")
      expect(parseFile(yield* fileBytes(otf.file_url!))).toEqual([
        otfStandard.map(([, header]) => header),
        anaOtf("2026-01-06", "Text", "Y", ""),
        anaOtf("2026-01-10", "Phone", "N", "0"),
        anaOtf("2026-01-20", "In Person", "Y", "45"),
        anaOtf("2026-02-06", "Phone", "N", "5"),
        anaOtf("2026-03-01", "Email", "N", "7")
      ])

      const betaOtf = yield* generated(w.token, "otf", { health_plan_id: w.beta.id, ...period })
      const betaRows = parseFile(yield* fileBytes(betaOtf.file_url!))
      expect(betaRows.slice(1).map((row) => [row[0], row[5], row[8], row[9]])).toEqual([["MCP-B", "Cara Cruz", "2026-01-15", "Text"]])
      const betaRtf = yield* generated(w.token, "rtf", { health_plan_id: w.beta.id, ...period })
      expect(parseFile(yield* fileBytes(betaRtf.file_url!)).slice(1).map((row) => row[3])).toEqual(["Cruz"])

      // A plan's profile: renamed, reordered, omitted; US dates, pipes, its own file name.
      const created = yield* request("POST", "/v1/admin/clinic/ecm/exchange_profiles", {
        token: w.token,
        body: {
          health_plan_id: w.alpha.id, file_kind: "rtf", date_format: "MM/DD/YYYY", delimiter: "pipe",
          file_name_pattern: "alpha rtf/{period_start:YYYYMMDD}-{period_end:YYYYMMDD}",
          columns: [{ source: "last_name", header: "Last" }, { source: "cin", header: "CIN" }, { source: "enrollment_start", header: "Start" },
            { source: "discontinuation_date", header: "Ended" }]
        }
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const profile = (created.body as { exchange_profile: { id: number } }).exchange_profile
      const custom = yield* generated(w.token, "rtf", { health_plan_id: w.alpha.id, ...period })
      expect(custom.filename).toBe("alpha_rtf_20260101-20260331.csv")
      expect(parseFile(yield* fileBytes(custom.file_url!), "|")).toEqual([
        ["Last", "CIN", "Start", "Ended"], ["Alvarez", "C1", "02/01/2026", ""], ["Brown", "'=C2", "06/01/2025", "02/15/2026"]
      ])

      // Asked for, then the profile changes before the job runs: the file keeps the profile it was asked with.
      const queued = yield* request("POST", "/v1/admin/clinic/ecm/rtf_reports", { token: w.token, body: { health_plan_id: w.alpha.id, ...period } })
      expect(queued.status).toBe(202)
      const changed = yield* request("PUT", `/v1/admin/clinic/ecm/exchange_profiles/${profile.id}`, {
        token: w.token, body: { date_format: "YYYYMMDD", delimiter: "tab", columns: [{ source: "cin", header: "Member" }] }
      })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      const queuedId = (queued.body as { report: { id: number } }).report.id
      const { runExchangeJobs } = yield* Effect.promise(() => import("./exchangeSupport.js"))
      yield* runExchangeJobs
      const kept = yield* request("GET", `/v1/admin/clinic/ecm/rtf_reports/${queuedId}`, { token: w.token })
      const keptReport = (kept.body as { report: { file_url: string; profile: { date_format: string } } }).report
      expect(keptReport.profile.date_format).toBe("MM/DD/YYYY")
      expect(parseFile(yield* fileBytes(keptReport.file_url), "|")[1]).toEqual(["Alvarez", "C1", "02/01/2026", ""])
      // The earlier file is untouched, and the next one uses the new profile.
      expect(parseFile(yield* fileBytes(custom.file_url!), "|")[0]).toEqual(["Last", "CIN", "Start", "Ended"])
      const next = yield* generated(w.token, "rtf", { health_plan_id: w.alpha.id, ...period })
      expect(parseFile(yield* fileBytes(next.file_url!), "\t")).toEqual([["Member"], ["C1"], ["'=C2"]])

      // The OTF as XLSX, read back with exceljs.
      const xlsxProfile = yield* request("POST", "/v1/admin/clinic/ecm/exchange_profiles", {
        token: w.token, body: { health_plan_id: w.alpha.id, file_kind: "otf", file_format: "xlsx", date_format: "YYYYMMDD" }
      })
      expect(xlsxProfile.status).toBe(201)
      const xlsx = yield* generated(w.token, "otf", { health_plan_id: w.alpha.id, ...period })
      expect(xlsx.filename).toBe("OTF_MCP-A_202603_20260402.xlsx")
      const sheet = yield* parseXlsx(yield* fileBytes(xlsx.file_url!))
      expect(sheet[0]).toEqual(otfStandard.map(([, header]) => header))
      expect(sheet.slice(1).map((row) => [row[8], row[9], row[10], row[11]])).toEqual([
        ["20260106", "Text", "Y", undefined], ["20260110", "Phone", "N", 0], ["20260120", "In Person", "Y", 45],
        ["20260206", "Phone", "N", 5], ["20260301", "Email", "N", 7]
      ])

      // Lists: newest first, one file's reports only; audited.
      const list = yield* request("GET", "/v1/admin/clinic/ecm/otf_reports?per_page=2", { token: w.token })
      expect(list.status).toBe(200)
      const listed = list.body as { reports: Array<{ id: number }>; pagination: { total_count: number } }
      expect(listed.pagination.total_count).toBe(3)
      expect(listed.reports.map((r) => r.id)).toEqual([xlsx.id, betaOtf.id])
      const missing = yield* request("GET", `/v1/admin/clinic/ecm/otf_reports/${rtf.id}`, { token: w.token })
      expect(missing).toMatchObject({ status: 404, body: { errors: ["Report not found"] } })
      const audit = yield* query<{ action: string }>(`SELECT action FROM audit_events WHERE target_type IN ('rtf_report', 'otf_report') ORDER BY id`)
      expect(audit.map((a) => a.action)).toEqual([
        "rtf_report.create", "otf_report.create", "otf_report.create", "rtf_report.create", "rtf_report.create", "rtf_report.create",
        "rtf_report.create", "otf_report.create"
      ])
    }))

  it.effect("refusals: dates, plans, profiles, fields, roles", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const plan = yield* createPlan(token, { name: "Gamma", mcp_id: "MCP-G" })
      const post = (path: string, body: unknown, as = token) => request("POST", `/v1/admin/clinic/ecm/${path}`, { token: as, body })
      expect(yield* post("health_plans", { name: "Other", mcp_id: "MCP-G" })).toMatchObject({ status: 422, body: { errors: ["Mcp id has already been taken"] } })
      expect(yield* post("rtf_reports", { health_plan_id: plan.id, start_date: "2026-03-01", end_date: "2026-02-01" }))
        .toMatchObject({ status: 422, body: { errors: ["End date can't be before start date"] } })
      expect(yield* post("rtf_reports", { health_plan_id: plan.id, start_date: "2025-01-01", end_date: "2026-03-01" }))
        .toMatchObject({ status: 422, body: { errors: ["The period can't be longer than 366 days"] } })
      expect(yield* post("otf_reports", { health_plan_id: 999999, ...period })).toMatchObject({ status: 422, body: { errors: ["Health plan must exist"] } })
      expect((yield* post("otf_reports", { health_plan_id: plan.id, start_date: "03/01/2026", end_date: "2026-03-31" })).status).toBe(422)
      const badProfile = yield* post("exchange_profiles", {
        health_plan_id: plan.id, file_kind: "otf", file_name_pattern: "x_{nope}",
        columns: [{ source: "ecm_status", header: "Status" }, { source: "cin", header: "A" }, { source: "cin", header: "B" }]
      })
      expect(badProfile).toMatchObject({
        status: 422,
        body: { errors: ["Column source \"ecm_status\" is not a OTF column", "Column source \"cin\" appears more than once",
          "File name pattern has an unknown placeholder {nope}"] }
      })
      expect((yield* post("exchange_profiles", { health_plan_id: plan.id, file_kind: "otf" })).status).toBe(201)
      expect(yield* post("exchange_profiles", { health_plan_id: plan.id, file_kind: "otf" }))
        .toMatchObject({ status: 422, body: { errors: ["The health plan already has a OTF profile"] } })
      expect(yield* request("GET", "/v1/admin/clinic/ecm/health_plans/999999", { token })).toMatchObject({ status: 404, body: { errors: ["Health plan not found"] } })
      const updated = yield* request("PUT", `/v1/admin/clinic/ecm/health_plans/${plan.id}`, { token, body: { active: false, contact_email: "x@gamma.example" } })
      expect(updated.body).toMatchObject({ health_plan: { id: plan.id, name: "Gamma", mcp_id: "MCP-G", active: false, contact_email: "x@gamma.example" } })
      expect(yield* request("PUT", "/v1/clinic/ecm/patients/999999/exchange_fields", { token, body: { pof: "x" } }))
        .toMatchObject({ status: 404, body: { errors: ["Patient not found"] } })
      expect((yield* request("PUT", "/v1/clinic/ecm/patients/1/exchange_fields", { token, body: { homelessness_indicator: "maybe" } })).status).toBe(422)
      // A provider with no care relationship to the member sees no such member.
      const member = yield* insertPlanMember(plan.id, { first_name: "Eve", last_name: "Evans", member_id: "M9" })
      const provider = yield* insertUser({ email: "p@rtf.test", role: "provider" })
      expect(yield* request("GET", `/v1/clinic/ecm/patients/${member}/exchange_fields`, { token: provider.token }))
        .toMatchObject({ status: 404, body: { errors: ["Patient not found"] } })
      expect((yield* post("health_plans", { name: "X", mcp_id: "X" }, provider.token)).status).toBe(403)
      // Nothing refused was recorded.
      expect((yield* query(`SELECT count(*)::int AS n FROM exchange_reports WHERE health_plan_id = $1`, plan.id))[0]).toEqual({ n: 0 })
    }))
})
