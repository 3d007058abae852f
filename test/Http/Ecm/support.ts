/** Shared by the ECM handler tests: data URIs, imports, and reading what an import wrote. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MifImportRequest } from "../../../src/Api/Ecm/Mifs.js"
import { dataUriPrefixes, type MifFileType } from "../../../src/Domain/Ecm/Mif.js"
import { clientAs, request } from "../../support/app.js"

export const dataUri = (fileType: MifFileType, content: string | Uint8Array) =>
  dataUriPrefixes[fileType] + Buffer.from(content).toString("base64")

export const csvOf = (rows: ReadonlyArray<ReadonlyArray<string>>, separator = ",") =>
  rows.map((r) => r.join(separator)).join("\n") + "\n"

export const header = ["MEMBER_ID", "CIN", "FIRST_NAME", "LAST_NAME", "DOB", "GENDER", "ADDRESS", "CITY", "STATE", "ZIP",
  "PHONE", "ECM_SERVICE_AUTH_ID", "ECM_PROVIDER_NAME", "ECM_NPI", "ECM_BENEFIT_AUTH_EFF_DATE", "ECM_BENEFIT_AUTH_END_DATE",
  "ACUITY_LEVEL"]

export interface Member {
  readonly member_id?: string
  readonly first_name: string
  readonly last_name: string
  readonly dob: string
  readonly zip?: string
  readonly phone?: string
  readonly npi?: string
  readonly provider?: string
  readonly city?: string
}

export const memberRow = (m: Member): Array<string> => [
  m.member_id ?? "", m.member_id === undefined ? "" : `C${m.member_id}`, m.first_name, m.last_name, m.dob, "F",
  "1 Main St", m.city ?? "Oakland", "CA", m.zip ?? "94612", m.phone ?? "(510) 555-0100", "AUTH1",
  m.provider ?? "Good Care", m.npi ?? "1234567893", "01-01-2026", "12-31-2026", "High"
]

export const membersCsv = (members: ReadonlyArray<Member>) => csvOf([header, ...members.map(memberRow)])

export const importMif = (token: string, mif: Record<string, unknown>) =>
  request("POST", "/v1/admin/clinic/ecm/mifs", { token, body: { mif } })

/** An import that must succeed, through the typed client: the decoded answer (count and MIF file id). */
export const importedMif = (token: string, mif: MifImportRequest["mif"]) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmMifs.import({ payload: { mif } }))

/** The MIF files list through the typed client: the decoded page, newest first. */
export const mifFiles = (token: string, urlParams: { readonly page?: number; readonly per_page?: number } = {}) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmMifs.list({ urlParams }))

export const query = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params)).pipe(Effect.orDie)

/** Row counts of every table an import writes. */
export const counts = query<{ patients: number; eligibility: number; histories: number; case_loads: number }>(
  `SELECT (SELECT count(*)::int FROM patients) AS patients,
    (SELECT count(*)::int FROM ecm_eligibility_informations) AS eligibility,
    (SELECT count(*)::int FROM ecm_status_histories) AS histories,
    (SELECT count(*)::int FROM case_loads) AS case_loads`
).pipe(Effect.map((rows) => rows[0]!))
