/**
 * Every endpoint that takes a file as a base64 data URI reads it as the request body arrives
 * (`DataUriField`): the service finds the field's placeholder among the `ReceivedDataUris`, which
 * its span records (`data_uri.streamed`), and stores the same bytes. A field over its schema's
 * `maxLength` is still refused by the schema, with the schema's message.
 */
import { expect, layer } from "@effect/vitest"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { maxDocumentDataUriLength } from "../../src/Api/Billing/Claims.js"
import { MemoryObjectStore } from "../../src/Layers/MemoryObjectStore.js"
import { tracingWith } from "../../src/Layers/Tracing.js"
import { request, signIn, TestApp } from "../support/app.js"
import { claimsPath, newClaim, setup } from "./Billing/helpers.js"
import { dataUri as mifDataUri, importMif, membersCsv } from "./Ecm/support.js"
import { newPatient } from "./Patients/helpers.js"

const exporter = new InMemorySpanExporter()

const pdf = Buffer.from("%PDF-1.4\n1 0 obj\n<</Type/Catalog>>\nendobj\ntrailer\n<</Root 1 0 R>>\n%%EOF\n")
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const dataUri = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString("base64")}`

/** Whether the last span named `name` read its data URI as the body arrived. */
const streamedIn = (name: string) => {
  const spans = exporter.getFinishedSpans().filter((span) => span.name === name)
  expect(spans.map((span) => span.name), exporter.getFinishedSpans().map((span) => span.name).join(", ")).toContain(name)
  return spans.at(-1)!.attributes["data_uri.streamed"]
}

/** The bytes the memory store holds under the key a signed link names. */
const storedAt = (url: string) =>
  Effect.map(Effect.flatMap(MemoryObjectStore, (store) => store.objects), (objects) =>
    Buffer.from(objects.get(/^memory:\/\/([^?]+)/.exec(url)![1]!)!.body))

const Observability = Layer.mergeAll(tracingWith("test", new SimpleSpanProcessor(exporter)), Logger.minimumLogLevel(LogLevel.Error))

layer(TestApp({}, Observability))("data URI uploads read as the body arrives", (it) => {
  it.effect("a patient document", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const patient = yield* newPatient(token)
      exporter.reset()
      const response = yield* request("POST", `/v1/clinic/patients/${patient}/documents`, {
        token, body: { document: { name: "consent.pdf", file: ` ${dataUri("application/pdf", pdf)}\n` } }
      })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      expect(streamedIn("PatientDocuments.upload")).toBe(true)
      const document = (response.body as { document: { url: string; size: number } }).document
      expect(document.size).toBe(pdf.length)
      expect(yield* storedAt(document.url)).toEqual(pdf)
    }))

  it.effect("a claim document, created and replaced; a file over the schema's maxLength is the schema's 422", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const claimId = (yield* newClaim(token, yield* setup(token))).id
      const base = `${claimsPath}/${claimId}/documents`
      exporter.reset()
      const created = yield* request("POST", base, { token, body: { document: { name: "superbill.pdf", file: dataUri("application/pdf", pdf) } } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      expect(streamedIn("ClaimDocuments.create")).toBe(true)
      const document = (created.body as { document: { id: number; url: string } }).document
      expect(yield* storedAt(document.url)).toEqual(pdf)

      const replaced = yield* request("PUT", `${base}/${document.id}`, { token, body: { document: { file: dataUri("image/png", png) } } })
      expect(replaced.status, JSON.stringify(replaced.body)).toBe(200)
      expect(streamedIn("ClaimDocuments.update")).toBe(true)
      expect(yield* storedAt((replaced.body as { document: { url: string } }).document.url)).toEqual(png)

      const tooLong = "data:application/pdf;base64," + "A".repeat(maxDocumentDataUriLength)
      const refused = yield* request("POST", base, { token, body: { document: { name: " ", file: tooLong } } })
      expect(refused).toMatchObject({
        status: 422,
        body: { errors: { name: ["can't be blank"], file: [`is too long (maximum is ${maxDocumentDataUriLength} characters)`] } }
      })
    }))

  it.effect("a content file", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      exporter.reset()
      const response = yield* request("POST", "/v1/admin/content/files", { token, body: { file: dataUri("application/octet-stream", pdf), filename: "sheet.pdf" } })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      expect(streamedIn("ContentFiles.upload")).toBe(true)
      const key = (response.body as { object_key: string }).object_key
      expect(yield* storedAt(`memory://${key}`)).toEqual(pdf)
    }))

  it.effect("a MIF file", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      exporter.reset()
      const csv = membersCsv([{ member_id: "S1", first_name: "Sam", last_name: "Stream", dob: "02-03-1990" }])
      const response = yield* importMif(token, { file: mifDataUri("csv", csv) })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(streamedIn("MifSources.obtain")).toBe(true)
    }))
})
