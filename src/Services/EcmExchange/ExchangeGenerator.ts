/**
 * Generates a return file (the `ecm_exchange.generate` job). A run claims its report (queued, or
 * generating left by a crashed run), reads the records in one snapshot (ExchangeRowsRepo.ts),
 * builds each row with the pure builders and the report's own profile, writes them into a private
 * temporary file while recording progress, stores the file, and only then marks the report
 * completed. Any failure leaves no object, removes the temporary file and marks the report failed.
 */
import { Effect, Stream } from "effect"
import { randomBytes } from "node:crypto"
import { rm, stat } from "node:fs/promises"
import { type Cell, type ExchangeProfile, fileNameOf, projectRow } from "../../Domain/EcmExchange/Files.js"
import { type FileHeader, otfCells, rtfCells } from "../../Domain/EcmExchange/Rows.js"
import { AppConfig } from "../AppConfig.js"
import { ObjectStore } from "../ObjectStore.js"
import { privateTempFile } from "../PrivateTemp.js"
import { now } from "../Time.js"
import { contentTypeOf, openFileWriter } from "./ExchangeFileWriter.js"
import { failStrandedReports } from "../Reports/ReportsRepo.js"
import { ExchangeReportsRepo, type ReportRow } from "./ExchangeReportsRepo.js"
import { ExchangeRowsRepo } from "./ExchangeRowsRepo.js"

/** Why a report failed: a stage, nothing personal. */
export const failureReason = "Writing the file failed"
/** Why a report failed when every run of its job was cut short (a crashed instance). */
export const interruptedReason = "Generating the file stopped unexpectedly on every run"

/** The report's job: one per report, found by its key. */
const exchangeJobKeyPrefix = "ecm-exchange:"
export const exchangeJobKey = (id: number) => `${exchangeJobKeyPrefix}${id}`

/**
 * Fails `generating` return files whose job can no longer run (../HeartbeatsRepo.ts
 * `jobCanNoLongerRun`) and which have not moved for the stale time (../Recovery.ts); how many. A
 * job that can still run claims the report again on its next run and starts over.
 */
export const failStrandedExchangeReports = (staleAfterSeconds: number) =>
  failStrandedReports(staleAfterSeconds, exchangeJobKeyPrefix, interruptedReason, "exchange_reports")

/** Rows between progress updates: about a hundred updates a file, at least 500 rows apart. */
const progressStep = (total: number) => Math.max(500, Math.ceil(total / 100))

export class ExchangeGenerator extends Effect.Service<ExchangeGenerator>()("app/EcmExchangeGenerator", {
  dependencies: [ExchangeReportsRepo.Default, ExchangeRowsRepo.Default],
  effect: Effect.gen(function*() {
    const reports = yield* ExchangeReportsRepo
    const records = yield* ExchangeRowsRepo
    const store = yield* ObjectStore
    const config = yield* AppConfig

    /** Writes the report's rows into `path`; how many. */
    const writeFile = (report: ReportRow, header: FileHeader, profile: ExchangeProfile, path: string) =>
      Effect.gen(function*() {
        const writer = yield* Effect.tryPromise(() => openFileWriter(profile, path))
        const criteria = { healthPlanId: report.health_plan_id, startDate: report.start_date, endDate: report.end_date }
        const write = <A>(total: number, batches: Stream.Stream<ReadonlyArray<A>>, cells: (record: A) => Readonly<Record<string, Cell>>) =>
          Effect.gen(function*() {
            yield* reports.recordTotal(report.id, total)
            const step = progressStep(total)
            let written = 0
            let reported = 0
            yield* Stream.runForEach(batches, (batch) =>
              Effect.gen(function*() {
                yield* Effect.tryPromise(() => writer.write(batch.map((record) => projectRow(profile, cells(record)))))
                written += batch.length
                if (written - reported >= step) {
                  reported = written
                  yield* reports.recordProgress(report.id, written, yield* now)
                }
              }))
            return written
          })
        const written = yield* (report.file_kind === "rtf"
          ? records.withRtfRecords(criteria, (total, batches) => write(total, batches, (r) => rtfCells(header, r)))
          : records.withOtfRecords(criteria, (total, batches) => write(total, batches, (r) => otfCells(header, r)))).pipe(
            Effect.onError(() => Effect.sync(() => writer.abort()))
          )
        yield* Effect.tryPromise(() => writer.finish())
        return written
      })

    const run = (report: ReportRow) =>
      Effect.gen(function*() {
        const producedAt = yield* now
        const producedOn = producedAt.toISOString().slice(0, 10)
        const profile: ExchangeProfile = report.profile
        const header: FileHeader = {
          mcpId: report.mcp_id,
          mcpName: report.health_plan_name,
          providerTin: report.provider_tin,
          providerType: report.provider_type,
          startDate: report.start_date,
          endDate: report.end_date,
          producedOn
        }
        const filename = fileNameOf(profile.file_name_pattern, profile.file_format, {
          mcpId: report.mcp_id, planId: report.health_plan_id, startDate: report.start_date, endDate: report.end_date,
          producedOn, reportId: report.id
        })
        const tempFile = yield* Effect.promise(() => privateTempFile(config.dataDir, `exchange-${report.id}-${randomBytes(8).toString("hex")}`))
        const key = `ecm-exchange/${report.id}-${randomBytes(8).toString("hex")}/${filename}`
        const result = yield* Effect.gen(function*() {
          const written = yield* writeFile(report, header, profile, tempFile)
          const { size } = yield* Effect.tryPromise(() => stat(tempFile))
          yield* store.putFile(key, tempFile, contentTypeOf(profile))
          return { written, size }
        }).pipe(
          Effect.ensuring(Effect.promise(() => rm(tempFile, { force: true }))),
          Effect.catchAllCause(() => Effect.succeed(null))
        )
        if (result === null) {
          yield* store.delete(key).pipe(Effect.catchAllCause(() => Effect.void))
          yield* reports.markFailed(report.id, failureReason, yield* now)
          yield* Effect.annotateCurrentSpan({ "exchange_report.failed": true })
          return
        }
        const completed = yield* reports.complete({
          id: report.id, written: result.written, filename, objectKey: key, byteSize: result.size, at: yield* now
        })
        // Taken over meanwhile (another run of a retried job): keep no second file.
        if (!completed) yield* store.delete(key)
        yield* Effect.annotateCurrentSpan({ "exchange_report.rows": result.written, "exchange_report.bytes": result.size })
      })

    /** The job: generate report `id` unless it is no longer queued (done or failed). */
    const generate = Effect.fn("ExchangeGenerator.generate")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "exchange_report.id": id })
      const claimed = yield* reports.claim(id, yield* now)
      if (!claimed) return
      const found = yield* reports.find(id)
      if (found._tag === "None") return
      yield* run(found.value)
    })

    return { generate } as const
  })
}) {}
