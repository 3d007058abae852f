/** MIF files as §2.6 shows them: list (newest first) and detail with eligibility records. */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { ecmNotFound } from "../../Api/Errors.js"
import { EligibilityRecord, MifFile, MifFileDetail, MifFileList, MifFileResponse } from "../../Api/Ecm/Mifs.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import type { MifFileType, MifSourceType, MifStatus } from "../../Domain/Ecm/Mif.js"
import { ObjectStore } from "../ObjectStore.js"

/** §8: MIF list default page size. */
export const mifFilesPageSize = 25

/** §8: signed download links live 30 minutes. */
export const fileUrlLifetime = "30 minutes"

interface MifFileRow {
  readonly id: number
  readonly filename: string
  readonly file_type: MifFileType
  readonly source_type: MifSourceType
  readonly object_key: string | null
  readonly records_imported: number
  readonly import_errors: string | null
  readonly status: MifStatus
  readonly created_at: Date
  readonly updated_at: Date
}

interface EligibilityRow {
  readonly id: number
  readonly patient_id: number
  readonly patient_first_name: string
  readonly patient_last_name: string
  readonly member_id: string | null
  readonly cin: string | null
  readonly first_name: string
  readonly last_name: string
  readonly dob: string
  readonly ecm_service_auth_id: string | null
  readonly ecm_provider_name: string | null
  readonly member_record_status: string
  readonly created_at: Date
  readonly updated_at: Date
}

const columns = `id, filename, file_type, source_type, object_key, records_imported, import_errors, status, created_at, updated_at`

export class MifFiles extends Effect.Service<MifFiles>()("app/MifFiles", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* ObjectStore

    const fieldsOf = (row: MifFileRow) =>
      Effect.map(
        row.object_key === null ? Effect.succeed(null) : store.signedUrl(row.object_key, fileUrlLifetime),
        (fileUrl) => ({
          id: row.id,
          filename: row.filename,
          file_type: row.file_type,
          source_type: row.source_type,
          records_imported: row.records_imported,
          import_errors: row.import_errors,
          status: row.status,
          created_at: row.created_at,
          updated_at: row.updated_at,
          file_url: fileUrl
        })
      )

    const list = (request: PageRequest) =>
      Effect.gen(function*() {
        const rows = yield* sql<MifFileRow>`SELECT ${sql.literal(columns)} FROM mif_files
          ORDER BY created_at DESC, id DESC LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM mif_files`
        const files = yield* Effect.forEach(rows, (row) => Effect.map(fieldsOf(row), (f) => MifFile.make(f, true)))
        return MifFileList.make({ mif_files: files, pagination: paginationOf(request, counted?.count ?? 0) }, true)
      }).pipe(Effect.orDie, Effect.withSpan("MifFiles.list"))

    const show = (id: number, request: PageRequest) =>
      Effect.gen(function*() {
        const row = Option.fromNullable((yield* sql<MifFileRow>`SELECT ${sql.literal(columns)} FROM mif_files WHERE id = ${id}`.pipe(Effect.orDie))[0])
        if (Option.isNone(row)) return yield* Effect.fail(ecmNotFound("MIF file"))
        const records = yield* sql<EligibilityRow>`SELECT e.id, e.patient_id, p.first_name AS patient_first_name,
            p.last_name AS patient_last_name, e.member_id, e.cin, e.first_name, e.last_name,
            to_char(e.date_of_birth, 'YYYY-MM-DD') AS dob, e.ecm_service_auth_id, e.ecm_provider_name,
            e.member_record_status, e.created_at, e.updated_at
          FROM ecm_eligibility_informations e JOIN patients p ON p.id = e.patient_id
          WHERE e.mif_file_id = ${id} ORDER BY e.line, e.id LIMIT ${request.perPage} OFFSET ${request.offset}`.pipe(Effect.orDie)
        const fields = yield* fieldsOf(row.value)
        const detail = MifFileDetail.make({
          ...fields,
          eligibility_informations: records.map((r) =>
            EligibilityRecord.make({
              id: r.id,
              patient_id: r.patient_id,
              patient_name: `${r.patient_first_name} ${r.patient_last_name}`,
              member_id: r.member_id,
              cin: r.cin,
              first_name: r.first_name,
              last_name: r.last_name,
              dob: r.dob,
              ecm_service_auth_id: r.ecm_service_auth_id,
              ecm_provider_name: r.ecm_provider_name,
              member_record_status: r.member_record_status,
              created_at: r.created_at,
              updated_at: r.updated_at
            }, true))
        }, true)
        // Every record of a completed import is in the file's eligibility list.
        return MifFileResponse.make({ mif_file: detail, pagination: paginationOf(request, row.value.records_imported) }, true)
      }).pipe(Effect.withSpan("MifFiles.show", { attributes: { "mif_file.id": id } }))

    return { list, show } as const
  })
}) {}
