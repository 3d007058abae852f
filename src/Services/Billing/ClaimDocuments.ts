/**
 * Claim documents (general §4.6): PDFs and images stored through `ObjectStore`, handed out as
 * signed links valid 30 minutes. The file is stored before its row is written; a failed write
 * leaves an unreachable file, never a row without its file.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { type CreateClaimDocumentRequest, fileUrlMinutes, type UpdateClaimDocumentRequest } from "../../Api/Billing/Claims.js"
import { invalidField, notFound } from "../../Api/Errors.js"
import { ClaimDocument, type DocumentKind } from "../../Domain/Billing/Claim.js"
import type { ClaimDocumentId, ClaimId } from "../../Domain/Ids.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { ObjectStore } from "../ObjectStore.js"
import { type DataUriProblem, readDocumentDataUri } from "./DocumentFiles.js"

interface DocumentRow {
  readonly id: number
  readonly claim_id: number
  readonly name: string
  readonly content_type: string
  readonly size: number
  readonly kind: DocumentKind
  readonly object_key: string
  readonly created_at: Date
  readonly updated_at: Date
}

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
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ObjectStore
    const audit = yield* AuditLog
    const maxBytes = (yield* AppConfig).billing.maxDocumentBytes

    const toDocument = (row: DocumentRow) =>
      Effect.map(store.signedUrl(row.object_key, `${fileUrlMinutes} minutes`), (url) =>
        ClaimDocument.make({
          id: row.id as ClaimDocumentId,
          claim_id: row.claim_id as ClaimId,
          name: row.name,
          content_type: row.content_type,
          size: row.size,
          kind: row.kind,
          url,
          created_at: row.created_at,
          updated_at: row.updated_at
        }, true))

    const claimExists = (claimId: number) =>
      sql`SELECT 1 FROM claims WHERE id = ${claimId}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(notFound("Claim")) : Effect.void)
      )

    const findRow = (claimId: number, id: number) =>
      Effect.gen(function*() {
        yield* claimExists(claimId)
        const [row] = yield* sql<DocumentRow>`SELECT * FROM claim_documents WHERE id = ${id} AND claim_id = ${claimId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("Document"))
        return row
      })

    const readFile = (uri: string) =>
      Effect.gen(function*() {
        const read = readDocumentDataUri(uri, maxBytes)
        if ("problem" in read) return yield* Effect.fail(invalidField("file", problemMessage(read.problem, maxBytes)))
        return read
      })

    const list = (claimId: number) =>
      Effect.gen(function*() {
        yield* claimExists(claimId)
        const rows = yield* sql<DocumentRow>`SELECT * FROM claim_documents WHERE claim_id = ${claimId} ORDER BY created_at, id`.pipe(Effect.orDie)
        return { documents: yield* Effect.forEach(rows, toDocument) }
      }).pipe(Effect.withSpan("ClaimDocuments.list", { attributes: { "claim.id": claimId } }))

    const show = (claimId: number, id: number) =>
      Effect.flatMap(findRow(claimId, id), toDocument).pipe(Effect.withSpan("ClaimDocuments.show", { attributes: { "claim.id": claimId, "document.id": id } }))

    const newKey = (claimId: number) => `claims/${claimId}/documents/${randomUUID()}`

    const create = (actorId: number, claimId: number, input: CreateClaimDocumentRequest["document"]) =>
      Effect.gen(function*() {
        yield* claimExists(claimId)
        const file = yield* readFile(input.file)
        const key = newKey(claimId)
        yield* store.put(key, file.bytes, file.contentType)
        const [row] = yield* sql<DocumentRow>`INSERT INTO claim_documents (claim_id, name, content_type, size, kind, object_key, created_by_id)
          VALUES (${claimId}, ${input.name.trim()}, ${file.contentType}, ${file.bytes.byteLength}, ${input.kind ?? "other"}, ${key}, ${actorId})
          RETURNING *`.pipe(
          Effect.catchTag("SqlError", (error) => Effect.zipRight(store.delete(key), Effect.die(error)))
        )
        // A claim deleted meanwhile takes its documents with it (foreign key): the insert fails above.
        yield* audit.record({ actorId, action: "claim_document.create", targetType: "claim", targetId: claimId })
        return yield* toDocument(row!)
      }).pipe(Effect.withSpan("ClaimDocuments.create", { attributes: { "claim.id": claimId } }))

    const update = (actorId: number, claimId: number, id: number, input: UpdateClaimDocumentRequest["document"]) =>
      Effect.gen(function*() {
        const current = yield* findRow(claimId, id)
        const file = input.file === undefined ? undefined : yield* readFile(input.file)
        const key = file === undefined ? current.object_key : newKey(claimId)
        if (file !== undefined) yield* store.put(key, file.bytes, file.contentType)
        const [row] = yield* sql<DocumentRow>`UPDATE claim_documents SET
            name = ${input.name?.trim() ?? current.name},
            kind = ${input.kind ?? current.kind},
            content_type = ${file?.contentType ?? current.content_type},
            size = ${file?.bytes.byteLength ?? current.size},
            object_key = ${key},
            updated_at = now()
          WHERE id = ${id} AND claim_id = ${claimId} RETURNING *`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("Document"))
        if (file !== undefined) yield* store.delete(current.object_key)
        yield* audit.record({ actorId, action: "claim_document.update", targetType: "claim", targetId: claimId })
        return yield* toDocument(row)
      }).pipe(Effect.withSpan("ClaimDocuments.update", { attributes: { "claim.id": claimId, "document.id": id } }))

    const remove = (actorId: number, claimId: number, id: number) =>
      Effect.gen(function*() {
        yield* claimExists(claimId)
        const [row] = yield* sql<{ object_key: string }>`DELETE FROM claim_documents WHERE id = ${id} AND claim_id = ${claimId}
          RETURNING object_key`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("Document"))
        yield* store.delete(row.object_key)
        yield* audit.record({ actorId, action: "claim_document.delete", targetType: "claim", targetId: claimId })
      }).pipe(Effect.withSpan("ClaimDocuments.delete", { attributes: { "claim.id": claimId, "document.id": id } }))

    return { list, show, create, update, remove } as const
  })
}) {}
