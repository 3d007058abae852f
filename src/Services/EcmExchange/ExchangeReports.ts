/**
 * Return Transmission and Outreach Tracker reports (docs/ecm-exchange.md): a request is
 * validated, recorded as `queued` with the plan's profile as it is now, and handed to the job
 * queue in one transaction, audited; list and detail read the row and sign the file's link for 30
 * minutes once it is completed.
 */
import { Effect, Option } from "effect"
import type { CreateExchangeReportRequest } from "../../Api/EcmExchange/ExchangeReports.js"
import { ExchangeReport, ExchangeReportList } from "../../Api/EcmExchange/ExchangeReports.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type FileKind, standardProfile } from "../../Domain/EcmExchange/Files.js"
import { daysBetween } from "../../Domain/Time.js"
import { progressOf } from "../../Domain/Reports/Report.js"
import { AuditLog } from "../AuditLog.js"
import { Jobs } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { exchangeJobKey } from "./ExchangeGenerator.js"
import { ExchangeProfilesRepo } from "./ExchangeProfilesRepo.js"
import { ExchangeReportsRepo, type ProfileSnapshot, type ReportRow } from "./ExchangeReportsRepo.js"
import { exchangeMaxAttempts, generateExchangeTask } from "./ExchangeTasks.js"
import { HealthPlansRepo } from "./HealthPlansRepo.js"

export const exchangeReportsPageSize = 25
/** Signed download links live 30 minutes (as the PRTF's). */
export const exchangeUrlLifetime = "30 minutes"
/** The longest period a file covers (a year, leap day included). */
export const maxPeriodDays = 366


const notFound = () => ecmNotFound("Report")

export class ExchangeReports extends Effect.Service<ExchangeReports>()("app/EcmExchangeReports", {
  dependencies: [ExchangeReportsRepo.Default, ExchangeProfilesRepo.Default, HealthPlansRepo.Default],
  effect: Effect.gen(function*() {
    const reports = yield* ExchangeReportsRepo
    const profiles = yield* ExchangeProfilesRepo
    const plans = yield* HealthPlansRepo
    const transaction = yield* makeTransaction
    const jobs = yield* Jobs
    const audit = yield* AuditLog
    const store = yield* ObjectStore

    const view = (row: ReportRow) =>
      Effect.gen(function*() {
        const file_url = row.status === "completed" && row.object_key !== null
          ? yield* store.signedUrl(row.object_key, exchangeUrlLifetime)
          : null
        return ExchangeReport.make({
          id: row.id,
          health_plan_id: row.health_plan_id,
          health_plan_name: row.health_plan_name,
          start_date: row.start_date,
          end_date: row.end_date,
          status: row.status,
          progress_percentage: progressOf(row.status, row.rows_written, row.rows_total),
          row_count: row.rows_total,
          filename: row.status === "completed" ? row.filename : null,
          file_url,
          failure_reason: row.status === "failed" ? row.failure_reason : null,
          profile: row.profile,
          created_at: row.created_at,
          created_by_id: row.created_by_id,
          generated_at: row.generated_at
        }, true)
      })

    /** The plan's profile of the file as it is now, else the DHCS standard. */
    const profileFor = (healthPlanId: number, kind: FileKind) =>
      Effect.map(profiles.forPlan(healthPlanId, kind), Option.match({
        onNone: (): ProfileSnapshot => standardProfile(kind),
        onSome: (row): ProfileSnapshot => ({
          id: row.id, columns: row.columns, date_format: row.date_format, delimiter: row.delimiter,
          file_format: row.file_format, file_name_pattern: row.file_name_pattern
        })
      }))

    const create = Effect.fn("ExchangeReports.create")(function*(kind: FileKind, actorId: number, body: CreateExchangeReportRequest) {
      yield* Effect.annotateCurrentSpan({ "exchange_report.kind": kind })
      if (body.end_date < body.start_date) return yield* Effect.fail(ecmInvalid(["End date can't be before start date"]))
      if (daysBetween(body.start_date, body.end_date) + 1 > maxPeriodDays) {
        return yield* Effect.fail(ecmInvalid([`The period can't be longer than ${maxPeriodDays} days`]))
      }
      if (Option.isNone(yield* plans.find(body.health_plan_id))) return yield* Effect.fail(ecmInvalid(["Health plan must exist"]))
      const profile = yield* profileFor(body.health_plan_id, kind)
      const at = yield* now
      const id = yield* transaction(Effect.gen(function*() {
        const id = yield* reports.insert({
          kind, healthPlanId: body.health_plan_id, startDate: body.start_date, endDate: body.end_date, profile, createdById: actorId, at
        })
        yield* jobs.enqueue(generateExchangeTask, { report: id }, { maxAttempts: exchangeMaxAttempts, jobKey: exchangeJobKey(id) })
        yield* audit.record({ actorId, action: `${kind}_report.create`, targetType: `${kind}_report`, targetId: id })
        return id
      }))
      yield* Effect.annotateCurrentSpan({ "exchange_report.id": id })
      const row = yield* reports.find(id)
      if (Option.isNone(row)) return yield* Effect.die(new Error("The report just recorded is gone"))
      return yield* view(row.value)
    })

    const list = Effect.fn("ExchangeReports.list")(function*(kind: FileKind, page: PageRequest) {
      const { pagination, rows } = yield* reports.list(kind, page)
      const listed = yield* Effect.forEach(rows, view)
      return ExchangeReportList.make({ reports: listed, pagination }, true)
    })

    const show = Effect.fn("ExchangeReports.show")(function*(kind: FileKind, id: number) {
      yield* Effect.annotateCurrentSpan({ "exchange_report.id": id })
      const row = yield* reports.find(id, kind)
      if (Option.isNone(row)) return yield* Effect.fail(notFound())
      return yield* view(row.value)
    })

    return { create, list, show } as const
  })
}) {}
