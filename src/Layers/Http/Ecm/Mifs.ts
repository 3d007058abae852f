/** MIF imports (ECM §4.6): decode, take the caller, call `MifImport` / `MifFiles`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { maxEligibilityPerPage } from "../../../Api/Ecm/Mifs.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { MifFiles, mifFilesPageSize } from "../../../Services/Ecm/MifFiles.js"
import { MifImport } from "../../../Services/Ecm/MifImport.js"

export const HttpEcmMifsLive = HttpApiBuilder.group(Api, "ecmMifs", (handlers) =>
  Effect.gen(function*() {
    const importer = yield* MifImport
    const files = yield* MifFiles
    return handlers
      .handle("import", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(importer.run(caller.id, payload.mif), (result) => ({
            message: `MIF file imported: ${result.importedCount} record${result.importedCount === 1 ? "" : "s"}`,
            imported_count: result.importedCount,
            mif_file_id: result.mifFileId
          }))))
      .handle("list", ({ urlParams }) => files.list(pageRequest(urlParams, mifFilesPageSize)))
      .handle("show", ({ path, urlParams }) => files.show(path.id, pageRequest(urlParams, maxEligibilityPerPage, maxEligibilityPerPage)))
  }))
