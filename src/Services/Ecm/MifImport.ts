/**
 * The MIF import (ECM §4.6). The file is obtained (./MifSources.ts), recorded as a `mif_files` row
 * (pending), stored through `ObjectStore` (processing), then imported in ONE transaction:
 *
 * 1. records are read in batches (./MifParsers.ts), checked (Domain/Ecm/Mif.ts) and copied into a
 *    temporary staging table with one `COPY … FROM STDIN` per batch — never a statement per row;
 * 2. matching, creating and updating patients, eligibility records, status history and case loads
 *    are a fixed handful of set-based statements over the staging table (./MifStagingRepo.ts).
 *
 * Any invalid record, ambiguous match or malformed file fails the transaction, so nothing of the
 * import remains but the `mif_files` row, marked `failed` with its `import_errors`. Imports are
 * serialised by a transaction-level advisory lock: matching reads patients and then writes them.
 * Each row names the instance running it (`owner_instance`): should that instance die mid-way,
 * PostgreSQL rolls its transaction back and another instance fails the row (`failAbandonedImports`).
 */
import { DateTime, Effect, Option } from "effect"
import { ecmInvalid, type EcmValidationFailed } from "../../Api/Errors.js"
import { checkRecord, contentTypes, type MifFileType } from "../../Domain/Ecm/Mif.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { AuditLog } from "../AuditLog.js"
import { AppConfig } from "../AppConfig.js"
import { ObjectStore } from "../ObjectStore.js"
import { Instance } from "../Instance.js"
import { makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { failAbandonedMifFiles, MifFilesRepo } from "./MifFilesRepo.js"
import { MalformedFile, readMif } from "./MifParsers.js"
import { type MifInput, obtainMifFile } from "./MifSources.js"
import { type AmbiguousMatch, type ContestedMatch, MifStagingRepo, stagingLine } from "./MifStagingRepo.js"
import { HealthPlansRepo } from "../EcmExchange/HealthPlansRepo.js"

/**
 * Bytes of staging lines copied per COPY statement (~2,500 records of a typical file). Under 1 MB
 * so pg's copy of it stays small; large enough that the round trips do not count.
 */
export const stageBufferBytes = 512 * 1024

/** Most problems one failed import reports (and keeps in import_errors). */
export const maxReportedProblems = 100

/** An import that stopped part-way (a defect, a client gone, a crash): its transaction rolled back. */
export const interruptedImportError = "The import stopped unexpectedly; nothing of it was kept"

/**
 * Fails the unfinished imports of instances that are gone (./Recovery.ts); how many. A row
 * without an owner (written before owners were recorded) counts once untouched for the stale time.
 */
export const failAbandonedImports = (staleAfterSeconds: number) =>
  failAbandonedMifFiles(staleAfterSeconds, interruptedImportError)

export interface ImportResult {
  readonly mifFileId: number
  readonly importedCount: number
}

/** Why an import failed: its messages, and the MIF file row kept as `failed` (when one was made). */
class ImportFailed {
  readonly _tag = "ImportFailed"
  constructor(readonly problems: ReadonlyArray<string>) {}
}

/** Numbers the fast path of `checkRecord` cannot read go through the shared phone rule. */
const phoneFallback = (text: string): string | undefined => Option.getOrUndefined(normalizePhone(text))

const capped = (problems: ReadonlyArray<string>, total: number): Array<string> =>
  total > problems.length ? [...problems, `… and ${total - problems.length} more problems`] : [...problems]

/** What a record that cannot be matched with certainty reports (the statements find them: ./MifStagingRepo.ts). */
const ambiguityProblems = (ambiguous: ReadonlyArray<AmbiguousMatch>, contested: ReadonlyArray<ContestedMatch>) => [
  ...ambiguous.map((r) =>
    `Line ${r.line}: matches ${r.matches} patients with the same name and date of birth; add MEMBER_ID to say which`),
  ...contested.map((r) =>
    `Line ${r.line}: matches by name and date of birth a patient that other records of this file, with other member ids, also match; check MEMBER_ID`)
]

const filenameOf = (id: number, fileType: MifFileType, now: Date) =>
  `MIF_${now.toISOString().slice(0, 10).replace(/-/g, "")}_${id}.${fileType}`

export class MifImport extends Effect.Service<MifImport>()("app/MifImport", {
  effect: Effect.gen(function*() {
    const files = yield* MifFilesRepo
    const staging = yield* MifStagingRepo
    const transaction = yield* makeTransaction
    const store = yield* ObjectStore
    const audit = yield* AuditLog
    const instance = yield* Instance
    const plans = yield* HealthPlansRepo

    /**
     * Reads, checks and stages every record; fails with every problem found (capped). Each checked
     * record is written at once as a staging line into one reused buffer, which is copied into the
     * staging table whenever it is nearly full: one batch at a time, no per-record objects kept.
     */
    const stageRecords = Effect.fn("MifImport.stage")(function*(fileType: MifFileType, bytes: Uint8Array) {
      const batches = readMif(fileType, bytes, (yield* AppConfig).mif.maxFileBytes)
      const problems: Array<string> = []
      let problemCount = 0
      let staged = 0
      const buffer = Buffer.allocUnsafe(stageBufferBytes)
      let used = 0
      let pendingRecords = 0
      const flush = Effect.suspend(() => {
        const lines = buffer.subarray(0, used)
        const records = pendingRecords
        used = 0
        pendingRecords = 0
        staged += records
        // The buffer is reused only once this COPY has completed (the caller waits for it).
        return records === 0 ? Effect.void : staging.stage(lines, records)
      })
      while (true) {
        const next = yield* Effect.tryPromise({ try: () => batches.next(), catch: (error) => error }).pipe(
          Effect.catchAll((error) =>
            error instanceof MalformedFile ? Effect.fail(new ImportFailed([error.message])) : Effect.die(error))
        )
        if (next.done) break
        for (const raw of next.value) {
          const checked = checkRecord(raw, phoneFallback)
          if (checked._tag === "Invalid") {
            problemCount += checked.problems.length
            for (const p of checked.problems) if (problems.length < maxReportedProblems) problems.push(p)
            continue
          }
          // Once a record is bad nothing will be written: keep reading only to report the rest.
          if (problemCount > 0) continue
          const line = stagingLine(checked.record)
          // Three bytes per UTF-16 unit at most: the line always fits after a flush.
          if (used + line.length * 3 > buffer.length) yield* flush
          used += buffer.write(line, used)
          pendingRecords++
        }
      }
      if (problemCount > 0) return yield* Effect.fail(new ImportFailed(capped(problems, problemCount)))
      yield* flush
      if (staged === 0) return yield* Effect.fail(new ImportFailed(["The file has no member records"]))
      return staged
    })

    /** The whole import of one file, in the caller's transaction. */
    const importRecords = (mifFileId: number, actorId: number, fileType: MifFileType, bytes: Uint8Array, planId: number | null) =>
      Effect.gen(function*() {
        yield* staging.begin
        const count = yield* stageRecords(fileType, bytes)
        const at = yield* now
        const { ambiguous, contested } = yield* staging.matchPatients
        const problems = ambiguityProblems(ambiguous, contested)
        if (problems.length > 0) return yield* Effect.fail(new ImportFailed(problems.slice(0, maxReportedProblems)))
        yield* staging.writeAll({ mifFileId, actorId, now: at, today: DateTime.formatIsoDateUtc(DateTime.unsafeMake(at)) })
        // The plan named, else the one plan that lists the records' NPIs (docs/ecm-exchange.md).
        const plan = planId ?? Option.getOrNull(yield* plans.defaultForFile(mifFileId))
        yield* files.complete(mifFileId, count, plan, at)
        return count
      }).pipe(
        Effect.catchTag("MemberIdTaken", () =>
          Effect.fail(new ImportFailed(["A patient with one of this file's member ids was created during the import; import the file again"]))),
        transaction
      )

    const setStatus = (id: number, status: "processing" | "failed", fields: { objectKey?: string; errors?: string }) =>
      Effect.flatMap(now, (at) => files.setStatus(id, status, fields, at))

    /**
     * Imports the file `input` names for `actorId`. Source refusals (no source, bad base64, a
     * refused URL or path, unknown type) fail before any row exists; a file that was read but not
     * imported leaves its row `failed`.
     */
    const run: (actorId: number, input: MifInput) => Effect.Effect<ImportResult, EcmValidationFailed, AppConfig> =
      Effect.fn("MifImport.run")(function*(actorId: number, input: MifInput) {
        yield* Effect.annotateCurrentSpan({ "user.id": actorId })
        const planId = input.health_plan_id ?? null
        if (planId !== null && Option.isNone(yield* plans.find(planId))) return yield* Effect.fail(ecmInvalid(["Health plan must exist"]))
        const file = yield* obtainMifFile(input)
        const at = yield* now
        const id = yield* files.insertPending({
          fileType: file.fileType,
          sourceType: file.sourceType,
          byteSize: file.bytes.byteLength,
          ownerInstance: instance.id,
          createdById: actorId,
          at
        })
        const filename = filenameOf(id, file.fileType, at)
        const objectKey = `mif-files/${id}/${filename}`
        yield* files.setFilename(id, filename)
        // Nothing of an import whose file could not be stored remains (the store may be unreachable: 503).
        yield* store.put(objectKey, file.bytes, contentTypes[file.fileType]).pipe(
          Effect.onError(() => files.remove(id))
        )
        yield* setStatus(id, "processing", { objectKey })
        yield* Effect.annotateCurrentSpan({ "mif_file.id": id })
        const outcome = yield* Effect.either(importRecords(id, actorId, file.fileType, file.bytes, planId)).pipe(
          // A defect or an interruption (the client went away): the transaction rolled back.
          Effect.onError(() => setStatus(id, "failed", { errors: interruptedImportError }))
        )
        if (outcome._tag === "Left") {
          const problems = outcome.left.problems
          yield* setStatus(id, "failed", { errors: problems.join("\n") })
          yield* audit.record({ actorId, action: "mif.import_failed", targetType: "mif_file", targetId: id })
          return yield* Effect.fail(ecmInvalid(problems))
        }
        yield* audit.record({ actorId, action: "mif.import", targetType: "mif_file", targetId: id })
        yield* Effect.annotateCurrentSpan({ "mif.records": outcome.right })
        yield* Effect.logInfo("MIF imported").pipe(Effect.annotateLogs({ mif_file_id: id, records: outcome.right }))
        return { mifFileId: id, importedCount: outcome.right }
      })

    return { run } as const
  }),
  dependencies: [MifFilesRepo.Default, MifStagingRepo.Default, HealthPlansRepo.Default]
}) {}
