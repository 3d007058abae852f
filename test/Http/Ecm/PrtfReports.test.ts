/**
 * PRTF reports (ECM §2.7, §4.7): a small world built by hand where every cell is known,
 * compared cell by cell with the downloaded CSV; inclusion rules; the provider filter; counts equal
 * to the events counts endpoint's; list/detail/404; signed links; CSV injection; 422s.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { prtfColumns, type PrtfColumn } from "../../../src/Domain/Ecm/PrtfReport.js"
import { request, signIn, TestApp } from "../../support/app.js"
import { insertCaseLoad, insertFormCSubmissions } from "../../support/fixtures.js"
import { eventCounts } from "./activitySupport.js"
import { csvText, expiresOf, generateReport, insertEvent, insertMember, insertStatus, parseCsv } from "./prtfSupport.js"
import { query } from "./support.js"
import { insertUser } from "./users.js"

const url = "/v1/admin/clinic/ecm/prtf_reports"
const npi = "1234567893"
const period = { start_date: "2026-01-01", end_date: "2026-03-31" }

/** A row as the file has it: every column as text, empty unless given. */
const rowOf = (cells: Partial<Record<PrtfColumn, string | number>>) =>
  prtfColumns.map((column) => {
    const value = cells[column]
    return value === undefined ? (countColumns.includes(column) ? "0" : "") : String(value)
  })
const countColumns: ReadonlyArray<PrtfColumn> = [
  "Telehealth Encounters", "In-Person Encounters", "Telehealth Outreach Attempts", "In-Person Outreach Attempts",
  "Total Encounters", "Total Outreach Attempts", "SMS Count", "Call Count", "Email Count", "Appointment Count",
  "Meeting Count", "Task Count", "Total Call Minutes"
]


/** The world: who is in it and the values the file must show for them. */
const buildWorld = Effect.gen(function*() {
  const staff = yield* insertUser({ email: "cm@prtf.test", role: "provider", first_name: "Casey", last_name: "Manager" })
  const olcm = yield* insertUser({ email: "olive@prtf.test", role: "provider", first_name: "Olive", last_name: "Outreach" })
  const ilcm = yield* insertUser({ email: "ian@prtf.test", role: "provider", first_name: "Ian", last_name: "Intensive" })

  // Ana: enrolled inside the period, events of every kind, lead care managers, Form C.
  const ana = yield* insertMember({
    first_name: "Ana", last_name: "Alvarez", member_id: "M1", cin: "C1", dob: "1970-05-06", gender: "F",
    address: "1 Main St, Apt 2", city: "Oakland", state: "CA", zip: "94612", phone: "+15105550101", auth_id: "AUTH-1",
    provider_name: "Good Care", npi, auth_from: "2025-07-01", auth_to: "2026-12-31", acuity: "High"
  })
  yield* insertStatus(ana, "new_member", "2025-12-01", "Created by MIF import", "mif")
  yield* insertStatus(ana, "outreach_in_progress", "2026-01-05")
  yield* insertStatus(ana, "enrolled", "2026-02-01", "Consented")
  yield* insertCaseLoad({ patientId: ana, npi, providerName: "Good Care", olcmUserId: olcm.id, ilcmUserId: ilcm.id })
  yield* insertFormCSubmissions(ana, staff.id, ["2026-02-10T15:00:00Z", "2026-04-02T10:00:00Z"])
  const event = (type: string, status: string, at: string, duration: number | null = null) => insertEvent(ana, staff.id, type, status, at, duration)
  yield* event("sms", "attempted", "2025-12-31T23:59:59Z") // before the period
  yield* event("sms", "attempted", "2026-01-06T09:00:00Z") // telehealth outreach (first outreach)
  yield* event("call", "complete", "2026-01-10T10:00:00Z", 0) // not enrolled: telehealth outreach
  yield* event("appointment", "complete", "2026-01-20T10:00:00Z", 45) // not enrolled: in-person outreach
  yield* event("call", "complete", "2026-02-05T10:00:00Z", 15) // enrolled and connected: telehealth encounter
  yield* event("call", "attempted", "2026-02-06T10:00:00Z", 5) // not connected: telehealth outreach
  yield* event("appointment", "complete", "2026-02-20T10:00:00Z", 30) // enrolled: in-person encounter
  yield* event("email", "complete", "2026-03-01T10:00:00Z") // telehealth outreach (most recent outreach)
  yield* event("task", "scheduled", "2026-03-02T10:00:00Z") // counted by type only
  yield* event("meeting", "complete", "2026-03-03T10:00:00Z") // in-person encounter (most recent encounter)
  yield* event("call", "complete", "2026-04-01T00:00:00Z", 60) // after the period

  // Ben: disenrolled inside the period, no events; cells a spreadsheet would run.
  const ben = yield* insertMember({
    first_name: "Ben", last_name: "O'Brien, \"Jr\"", member_id: "M2", cin: "=CMD()", dob: "1960-01-31", gender: "M",
    address: "=HYPERLINK(\"http://evil.example\")", city: "+Town", state: "@CA", zip: "-94000", phone: "+15105550102",
    auth_id: "AUTH-2", provider_name: "Good Care", npi, auth_from: "2025-01-01", auth_to: "2026-02-15", acuity: "Low",
    record_status: "existing_member"
  })
  yield* insertStatus(ben, "new_member", "2025-01-10", null, "mif")
  yield* insertStatus(ben, "enrolled", "2025-02-01")
  yield* insertStatus(ben, "disenrolled", "2026-02-15", "Moved out of county\nfor good")

  // Cara: no status entry inside the period (rule 2).
  const cara = yield* insertMember({ first_name: "Cara", last_name: "Carter", member_id: "M3", npi, auth_to: null })
  yield* insertStatus(cara, "new_member", "2025-06-01", null, "mif")
  yield* insertEvent(cara, staff.id, "sms", "attempted", "2026-01-15T10:00:00Z")

  // Dan: authorization ended before the period (rule 1).
  const dan = yield* insertMember({ first_name: "Dan", last_name: "Dawson", member_id: "M4", npi, auth_from: "2025-01-01", auth_to: "2025-12-31" })
  yield* insertStatus(dan, "new_member", "2026-01-15", null, "mif")

  // Eve: another provider's member (by the eligibility record's NPI).
  const eve = yield* insertMember({ first_name: "Eve", last_name: "Evans", member_id: "M5", npi: "1111111111", provider_name: "Other Care", auth_to: null })
  yield* insertStatus(eve, "new_member", "2026-03-31", null, "mif")

  // Fay: the file names another NPI, but her case load's provider is ours (rule 3 through the case load).
  const fay = yield* insertMember({ first_name: "Fay", last_name: "Fisher", member_id: null, npi: "2222222222", provider_name: "Third Care", auth_to: null })
  yield* query(`UPDATE patients SET member_id = 'P-FAY' WHERE id = $1`, fay)
  yield* insertStatus(fay, "pending_outreach", "2026-01-01")
  yield* insertCaseLoad({ patientId: fay, npi, providerName: "Good Care" })
  // Gus: authorization starting after the period (rule 1).
  const gus = yield* insertMember({ first_name: "Gus", last_name: "Green", member_id: "M7", npi, auth_from: "2026-04-01" })
  yield* insertStatus(gus, "new_member", "2026-02-01", null, "mif")
  return { staff, ana, ben, cara, dan, eve, fay, gus }
})

layer(TestApp())("PRTF reports", (it) => {
  it.effect("the file, cell by cell: inclusion rules, the provider filter, counts, statuses, quoting, injection", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const world = yield* buildWorld
      const today = new Date(yield* TestClock.currentTimeMillis).toISOString().slice(0, 10)
      const mmddyyyy = `${today.slice(5, 7)}${today.slice(8, 10)}${today.slice(0, 4)}`
      const common = { "Report Period Start": "2026-01-01", "Report Period End": "2026-03-31", "Report Production Date": today }
      const anaRow = (header: Partial<Record<PrtfColumn, string>>) => rowOf({
        ...common, "ECM Provider Name": "Good Care", "ECM Provider NPI": npi, "ECM Provider Phone": "", ...header,
        "Member ID (CIN)": "M1", "Client Index Number": "C1", "Member Last Name": "Alvarez", "Member First Name": "Ana",
        "Member Date of Birth": "1970-05-06", "Member Gender": "F", "Member Residential Address": "1 Main St, Apt 2",
        "Member Residential City": "Oakland", "Member Residential State": "CA", "Member Residential Zip": "94612",
        "Member Phone Number": "5105550101", "ECM Service Authorization ID": "AUTH-1",
        "ECM Benefit Authorization Effective Date": "2025-07-01", "ECM Benefit Authorization End Date": "2026-12-31",
        "Acuity Level": "High", "Member Record Status": "new_member", "ECM Enrollment Start Date": "2026-02-01",
        "Current Engagement Status": "enrolled", "Engagement Status Effective Date": "2026-02-01",
        "Previous Engagement Status": "outreach_in_progress", "Previous Engagement Status Date": "2026-01-05",
        "Date of First Outreach Attempt": "2026-01-06", "Date of Most Recent Outreach Attempt": "2026-03-01",
        "Date of Most Recent Encounter": "2026-03-03",
        "Telehealth Encounters": 1, "In-Person Encounters": 2, "Telehealth Outreach Attempts": 4, "In-Person Outreach Attempts": 1,
        "Total Encounters": 3, "Total Outreach Attempts": 5, "SMS Count": 1, "Call Count": 3, "Email Count": 1,
        "Appointment Count": 2, "Meeting Count": 1, "Task Count": 1, "Total Call Minutes": 20,
        "Date of Most Recent Completed Assessment (Form C)": "2026-02-10",
        "Outreach Lead Care Manager Name": "Olive Outreach", "Outreach Lead Care Manager Email": "olive@prtf.test",
        "Intensive Lead Care Manager Name": "Ian Intensive", "Intensive Lead Care Manager Email": "ian@prtf.test"
      })
      const benRow = (header: Partial<Record<PrtfColumn, string>>) => rowOf({
        ...common, "ECM Provider Name": "Good Care", "ECM Provider NPI": npi, "ECM Provider Phone": "", ...header,
        "Member ID (CIN)": "M2", "Client Index Number": "'=CMD()", "Member Last Name": "O'Brien, \"Jr\"", "Member First Name": "Ben",
        "Member Date of Birth": "1960-01-31", "Member Gender": "M", "Member Residential Address": "'=HYPERLINK(\"http://evil.example\")",
        "Member Residential City": "'+Town", "Member Residential State": "'@CA", "Member Residential Zip": "'-94000",
        "Member Phone Number": "5105550102", "ECM Service Authorization ID": "AUTH-2",
        "ECM Benefit Authorization Effective Date": "2025-01-01", "ECM Benefit Authorization End Date": "2026-02-15",
        "Acuity Level": "Low", "Member Record Status": "existing_member",
        "ECM Enrollment Start Date": "2025-02-01", "ECM Enrollment End Date": "2026-02-15",
        "Current Engagement Status": "disenrolled", "Engagement Status Effective Date": "2026-02-15",
        "Previous Engagement Status": "enrolled", "Previous Engagement Status Date": "2025-02-01",
        "Discontinuation Date": "2026-02-15", "Discontinuation Reason": "Moved out of county\nfor good"
      })
      const eveRow = rowOf({
        ...common, "ECM Provider Name": "Other Care", "ECM Provider NPI": "1111111111",
        "Member ID (CIN)": "M5", "Member Last Name": "Evans", "Member First Name": "Eve", "Member Date of Birth": "1980-01-02",
        "ECM Benefit Authorization Effective Date": "2025-01-01", "Member Record Status": "new_member",
        "Current Engagement Status": "new_member", "Engagement Status Effective Date": "2026-03-31"
      })
      const fayRow = (header: Partial<Record<PrtfColumn, string>>) => rowOf({
        ...common, "ECM Provider Name": "Third Care", "ECM Provider NPI": "2222222222", ...header,
        "Member ID (CIN)": "P-FAY", "Member Last Name": "Fisher", "Member First Name": "Fay", "Member Date of Birth": "1980-01-02",
        "ECM Benefit Authorization Effective Date": "2025-01-01", "Member Record Status": "new_member",
        "Current Engagement Status": "pending_outreach", "Engagement Status Effective Date": "2026-01-01"
      })

      // Every provider: Ana, Ben, Eve, Fay (by last name); not Cara, Dan or Gus.
      // The create answer as served: the exact representation.
      const all = yield* request("POST", url, { token, body: period })
      expect({ status: all.status, body: all.body }).toEqual({
        status: 201,
        body: {
          message: "PRTF report generated: 4 members",
          prtf_report: {
            id: expect.any(Number), filename: `PRTF_ALL_032026_${mmddyyyy}.csv`, start_date: "2026-01-01", end_date: "2026-03-31",
            provider_npi: null, provider_name: "All providers", provider_phone: "", patient_count: 4,
            url: expect.stringMatching(/^memory:\/\/prtf-reports\/\d+\/PRTF_ALL_032026_\d{8}\.csv\?expires=\d+$/),
            created_at: expect.stringMatching(/Z$/), created_by_id: expect.any(Number)
          }
        }
      })
      const allText = yield* csvText((all.body as { prtf_report: { url: string } }).prtf_report.url)
      // CRLF line ends (a CR LF inside a quoted cell stays as written), no byte order mark.
      expect(allText.startsWith("Report Period Start,Report Period End,ECM Provider Name,")).toBe(true)
      expect(allText.endsWith("\r\n")).toBe(true)
      expect(allText.replace(/"[^"]*"/g, "").split("\n").every((line, i, lines) => i === lines.length - 1 || line.endsWith("\r"))).toBe(true)
      const allRows = parseCsv(allText)
      expect(allRows[0]).toEqual([...prtfColumns])
      expect(allRows.length).toBe(5)
      expect(allRows[1]).toEqual(anaRow({}))
      expect(allRows[2]).toEqual(eveRow)
      expect(allRows[3]).toEqual(fayRow({}))
      expect(allRows[4]).toEqual(benRow({}))
      // The events counts endpoint agrees with Ana's row (docs/prtf.md's worked example).
      expect((yield* eventCounts(token, world.ana, period)).counts).toEqual({
        total: 9,
        by_type: { sms: 1, call: 3, email: 1, appointment: 2, meeting: 1, task: 1 },
        prtf_categories: { telehealth_encounters: 1, in_person_encounters: 2, telehealth_outreach: 4, in_person_outreach: 1 }
      })
      // Ben's quoted and neutralised cells, as bytes.
      expect(allText).toContain(`"O'Brien, ""Jr""",Ben,1960-01-31,M,"'=HYPERLINK(""http://evil.example"")","'+Town","'@CA","'-94000",5105550102`)

      // One provider by NPI, with header values: Ana, Ben, and Fay through her case load.
      const one = yield* generateReport(token, { ...period, provider_npi: npi, provider_name: "Good Care ECM", provider_phone: "=5105550100" })
      expect(one.prtf_report).toMatchObject({
        filename: `PRTF_${npi}_032026_${mmddyyyy}.csv`, provider_npi: npi, provider_name: "Good Care ECM",
        provider_phone: "=5105550100", patient_count: 3
      })
      const header = { "ECM Provider Name": "Good Care ECM", "ECM Provider NPI": npi, "ECM Provider Phone": "'=5105550100" }
      expect(parseCsv(yield* csvText(one.prtf_report.url)).slice(1)).toEqual([anaRow(header), fayRow(header), benRow(header)])

      // A period where nobody has a status entry: a header-only file.
      const empty = yield* generateReport(token, { start_date: "2024-01-01", end_date: "2024-03-31" })
      expect(empty.prtf_report.patient_count).toBe(0)
      expect(yield* csvText(empty.prtf_report.url)).toBe(prtfColumns.join(",") + "\r\n")
      expect(world.cara).toBeGreaterThan(0)
    }))

  it.effect("every member's counts equal the events counts endpoint's", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const staff = yield* insertUser({ email: "counts@prtf.test", role: "provider" })
      const types = ["sms", "call", "email", "appointment", "meeting", "task"]
      const statuses = ["scheduled", "attempted", "complete", "cancelled"]
      const members: Array<number> = []
      for (let i = 0; i < 6; i++) {
        const id = yield* insertMember({ first_name: `Cnt${i}`, last_name: "Counted", member_id: `CNT${i}`, npi, auth_to: null })
        members.push(id)
        yield* insertStatus(id, "new_member", "2026-01-02", null, "mif")
        if (i % 2 === 0) yield* insertStatus(id, "enrolled", `2026-0${1 + (i % 3)}-1${i}`)
        if (i === 4) {
          // Two enrolled spans inside the period: enrolled, disenrolled, re-referred, enrolled again.
          yield* insertStatus(id, "disenrolled", "2026-03-01", "Declined services")
          yield* insertStatus(id, "new_member", "2026-03-05", null, "mif")
          yield* insertStatus(id, "enrolled", "2026-03-20")
        }
        for (let k = 0; k < 30; k++) {
          const day = 1 + ((k * 7 + i) % 28)
          const month = 1 + ((k + i) % 4) // April is outside the period
          yield* insertEvent(id, staff.id, types[(k + i) % 6]!, statuses[(k * 3 + i) % 4]!,
            `2026-0${month}-${String(day).padStart(2, "0")}T${String((k * 5) % 24).padStart(2, "0")}:30:00Z`, k % 3 === 0 ? null : (k % 4) * 10)
        }
      }
      const report = yield* generateReport(token, period)
      const rows = parseCsv(yield* csvText(report.prtf_report.url))
      const column = (name: PrtfColumn) => prtfColumns.indexOf(name)
      for (const [i, id] of members.entries()) {
        const row = rows.find((r) => r[column("Member ID (CIN)")] === `CNT${i}`)!
        const { counts } = yield* eventCounts(token, id, period)
        const n = (name: PrtfColumn) => Number(row[column(name)])
        expect({
          telehealth_encounters: n("Telehealth Encounters"), in_person_encounters: n("In-Person Encounters"),
          telehealth_outreach: n("Telehealth Outreach Attempts"), in_person_outreach: n("In-Person Outreach Attempts")
        }).toEqual(counts.prtf_categories)
        expect({
          sms: n("SMS Count"), call: n("Call Count"), email: n("Email Count"), appointment: n("Appointment Count"),
          meeting: n("Meeting Count"), task: n("Task Count")
        }).toEqual(counts.by_type)
        // Tasks, cancelled and planned events are neither attempts nor encounters.
        expect(n("Total Encounters") + n("Total Outreach Attempts") + n("Task Count")).toBeLessThanOrEqual(counts.total)
        expect(counts.total).toBeGreaterThan(0)
      }
    }))

  it.effect("422: missing dates, bad format, end not after start, an NPI that is not 10 digits; nothing is written", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const before = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM prtf_reports`)
      const cases: ReadonlyArray<[unknown, ReadonlyArray<string>]> = [
        [{}, ["Start date can't be blank", "End date can't be blank"]],
        [{ start_date: "", end_date: null }, ["Start date can't be blank", "End date can't be blank"]],
        [{ start_date: "01/01/2026", end_date: "2026-02-30" }, ["Start date is invalid (use YYYY-MM-DD)", "End date is invalid (use YYYY-MM-DD)"]],
        [{ start_date: "2026-03-31", end_date: "2026-03-31" }, ["End date must be after start date"]],
        [{ start_date: "2026-03-31", end_date: "2026-01-01" }, ["End date must be after start date"]],
        [{ ...period, provider_npi: "12345" }, ["Provider npi must be 10 digits"]],
        [{ ...period, provider_npi: "12345678901" }, ["Provider npi must be 10 digits"]]
      ]
      for (const [body, errors] of cases) {
        const refused = yield* request("POST", url, { token, body })
        expect({ body, status: refused.status, errors: refused.body }).toEqual({ body, status: 422, errors: { errors } })
      }
      expect(yield* query(`SELECT count(*)::int AS n FROM prtf_reports`)).toEqual(before)
      // The widest period a date allows is a report, not an error.
      const widest = yield* generateReport(token, { start_date: "0001-01-01", end_date: "9999-12-31" })
      expect(widest.prtf_report.filename).toMatch(/^PRTF_ALL_129999_\d{8}\.csv$/)
    }))

  it.effect("list, detail and 404; signed links valid 30 minutes, signed afresh; admins only", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const first = yield* generateReport(token, period)
      const second = yield* generateReport(token, { ...period, provider_npi: "1111111111" })
      const now = yield* TestClock.currentTimeMillis
      expect(expiresOf(second.prtf_report.url)).toBe(Math.ceil((now + 30 * 60 * 1000) / 1000))
      const listed = yield* request("GET", `${url}?per_page=1`, { token })
      expect(listed.status).toBe(200)
      const list = listed.body as { prtf_reports: Array<Record<string, unknown>>; pagination: Record<string, number> }
      expect(list.pagination).toMatchObject({ current_page: 1, per_page: 1 })
      expect(list.pagination.total_count).toBeGreaterThanOrEqual(2)
      expect(list.prtf_reports).toEqual([{
        id: second.prtf_report.id, filename: second.prtf_report.filename, start_date: "2026-01-01", end_date: "2026-03-31",
        provider_npi: "1111111111", provider_name: expect.any(String), provider_phone: "", patient_count: second.prtf_report.patient_count,
        file_url: expect.stringMatching(/^memory:\/\//), created_at: second.prtf_report.created_at.toISOString(), created_by_id: second.prtf_report.created_by_id
      }])
      yield* TestClock.adjust("20 minutes")
      const shown = yield* request("GET", `${url}/${first.prtf_report.id}`, { token })
      expect(shown.status).toBe(200)
      const detail = (shown.body as { prtf_report: Record<string, any> }).prtf_report
      expect(detail).toEqual({
        id: first.prtf_report.id, filename: first.prtf_report.filename, start_date: "2026-01-01", end_date: "2026-03-31",
        provider_npi: null, provider_name: "All providers", provider_phone: "", patient_count: first.prtf_report.patient_count,
        file_url: expect.any(String), created_at: first.prtf_report.created_at.toISOString(), created_by_id: first.prtf_report.created_by_id,
        created_by_name: expect.any(String)
      })
      // Each detail signs afresh: 20 minutes later the link again lives 30 minutes.
      expect(expiresOf(detail.file_url)).toBe(Math.ceil((now + 50 * 60 * 1000) / 1000))
      expect(yield* csvText(detail.file_url)).toBe(yield* csvText(first.prtf_report.url))
      const missing = yield* request("GET", `${url}/999999`, { token })
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: ["PRTF report not found"] } })
      const staff = yield* insertUser({ email: "staff@prtf-list.test", role: "provider" })
      for (const [method, path, body] of [["GET", url, undefined], ["POST", url, period], ["GET", `${url}/${first.prtf_report.id}`, undefined]] as const) {
        const refused = yield* request(method, path, { token: staff.token, body })
        expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Admin access required"] } })
      }
    }))
})
