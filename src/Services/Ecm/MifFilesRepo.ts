/**
 * The only SQL on `mif_files` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. A
 * file's row moves pending → processing → completed or failed (./MifImport.ts drives it; the
 * recovery sweep fails the rows of instances that are gone). The file's eligibility records are
 * written by the import's set-based statements (./MifStagingRepo.ts) and read here for its detail.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { MifFileType, MifSourceType, MifStatus } from "../../Domain/Ecm/Mif.js"
import { staleCutoff } from "../HeartbeatsRepo.js"
import { makeListPage } from "../Lists.js"
import { failStale, orDefect, SqlSchema } from "../Repository.js"

const NullText = Schema.NullOr(Schema.String)

/** A `mif_files` row as §2.6 shows it (the byte size, owner and author stay inside). */
export const MifFileRow = Schema.Struct({
  id: Schema.Int,
  filename: Schema.String,
  file_type: MifFileType,
  source_type: MifSourceType,
  object_key: NullText,
  records_imported: Schema.Int,
  import_errors: NullText,
  status: MifStatus,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type MifFileRow = typeof MifFileRow.Type

/** One eligibility record of a file, with its patient's name. */
export const EligibilityRow = Schema.Struct({
  id: Schema.Int,
  patient_id: Schema.Int,
  patient_first_name: Schema.String,
  patient_last_name: Schema.String,
  member_id: NullText,
  cin: NullText,
  first_name: Schema.String,
  last_name: Schema.String,
  dob: Schema.String,
  ecm_service_auth_id: NullText,
  ecm_provider_name: NullText,
  member_record_status: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type EligibilityRow = typeof EligibilityRow.Type

/** A file received, before it is stored: its row starts `pending`, owned by the instance importing it. */
const NewMifFile = Schema.Struct({
  fileType: MifFileType,
  sourceType: MifSourceType,
  byteSize: Schema.Int,
  ownerInstance: Schema.String,
  createdById: Schema.Int,
  at: Schema.DateFromSelf
})
export type NewMifFile = typeof NewMifFile.Type

/** A move to `processing` or `failed`; absent fields keep what the row has. */
const StatusChange = Schema.Struct({
  id: Schema.Int,
  status: Schema.Literal("processing", "failed"),
  objectKey: NullText,
  errors: NullText,
  at: Schema.DateFromSelf
})

const Id = Schema.Struct({ id: Schema.Int })

const columns = `id, filename, file_type, source_type, object_key, records_imported, import_errors, status, created_at, updated_at`

/**
 * Fails the unfinished imports of instances that are gone, with `reason`; how many. A row without
 * an owner (written before owners were recorded) counts once untouched for `staleAfterSeconds`
 * (the database's clock, the one heartbeats are stamped with). Run by the recovery sweep
 * (../Recovery.ts), which has no services.
 */
export const failAbandonedMifFiles = (staleAfterSeconds: number, reason: string) =>
  failStale((sql) => ({
    table: "mif_files",
    set: sql`status = 'failed', import_errors = ${reason}, records_imported = 0`,
    where: sql`r.status IN ('pending', 'processing')
      AND NOT EXISTS (SELECT 1 FROM heartbeats h WHERE h.holder_id = r.owner_instance)
      AND (r.owner_instance IS NOT NULL OR r.updated_at < ${staleCutoff(sql, staleAfterSeconds)})`
  }))

export class MifFilesRepo extends Effect.Service<MifFilesRepo>()("app/MifFilesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const insertPending = SqlSchema.single({
      Request: NewMifFile,
      Result: Id,
      execute: (f) =>
        sql`INSERT INTO mif_files
            (filename, file_type, source_type, byte_size, status, owner_instance, created_by_id, created_at, updated_at)
          VALUES ('', ${f.fileType}, ${f.sourceType}, ${f.byteSize}, 'pending', ${f.ownerInstance}, ${f.createdById}, ${f.at}, ${f.at})
          RETURNING id`
    })

    const setFilename = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, filename: Schema.String }),
      execute: ({ filename, id }) => sql`UPDATE mif_files SET filename = ${filename} WHERE id = ${id}`
    })

    const remove = SqlSchema.void({
      Request: Schema.Int,
      execute: (id) => sql`DELETE FROM mif_files WHERE id = ${id}`
    })

    const setStatus = SqlSchema.void({
      Request: StatusChange,
      execute: (c) =>
        sql`UPDATE mif_files SET status = ${c.status},
          object_key = COALESCE(${c.objectKey}, object_key),
          import_errors = COALESCE(${c.errors}, import_errors),
          records_imported = 0, updated_at = ${c.at} WHERE id = ${c.id}`
    })

    const complete = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, count: Schema.Int, planId: Schema.NullOr(Schema.Int), at: Schema.DateFromSelf }),
      execute: ({ at, count, id, planId }) =>
        sql`UPDATE mif_files SET status = 'completed', records_imported = ${count}, import_errors = NULL,
          health_plan_id = ${planId}, updated_at = ${at} WHERE id = ${id}`
    })

    const find = SqlSchema.findOne({
      Request: Schema.Int,
      Result: MifFileRow,
      execute: (id) => sql`SELECT ${sql.literal(columns)} FROM mif_files WHERE id = ${id}`
    })

    // Not the list kit: the page's count is the file's `records_imported`, read with the file.
    const eligibility = SqlSchema.findAll({
      Request: Schema.Struct({ mifFileId: Schema.Int, limit: Schema.Int, offset: Schema.Int }),
      Result: EligibilityRow,
      execute: ({ limit, mifFileId, offset }) =>
        sql`SELECT e.id, e.patient_id, p.first_name AS patient_first_name,
            p.last_name AS patient_last_name, e.member_id, e.cin, e.first_name, e.last_name,
            to_char(e.date_of_birth, 'YYYY-MM-DD') AS dob, e.ecm_service_auth_id, e.ecm_provider_name,
            e.member_record_status, e.created_at, e.updated_at
          FROM ecm_eligibility_informations e JOIN patients p ON p.id = e.patient_id
          WHERE e.mif_file_id = ${mifFileId} ORDER BY e.line, e.id LIMIT ${limit} OFFSET ${offset}`
    })

    const newestFirst = { created_at: sql`created_at` }

    return {
      /** Records a received file (`pending`, no name yet); its id. */
      insertPending: (file: NewMifFile) => Effect.map(orDefect(insertPending(file)), (row) => row.id),
      setFilename: (id: number, filename: string) => orDefect(setFilename({ id, filename })),
      /** Forgets a file that could not be stored. */
      remove: (id: number) => orDefect(remove(id)),
      /** Moves the file to `processing` or `failed` (no records imported); a field left out keeps its value. */
      setStatus: (id: number, status: "processing" | "failed", fields: { objectKey?: string; errors?: string }, at: Date) =>
        orDefect(setStatus({ id, status, objectKey: fields.objectKey ?? null, errors: fields.errors ?? null, at })),
      /** Marks the file imported with `count` records (in the import's transaction). */
      /** The file imported: its count and its health plan (named, defaulted, or none). */
      complete: (id: number, count: number, planId: number | null, at: Date) => orDefect(complete({ id, count, planId, at })),
      /** The file, if it exists. */
      find: (id: number) => orDefect(find(id)),
      /** A page of files, newest first, with the count of all. */
      page: (request: PageRequest) =>
        listPage({
          select: sql.literal(columns),
          from: sql`mif_files`,
          row: MifFileRow,
          sort: { columns: newestFirst, by: "created_at", dir: "DESC", id: sql`id` }
        }, request),
      /** A page of the file's eligibility records in file order. */
      eligibility: (mifFileId: number, request: PageRequest) =>
        orDefect(eligibility({ mifFileId, limit: request.perPage, offset: request.offset }))
    } as const
  })
}) {}
