/** RTF and OTF reports: decode, take the caller, call `ExchangeReports` for the group's file. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ExchangeReports, exchangeReportsPageSize } from "../../../Services/EcmExchange/ExchangeReports.js"

export const HttpEcmRtfReportsLive = HttpApiBuilder.group(Api, "ecmRtfReports", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* ExchangeReports
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reports.create("rtf", caller.id, payload), (report) => ({ report }))))
      .handle("list", ({ urlParams }) => reports.list("rtf", pageRequest(urlParams, exchangeReportsPageSize)))
      .handle("show", ({ path }) => Effect.map(reports.show("rtf", path.id), (report) => ({ report })))
  }))

export const HttpEcmOtfReportsLive = HttpApiBuilder.group(Api, "ecmOtfReports", (handlers) =>
  Effect.gen(function*() {
    const reports = yield* ExchangeReports
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reports.create("otf", caller.id, payload), (report) => ({ report }))))
      .handle("list", ({ urlParams }) => reports.list("otf", pageRequest(urlParams, exchangeReportsPageSize)))
      .handle("show", ({ path }) => Effect.map(reports.show("otf", path.id), (report) => ({ report })))
  }))
