/**
 * A patient's documents (general §4.2; upload and delete beyond the spec). The bytes go
 * to the ObjectStore under a key the server chooses; the list hands out signed links valid 30
 * minutes. Content types are allow-listed and, for PDFs and images, checked against the bytes.
 */
import { Duration, Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { invalidField, notFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { DocumentList, type UploadDocumentRequest } from "../../Api/Patients/Documents.js"
import { documentContentTypes, maxDocumentBytes, PatientDocument } from "../../Domain/Patients/Records.js"
import { AuditLog } from "../AuditLog.js"
import { type DataUri, receivedDataUri } from "../DataUri.js"
import { ObjectStore } from "../ObjectStore.js"
import { staffRequired } from "./ClinicPatients.js"
import { Access, canManagePatientRecords, readsClinicalContent, type Viewer } from "../Access/Access.js"
import { type DocumentRow, PatientDocumentsRepo } from "./PatientDocumentsRepo.js"

export const documentUrlLifetime = Duration.minutes(30)

export const documentMessages = {
  dataUri: "must be a base64 data URI (data:<type>;base64,…)",
  contentType: `is not an accepted type (${documentContentTypes.join(", ")})`,
  base64: "is not valid base64",
  tooLarge: `is too large (maximum is ${maxDocumentBytes / 1024 / 1024} MB)`,
  empty: "is empty",
  mismatch: "does not match its declared type",
  clinical: "can only be set by clinical staff"
} as const

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0) => prefix.every((b, i) => bytes[at + i] === b)
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0))

/** Whether the bytes are what the declared type says (a renamed executable is not a PDF). */
export const contentMatches = (contentType: string, bytes: Uint8Array): boolean => {
  switch (contentType) {
    case "application/pdf": return startsWith(bytes, ascii("%PDF-"))
    case "image/png": return startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    case "image/jpeg": return startsWith(bytes, [0xff, 0xd8, 0xff])
    case "image/gif": return startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))
    case "image/webp": return startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)
    default:
      // Text: UTF-8 without NUL.
      try {
        return !new TextDecoder("utf-8", { fatal: true }).decode(bytes).includes("\u0000")
      } catch {
        return false
      }
  }
}

/** The head of a document's data URI: its media type, any parameters, `;base64,`. */
const documentHead = /^data:([a-z0-9.+/-]+)(?:;[a-z0-9=.-]+)*;base64,$/i

/** A data URI (trimmed) → its type and bytes, or the message for `file`. */
export const documentOf = (uri: DataUri): { readonly contentType: string; readonly bytes: Uint8Array } | string => {
  const match = documentHead.exec(uri.head)
  if (match === null) return documentMessages.dataUri
  const contentType = match[1]!.toLowerCase()
  if (!(documentContentTypes as ReadonlyArray<string>).includes(contentType)) return documentMessages.contentType
  if (!uri.base64) return documentMessages.base64
  if (uri.bytes.byteLength > maxDocumentBytes) return documentMessages.tooLarge
  if (uri.bytes.byteLength === 0) return documentMessages.empty
  if (!contentMatches(contentType, uri.bytes)) return documentMessages.mismatch
  return { contentType, bytes: uri.bytes }
}

export class PatientDocuments extends Effect.Service<PatientDocuments>()("app/PatientDocuments", {
  effect: Effect.gen(function*() {
    const documents = yield* PatientDocumentsRepo
    const access = yield* Access
    const audit = yield* AuditLog
    const store = yield* ObjectStore

    const toDocument = (row: DocumentRow) =>
      Effect.map(store.signedUrl(row.object_key, documentUrlLifetime), (url) =>
        PatientDocument.make({
          id: row.id,
          name: row.name,
          content_type: row.content_type,
          size: Number(row.size),
          clinical: row.clinical,
          uploaded_by_id: row.uploaded_by_id,
          created_at: row.created_at,
          url
        }, true))

    const list = Effect.fn("PatientDocuments.list")(function*(viewer: Viewer, patientId: number, request: PageRequest) {
      const patient = yield* access.visiblePatient(viewer, patientId)
      const { pagination, rows } = yield* documents.list(patient, readsClinicalContent(viewer), request)
      const listed = yield* Effect.forEach(rows, toDocument)
      return DocumentList.make({ documents: listed, pagination }, true)
    })

    const upload = Effect.fn("PatientDocuments.upload")(function*(viewer: Viewer, patientId: number, input: UploadDocumentRequest["document"]) {
      const patient = yield* access.visiblePatient(viewer, patientId)
      if (input.clinical === true && !readsClinicalContent(viewer)) return yield* Effect.fail(invalidField("clinical", documentMessages.clinical))
      const clinical = input.clinical ?? readsClinicalContent(viewer)
      const parsed = documentOf(yield* receivedDataUri(input.file))
      if (typeof parsed === "string") return yield* Effect.fail(invalidField("file", parsed))
      const key = `patients/${patient}/documents/${randomBytes(16).toString("hex")}`
      yield* store.put(key, parsed.bytes, parsed.contentType)
      const row = yield* documents.insert({
        patientId: patient,
        name: input.name.trim(),
        contentType: parsed.contentType,
        size: parsed.bytes.byteLength,
        clinical,
        objectKey: key,
        uploadedById: viewer.id
      }).pipe(
        // The row is what makes the file reachable: without it, the bytes go too.
        Effect.tapErrorCause(() => store.delete(key))
      )
      yield* audit.record({ actorId: viewer.id, action: "patient_document.create", targetType: "patient_document", targetId: row.id })
      yield* Effect.annotateCurrentSpan({ "document.bytes": parsed.bytes.byteLength })
      return yield* toDocument(row)
    })

    const remove = Effect.fn("PatientDocuments.delete")(function*(viewer: Viewer, patientId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "document.id": id })
      const patient = yield* access.visiblePatient(viewer, patientId)
      if (!canManagePatientRecords(viewer)) return yield* Effect.fail(staffRequired())
      const row = yield* documents.delete(id, patient, readsClinicalContent(viewer))
      if (Option.isNone(row)) return yield* Effect.fail(notFound("Document"))
      yield* store.delete(row.value.object_key)
      yield* audit.record({ actorId: viewer.id, action: "patient_document.delete", targetType: "patient_document", targetId: id })
    })

    return { list, upload, remove } as const
  }),
  dependencies: [Access.Default, AuditLog.Default, PatientDocumentsRepo.Default]
}) {}
