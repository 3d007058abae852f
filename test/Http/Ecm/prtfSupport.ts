/** Shared by the PRTF and engagement status tests: members built row by row, events, reports, downloads. */
import { Effect, Option } from "effect"
import Papa from "papaparse"
import type { GeneratePrtfRequest } from "../../../src/Api/Ecm/PrtfReports.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { clientAs } from "../../support/app.js"

/** Members, status entries and events come from the fixtures module, under the names these tests use. */
export { insertEcmMember as insertMember, insertEvent, insertStatus, type MemberSpec } from "../../support/fixtures.js"

/** The stored file a signed `memory://` link points at, as text. */
export const download = (url: string) =>
  Effect.gen(function*() {
    const memory = yield* MemoryObjectStore
    const key = url.replace(/^memory:\/\//, "").replace(/\?.*$/, "")
    const found = (yield* memory.objects).get(key)
    return Option.getOrThrow(Option.fromNullable(found))
  })

export const csvText = (url: string) => Effect.map(download(url), (o) => new TextDecoder("utf-8", { fatal: true }).decode(o.body))

/** Parsed rows (header first) of a CSV text. */
export const parseCsv = (text: string) => Papa.parse<Array<string>>(text, { skipEmptyLines: true, delimiter: ",", newline: "\r\n" }).data

export const expiresOf = (url: string) => Number(new URL(url).searchParams.get("expires"))

/** A PRTF report generated through the typed client (a 201): the decoded answer, its signed `url` included. */
export const generateReport = (token: string, body: GeneratePrtfRequest) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmPrtfReports.generate({ payload: body }))
