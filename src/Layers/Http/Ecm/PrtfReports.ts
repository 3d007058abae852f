/** PRTF reports (ECM §4.7): decode, take the caller, call `PrtfReports`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { PrtfReports, prtfReportsPageSize } from "../../../Services/Ecm/PrtfReports.js"

export const HttpEcmPrtfReportsLive = HttpApiBuilder.group(Api, "ecmPrtfReports", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* PrtfReports
    return handlers
      .handle("generate", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(reports.generate(caller.id, payload), (report) => ({
            message: `PRTF report generated: ${report.patient_count} member${report.patient_count === 1 ? "" : "s"}`,
            prtf_report: report
          }))))
      .handle("list", ({ urlParams }) => reports.list(pageRequest(urlParams, prtfReportsPageSize)))
      .handle("show", ({ path }) => Effect.map(reports.show(path.id), (report) => ({ prtf_report: report })))
  }))
