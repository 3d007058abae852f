/**
 * The daily horizon job (issue 17): recurring series keep 90 days of slots ahead, through the real
 * queue (the task enqueued and run by graphile-worker's `runOnce`), idempotently.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { runDueJobs } from "../../../src/Layers/Jobs.js"
import { Jobs } from "../../../src/Services/Jobs.js"
import { extendRecurringSlotsTask } from "../../../src/Services/Scheduling/SlotHorizon.js"
import { request, TestApp } from "../../support/app.js"
import { adminToken, createSlot, makeProvider } from "./helpers.js"

const base = "/v1/admin/clinic/availability"
type Slot = { id: number; start_time: string; recurring: boolean; recurrence_pattern: string | null; appointment_type: string | null }

const slotsOf = (token: string, providerId: number) =>
  Effect.map(
    request("GET", `${base}/providers/available_slots?provider_id=${providerId}&page_size=100`, { token }),
    (r) => (r.body as { available_slots: Array<Slot> }).available_slots
  )

const runHorizonJob = Effect.gen(function*() {
  yield* Effect.flatMap(Jobs, (jobs) => jobs.enqueue(extendRecurringSlotsTask, {}))
  yield* runDueJobs([extendRecurringSlotsTask])
})

layer(TestApp())("recurring slot horizon", (it) => {
  it.effect("a weekly series grows to 90 days ahead of the clock, at 9:00 local time; running again adds nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2030-03-01T12:00:00Z").getTime())
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const created = yield* createSlot(token, {
        provider_id: provider.id, start_time: "2030-03-04T09:00:00-08:00", end_time: "2030-03-04T09:50:00-08:00",
        recurring: true, recurrence_pattern: "weekly", appointment_type: "therapy"
      })
      expect(created.status).toBe(201)
      const before = yield* slotsOf(token, provider.id)
      expect(before).toHaveLength(13)
      // An admin removes one future occurrence by hand: the job must not bring it back.
      const removed = before[5]!
      expect((yield* request("DELETE", `${base}/available_slots/${removed.id}`, { token })).status).toBe(204)

      // Four weeks later (28 days): four more Mondays fall inside the new horizon (27 June).
      yield* TestClock.setTime(new Date("2030-03-29T12:00:00Z").getTime())
      yield* runHorizonJob
      const fresh = yield* adminToken
      const after = yield* slotsOf(fresh, provider.id)
      expect(after).toHaveLength(12 + 4)
      const added = after.slice(-4)
      expect(added.map((s) => s.start_time)).toEqual([
        "2030-06-03T16:00:00.000Z", "2030-06-10T16:00:00.000Z", "2030-06-17T16:00:00.000Z", "2030-06-24T16:00:00.000Z"
      ])
      expect(added.every((s) => s.recurring && s.recurrence_pattern === "weekly" && s.appointment_type === "therapy")).toBe(true)
      expect(after.some((s) => s.start_time === removed.start_time)).toBe(false)
      const seriesId = (created.body as { available_slot: Slot }).available_slot.id
      const [series] = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM available_slots WHERE series_id = ${seriesId}`).pipe(Effect.orDie)
      expect(series!.count).toBe(16)

      yield* runHorizonJob
      yield* Effect.all([runHorizonJob, runHorizonJob], { concurrency: 2 })
      expect(yield* slotsOf(fresh, provider.id)).toHaveLength(16)
    }))
})
