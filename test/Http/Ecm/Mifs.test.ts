import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { request, signIn, TestApp } from "../../support/app.js"
import { counts, dataUri, importMif, membersCsv, query } from "./support.js"

layer(TestApp())("MIF imports", (it) => {
  it.effect("imports a CSV file", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const csv = membersCsv([
        { member_id: "M1", first_name: "Ana", last_name: "Lopez", dob: "02-03-1990" },
        { first_name: "Ben", last_name: "Kim", dob: "12-31-1985", zip: "00123" }
      ])
      const response = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(response.body).toEqual({ message: "MIF file imported: 2 records", imported_count: 2, mif_file_id: expect.any(Number) })
      expect(response.status).toBe(200)
      expect(yield* counts).toEqual({ patients: 2, eligibility: 2, histories: 2, case_loads: 2 })
      const list = yield* request("GET", "/v1/admin/clinic/ecm/mifs", { token })
      console.log(JSON.stringify(list.body))
      const detail = yield* request("GET", `/v1/admin/clinic/ecm/mifs/${(response.body as any).mif_file_id}`, { token })
      console.log(JSON.stringify(detail.body))
      const patients = yield* request("GET", `/v1/admin/clinic/ecm/patients`, { token })
      console.log(JSON.stringify(patients.body))
      const p = yield* request("GET", `/v1/admin/clinic/ecm/patients/${(patients.body as any).patients[0].id}`, { token })
      console.log(JSON.stringify(p.body))
      const again = yield* importMif(token, { file: dataUri("csv", csv) })
      expect(again.status).toBe(200)
      expect(yield* counts).toEqual({ patients: 2, eligibility: 4, histories: 2, case_loads: 2 })
    }))
})
