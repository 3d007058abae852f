/** MIF files as §2.6 shows them: list (newest first) and detail with eligibility records. */
import { Effect, Option } from "effect"
import { ecmNotFound } from "../../Api/Errors.js"
import { EligibilityRecord, MifFile, MifFileDetail, MifFileList, MifFileResponse } from "../../Api/Ecm/Mifs.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { ObjectStore } from "../ObjectStore.js"
import { type MifFileRow, MifFilesRepo } from "./MifFilesRepo.js"

/** §8: MIF list default page size. */
export const mifFilesPageSize = 25

/** §8: signed download links live 30 minutes. */
export const fileUrlLifetime = "30 minutes"

export class MifFiles extends Effect.Service<MifFiles>()("app/MifFiles", {
  effect: Effect.gen(function*() {
    const repo = yield* MifFilesRepo
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

    const list = Effect.fn("MifFiles.list")(function*(request: PageRequest) {
      const { pagination, rows } = yield* repo.page(request)
      const files = yield* Effect.forEach(rows, (row) => Effect.map(fieldsOf(row), (f) => MifFile.make(f, true)))
      return MifFileList.make({ mif_files: files, pagination }, true)
    })

    const show = Effect.fn("MifFiles.show")(function*(id: number, request: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "mif_file.id": id })
      const row = yield* repo.find(id)
      if (Option.isNone(row)) return yield* Effect.fail(ecmNotFound("MIF file"))
      const records = yield* repo.eligibility(id, request)
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
    })

    return { list, show } as const
  }),
  dependencies: [MifFilesRepo.Default]
}) {}
