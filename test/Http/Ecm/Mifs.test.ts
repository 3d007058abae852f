/**
 * MIF imports (ECM §4.6) through the real HttpApi: every format, every source, every refusal,
 * all-or-nothing, matching, and the list and detail of MIF files.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import { insertPatient, insertProviderProfile } from "../../support/fixtures.js"
import { insertUser } from "./users.js"
import { zipOf } from "../../support/zip.js"
import { counts, csvOf, dataUri, header, importedMif, importMif, memberRow, mifFiles, membersCsv, query } from "./support.js"

/** The import directory of this file's app, a file beside it (outside), and a symlink out of it. */
const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), "cc-mif-test-"))
const importDir = path.join(sandbox, "imports")
fs.mkdirSync(path.join(importDir, "plans"), { recursive: true })
fs.writeFileSync(path.join(sandbox, "outside.csv"), membersCsv([{ first_name: "Out", last_name: "Side", dob: "01-01-1990" }]))
fs.symlinkSync(path.join(sandbox, "outside.csv"), path.join(importDir, "escape.csv"))
fs.symlinkSync(sandbox, path.join(importDir, "parent-link"))
fs.writeFileSync(path.join(importDir, "plans", "march.csv"), membersCsv([{ member_id: "P1", first_name: "Pat", last_name: "Path", dob: "05-06-1970" }]))
fs.writeFileSync(path.join(importDir, "members.dat"), membersCsv([{ member_id: "P2", first_name: "Dee", last_name: "Sniffed", dob: "05-06-1971" }]))
fs.writeFileSync(path.join(importDir, "binary.dat"), Buffer.from([0, 1, 2, 3, 4, 5, 6, 7]))
afterAll(() => fs.rmSync(sandbox, { recursive: true, force: true }))

/**
 * A file server on 127.0.0.2, the one private address this app may fetch from
 * (MIF_URL_ALLOWED_NETWORKS); 127.0.0.1 stays refused, so a redirect there shows the per-hop check.
 */
let fileServerPort = 0
const served = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://x")
  if (url.pathname === "/members.csv") return res.end(membersCsv([{ member_id: "U1", first_name: "Uma", last_name: "Url", dob: "07-08-1990" }]))
  if (url.pathname === "/download") {
    res.setHeader("content-type", "text/xml")
    return res.end("<Members><Member><FIRST_NAME>Xena</FIRST_NAME><LAST_NAME>Typed</LAST_NAME><DOB>01-02-1999</DOB></Member></Members>")
  }
  if (url.pathname === "/hop") return res.writeHead(302, { location: "/members.csv" }).end()
  if (url.pathname === "/to-loopback") return res.writeHead(302, { location: `http://127.0.0.1:${fileServerPort}/members.csv` }).end()
  if (url.pathname === "/to-metadata") return res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end()
  if (url.pathname === "/loop") return res.writeHead(302, { location: "/loop" }).end()
  if (url.pathname === "/big") return res.end("FIRST_NAME,LAST_NAME,DOB\n" + "x".repeat(2 * 1024 * 1024))
  res.writeHead(404).end()
})
const fileServer = Effect.acquireRelease(
  Effect.async<number>((resume) => {
    served.listen(0, "127.0.0.2", () => resume(Effect.succeed((served.address() as { port: number }).port)))
  }),
  () => Effect.async<void>((resume) => {
    served.close(() => resume(Effect.void))
  })
)

const mifSettings = {
  importDir: Option.some(importDir),
  maxFileBytes: 1024 * 1024,
  urlTimeoutMs: 5_000,
  urlAllowedNetworks: ["127.0.0.2/32"]
}

const mifFileIdOf = (body: unknown) => (body as { mif_file_id: number }).mif_file_id
const errorsOf = (body: unknown) => (body as { errors: Array<string> }).errors

/** A refused request: 422 with exactly these messages, and nothing written anywhere. */
const expectRefused = (token: string, mif: Record<string, unknown>, errors: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const before = yield* counts
    const filesBefore = (yield* mifFiles(token)).pagination.total_count
    const response = yield* importMif(token, mif)
    expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: { errors: errors } })
    expect(yield* counts).toEqual(before)
    expect((yield* mifFiles(token)).pagination.total_count).toBe(filesBefore)
  })

const patientByMemberId = (memberId: string) =>
  Effect.map(query<Record<string, unknown>>(`SELECT id, member_id, cin, first_name, last_name,
      to_char(date_of_birth, 'YYYY-MM-DD') AS date_of_birth, gender, address, city, state, zip, phone
    FROM patients WHERE member_id = $1`, memberId), (rows) => rows[0])

layer(TestApp({ mif: mifSettings }))("MIF imports", (it) => {
  it.effect("requires a token (401) and the admin role (403) on every MIF endpoint", () =>
    Effect.gen(function*() {
      const parent = yield* insertUser({ email: "parent@mif.test", role: "parent" })
      const staff = yield* insertUser({ email: "staff@mif.test", role: "provider" })
      for (const [method, url] of [["POST", "/v1/admin/clinic/ecm/mifs"], ["GET", "/v1/admin/clinic/ecm/mifs"], ["GET", "/v1/admin/clinic/ecm/mifs/1"]] as const) {
        const anonymous = yield* request(method, url, { body: method === "POST" ? { mif: {} } : undefined })
        expect(anonymous.status).toBe(401)
        for (const token of [parent.token, staff.token]) {
          const refused = yield* request(method, url, { token, body: method === "POST" ? { mif: {} } : undefined })
          expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: { errors: ["Admin access required"] } })
        }
      }
    }))

  it.effect("a created member's new_member entry takes the authorization's effective date, never a day after the import", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const today = new Date(yield* TestClock.currentTimeMillis).toISOString().slice(0, 10)
      const [y, m, d] = today.split("-")
      const dated = (member_id: string, effective: string) => {
        const row = memberRow({ member_id, first_name: member_id, last_name: "Dated", dob: "01-02-1980" })
        row[header.indexOf("ECM_BENEFIT_AUTH_EFF_DATE")] = effective
        return row
      }
      const csv = csvOf([header, dated("DT1", "03-15-2025"), dated("DT2", "12-31-2999"), dated("DT3", ""), dated("DT4", `${m}-${d}-${y}`)])
      const response = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const entries = yield* query<{ member_id: string; effective_date: string }>(`SELECT p.member_id,
          to_char(h.effective_date, 'YYYY-MM-DD') AS effective_date
        FROM ecm_status_histories h JOIN patients p ON p.id = h.patient_id WHERE p.last_name = 'Dated' ORDER BY p.member_id`)
      expect(entries).toEqual([
        { member_id: "DT1", effective_date: "2025-03-15" },
        { member_id: "DT2", effective_date: today },
        { member_id: "DT3", effective_date: today },
        { member_id: "DT4", effective_date: today }
      ])
    }))

  it.effect("imports a CSV file: patients, eligibility records, new_member history, case loads, stored file", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const csv = membersCsv([
        { member_id: "A1", first_name: "Ana", last_name: "Lopez", dob: "02-03-1990", zip: "00123", phone: "(510) 555-0100" },
        { first_name: "Ben", last_name: "Kim", dob: "12-31-1985", phone: "not a phone" }
      ])
      const before = yield* counts
      const response = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({ message: "MIF file imported: 2 records", imported_count: 2, mif_file_id: expect.any(Number) })
      const id = mifFileIdOf(response.body)
      const after = yield* counts
      expect(after).toEqual({
        patients: before.patients + 2,
        eligibility: before.eligibility + 2,
        histories: before.histories + 2,
        case_loads: before.case_loads + 2
      })
      expect(yield* patientByMemberId("A1")).toEqual({
        id: expect.any(Number), member_id: "A1", cin: "CA1", first_name: "Ana", last_name: "Lopez",
        date_of_birth: "1990-02-03", gender: "F", address: "1 Main St", city: "Oakland", state: "CA", zip: "00123",
        phone: "+15105550100"
      })
      // An unusable phone is kept as sent on the eligibility record, not on the patient.
      const [ben] = yield* query<{ phone: string | null; record_phone: string }>(`SELECT p.phone, e.phone AS record_phone
        FROM patients p JOIN ecm_eligibility_informations e ON e.patient_id = p.id WHERE p.last_name = 'Kim' AND e.mif_file_id = $1`, id)
      expect(ben).toEqual({ phone: null, record_phone: "not a phone" })
      const histories = yield* query<{ status: string; effective_date: string; source: string }>(`SELECT h.status,
          to_char(h.effective_date, 'YYYY-MM-DD') AS effective_date, h.source
        FROM ecm_status_histories h JOIN patients p ON p.id = h.patient_id WHERE p.member_id = 'A1'`)
      // Dated as the file says: the authorization's effective date (01-01-2026), before the import day.
      expect(histories).toEqual([{ status: "new_member", effective_date: "2026-01-01", source: "mif" }])
      const caseLoads = yield* query<Record<string, unknown>>(`SELECT c.provider_id, c.provider_npi, c.provider_name
        FROM case_loads c JOIN patients p ON p.id = c.patient_id WHERE p.member_id = 'A1'`)
      expect(caseLoads).toEqual([{ provider_id: null, provider_npi: "1234567893", provider_name: "Good Care" }])
      const [file] = yield* query<{ status: string; records_imported: number; object_key: string; source_type: string }>(
        `SELECT status, records_imported, object_key, source_type FROM mif_files WHERE id = $1`, id)
      expect(file).toMatchObject({ status: "completed", records_imported: 2, source_type: "base64" })
      const audit = yield* query<{ action: string; target_type: string }>(
        `SELECT action, target_type FROM audit_events WHERE target_id = $1 AND target_type = 'mif_file'`, id)
      expect(audit).toEqual([{ action: "mif.import", target_type: "mif_file" }])
    }))

  it.effect("reads a CSV with a BOM, tab separators, CRLF line ends and loose header names", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const csv = "\uFEFF" + [" member_id ", "first_name", "Last_Name", "dob", "ZIP", "Unknown column"].join("\t") + "\r\n" +
        ["T1", "Tab", "Separated", "3/4/1980", "01234", "ignored"].join("\t") + "\r\n"
      const response = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(response.status).toBe(200)
      expect(yield* patientByMemberId("T1")).toMatchObject({ first_name: "Tab", last_name: "Separated", date_of_birth: "1980-03-04", zip: "01234" })
    }))

  it.effect("keeps text as written: quoted commas, line breaks, tabs, backslashes, \\N and non-ASCII", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      // Each of these is special to some layer on the way in (CSV, PostgreSQL's COPY text format).
      const address = "12 \"Oak\", Apt 3\nBack\\slash\tTab\r\nEnd"
      const csv = "MEMBER_ID,FIRST_NAME,LAST_NAME,DOB,ADDRESS,CITY\n" +
        `E1,José,"O'Brien, Jr.",01-02-1980,"${address.replace(/"/g, "\"\"")}",\\N\n`
      const response = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(response.status).toBe(200)
      expect(yield* patientByMemberId("E1")).toMatchObject({ first_name: "José", last_name: "O'Brien, Jr.", address, city: "\\N" })
      const [record] = yield* query<{ address: string; line: number }>(
        `SELECT address, line FROM ecm_eligibility_informations WHERE member_id = 'E1'`)
      expect(record).toEqual({ address, line: 2 })
    }))

  it.effect("reads XML under any root with any-case field names; entities declared by the document are not expanded", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const xml = `<?xml version="1.0"?>
<!DOCTYPE Roster [<!ENTITY boom "expanded">]>
<Roster><Batch>
  <Member><member_id>X1</member_id><First_Name>Xia</First_Name><LAST_NAME>Li &amp; Wu</LAST_NAME><DOB>10-11-1975</DOB><ZIP>00501</ZIP><CITY>&boom;</CITY></Member>
  <Member><MEMBER_ID>X2</MEMBER_ID><FIRST_NAME>Yann</FIRST_NAME><LAST_NAME>Le</LAST_NAME><DOB>01-02-2003</DOB><CIN/></Member>
</Batch></Roster>`
      const response = yield* importedMif(token, { file: dataUri("xml", xml) })
      expect(response.imported_count).toBe(2)
      expect(yield* patientByMemberId("X1")).toMatchObject({ first_name: "Xia", last_name: "Li & Wu", zip: "00501", city: "&boom;" })
      expect(yield* patientByMemberId("X2")).toMatchObject({ date_of_birth: "2003-01-02", cin: null })
    }))

  it.effect("reads an XLSX written by LibreOffice: zero-padded ZIP, number phones and real date cells", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const xlsx = fs.readFileSync(new URL("../../fixtures/mif/members.xlsx", import.meta.url))
      const response = yield* importedMif(token, { file: dataUri("xlsx", xlsx) })
      expect(response.imported_count).toBe(2)
      expect(yield* patientByMemberId("X100")).toMatchObject({
        first_name: "Rosa", last_name: "Diaz", date_of_birth: "1984-07-09", zip: "00123", phone: "+15105550142"
      })
      expect(yield* patientByMemberId("X200")).toMatchObject({ date_of_birth: "2001-12-31", zip: "94612", phone: "+14155550199" })
      const [record] = yield* query<{ eff: string; npi: string }>(`SELECT to_char(ecm_benefit_auth_eff_date, 'YYYY-MM-DD') AS eff,
        ecm_npi AS npi FROM ecm_eligibility_informations WHERE member_id = 'X100'`)
      expect(record).toEqual({ eff: "2026-01-01", npi: "1234567893" })
      const file = (yield* mifFiles(token)).mif_files.find((f) => f.id === response.mif_file_id)
      expect(file?.file_type).toBe("xlsx")
    }))

  it.effect("reads an XLSX whose text columns a spreadsheet typed as numbers: ZIP padded, ids and phone as digits", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const xlsx = yield* Effect.promise(async () => {
        const { default: ExcelJS } = await import("exceljs")
        const workbook = new ExcelJS.Workbook()
        const sheet = workbook.addWorksheet("Members")
        sheet.addRow(header)
        // Every cell a number in the General format, as a spreadsheet types "00501" or "12345" typed in.
        sheet.addRow([55501, 91234567, "Nora", "Numeric", "03-04-1990", "F", "1 Main St", "Holtsville", "NY", 501,
          5105550142, 7788990011, "Good Care", 1234567893, "01-01-2026", "12-31-2026", "High"])
        sheet.addRow([55502, 91234568, "Zed", "Numeric", "03-04-1991", "M", "2 Main St", "Holtsville", "NY", 5011234,
          15105550143, 42, "Good Care", 1234567893, "01-01-2026", "12-31-2026", "High"])
        return new Uint8Array(await workbook.xlsx.writeBuffer())
      })
      const response = yield* importMif(token, { file: dataUri("xlsx", xlsx) })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(yield* patientByMemberId("55501")).toMatchObject({ cin: "91234567", zip: "00501", phone: "+15105550142" })
      expect(yield* patientByMemberId("55502")).toMatchObject({ cin: "91234568", zip: "005011234", phone: "+15105550143" })
      const records = yield* query<Record<string, unknown>>(`SELECT member_id, zip, phone, ecm_service_auth_id, ecm_npi
        FROM ecm_eligibility_informations WHERE member_id IN ('55501', '55502') ORDER BY member_id`)
      expect(records).toEqual([
        { member_id: "55501", zip: "00501", phone: "5105550142", ecm_service_auth_id: "7788990011", ecm_npi: "1234567893" },
        { member_id: "55502", zip: "005011234", phone: "15105550143", ecm_service_auth_id: "42", ecm_npi: "1234567893" }
      ])
    }))

  it.effect("imports from a path inside MIF_IMPORT_DIR, relative or absolute; the type comes from the extension or the content", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const relative = yield* importedMif(token, { path: "plans/march.csv" })
      expect(relative.imported_count).toBe(1)
      const absolute = yield* importedMif(token, { path: path.join(importDir, "plans", "..", "plans", "march.csv") })
      expect(absolute.imported_count).toBe(1)
      const sniffed = yield* importedMif(token, { path: "members.dat" })
      expect(sniffed.imported_count).toBe(1)
      const files = (yield* mifFiles(token)).mif_files
      expect(files.find((f) => f.id === sniffed.mif_file_id)).toMatchObject({ source_type: "path", file_type: "csv" })
      expect(yield* patientByMemberId("P1")).toMatchObject({ first_name: "Pat" })
    }))

  it.effect("refuses paths outside the import directory: traversal, absolute, symlinks out, missing, not a file", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const outside = ["Path must name a file inside the import directory"]
      yield* expectRefused(token, { path: "../outside.csv" }, outside)
      yield* expectRefused(token, { path: "plans/../../outside.csv" }, outside)
      yield* expectRefused(token, { path: path.join(sandbox, "outside.csv") }, outside)
      yield* expectRefused(token, { path: "/etc/passwd" }, outside)
      yield* expectRefused(token, { path: "escape.csv" }, outside)
      yield* expectRefused(token, { path: "parent-link/outside.csv" }, outside)
      yield* expectRefused(token, { path: "." }, outside)
      yield* expectRefused(token, { path: "a\u0000b.csv" }, ["Path must not contain null characters"])
      yield* expectRefused(token, { path: "missing.csv" }, ["Path does not name a readable file in the import directory"])
      yield* expectRefused(token, { path: "plans" }, ["Path does not name a readable file in the import directory"])
    }))

  it.effect("fetches a URL (redirects followed, type from the extension or the content type)", () =>
    Effect.gen(function*() {
      fileServerPort = yield* fileServer
      const token = yield* signIn()
      const direct = yield* importedMif(token, { url: `http://127.0.0.2:${fileServerPort}/members.csv` })
      expect(direct.imported_count).toBe(1)
      const redirected = yield* importedMif(token, { url: `http://127.0.0.2:${fileServerPort}/hop` })
      expect(redirected.imported_count).toBe(1)
      const typed = yield* importedMif(token, { url: `http://127.0.0.2:${fileServerPort}/download` })
      expect(typed.imported_count).toBe(1)
      const files = (yield* mifFiles(token)).mif_files
      expect(files.find((f) => f.id === typed.mif_file_id)).toMatchObject({ source_type: "url", file_type: "xml" })
      expect(yield* patientByMemberId("U1")).toMatchObject({ first_name: "Uma" })
    }).pipe(Effect.scoped))

  it.effect("refuses URLs that reach inside the network (every address class, before and after redirects)", () =>
    Effect.gen(function*() {
      fileServerPort = yield* fileServer
      const token = yield* signIn()
      const inside = ["Url must point to a public internet address"]
      const targets = [
        "http://127.0.0.1/", "http://127.1.2.3:8080/x.csv", "http://localhost/x.csv", // loopback
        "http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/", // private
        "http://169.254.169.254/latest/meta-data/", "http://169.254.1.1/", // link-local and metadata
        "http://100.64.0.1/", "http://100.100.100.200/", // CGNAT (and Alibaba's metadata)
        "http://0.0.0.0/", "http://224.0.0.1/", "http://255.255.255.255/", // unspecified, multicast, broadcast
        "http://[::1]/", "http://[::]/", "http://[fe80::1]/", "http://[fc00::1]/", "http://[fd00:ec2::254]/", // IPv6
        "http://[::ffff:127.0.0.1]/", "http://[::ffff:a9fe:a9fe]/", "http://[2002:7f00:1::]/", // IPv4 hidden in IPv6
        "http://2130706433/", "http://0x7f.1/", // other spellings of 127.0.0.1
        `http://127.0.0.2:${fileServerPort}/to-loopback`, `http://127.0.0.2:${fileServerPort}/to-metadata` // redirects
      ]
      for (const url of targets) yield* expectRefused(token, { url }, inside)
      yield* expectRefused(token, { url: "ftp://127.0.0.2/x.csv" }, ["Url must be an http or https address"])
      yield* expectRefused(token, { url: "file:///etc/passwd" }, ["Url must be an http or https address"])
      yield* expectRefused(token, { url: "not a url" }, ["Url must be an http or https address"])
      yield* expectRefused(token, { url: `http://127.0.0.2:${fileServerPort}/loop` }, ["Url redirected too many times"])
      yield* expectRefused(token, { url: `http://127.0.0.2:${fileServerPort}/absent.csv` }, ["Url could not be fetched (HTTP 404)"])
      yield* expectRefused(token, { url: `http://127.0.0.2:${fileServerPort}/big` }, ["File is too large (maximum is 1 MB)"])
    }).pipe(Effect.scoped))

  it.effect("refuses a missing, doubled, unknown, badly encoded or empty source", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const csv = membersCsv([{ first_name: "N", last_name: "O", dob: "01-01-2000" }])
      yield* expectRefused(token, {}, ["Mif must include a file, url or path"])
      yield* expectRefused(token, { file: "  ", url: "" }, ["Mif must include a file, url or path"])
      yield* expectRefused(token, { file: dataUri("csv", csv), path: "plans/march.csv" }, ["Mif must include only one of file, url or path"])
      yield* expectRefused(token, { file: Buffer.from(csv).toString("base64") }, [expect.stringMatching(/^File must be a data URI starting with data:text\/csv;base64,/) as unknown as string])
      yield* expectRefused(token, { file: "data:application/pdf;base64,AAAA" }, [expect.stringMatching(/^File must be a data URI/) as unknown as string])
      yield* expectRefused(token, { file: "data:text/csv;base64,not*base64!" }, ["File is not valid base64"])
      yield* expectRefused(token, { file: "data:text/csv;base64,QUJD=" }, ["File is not valid base64"])
      yield* expectRefused(token, { file: "data:text/csv;base64," }, ["File is empty"])
      yield* expectRefused(token, { path: "binary.dat" }, ["File type could not be detected; send file_type (csv, xml or xlsx)"])
      yield* expectRefused(token, { path: "binary.dat", file_type: "pdf" }, ["File type is not included in the list"])
      yield* expectRefused(token, { file: dataUri("csv", "x".repeat(1024 * 1024 + 10)) }, ["File is too large (maximum is 1 MB)"])
    }))

  it.effect("a malformed file fails with the line; only the failed MIF file row remains", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
        ["csv", { file: dataUri("csv", csvOf([["FIRST_NAME", "LAST_NAME", "DOB"], ["A", "B", "01-01-2000"], ["C", "D", "01-01-2000", "extra"]])) },
          "Invalid CSV format: line 3: 4 fields, but the header has 3"],
        ["csv", { file: dataUri("csv", "FIRST_NAME,LAST_NAME,DOB\nA,B,01-01-2000\n\"C,D,01-01-2000\n") }, "Invalid CSV format: line 3: Quoted field unterminated"],
        ["csv", { file: dataUri("csv", "NAME,LAST_NAME\nA,B\n") }, "Invalid CSV format: line 1: missing columns FIRST_NAME, DOB"],
        ["csv", { file: dataUri("csv", Buffer.from([0x46, 0x49, 0x52, 0x53, 0x54, 0x5f, 0x4e, 0x41, 0x4d, 0x45, 0x2c, 0xff, 0xfe, 0x0a])) },
          "Invalid CSV format: the file is not UTF-8 text"],
        ["xml", { file: dataUri("xml", "<Members><Member><FIRST_NAME>A</Member></Members>") },
          "Invalid XML format: line 1: unexpected close tag."],
        ["xml", { file: dataUri("xml", "<Members><Person/></Members>") }, "Invalid XML format: no Member elements found"],
        ["xlsx", { file: dataUri("xlsx", "PK\u0003\u0004 not really a zip") }, "Invalid XLSX format: the file is not a readable Excel 2007+ workbook"],
        ["csv", { file: dataUri("xlsx", membersCsv([{ first_name: "A", last_name: "B", dob: "01-01-2000" }])) },
          "Invalid XLSX format: the file is not a readable Excel 2007+ workbook"],
        // A zip bomb: 20 KB that unpacks to 20 MB, past 16 × MIF_MAX_FILE_BYTES (1 MB here).
        ["xlsx", { file: dataUri("xlsx", zipOf("xl/worksheets/sheet1.xml", Buffer.alloc(20 * 1024 * 1024, 0x20))) },
          "Invalid XLSX format: the workbook unpacks to more than 16 MB"]
      ]
      for (const [, mif, message] of cases) {
        const before = yield* counts
        const response = yield* importMif(token, mif)
        expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: { errors: [message] } })
        expect(yield* counts).toEqual(before)
        const latest = (yield* mifFiles(token)).mif_files[0]!
        expect(latest).toMatchObject({ status: "failed", import_errors: message, records_imported: 0 })
        const [audit] = yield* query<{ action: string }>(`SELECT action FROM audit_events WHERE target_type = 'mif_file' AND target_id = $1`, latest.id)
        expect(audit).toEqual({ action: "mif.import_failed" })
      }
    }))

  it.effect("one bad record rolls the whole import back and every problem is listed", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const before = yield* counts
      const rows = [
        header,
        memberRow({ member_id: "R1", first_name: "Good", last_name: "Before", dob: "01-01-1990" }),
        memberRow({ member_id: "R2", first_name: "", last_name: "Nameless", dob: "02-30-1990" }),
        memberRow({ member_id: "R3", first_name: "Good", last_name: "After", dob: "1990/01/01" }),
        ["R4", "", "No", "", "", "", "", "", "", "", "", "", "", "", "13-01-2026", "", ""]
      ]
      const response = yield* importMif(token, { file: dataUri("csv", csvOf(rows)) })
      const problems = [
        "Line 3: First name can't be blank",
        "Line 3: Dob is invalid",
        "Line 4: Dob is invalid",
        "Line 5: Last name can't be blank",
        "Line 5: Dob can't be blank",
        "Line 5: Ecm benefit auth eff date is invalid"
      ]
      expect({ status: response.status, body: response.body }).toEqual({ status: 422, body: { errors: problems } })
      expect(yield* counts).toEqual(before)
      expect(yield* patientByMemberId("R1")).toBeUndefined()
      const latest = (yield* mifFiles(token)).mif_files[0]!
      expect(latest).toMatchObject({ status: "failed", records_imported: 0, import_errors: problems.join("\n") })
      expect(latest.file_url).toEqual(expect.stringContaining(`mif-files/${latest.id}/`))
    }))

  it.effect("caps the listed problems at 100", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const rows = [header, ...Array.from({ length: 150 }, (_, i) => memberRow({ first_name: `N${i}`, last_name: "Bad", dob: "99-99-1999" }))]
      const response = yield* importMif(token, { file: dataUri("csv", csvOf(rows)) })
      const errors = errorsOf(response.body)
      expect(response.status).toBe(422)
      expect(errors).toHaveLength(101)
      expect(errors[0]).toBe("Line 2: Dob is invalid")
      expect(errors[100]).toBe("… and 50 more problems")
    }))

  it.effect("re-importing a file updates the same patients, never duplicates them", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const members = [
        { member_id: "U10", first_name: "Una", last_name: "Again", dob: "03-03-1993", city: "Fresno" },
        { first_name: "Noid", last_name: "Again", dob: "04-04-1994", city: "Fresno" }
      ]
      const first = yield* importMif(token, { file: dataUri("csv", membersCsv(members)) })
      expect(first.status).toBe(200)
      const afterFirst = yield* counts
      const second = yield* importMif(token, { file: dataUri("csv", membersCsv(members.map((m) => ({ ...m, city: "Stockton", npi: "9999999995", provider: "Other Care" })))) })
      expect(second.status).toBe(200)
      expect(yield* counts).toEqual({ ...afterFirst, eligibility: afterFirst.eligibility + 2 })
      expect(yield* patientByMemberId("U10")).toMatchObject({ city: "Stockton" })
      const statuses = yield* query<{ member_record_status: string; mif_file_id: number }>(`SELECT e.member_record_status, e.mif_file_id
        FROM ecm_eligibility_informations e JOIN patients p ON p.id = e.patient_id WHERE p.last_name = 'Again' ORDER BY e.id`)
      expect(statuses.map((s) => s.member_record_status)).toEqual(["new_member", "new_member", "existing_member", "existing_member"])
      const [caseLoad] = yield* query<{ provider_npi: string; provider_name: string }>(`SELECT provider_npi, provider_name FROM case_loads c
        JOIN patients p ON p.id = c.patient_id WHERE p.member_id = 'U10'`)
      expect(caseLoad).toEqual({ provider_npi: "9999999995", provider_name: "Other Care" })
      // Blank cells leave what the patient has; the names in the file always win.
      const sparse = yield* importMif(token, { file: dataUri("csv", csvOf([["MEMBER_ID", "FIRST_NAME", "LAST_NAME", "DOB", "CITY", "ZIP", "PHONE"], ["U10", "UNA", "Again", "03-03-1993", "", "", ""]])) })
      expect(sparse.status).toBe(200)
      expect(yield* patientByMemberId("U10")).toMatchObject({ first_name: "UNA", city: "Stockton", zip: "94612", phone: "+15105550100" })
    }))

  it.effect("puts patients on the case load of the provider the file names: by NPI, else by a unique name", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const byNpi = yield* insertUser({ email: "npi.provider@mif.test", role: "provider", first_name: "Nia", last_name: "Pi" })
      const byName = yield* insertUser({ email: "named.provider@mif.test", role: "provider", first_name: "Nora", last_name: "Named" })
      const twinA = yield* insertUser({ email: "twin.a@mif.test", role: "provider", first_name: "Tam", last_name: "Twin" })
      const twinB = yield* insertUser({ email: "twin.b@mif.test", role: "provider", first_name: "Tam", last_name: "Twin" })
      const npiProvider = yield* insertProviderProfile(byNpi.id, { npi: "1245319599" })
      const namedProvider = yield* insertProviderProfile(byName.id)
      yield* insertProviderProfile(twinA.id)
      yield* insertProviderProfile(twinB.id)
      const members = [
        { member_id: "CL1", first_name: "Ann", last_name: "Linked", dob: "01-02-1980", npi: "1245319599", provider: "Some Org" },
        { member_id: "CL2", first_name: "Ben", last_name: "Linked", dob: "01-02-1981", npi: "", provider: "nora named" },
        { member_id: "CL3", first_name: "Cy", last_name: "Linked", dob: "01-02-1982", npi: "", provider: "Tam Twin" },
        { member_id: "CL4", first_name: "Di", last_name: "Linked", dob: "01-02-1983", npi: "1093817462", provider: "Unknown Org" }
      ]
      expect((yield* importMif(token, { file: dataUri("csv", membersCsv(members)) })).status).toBe(200)
      const caseLoads = yield* query<{ member_id: string; provider_id: number | null }>(`SELECT p.member_id, c.provider_id
        FROM case_loads c JOIN patients p ON p.id = c.patient_id WHERE p.last_name = 'Linked' ORDER BY p.member_id`)
      expect(caseLoads).toEqual([
        { member_id: "CL1", provider_id: npiProvider },
        { member_id: "CL2", provider_id: namedProvider },
        { member_id: "CL3", provider_id: null },
        { member_id: "CL4", provider_id: null }
      ])
    }))

  it.effect("the matched ECM provider becomes the primary provider of members who have none, never replacing one", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const ecm = yield* insertUser({ email: "primary.ecm@mif.test", role: "provider", first_name: "Ema", last_name: "Primary" })
      const clinic = yield* insertUser({ email: "primary.clinic@mif.test", role: "provider", first_name: "Cleo", last_name: "Clinic" })
      const named = yield* insertUser({ email: "primary.named@mif.test", role: "provider", first_name: "Nell", last_name: "Byname" })
      const ecmProvider = yield* insertProviderProfile(ecm.id, { npi: "1333333338" })
      const clinicProvider = yield* insertProviderProfile(clinic.id)
      const namedProvider = yield* insertProviderProfile(named.id)
      // Known to the clinic before the file: one with a primary provider, one without.
      yield* insertPatient({ member_id: "PP1", first_name: "Kept", last_name: "Primary", date_of_birth: "1980-02-01", provider_id: clinicProvider })
      yield* insertPatient({ member_id: "PP2", first_name: "Filled", last_name: "Primary", date_of_birth: "1981-02-01", provider_id: null })
      const members = [
        { member_id: "PP1", first_name: "Kept", last_name: "Primary", dob: "02-01-1980", npi: "1333333338", provider: "Some Org" },
        { member_id: "PP2", first_name: "Filled", last_name: "Primary", dob: "02-01-1981", npi: "1333333338", provider: "Some Org" },
        { member_id: "PP3", first_name: "New", last_name: "Primary", dob: "02-01-1982", npi: "", provider: "nell byname" },
        { member_id: "PP4", first_name: "None", last_name: "Primary", dob: "02-01-1983", npi: "1093817462", provider: "Unknown Org" }
      ]
      expect((yield* importMif(token, { file: dataUri("csv", membersCsv(members)) })).status).toBe(200)
      const primaries = () =>
        query<{ member_id: string; provider_id: number | null; case_load: number | null }>(`SELECT p.member_id, p.provider_id,
          c.provider_id AS case_load FROM patients p JOIN case_loads c ON c.patient_id = p.id
          WHERE p.last_name = 'Primary' ORDER BY p.member_id`)
      expect(yield* primaries()).toEqual([
        { member_id: "PP1", provider_id: clinicProvider, case_load: ecmProvider },
        { member_id: "PP2", provider_id: ecmProvider, case_load: ecmProvider },
        { member_id: "PP3", provider_id: namedProvider, case_load: namedProvider },
        { member_id: "PP4", provider_id: null, case_load: null }
      ])
      // A later file naming another provider moves the case load, not a primary provider already set.
      const moved = members.map((m) => ({ ...m, npi: "", provider: "Nell Byname" }))
      expect((yield* importMif(token, { file: dataUri("csv", membersCsv(moved)) })).status).toBe(200)
      expect(yield* primaries()).toEqual([
        { member_id: "PP1", provider_id: clinicProvider, case_load: namedProvider },
        { member_id: "PP2", provider_id: ecmProvider, case_load: namedProvider },
        { member_id: "PP3", provider_id: namedProvider, case_load: namedProvider },
        { member_id: "PP4", provider_id: namedProvider, case_load: namedProvider }
      ])
    }))

  it.effect("two members who share a name stay two patients; a record naming only them fails", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const twins = [
        { member_id: "S1", first_name: "Sam", last_name: "Same", dob: "05-05-1955" },
        { member_id: "S2", first_name: "Sam", last_name: "Same", dob: "05-05-1955" }
      ]
      const imported = yield* importedMif(token, { file: dataUri("csv", membersCsv(twins)) })
      expect(imported.imported_count).toBe(2)
      const [named] = yield* query<{ count: number }>(`SELECT count(*)::int AS count FROM patients WHERE last_name = 'Same'`)
      expect(named?.count).toBe(2)
      const before = yield* counts
      const ambiguous = yield* importMif(token, { file: dataUri("csv", membersCsv([
        { member_id: "S1", first_name: "Sam", last_name: "Same", dob: "05-05-1955" },
        { first_name: "SAM", last_name: "same", dob: "05-05-1955" }
      ])) })
      expect({ status: ambiguous.status, body: ambiguous.body }).toEqual({
        status: 422,
        body: { errors: ["Line 3: matches 2 patients with the same name and date of birth; add MEMBER_ID to say which"] }
      })
      expect(yield* counts).toEqual(before)
    }))

  it.effect("without a member id a record matches the one patient with its name and date of birth, who then takes a member id", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* importMif(token, { file: dataUri("csv", membersCsv([{ first_name: "Mia", last_name: "Match", dob: "06-06-1966" }])) })
      const before = yield* counts
      const again = yield* importMif(token, { file: dataUri("csv", membersCsv([{ first_name: "MIA", last_name: "match", dob: "06-06-1966", city: "Sacramento" }])) })
      expect(again.status).toBe(200)
      expect((yield* counts).patients).toBe(before.patients)
      const adopted = yield* importMif(token, { file: dataUri("csv", membersCsv([{ member_id: "M66", first_name: "Mia", last_name: "Match", dob: "06-06-1966" }])) })
      expect(adopted.status).toBe(200)
      expect((yield* counts).patients).toBe(before.patients)
      expect(yield* patientByMemberId("M66")).toMatchObject({ first_name: "Mia", last_name: "Match", city: "Oakland" })
      // A different date of birth is a different person.
      yield* importMif(token, { file: dataUri("csv", membersCsv([{ first_name: "Mia", last_name: "Match", dob: "06-07-1966" }])) })
      expect((yield* counts).patients).toBe(before.patients + 1)
    }))

  it.effect("lists MIF files newest first, 25 a page, failed ones included, with 30-minute signed links", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      yield* importMif(token, { file: dataUri("csv", "FIRST_NAME,LAST_NAME,DOB\nA,B,bad\n") })
      // The entry as served: its exact keys (the typed list drops fields the contract does not name).
      const served = yield* request("GET", "/v1/admin/clinic/ecm/mifs", { token })
      expect(Object.keys((served.body as { mif_files: Array<object> }).mif_files[0]!).sort()).toEqual([
        "created_at", "file_type", "file_url", "filename", "id", "import_errors", "records_imported", "source_type", "status", "updated_at"
      ])
      const listed = yield* mifFiles(token)
      expect(listed.pagination).toMatchObject({ current_page: 1, per_page: 25 })
      const [latest] = listed.mif_files
      expect(latest).toMatchObject({ status: "failed", import_errors: "Line 2: Dob is invalid", records_imported: 0, file_type: "csv" })
      expect(latest!.filename).toMatch(new RegExp(`^MIF_\\d{8}_${latest!.id}\\.csv$`))
      const ids = listed.mif_files.map((f) => f.id)
      expect(ids).toEqual([...ids].sort((a, b) => b - a))
      const expiresOf = (url: string | null) => Number(new URL(url!).searchParams.get("expires"))
      const now = yield* TestClock.currentTimeMillis
      expect(expiresOf(latest!.file_url)).toBe(Math.ceil((now + 30 * 60 * 1000) / 1000))
      // Each listing signs afresh: 20 minutes later the link again lives 30 minutes.
      yield* TestClock.adjust("20 minutes")
      const later = (yield* mifFiles(token)).mif_files[0]!
      expect(expiresOf(later.file_url)).toBe(Math.ceil((now + 50 * 60 * 1000) / 1000))
      const paged = yield* mifFiles(token, { per_page: 2, page: 2 })
      expect(paged.pagination).toMatchObject({ current_page: 2, per_page: 2 })
      expect(paged.mif_files.map((f) => f.id)).toEqual(ids.slice(2, 4))
    }))

  it.effect("shows a MIF file with its eligibility records in file order; unknown ids are 404", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const { mif_file_id: id } = yield* importedMif(token, { file: dataUri("csv", membersCsv([
        { member_id: "D1", first_name: "Dora", last_name: "Detail", dob: "07-07-1977" },
        { member_id: "D2", first_name: "Dan", last_name: "Detail", dob: "08-08-1988" }
      ])) })
      const shown = yield* request("GET", `/v1/admin/clinic/ecm/mifs/${id}`, { token })
      expect(shown.status).toBe(200)
      // As served: the exact record representation and pagination.
      const body = shown.body as { mif_file: { eligibility_informations: Array<Record<string, unknown>> }; pagination: unknown }
      expect(body.mif_file).toMatchObject({ id, status: "completed", records_imported: 2, import_errors: null })
      expect(body.mif_file.eligibility_informations).toEqual([
        {
          id: expect.any(Number), patient_id: expect.any(Number), patient_name: "Dora Detail", member_id: "D1", cin: "CD1",
          first_name: "Dora", last_name: "Detail", dob: "1977-07-07", ecm_service_auth_id: "AUTH1", ecm_provider_name: "Good Care",
          member_record_status: "new_member", created_at: expect.any(String), updated_at: expect.any(String)
        },
        expect.objectContaining({ member_id: "D2", patient_name: "Dan Detail", dob: "1988-08-08" })
      ])
      expect(body.pagination).toEqual({ current_page: 1, per_page: 1000, total_count: 2, total_pages: 1 })
      const second = yield* (yield* clientAs(token)).ecmMifs.show({ path: { id }, urlParams: { per_page: 1, page: 2 } })
      expect(second.mif_file.eligibility_informations.map((e) => e.member_id)).toEqual(["D2"])
      const missing = yield* request("GET", "/v1/admin/clinic/ecm/mifs/999999", { token })
      expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { errors: ["MIF file not found"] } })
    }))
})

describe("without MIF_IMPORT_DIR", () => {
  layer(TestApp())("path imports", (it) => {
    it.effect("are refused with a clear 422", () =>
      Effect.gen(function*() {
        const token = yield* signIn()
        const response = yield* importMif(token, { path: "members.csv" })
        expect({ status: response.status, body: response.body }).toEqual({
          status: 422,
          body: { errors: ["Path imports are not enabled on this server (MIF_IMPORT_DIR is not set)"] }
        })
      }))
  })
})
