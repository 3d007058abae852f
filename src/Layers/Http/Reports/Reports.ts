/** Admin reports (general §4.13): decode, take the caller, call the report services. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Reports } from "../../../Services/Reports/Reports.js"
import { WeeklyMetricsReport } from "../../../Services/Reports/WeeklyMetricsReport.js"

export const HttpReportsLive = HttpApiBuilder.group(Api, "reports", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* Reports
    const metrics = yield* WeeklyMetricsReport
    const asCaller = <A, E, R>(f: (actorId: number) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentUser, (caller) => f(caller.id))
    return handlers
      .handle("weeklyMetrics", ({ urlParams }) =>
        metrics.compute({
          weekStart: urlParams.week_start,
          weekEnd: urlParams.week_end,
          providerId: urlParams.provider_id,
          department: urlParams.department
        }))
      .handle("followUpSchedules", ({ payload }) => asCaller((id) => reports.followUpSchedules(id, payload.report_params)))
      .handle("appointmentsWithRates", ({ payload }) => asCaller((id) => reports.appointmentsWithRates(id, payload.report_params)))
      .handle("status", ({ path }) => reports.status(path.report_id))
      .handleRaw("download", ({ path }) =>
        asCaller((id) => reports.download(id, path.report_id)).pipe(
          Effect.map((url) => HttpServerResponse.redirect(url, { status: 302 }))
        ))
  }))
