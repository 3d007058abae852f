import { expect, layer } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { SqlClient } from "@effect/sql"
import { jobTasks } from "../../../src/Layers/Main.js"
import { Slots } from "../../../src/Services/Scheduling/Slots.js"
import { extendSlotSeries } from "../../../src/Services/Scheduling/SlotTasks.js"
import { request, TestApp } from "../../support/app.js"
import { adminToken, createSlot, makeProvider } from "./helpers.js"

const base = "/v1/admin/clinic/availability"
type Slot = { id: number; start_time: string; end_time: string; recurring: boolean; recurrence_pattern: string | null }

const slotsOf = (token: string, providerId: number) =>
  Effect.map(
    request("GET", `${base}/providers/available_slots?provider_id=${providerId}&page_size=100`, { token }),
    (r) => (r.body as { available_slots: Array<Slot> }).available_slots
  )

// The server reads the TestClock: this file sets it to days before a daylight saving change.
layer(TestApp())("recurring slots", (it) => {
  it.effect("weekly at 9:00 in Los Angeles stays at 9:00 across the spring change, up to the 90-day horizon", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2030-03-01T12:00:00Z").getTime())
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      // Monday 4 March 2030, 9:00–9:50 PST; clocks go forward on Sunday 10 March.
      const created = yield* createSlot(token, {
        provider_id: provider.id, start_time: "2030-03-04T09:00:00-08:00", end_time: "2030-03-04T09:50:00-08:00",
        recurring: true, recurrence_pattern: "weekly", appointment_type: "therapy"
      })
      expect(created.status).toBe(201)
      const body = created.body as { available_slot: Slot; occurrences_created: number; skipped_occurrences: Array<unknown> }
      expect(body.available_slot).toMatchObject({ start_time: "2030-03-04T17:00:00.000Z", recurring: true, recurrence_pattern: "weekly" })
      // 4 March + 12 more weeks fit before 30 May (90 days after 1 March).
      expect(body.occurrences_created).toBe(12)
      expect(body.skipped_occurrences).toEqual([])
      const slots = yield* slotsOf(token, provider.id)
      expect(slots).toHaveLength(13)
      expect(slots.slice(0, 3).map((s) => [s.start_time, s.end_time])).toEqual([
        ["2030-03-04T17:00:00.000Z", "2030-03-04T17:50:00.000Z"],
        ["2030-03-11T16:00:00.000Z", "2030-03-11T16:50:00.000Z"],
        ["2030-03-18T16:00:00.000Z", "2030-03-18T16:50:00.000Z"]
      ])
      expect(slots.every((s) => s.recurring && s.recurrence_pattern === "weekly")).toBe(true)
    }))

  it.effect("occurrences that overlap other availability are skipped and reported; the first slot overlapping is 409", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2030-03-01T12:00:00Z").getTime())
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      yield* createSlot(token, { provider_id: provider.id, start_time: "2030-03-13T09:30:00-07:00", end_time: "2030-03-13T10:30:00-07:00" })
      const created = yield* createSlot(token, {
        provider_id: provider.id, start_time: "2030-03-11T09:00:00-07:00", end_time: "2030-03-11T10:00:00-07:00",
        recurring: true, recurrence_pattern: "custom", recurrence_rule: "FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=4"
      })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({
        occurrences_created: 2,
        skipped_occurrences: [{ start_time: "2030-03-13T16:00:00.000Z", end_time: "2030-03-13T17:00:00.000Z", error: "Slot conflicts with existing availability" }]
      })
      expect((yield* slotsOf(token, provider.id)).map((s) => s.start_time)).toEqual([
        "2030-03-11T16:00:00.000Z", "2030-03-13T16:30:00.000Z", "2030-03-15T16:00:00.000Z", "2030-03-18T16:00:00.000Z"
      ])
      const first = yield* createSlot(token, {
        provider_id: provider.id, start_time: "2030-03-11T09:30:00-07:00", end_time: "2030-03-11T10:30:00-07:00",
        recurring: true, recurrence_pattern: "daily"
      })
      expect(first.status).toBe(409)
      expect(first.body).toEqual({ errors: "Slot conflicts with existing availability" })
      expect(yield* slotsOf(token, provider.id)).toHaveLength(4)
      // The refused create's series (written before its first slot) went with it.
      const sql = yield* SqlClient.SqlClient
      const series = yield* sql<{ pattern: string }>`SELECT recurrence_pattern AS pattern FROM slot_series WHERE provider_id = ${provider.id}`
      expect(series.map((s) => s.pattern)).toEqual(["custom"])
    }))

  it.effect("a recurring slot of an unknown provider is 422, like a one-off one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2030-03-01T12:00:00Z").getTime())
      const token = yield* adminToken
      for (const recurrence of [{}, { recurrence_pattern: "weekly" }]) {
        const response = yield* createSlot(token, {
          provider_id: 999999, start_time: "2030-03-11T09:00:00-07:00", end_time: "2030-03-11T10:00:00-07:00", ...recurrence
        })
        expect(response.status).toBe(422)
        expect(response.body).toEqual({ errors: { provider_id: ["must exist"] } })
      }
    }))

  it.effect("monthly on the 31st skips months without one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2031-01-15T12:00:00Z").getTime())
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const created = yield* createSlot(token, {
        provider_id: provider.id, start_time: "2031-01-31T10:00:00-08:00", end_time: "2031-01-31T11:00:00-08:00",
        recurring: true, recurrence_pattern: "monthly"
      })
      expect(created.status).toBe(201)
      // Horizon: 15 April 2031. February has no 31st; 31 March is in daylight time.
      expect((yield* slotsOf(token, provider.id)).map((s) => s.start_time)).toEqual(["2031-01-31T18:00:00.000Z", "2031-03-31T17:00:00.000Z"])
    }))

  it.effect("the daily job extends a series to the new horizon, keeps 9:00, skips deleted and taken times, and is idempotent", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date("2030-09-01T12:00:00Z").getTime())
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      // Monday 2 September 2030, 9:00 PDT; the horizon is 30 November; clocks go back on 3 November.
      yield* createSlot(token, {
        provider_id: provider.id, start_time: "2030-09-02T09:00:00-07:00", end_time: "2030-09-02T10:00:00-07:00",
        recurring: true, recurrence_pattern: "weekly"
      })
      const before = yield* slotsOf(token, provider.id)
      expect(before).toHaveLength(13)
      expect(before.at(-1)!.start_time).toBe("2030-11-25T17:00:00.000Z")
      // An admin deletes one generated slot, and another slot takes a future week's time.
      yield* request("DELETE", `${base}/available_slots/${before[3]!.id}`, { token })
      yield* createSlot(token, { provider_id: provider.id, start_time: "2030-12-09T09:30:00-08:00", end_time: "2030-12-09T10:30:00-08:00" })

      yield* TestClock.setTime(new Date("2030-10-01T12:00:00Z").getTime())
      const slots = yield* Slots
      // New horizon 30 December: 2, (9 taken), 16, 23 December (the series of the tests above grow too).
      expect(yield* slots.extendSeries).toBeGreaterThanOrEqual(3)
      expect(yield* slots.extendSeries).toBe(0)
      // A month later the session has expired: sign in again.
      const after = yield* slotsOf(yield* adminToken, provider.id)
      expect(after).toHaveLength(16)
      expect(after.map((s) => s.start_time).slice(10)).toEqual([
        "2030-11-18T17:00:00.000Z", "2030-11-25T17:00:00.000Z", "2030-12-02T17:00:00.000Z", "2030-12-09T17:30:00.000Z",
        "2030-12-16T17:00:00.000Z", "2030-12-23T17:00:00.000Z"
      ])
      expect(after.map((s) => s.id)).not.toContain(before[3]!.id)
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM available_slots WHERE start_time = ${before[3]!.start_time}::timestamptz`) as [{ n: number }]
      expect(n).toBe(0)
      // The job is registered with the worker.
      expect(jobTasks.map((task) => task.name)).toContain(extendSlotSeries.name)
    }))
})
