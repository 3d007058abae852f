/**
 * Generates report files (the `reports.generate` job) and deletes expired ones (the daily
 * `reports.expire` job). A run claims its report with a compare-and-swap (`queued`, or
 * `generating` left by a crashed run of the same job), and in one snapshot (ReportCursor.ts) counts
 * the rows, reads them in batches from a cursor into a per-job temporary file while recording
 * progress, and reads the totals; then streams the file into the ObjectStore, and only then marks the report completed. Any failure on the way leaves no object,
 * deletes the temporary file and marks the report failed with the stage that failed. A run cut
 * by a crash is run again by the queue once the crashed worker's lock is released (../Recovery.ts);
 * a report whose job has no run left is failed by `failStrandedReports`.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Cause, Data, Effect, Exit, Option } from "effect"
import { randomBytes } from "node:crypto"
import { rm, stat } from "node:fs/promises"
import { contentTypes, fileExtensions, reportLifetimeDays, type ReportFormat } from "../../Domain/Reports/Report.js"
import { AppConfig } from "../AppConfig.js"
import { ObjectStore } from "../ObjectStore.js"
import { privateTempFile } from "../PrivateTemp.js"
import { now } from "../Time.js"
import { heapKeeper } from "./HeapKeeper.js"
import { type RawRows, type ReportSnapshot, withReportSnapshot } from "./ReportCursor.js"
import {
  appointmentsDefinition, decodeCount, decodeRows, followUpDefinition, type ReportDefinition, reportRows, toValues
} from "./ReportRowsRepo.js"
import { type ClaimedRow, failStrandedReports as failStranded, ReportsRepo } from "./ReportsRepo.js"
import { openReportWriter, type ReportFileWriter, type Section } from "./ReportWriters.js"
import { dayMs } from "../../Domain/Time.js"

/** Why a report failed, by stage: no data, no paths, nothing personal. */
export const failureReasons = {
  count: "Counting the report's rows failed",
  write: "Writing the report file failed",
  store: "Storing the report file failed",
  interrupted: "Generating the report stopped unexpectedly on every run"
} as const

/** The report's `reports.generate` job: one per report, found by its key. */
const reportJobKeyPrefix = "report:"
export const reportJobKey = (id: number) => `${reportJobKeyPrefix}${id}`

/**
 * Fails `generating` reports whose job can no longer run (../HeartbeatsRepo.ts `jobCanNoLongerRun`)
 * and which have not moved for the stale time (../Recovery.ts); how many.
 */
export const failStrandedReports = (staleAfterSeconds: number) =>
  failStranded(staleAfterSeconds, reportJobKeyPrefix, failureReasons.interrupted)

class StageFailed extends Data.TaggedError("StageFailed")<{ readonly reason: string }> {}

/** Any failure or defect of `effect` becomes `StageFailed(reason)` (one already named keeps its stage). */
const stage = (reason: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, StageFailed, R> =>
  effect.pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = Cause.failureOption(cause)
      return Effect.fail(Option.isSome(failure) && failure.value instanceof StageFailed ? failure.value : new StageFailed({ reason }))
    })
  )

/** Rows between progress updates: about a hundred updates a report, at least 128 rows apart. */
const progressStep = (total: number) => Math.max(128, Math.ceil(total / 100))

export class ReportGenerator extends Effect.Service<ReportGenerator>()("app/ReportGenerator", {
  dependencies: [ReportsRepo.Default],
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reports = yield* ReportsRepo
    const store = yield* ObjectStore
    const config = yield* AppConfig
    const zone = config.clinicTimeZone

    const claim = (id: number) => Effect.flatMap(now, (at) => reports.claim(id, at))

    const markFailed = (id: number, reason: string) => Effect.flatMap(now, (at) => reports.markFailed(id, reason, at))

    const definitionOf = (row: ClaimedRow, generatedAt: Date): ReportDefinition =>
      row.report_type === "provider_appointments"
        ? appointmentsDefinition(sql, zone, row.parameters, generatedAt)
        : followUpDefinition(sql, zone, row.parameters, generatedAt)

    const recordProgress = (id: number, written: number) => Effect.flatMap(now, (at) => reports.recordProgress(id, written, at))

    /**
     * Reads the rows batch by batch into the file, recording progress each `progressStep` rows
     * (a batch is written in slices at those boundaries, so the recorded count is always in the
     * file); the rows written. The heap is kept from piling up garbage between batches (HeapKeeper.ts).
     */
    const writeRows = (
      id: number,
      snapshot: ReportSnapshot,
      query: Statement.Statement<unknown>,
      decode: (rows: RawRows) => Effect.Effect<RawRows>,
      writer: ReportFileWriter,
      total: number
    ) =>
      Effect.gen(function*() {
        const step = progressStep(total)
        let written = 0
        let reported = 0
        const keepHeap = heapKeeper()
        yield* snapshot.forEachBatch(query, (batch) =>
          Effect.gen(function*() {
            const rows = yield* decode(batch)
            let from = 0
            while (from < rows.length) {
              const to = Math.min(rows.length, from + (reported + step - written))
              yield* Effect.tryPromise(() => writer.write(from === 0 && to === rows.length ? rows : rows.slice(from, to)))
              written += to - from
              from = to
              if (written - reported >= step) {
                reported = written
                yield* recordProgress(id, written)
              }
            }
            keepHeap()
          }))
        return written
      })

    /** The totals sections, read in the snapshot the rows came from. */
    const totalsOf = (snapshot: ReportSnapshot, definition: ReportDefinition) =>
      Effect.forEach(definition.totals, (totals) =>
        Effect.map(Effect.flatMap(snapshot.values(totals.rows), decodeRows("pdf", totals.columns)), (rows): Section => ({
          title: totals.title,
          columns: totals.columns,
          rows: rows.map((row) => toValues(totals.columns, row))
        })))

    /** Writes the report into `file` in one snapshot: counts, rows, totals; the rows written. */
    const writeFile = (id: number, format: ReportFormat, definition: ReportDefinition, file: string) =>
      withReportSnapshot(sql, (snapshot) =>
        Effect.gen(function*() {
          const total = yield* Effect.flatMap(snapshot.values(definition.count), decodeCount).pipe(stage(failureReasons.count))
          yield* reports.recordTotal(id, total).pipe(stage(failureReasons.count))
          const writer = yield* Effect.tryPromise(() => openReportWriter(format, file, definition.layout))
          return yield* Effect.gen(function*() {
            const rows = reportRows(sql, format, { ...definition, columns: definition.layout.columns }, writer.excelStyleIds)
            const decode = decodeRows(format, definition.layout.columns)
            const written = yield* writeRows(id, snapshot, rows, decode, writer, total)
            const sections = yield* totalsOf(snapshot, definition)
            yield* Effect.tryPromise(() => writer.finish(sections))
            return written
          }).pipe(
            Effect.onExit((exit) => (Exit.isFailure(exit) ? Effect.sync(() => writer.abort()) : Effect.void)),
            stage(failureReasons.write)
          )
        }))

    const run = (row: ClaimedRow) =>
      Effect.gen(function*() {
        const generatedAt = yield* now
        const definition = definitionOf(row, generatedAt)
        const extension = fileExtensions[row.format]
        const tempFile = yield* Effect.promise(() => privateTempFile(config.dataDir, `report-${row.id}-${randomBytes(8).toString("hex")}.${extension}`))
        const key = `reports/${row.id}-${randomBytes(8).toString("hex")}/${row.report_type}_${row.parameters.start_date}_${row.parameters.end_date}.${extension}`
        const result = yield* Effect.gen(function*() {
          const written = yield* writeFile(row.id, row.format, definition, tempFile)
          const { size } = yield* Effect.tryPromise(() => stat(tempFile))
          yield* store.putFile(key, tempFile, contentTypes[row.format]).pipe(stage(failureReasons.store))
          return { written, size }
        }).pipe(
          stage(failureReasons.write),
          Effect.ensuring(Effect.promise(() => rm(tempFile, { force: true }))),
          Effect.either
        )
        if (result._tag === "Left") {
          // A store that failed half-way may hold part of the object: nothing of the report is kept.
          yield* store.delete(key).pipe(Effect.catchAllCause(() => Effect.void))
          yield* markFailed(row.id, result.left.reason)
          yield* Effect.annotateCurrentSpan({ "report.failed": true })
          return
        }
        const at = yield* now
        const expiresAt = new Date(at.getTime() + reportLifetimeDays * dayMs)
        const completed = yield* reports.complete({
          id: row.id,
          written: result.right.written,
          objectKey: key,
          byteSize: result.right.size,
          at,
          expiresAt
        })
        // Taken over meanwhile (another run of a retried job): keep no second file.
        if (!completed) yield* store.delete(key)
        yield* Effect.annotateCurrentSpan({ "report.rows": result.right.written, "report.bytes": result.right.size })
      })

    /** The job: generate report `id` unless it is no longer queued (already done, failed or expired). */
    const generate = Effect.fn("ReportGenerator.generate")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "report.id": id })
      const claimed = yield* claim(id)
      if (Option.isSome(claimed)) yield* run(claimed.value)
    })

    /** Deletes the files of reports past their expiry and marks them expired; how many. */
    const expire = Effect.gen(function*() {
      const at = yield* now
      const due = yield* reports.findExpired(at)
      for (const report of due) {
        yield* store.delete(report.object_key)
        yield* reports.markExpired(report.id, at)
      }
      yield* Effect.annotateCurrentSpan({ "reports.expired": due.length })
      return due.length
    }).pipe(Effect.orDie, Effect.withSpan("ReportGenerator.expire"))

    return { generate, expire } as const
  })
}) {}
