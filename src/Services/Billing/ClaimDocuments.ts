/**
 * Claim documents (general §4.6): PDFs and images stored through `ObjectStore`, handed out as
 * signed links valid 30 minutes. The file is stored before its row is written; a failed write
 * leaves an unreachable file, never a row without its file.
 */
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { type CreateClaimDocumentRequest, fileUrlMinutes, type UpdateClaimDocumentRequest } from "../../Api/Billing/Claims.js"
import { invalidField, notFound } from "../../Api/Errors.js"
import { ClaimDocument } from "../../Domain/Billing/Claim.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { ClaimDocumentsRepo, type DocumentRow } from "./ClaimDocumentsRepo.js"
import { ClaimsRepo } from "./ClaimsRepo.js"
import { receivedDataUri } from "../DataUri.js"
import { type DataUriProblem, documentFileOf } from "./DocumentFiles.js"

/** `20 MB`, `1.5 MB`, `512 KB`. */
const sizeText = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`

const problemMessage = (problem: DataUriProblem, maxBytes: number): string => {
  switch (problem) {
    case "format":
      return "must be a base64 data URI (data:<type>;base64,…)"
    case "type":
      return "must be a PDF or an image (application/pdf, image/png, image/jpeg, image/gif, image/webp, image/tiff)"
    case "base64":
      return "is not valid base64"
    case "empty":
      return "can't be blank"
    case "tooLarge":
      return `is too large (maximum is ${sizeText(maxBytes)})`
    case "mismatch":
      return "content does not match its declared type"
  }
}

export class ClaimDocuments extends Effect.Service<ClaimDocuments>()("app/ClaimDocuments", {
  dependencies: [ClaimsRepo.Default, ClaimDocumentsRepo.Default],
  effect: Effect.gen(function*() {
    const claims = yield* ClaimsRepo
    const repo = yield* ClaimDocumentsRepo
    const store = yield* ObjectStore
    const audit = yield* AuditLog
    const maxBytes = (yield* AppConfig).billing.maxDocumentBytes

    const toDocument = (row: DocumentRow) =>
      Effect.map(store.signedUrl(row.object_key, `${fileUrlMinutes} minutes`), (url) =>
        ClaimDocument.make({
          id: row.id,
          claim_id: row.claim_id,
          name: row.name,
          content_type: row.content_type,
          size: row.size,
          kind: row.kind,
          url,
          created_at: row.created_at,
          updated_at: row.updated_at
        }, true))

    const claimExists = (claimId: number) =>
      Effect.flatMap(claims.exists(claimId), (exists) => exists ? Effect.void : Effect.fail(notFound("Claim")))

    const findRow = (claimId: number, id: number) =>
      Effect.gen(function*() {
        yield* claimExists(claimId)
        const row = yield* repo.findOne(claimId, id)
        if (Option.isNone(row)) return yield* Effect.fail(notFound("Document"))
        return row.value
      })

    const readFile = (uri: string) =>
      Effect.gen(function*() {
        const read = documentFileOf(yield* receivedDataUri(uri), maxBytes)
        if ("problem" in read) return yield* Effect.fail(invalidField("file", problemMessage(read.problem, maxBytes)))
        return read
      })

    const list = Effect.fn("ClaimDocuments.list")(function*(claimId: number) {
      yield* Effect.annotateCurrentSpan({ "claim.id": claimId })
      yield* claimExists(claimId)
      const rows = yield* repo.listOf(claimId)
      return { documents: yield* Effect.forEach(rows, toDocument) }
    })

    const show = Effect.fn("ClaimDocuments.show")(function*(claimId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "claim.id": claimId, "document.id": id })
      return yield* toDocument(yield* findRow(claimId, id))
    })

    const newKey = (claimId: number) => `claims/${claimId}/documents/${randomUUID()}`

    const create = Effect.fn("ClaimDocuments.create")(function*(actorId: number, claimId: number, input: CreateClaimDocumentRequest["document"]) {
      yield* Effect.annotateCurrentSpan({ "claim.id": claimId })
      yield* claimExists(claimId)
      const file = yield* readFile(input.file)
      const key = newKey(claimId)
      yield* store.put(key, file.bytes, file.contentType)
      const row = yield* repo.insert({
        claimId, name: input.name.trim(), contentType: file.contentType, size: file.bytes.byteLength, kind: input.kind ?? "other",
        objectKey: key, createdById: actorId
      }).pipe(Effect.tapErrorCause(() => store.delete(key)))
      // A claim deleted meanwhile takes its documents with it (foreign key): the insert fails above.
      yield* audit.record({ actorId, action: "claim_document.create", targetType: "claim", targetId: claimId })
      return yield* toDocument(row)
    })

    const update = Effect.fn("ClaimDocuments.update")(function*(
      actorId: number,
      claimId: number,
      id: number,
      input: UpdateClaimDocumentRequest["document"]
    ) {
      yield* Effect.annotateCurrentSpan({ "claim.id": claimId, "document.id": id })
      const current = yield* findRow(claimId, id)
      const file = input.file === undefined ? undefined : yield* readFile(input.file)
      const key = file === undefined ? current.object_key : newKey(claimId)
      if (file !== undefined) yield* store.put(key, file.bytes, file.contentType)
      const changed = yield* repo.update({
        claimId,
        id,
        name: input.name?.trim() ?? current.name,
        kind: input.kind ?? current.kind,
        contentType: file?.contentType ?? current.content_type,
        size: file?.bytes.byteLength ?? current.size,
        objectKey: key
      })
      if (Option.isNone(changed)) return yield* Effect.fail(notFound("Document"))
      const row = changed.value
      if (file !== undefined) yield* store.delete(current.object_key)
      yield* audit.record({ actorId, action: "claim_document.update", targetType: "claim", targetId: claimId })
      return yield* toDocument(row)
    })

    const remove = Effect.fn("ClaimDocuments.delete")(function*(actorId: number, claimId: number, id: number) {
      yield* Effect.annotateCurrentSpan({ "claim.id": claimId, "document.id": id })
      yield* claimExists(claimId)
      const removed = yield* repo.delete(claimId, id)
      if (Option.isNone(removed)) return yield* Effect.fail(notFound("Document"))
      yield* store.delete(removed.value.object_key)
      yield* audit.record({ actorId, action: "claim_document.delete", targetType: "claim", targetId: claimId })
    })

    return { list, show, create, update, remove } as const
  })
}) {}
