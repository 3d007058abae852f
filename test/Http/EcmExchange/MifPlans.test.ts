/** Each MIF import names the plan that sent it, or takes the one plan that lists its records' NPIs. */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { clientAs, signIn, TestApp } from "../../support/app.js"
import { dataUri, importMif, membersCsv, query } from "../Ecm/support.js"
import { createPlan } from "./exchangeSupport.js"

const planOf = (mifFileId: number) =>
  Effect.map(query<{ health_plan_id: number | null }>(`SELECT health_plan_id FROM mif_files WHERE id = $1`, mifFileId), (rows) => rows[0]!.health_plan_id)

const file = (memberId: string, npi: string) =>
  dataUri("csv", membersCsv([{ member_id: memberId, first_name: "Mia", last_name: `Plan${memberId}`, dob: "05-06-1970", npi }]))

layer(TestApp())("MIF imports and health plans", (it) => {
  it.effect("the plan named; else the one plan listing the file's NPIs; else none; an unknown plan is refused", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const alpha = yield* createPlan(token, { name: "Alpha", mcp_id: "A", provider_npis: ["1234567893"] })
      const beta = yield* createPlan(token, { name: "Beta", mcp_id: "B", provider_npis: ["1234567901"] })
      yield* createPlan(token, { name: "Gamma", mcp_id: "G", provider_npis: ["1234567901"] })

      const client = yield* clientAs(token)
      const [named, response] = yield* client.ecmMifs.import({ payload: { mif: { file: file("N1", "1234567893"), health_plan_id: beta.id } }, withResponse: true })
      expect(response.status).toBe(200)
      expect(yield* planOf(named.mif_file_id)).toBe(beta.id)

      const byNpi = yield* client.ecmMifs.import({ payload: { mif: { file: file("N2", "1234567893") } } })
      expect(yield* planOf(byNpi.mif_file_id)).toBe(alpha.id)

      // Two plans list the NPI: the file names no plan, and none is guessed.
      const shared = yield* client.ecmMifs.import({ payload: { mif: { file: file("N3", "1234567901") } } })
      expect(yield* planOf(shared.mif_file_id)).toBeNull()

      const before = yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM mif_files`)
      const unknown = yield* importMif(token, { file: file("N4", "1234567893"), health_plan_id: 999999 })
      expect(unknown).toMatchObject({ status: 422, body: { errors: ["Health plan must exist"] } })
      expect(yield* query<{ n: number }>(`SELECT count(*)::int AS n FROM mif_files`)).toEqual(before)
    }))
})
