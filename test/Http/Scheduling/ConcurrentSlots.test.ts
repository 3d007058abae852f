/**
 * Identical availability creates (and moves of different slots onto one time) at once, on a pool much smaller than the number of requests:
 * the exclusion constraint lets exactly one in and every other copy gets the §2.5 conflict (409),
 * never a 500 (a deadlock between the constraint's checks) nor a 503 (the pool starved while
 * PostgreSQL resolves them).
 *
 * Luck alone rarely lines the copies up, so a gate does: a connection of the test's own holds a
 * SHARE lock on `available_slots` until every connection of the app's pool waits to write a slot,
 * then lets them all go at the same moment. No timing is assumed: the test reads `pg_locks`.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../../../src/Services/AppConfig.js"
import { type RawResponse, request, TestApp } from "../../support/app.js"
import { adminToken, createSlot, hoursFromNow, makeProvider, slotAt } from "./helpers.js"

const copies = 20
const poolSize = 3
const conflictBody = { errors: "Slot conflicts with existing availability" }

const statusCounts = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {})

/** A client on the app's database, outside its pool; ended with the scope. */
const ownClient = Effect.acquireRelease(
  Effect.flatMap(AppConfig, (config) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: Redacted.value(Option.getOrThrow(config.databaseUrl)) })
      await client.connect()
      return client
    })),
  (client) => Effect.promise(() => client.end())
)

/** Statements waiting for the table lock on `available_slots` (of this database: every test database has the same oids). */
const waitingForSlots = (client: pg.Client) =>
  Effect.promise(() =>
    client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'relation' AND NOT granted AND relation = 'available_slots'::regclass
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
  ).pipe(Effect.map((result) => result.rows[0]!.n))

/**
 * Runs `requests` at once behind the gate: released when the whole pool waits on it (or when every
 * request has already answered, which the assertions then explain).
 */
const allAtOnce = <R>(requests: ReadonlyArray<Effect.Effect<RawResponse, never, R>>) =>
  Effect.scoped(Effect.gen(function*() {
    const gate = yield* ownClient
    const watcher = yield* ownClient
    yield* Effect.promise(() => gate.query("BEGIN; LOCK TABLE available_slots IN SHARE MODE"))
    const race = yield* Effect.fork(Effect.all(requests, { concurrency: "unbounded" }))
    yield* Effect.repeat(
      Effect.zip(waitingForSlots(watcher), Fiber.poll(race)),
      { until: ([waiting, done]) => waiting >= poolSize || Option.isSome(done) }
    )
    yield* Effect.promise(() => gate.query("COMMIT"))
    return yield* Fiber.join(race)
  }))

const slotCount = (providerId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM available_slots WHERE provider_id = ${providerId}`).pipe(
      Effect.map((rows) => rows[0]!.n),
      Effect.orDie
    )

layer(TestApp({ dbPoolSize: poolSize }))("concurrent availability creates", (it) => {
  it.effect(`${copies} identical one-off creates at once: one 201, every other copy 409`, () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const slot = { provider_id: provider.id, start_time: hoursFromNow(48), end_time: hoursFromNow(49) }
      const responses = yield* allAtOnce(Array.from({ length: copies }, () => createSlot(token, slot)))
      expect(statusCounts(responses.map((r) => r.status))).toEqual({ 201: 1, 409: copies - 1 })
      for (const refused of responses.filter((r) => r.status === 409)) expect(refused.body).toEqual(conflictBody)
      expect(yield* slotCount(provider.id)).toBe(1)
    }))

  it.effect(`${copies} identical recurring creates at once: one 201 with its series, every other copy 409`, () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const slot = { provider_id: provider.id, start_time: hoursFromNow(72), end_time: hoursFromNow(73), recurrence_pattern: "weekly" }
      const responses = yield* allAtOnce(Array.from({ length: copies }, () => createSlot(token, slot)))
      expect(statusCounts(responses.map((r) => r.status))).toEqual({ 201: 1, 409: copies - 1 })
      for (const refused of responses.filter((r) => r.status === 409)) expect(refused.body).toEqual(conflictBody)
      const created = responses.find((r) => r.status === 201)!.body as { occurrences_created: number }
      expect(yield* slotCount(provider.id)).toBe(1 + created.occurrences_created)
      const sql = yield* SqlClient.SqlClient
      const series = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM slot_series WHERE provider_id = ${provider.id}`
      expect(series[0]!.n).toBe(1)
    }))

  it.effect(`${copies} identical batch creates at once: the slot is made once, every other copy reports it as a conflict`, () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const body = { provider_id: provider.id, slots: [{ start_time: hoursFromNow(96), end_time: hoursFromNow(97) }] }
      const responses = yield* allAtOnce(Array.from(
        { length: copies },
        () => request("POST", "/v1/admin/clinic/availability/providers/available_slots/create_in_batch", { token, body })
      ))
      expect(statusCounts(responses.map((r) => r.status))).toEqual({ 200: copies })
      const created = responses.map((r) => (r.body as { created_slots: number }).created_slots)
      expect(created.filter((n) => n === 1)).toHaveLength(1)
      expect(created.filter((n) => n === 0)).toHaveLength(copies - 1)
      expect(yield* slotCount(provider.id)).toBe(1)
    }))

  it.effect(`${copies} different slots moved onto the same hour at once: one 200, every other move 409`, () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const ids: Array<number> = []
      for (let i = 0; i < copies; i++) ids.push(yield* slotAt(token, provider.id, 120 + 2 * i))
      // Each move writes its slot's new version, then checks it against the others' new versions,
      // still uncommitted: two moves can each wait for the other (rarely: the window is one
      // statement), which PostgreSQL breaks with 40P01 and the service runs again (SqlErrors.test.ts).
      const target = { start_time: hoursFromNow(200), end_time: hoursFromNow(201) }
      const responses = yield* allAtOnce(ids.map((id) =>
        request("PUT", `/v1/admin/clinic/availability/available_slots/${id}`, { token, body: { available_slot: target } })
      ))
      expect(statusCounts(responses.map((r) => r.status))).toEqual({ 200: 1, 409: copies - 1 })
      for (const refused of responses.filter((r) => r.status === 409)) expect(refused.body).toEqual(conflictBody)
      const sql = yield* SqlClient.SqlClient
      const moved = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM available_slots
        WHERE provider_id = ${provider.id} AND start_time = ${target.start_time}`
      expect(moved[0]!.n).toBe(1)
    }))
})
