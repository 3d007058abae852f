/**
 * The only SQL on `ecm_status_histories` and its withdrawals (ARCHITECTURE "Persistence"): rows
 * decoded, SQL errors defects. Writes to one member's history hold the member's engagement lock
 * (`lock`, a transaction-scoped advisory lock), so the history a change is checked against cannot
 * move before the change is written. Whether a patient is an ECM patient (has an eligibility
 * record) is read here until eligibility records have a repository of their own.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { EngagementStatus } from "../../Domain/Ecm/Engagement.js"
import { orDefect, SqlSchema } from "../Repository.js"

const Source = Schema.Literal("mif", "user", "system")
const NullText = Schema.NullOr(Schema.String)

/** An entry as the API shows it; days as `YYYY-MM-DD`. */
export const EntryRow = Schema.Struct({
  id: Schema.Int,
  status: EngagementStatus,
  effective_date: Schema.String,
  source: Source,
  reason: NullText,
  actor_id: Schema.NullOr(Schema.Int),
  created_at: Schema.DateFromSelf,
  replaced_status: NullText,
  replaced_effective_date: NullText
})
export type EntryRow = typeof EntryRow.Type

/** What the placement rules read of an entry (src/Domain/Ecm/Engagement.ts `HistoryEntry`). */
export const HistoryRow = Schema.Struct({ id: Schema.Int, status: EngagementStatus, effective_date: Schema.String, source: Source })
export type HistoryRow = typeof HistoryRow.Type

/** A change a user records: effective `effectiveDate`, replacing the entry then in force on that day. */
const NewEntry = Schema.Struct({
  patientId: Schema.Int,
  status: EngagementStatus,
  effectiveDate: Schema.String,
  reason: NullText,
  actorId: Schema.Int,
  at: Schema.DateFromSelf,
  replaced: Schema.NullOr(Schema.Struct({ id: Schema.Int, status: Schema.String, effective_date: Schema.String }))
})
export type NewEntry = typeof NewEntry.Type

const Withdrawal = Schema.Struct({
  patientId: Schema.Int,
  ids: Schema.Array(Schema.Int),
  byEntryId: Schema.Int,
  actorId: Schema.Int,
  at: Schema.DateFromSelf
})
export type Withdrawal = typeof Withdrawal.Type

/** An automatic move (source `system`) to `status` from the current entry, when that is one of `from`. */
const AutomaticMove = Schema.Struct({
  patientId: Schema.Int,
  from: Schema.Array(EngagementStatus),
  status: EngagementStatus,
  /** Effective this day, or the current entry's if later. */
  day: Schema.String,
  reason: Schema.String,
  actorId: Schema.NullOr(Schema.Int),
  at: Schema.DateFromSelf
})
export type AutomaticMove = typeof AutomaticMove.Type

const entryColumns = `id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source, reason, actor_id, created_at,
  replaced_status, to_char(replaced_effective_date, 'YYYY-MM-DD') AS replaced_effective_date`

/** Newest first: the status on a day is the latest effective date, then the latest written. */
const newestFirst = "ORDER BY effective_date DESC, id DESC"

export class StatusHistoriesRepo extends Effect.Service<StatusHistoriesRepo>()("app/EcmStatusHistoriesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(entryColumns)
    const newest = sql.literal(newestFirst)

    const lock = SqlSchema.void({
      Request: Schema.Int,
      execute: (patientId) => sql`SELECT pg_advisory_xact_lock(hashtext('ecm_status_histories'), ${patientId})`
    })

    const isEcmPatient = SqlSchema.single({
      Request: Schema.Int,
      Result: Schema.Struct({ found: Schema.Boolean }),
      execute: (patientId) =>
        sql`SELECT EXISTS (SELECT 1 FROM ecm_eligibility_informations WHERE patient_id = ${patientId}) AS found`
    })

    const entries = SqlSchema.findAll({
      Request: Schema.Int,
      Result: EntryRow,
      execute: (patientId) => sql`SELECT ${columns} FROM ecm_status_histories WHERE patient_id = ${patientId} ${newest}`
    })

    const history = SqlSchema.findAll({
      Request: Schema.Int,
      Result: HistoryRow,
      execute: (patientId) =>
        sql`SELECT id, status, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, source
          FROM ecm_status_histories WHERE patient_id = ${patientId} ORDER BY effective_date, id`
    })

    const insert = SqlSchema.single({
      Request: NewEntry,
      Result: EntryRow,
      execute: (e) =>
        sql`INSERT INTO ecm_status_histories
            (patient_id, status, effective_date, source, reason, actor_id, created_at, updated_at, replaced_id, replaced_status, replaced_effective_date)
          VALUES (${e.patientId}, ${e.status}, ${e.effectiveDate}::date, 'user', ${e.reason}, ${e.actorId}, ${e.at}, ${e.at},
            ${e.replaced?.id ?? null}, ${e.replaced?.status ?? null}, ${e.replaced?.effective_date ?? null}::date)
          RETURNING ${columns}`
    })

    // Kept as they were, with the entry that withdrew them, then removed from the history.
    const keepWithdrawn = SqlSchema.void({
      Request: Withdrawal,
      execute: (w) =>
        sql`INSERT INTO ecm_status_history_withdrawals (entry_id, patient_id, status, effective_date, source, reason,
            actor_id, entered_at, withdrawn_by_entry_id, withdrawn_by_actor_id, withdrawn_at)
          SELECT id, patient_id, status, effective_date, source, reason, actor_id, created_at, ${w.byEntryId}, ${w.actorId}, ${w.at}
          FROM ecm_status_histories WHERE patient_id = ${w.patientId} AND id IN ${sql.in(w.ids)}`
    })
    const removeWithdrawn = SqlSchema.void({
      Request: Withdrawal,
      execute: (w) => sql`DELETE FROM ecm_status_histories WHERE patient_id = ${w.patientId} AND id IN ${sql.in(w.ids)}`
    })

    const advance = SqlSchema.void({
      Request: AutomaticMove,
      execute: (m) =>
        sql`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source, reason, actor_id, created_at, updated_at,
            replaced_id, replaced_status, replaced_effective_date)
          SELECT ${m.patientId}, ${m.status}, greatest(${m.day}::date, current.effective_date), 'system',
            ${m.reason}, ${m.actorId}, ${m.at}, ${m.at},
            current.id, current.status, current.effective_date
          FROM (SELECT id, status, effective_date FROM ecm_status_histories WHERE patient_id = ${m.patientId}
                ${newest} LIMIT 1) current
          WHERE current.status IN ${sql.in(m.from)}`
    })

    return {
      /** Takes the member's engagement lock until the transaction ends. */
      lock: (patientId: number) => orDefect(lock(patientId)),
      /** Whether the patient has an eligibility record (ECM patients are those that do). */
      isEcmPatient: (patientId: number) => Effect.map(orDefect(isEcmPatient(patientId)), (row) => row.found),
      /** The member's entries, newest first. */
      entries: (patientId: number) => orDefect(entries(patientId)),
      /** The member's entries in history order (oldest first), as the placement rules read them. */
      history: (patientId: number) => orDefect(history(patientId)),
      /** Records a user's change (source `user`). */
      insert: (entry: NewEntry) => orDefect(insert(entry)),
      /** Moves the entries `ids` of the member to the withdrawals, naming the entry that withdrew them. */
      withdraw: (withdrawal: Withdrawal) =>
        withdrawal.ids.length === 0 ? Effect.void : orDefect(Effect.zipRight(keepWithdrawn(withdrawal), removeWithdrawn(withdrawal))),
      /** Records an automatic move if the member's current status is one of `from`; nothing otherwise. */
      advance: (move: AutomaticMove) => move.from.length === 0 ? Effect.void : orDefect(advance(move))
    } as const
  })
}) {}
