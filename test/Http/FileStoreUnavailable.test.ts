/**
 * The object store unreachable (S3 down or cut off): an operation that writes a file answers 503
 * with `Retry-After` in its area's shape, saying the file store is unavailable, as a database
 * outage does, and leaves nothing behind.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Option, Redacted, TestClock } from "effect"
import * as fs from "node:fs"
import { backendLayer, httpLayer } from "../../src/Layers/Main.js"
import { MemoryMailer } from "../../src/Layers/MemoryMailer.js"
import { MemoryPush } from "../../src/Layers/MemoryPush.js"
import { MemoryTelephony } from "../../src/Layers/MemoryTelephony.js"
import { S3ObjectStoreLive } from "../../src/Layers/S3ObjectStore.js"
import { dataUri as mifDataUri, query } from "./Ecm/support.js"
import { newPatient, signedIn } from "./Patients/helpers.js"
import { adminToken } from "./Providers/helpers.js"
import { request, testConfig } from "../support/app.js"

/** The app with S3 at a port nothing listens on (port 9, discard: refused on loopback). */
const UnreachableStoreApp = httpLayer(NodeHttpServer.layerTest).pipe(
  Layer.provide(Layer.effectDiscard(TestClock.setTime(Date.now()))),
  Layer.provideMerge(backendLayer),
  Layer.provideMerge(Layer.mergeAll(MemoryTelephony.layer, S3ObjectStoreLive, MemoryMailer.layer, MemoryPush.layer)),
  Layer.provideMerge(testConfig({
    s3: Option.some({
      bucket: "care-files",
      region: "us-east-1",
      endpoint: Option.some("http://127.0.0.1:9"),
      accessKeyId: Option.some("unused"),
      secretAccessKey: Option.some(Redacted.make("unused")),
      forcePathStyle: true
    })
  })),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

const pdf = Buffer.from("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
const unavailable = { status: 503, headers: expect.objectContaining({ "retry-after": "5" }) }

layer(UnreachableStoreApp)("file store unreachable", (it) => {
  it.effect("a content upload (general area): 503 with Retry-After, saying the file store is unavailable", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const uploaded = yield* request("POST", "/v1/admin/content/files", {
        token, body: { file: `data:application/pdf;base64,${pdf.toString("base64")}`, filename: "worksheet.pdf" }
      })
      expect(uploaded).toMatchObject({ ...unavailable, body: { errors: "File store temporarily unavailable" } })
    }))

  it.effect("a patient document: 503, and no document row", () =>
    Effect.gen(function*() {
      // Front desk: every patient's non-clinical documents are theirs to upload, whoever the provider.
      const staff = yield* signedIn("support")
      const patient = yield* newPatient(staff.token)
      const uploaded = yield* request("POST", `/v1/clinic/patients/${patient}/documents`, {
        token: staff.token, body: { document: { name: "Consent", file: `data:application/pdf;base64,${pdf.toString("base64")}` } }
      })
      expect(uploaded).toMatchObject({ ...unavailable, body: { errors: "File store temporarily unavailable" } })
      expect(yield* query<{ count: number }>("SELECT count(*)::int AS count FROM patient_documents")).toEqual([{ count: 0 }])
    }))

  it.effect("a MIF import (ECM area): 503 in the list shape, and no mif_files row or patient", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const xlsx = fs.readFileSync(new URL("../fixtures/mif/members.xlsx", import.meta.url))
      const imported = yield* request("POST", "/v1/admin/clinic/ecm/mifs", { token, body: { mif: { file: mifDataUri("xlsx", xlsx) } } })
      expect(imported).toMatchObject({ ...unavailable, body: { errors: ["File store temporarily unavailable"] } })
      expect(yield* query<{ files: number; patients: number }>(
        "SELECT (SELECT count(*)::int FROM mif_files) AS files, (SELECT count(*)::int FROM ecm_eligibility_informations) AS patients"
      )).toEqual([{ files: 0, patients: 0 }])
    }))
})
