/**
 * The 90-day horizon of recurring slots (issue 15's series, extended by issue 17's queue): a daily
 * job continues every series from its last slot up to 90 days ahead, on the clinic's wall clock,
 * with the same rule the series was made with. Safe to run twice or on two instances at once: each
 * occurrence is inserted with `ON CONFLICT DO NOTHING` (the overlap constraint refuses a copy), and
 * only occurrences after the series' last slot are added, so a slot deleted by hand stays deleted.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import {
  laterOccurrences, parseRule, type RecurrencePattern, recurrenceHorizonDays, type Rule, ruleOfPattern
} from "../../Domain/Scheduling/Recurrence.js"
import { AppConfig } from "../AppConfig.js"
import { defineTask } from "../Jobs.js"

const dayMs = 86_400_000

interface SeriesRow {
  readonly id: number
  readonly provider_id: number
  readonly start_time: Date
  readonly end_time: Date
  readonly appointment_type: string | null
  readonly recurrence_pattern: RecurrencePattern
  readonly recurrence_rule: string | null
  readonly last_start: Date
}

const ruleOf = (series: SeriesRow): Rule | undefined => {
  if (series.recurrence_pattern !== "custom") return ruleOfPattern(series.recurrence_pattern)
  const parsed = parseRule(series.recurrence_rule ?? "")
  return "rule" in parsed ? parsed.rule : undefined
}

/** Adds the missing occurrences of every series up to the horizon; the number of slots added. */
export const extendRecurringSlots = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const zone = (yield* AppConfig).clinicTimeZone
  const now = yield* Clock.currentTimeMillis
  const horizon = new Date(now + recurrenceHorizonDays * dayMs)
  // The first slot of each series (its anchor: time of day, length, rule) and the series' last start.
  const series = yield* sql<SeriesRow>`SELECT f.id, f.provider_id, f.start_time, f.end_time, f.appointment_type,
      f.recurrence_pattern, f.recurrence_rule, max(s.start_time) AS last_start
    FROM available_slots f JOIN available_slots s ON s.series_id = f.id
    WHERE f.series_id = f.id AND f.recurring AND f.recurrence_pattern IS NOT NULL
    GROUP BY f.id
    HAVING max(s.start_time) < ${horizon}`
  let added = 0
  for (const row of series) {
    const rule = ruleOf(row)
    if (rule === undefined) continue
    const missing = laterOccurrences({ start: row.start_time, end: row.end_time }, rule, zone, horizon)
      .filter((o) => o.start.getTime() > row.last_start.getTime() && o.start.getTime() > now)
    if (missing.length === 0) continue
    const inserted = yield* sql`INSERT INTO available_slots ${sql.insert(missing.map((o) => ({
      provider_id: row.provider_id,
      start_time: o.start,
      end_time: o.end,
      appointment_type: row.appointment_type,
      recurring: true,
      recurrence_pattern: row.recurrence_pattern,
      recurrence_rule: row.recurrence_rule,
      series_id: row.id
    })))} ON CONFLICT DO NOTHING RETURNING id`
    added += inserted.length
  }
  yield* Effect.annotateCurrentSpan({ "slots.series": series.length, "slots.added": added })
  return added
}).pipe(Effect.orDie, Effect.withSpan("SlotHorizon.extend"))

/** Daily (src/Layers/Main.ts `jobSchedules`). */
export const extendRecurringSlotsTask = defineTask({
  name: "scheduling.extend_recurring_slots",
  payload: Schema.Struct({}),
  run: () => Effect.asVoid(extendRecurringSlots)
})
