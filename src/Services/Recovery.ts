/**
 * Work a crashed process left mid-way, released or resolved by whichever live instance sweeps
 * first (each does at start-up and every HEARTBEAT_SECONDS; every step is idempotent):
 *
 * 1. holders silent for HEARTBEAT_STALE_SECONDS are forgotten (./HeartbeatsRepo.ts);
 * 2. the job locks of worker pools without a heartbeat are released with graphile-worker's own
 *    `force_unlock_workers`: each such job runs again at once if it has runs left (every task
 *    claims its row first, so a rerun resumes or starts over), else it stays failed in the queue.
 *    A lock younger than the stale time is left alone: its pool may not have beaten yet;
 * 3. each area settles its rows: unfinished imports of gone instances are failed, reports, return
 *    files and reminders whose job has no run left are failed (the areas' own statements).
 */
import { Effect } from "effect"
import { AppConfig } from "./AppConfig.js"
import { failAbandonedImports } from "./Ecm/MifImport.js"
import { failStrandedExchangeReports } from "./EcmExchange/ExchangeGenerator.js"
import { forgetGoneHolders, releaseJobsOfGoneWorkers } from "./HeartbeatsRepo.js"
import { failStrandedReports } from "./Reports/ReportGenerator.js"
import { failStrandedReminders } from "./Scheduling/ReminderSender.js"

/** One sweep; what it settled, by kind (counts only). */
export const recoverInterruptedWork = Effect.gen(function*() {
  const { staleAfterSeconds } = (yield* AppConfig).liveness
  const recovered = {
    "recovery.gone_holders": yield* forgetGoneHolders(staleAfterSeconds),
    "recovery.released_pools": yield* releaseJobsOfGoneWorkers(staleAfterSeconds),
    "recovery.failed_imports": yield* failAbandonedImports(staleAfterSeconds),
    "recovery.failed_reports": yield* failStrandedReports(staleAfterSeconds),
    "recovery.failed_exchange_reports": yield* failStrandedExchangeReports(staleAfterSeconds),
    "recovery.failed_reminders": yield* failStrandedReminders(staleAfterSeconds)
  }
  if (Object.values(recovered).some((n) => n > 0)) {
    yield* Effect.logInfo("recovered work of gone instances").pipe(Effect.annotateLogs(recovered))
  }
  return recovered
}).pipe(Effect.withSpan("Recovery.sweep"))
