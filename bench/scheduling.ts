/**
 * `npm run bench:scheduling`: scheduling under load.
 *
 * 1. Starts the app as `npm start` runs it (child process, fresh database, logs at warn).
 * 2. Search: one provider with 5,000 half-hour slots (through `create_in_batch`, 100 a request),
 *    then `GET available_slots/search` for that provider on one of its days, sequentially and from
 *    8 clients at once: p50 and p99.
 * 3. Booking: another provider with 200 free slots; 20 clients book at once, each picking random
 *    slots (so many race for the same slot) until every slot is taken: latency p50/p99 of every
 *    answer (201 or 409), then a count of double bookings from the database (must be 0).
 *
 * Database: DATABASE_URL's server (a fresh `cc_bench_sched_<random>` database, dropped at the end),
 * else an embedded PostgreSQL in a temp dir. Flags: --slots (5000), --searches (1000), --clients (20),
 * --booking-slots (200).
 */
import { parseArgs } from "node:util"
import { latencySummary, ms, runBench } from "./support.js"

const { values: flags } = parseArgs({
  options: {
    slots: { type: "string", default: "5000" },
    searches: { type: "string", default: "1000" },
    clients: { type: "string", default: "20" },
    "booking-slots": { type: "string", default: "200" }
  }
})
const slotCount = Number(flags.slots)
const searches = Number(flags.searches)
const clients = Number(flags.clients)
const bookingSlots = Number(flags["booking-slots"])

const summary = (label: string, samples: ReadonlyArray<number>) => {
  const { count, p50, p99, max } = latencySummary(samples)
  console.log(`${label}: n=${count}  p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(max)}`)
}

runBench("sched", async (bench) => {
  const { base, token } = await bench.startApp({ env: { DB_POOL_SIZE: "10" } })
  const call = async (method: string, route: string, body?: unknown) => {
    const started = performance.now()
    const response = await fetch(`${base}${route}`, {
      method,
      headers: { "content-type": "application/json", "x-user-token": token },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const json = await response.json() as unknown
    return { status: response.status, json, elapsed: performance.now() - started }
  }

  // Providers and patients straight into the database: the bench measures scheduling, not sign-up.
  const db = await bench.connect()
  const provider = async (n: number) => {
    const { rows: [user] } = await db.query<{ id: number }>(`INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed)
      VALUES ($1, 'x', 'Bench', $2, 'provider', 'active', true) RETURNING id`, [`provider${n}@bench.test`, `Provider${n}`])
    const { rows: [profile] } = await db.query<{ id: number }>(`INSERT INTO providers (user_id, roles) VALUES ($1, '{provider}') RETURNING id`, [user!.id])
    return profile!.id
  }
  const searchProvider = await provider(1)
  const bookingProvider = await provider(2)
  const { rows: patients } = await db.query<{ id: number }>(`INSERT INTO patients (first_name, last_name)
    SELECT 'Bench', 'Patient' || g FROM generate_series(1, $1::int) g RETURNING id`, [bookingSlots])

  // 5,000 half-hour slots, 16 a day from 08:00 UTC, starting tomorrow.
  const dayMs = 86_400_000
  const firstDay = Math.floor(Date.now() / dayMs) * dayMs + dayMs
  const slotTimes = Array.from({ length: slotCount }, (_, i) => {
    const start = firstDay + Math.floor(i / 16) * dayMs + 8 * 3_600_000 + (i % 16) * 1_800_000
    return { start_time: new Date(start).toISOString(), end_time: new Date(start + 1_800_000).toISOString() }
  })
  const seeded = performance.now()
  for (let i = 0; i < slotTimes.length; i += 100) {
    const result = await call("POST", "/v1/admin/clinic/availability/providers/available_slots/create_in_batch", {
      provider_id: searchProvider, slots: slotTimes.slice(i, i + 100)
    })
    if (result.status !== 200 || (result.json as { created_slots: number }).created_slots !== Math.min(100, slotTimes.length - i)) {
      throw new Error(`batch failed: ${result.status} ${JSON.stringify(result.json).slice(0, 300)}`)
    }
  }
  console.log(`seeded ${slotCount} slots through create_in_batch in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)
  await db.query("ANALYZE")

  const days = Math.ceil(slotCount / 16)
  const searchOnce = async (i: number) => {
    const day = new Date(firstDay + ((i * 7) % days) * dayMs + 12 * 3_600_000).toISOString().slice(0, 10)
    const result = await call("GET", `/v1/admin/clinic/availability/available_slots/search?provider_id=${searchProvider}&date=${day}&duration=30`)
    if (result.status !== 200 || (result.json as { available_slots: Array<unknown> }).available_slots.length === 0) {
      throw new Error(`search failed: ${result.status} ${JSON.stringify(result.json).slice(0, 200)}`)
    }
    return result.elapsed
  }
  for (let i = 0; i < 50; i++) await searchOnce(i) // warm-up
  const sequential: Array<number> = []
  for (let i = 0; i < searches; i++) sequential.push(await searchOnce(i))
  summary(`search, provider with ${slotCount} slots, 1 client`, sequential)
  const parallel: Array<number> = []
  let next = 0
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < searches) parallel.push(await searchOnce(next++))
  }))
  summary(`search, provider with ${slotCount} slots, 8 clients`, parallel)

  // Booking race.
  const bookable = Array.from({ length: bookingSlots }, (_, i) => {
    const start = firstDay + 400 * dayMs + Math.floor(i / 16) * dayMs + 8 * 3_600_000 + (i % 16) * 1_800_000
    return { start_time: new Date(start).toISOString(), end_time: new Date(start + 1_800_000).toISOString() }
  })
  const slotIds: Array<number> = []
  for (let i = 0; i < bookable.length; i += 100) {
    const result = await call("POST", "/v1/admin/clinic/availability/providers/available_slots/create_in_batch", {
      provider_id: bookingProvider, slots: bookable.slice(i, i + 100)
    })
    slotIds.push(...(result.json as { slot_ids: Array<number> }).slot_ids)
  }
  const free = new Set(slotIds)
  const latencies: Array<number> = []
  const statuses = new Map<number, number>()
  let seed = 42
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async (_, client) => {
    while (free.size > 0) {
      // Mostly the lowest free slots: clients collide as real ones do on the first openings.
      const candidates = [...free].slice(0, 5)
      const slotId = candidates[Math.floor(random() * candidates.length)]!
      const patientId = patients[(client * 31 + latencies.length) % patients.length]!.id
      const result = await call("POST", "/v1/admin/clinic/availability/books", { book: { available_slot_id: slotId, patient_id: patientId } })
      latencies.push(result.elapsed)
      statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1)
      if (result.status === 201 || result.status === 409) free.delete(slotId)
      else throw new Error(`booking failed: ${result.status} ${JSON.stringify(result.json)}`)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  summary(`booking, ${clients} concurrent clients racing for ${bookingSlots} slots`, latencies)
  console.log(`answers: ${[...statuses].map(([s, n]) => `${s} ×${n}`).join(", ")}; ${(latencies.length / seconds).toFixed(0)} requests/s`)
  const { rows: [check] } = await db.query<{ doubled_books: number; doubled_appointments: number; overlapping: number; booked: number }>(`
    SELECT
      (SELECT count(*)::int FROM (SELECT available_slot_id FROM books WHERE status = 'confirmed' GROUP BY 1 HAVING count(*) > 1) d) AS doubled_books,
      (SELECT count(*)::int FROM (SELECT available_slot_id FROM appointments GROUP BY 1 HAVING count(*) > 1) d) AS doubled_appointments,
      (SELECT count(*)::int FROM appointments a JOIN appointments b ON a.provider_id = b.provider_id AND a.id < b.id
        AND tstzrange(a.scheduled_at, appointment_end(a.scheduled_at, a.duration_minutes)) && tstzrange(b.scheduled_at, appointment_end(b.scheduled_at, b.duration_minutes))) AS overlapping,
      (SELECT count(*)::int FROM available_slots WHERE provider_id = $1 AND booked) AS booked`, [bookingProvider])
  console.log(`slots booked ${check!.booked} of ${bookingSlots}; 201s ${statuses.get(201) ?? 0}; double bookings: ` +
    `${check!.doubled_books} slots with two books, ${check!.doubled_appointments} slots with two appointments, ${check!.overlapping} overlapping appointments`)
  if (check!.doubled_books + check!.doubled_appointments + check!.overlapping > 0 || check!.booked !== (statuses.get(201) ?? 0)) {
    throw new Error("double booking")
  }
})
