import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { AppointmentId, AvailableSlotId } from "../../../src/Domain/Ids.js"
import type { AppointmentType } from "../../../src/Domain/Scheduling/Scheduling.js"
import { clientAs, request, signIn, TestApp } from "../../support/app.js"
import {
  adminToken, book, bookSlot, createSlot, hoursFromNow, insertPatient, insertUser, makeProvider, password, slotAt, slotAvailable
} from "./helpers.js"

const slotKeys = [
  "appointment_type", "available", "created_at", "end_time", "id", "provider", "provider_id", "recurrence_pattern", "recurring",
  "start_time", "updated_at"
]
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const base = "/v1/admin/clinic/availability"
const conflictBody = { errors: "Slot conflicts with existing availability" }
const onePage = { current_page: 1, total_pages: 1, total_count: 1, per_page: 25 }

layer(TestApp())("admin availability", (it) => {
  it.effect("require a token (401) and the admin role (403)", () =>
    Effect.gen(function*() {
      yield* insertUser({ email: "staff@access.scheduling.test", role: "support" })
      const staff = yield* signIn("staff@access.scheduling.test", password)
      for (const [method, url] of [
        ["GET", `${base}/available_slots`], ["POST", `${base}/available_slots`], ["GET", `${base}/available_slots/search`],
        ["GET", `${base}/available_slots/1`], ["PUT", `${base}/available_slots/1`], ["DELETE", `${base}/available_slots/1`],
        ["GET", `${base}/providers/available_slots?provider_id=1`], ["POST", `${base}/providers/available_slots/create_in_batch`],
        ["DELETE", `${base}/providers/available_slots/destroy_in_batch`], ["GET", `${base}/books`], ["POST", `${base}/books`]
      ] as const) {
        const body = method === "GET" ? undefined : {}
        expect((yield* request(method, url, { body })).status).toBe(401)
        const refused = yield* request(method, url, { token: staff, body })
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({ errors: "Admin access required" })
      }
    }))

  it.effect("create, show, list, update and delete a slot in the §2.5 representation", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token, "provider", { first_name: "Morgan", last_name: "Lee" })
      const created = yield* createSlot(token, {
        provider_id: provider.id, start_time: hoursFromNow(24), end_time: hoursFromNow(25), appointment_type: "therapy"
      })
      expect(created.status).toBe(201)
      const body = created.body as { available_slot: Record<string, unknown> & { id: number }; occurrences_created: number; skipped_occurrences: Array<unknown> }
      const slot = body.available_slot
      const id = AvailableSlotId.make(slot.id)
      expect(Object.keys(slot).sort()).toEqual(slotKeys)
      expect(slot).toMatchObject({
        provider_id: provider.id, start_time: hoursFromNow(24), end_time: hoursFromNow(25), appointment_type: "therapy",
        available: true, recurring: false, recurrence_pattern: null,
        provider: { id: provider.id, first_name: "Morgan", last_name: "Lee" }
      })
      expect(slot.created_at).toMatch(iso)
      expect(body.occurrences_created).toBe(0)
      expect(body.skipped_occurrences).toEqual([])

      const shown = yield* request("GET", `${base}/available_slots/${slot.id}`, { token })
      expect(shown.status).toBe(200)
      expect(shown.body).toEqual({ available_slot: slot })
      const client = yield* clientAs(token)
      const typed = (yield* client.availability.showSlot({ path: { id } })).available_slot
      expect(typed).toMatchObject({
        id, provider_id: provider.id, start_time: new Date(slot.start_time as string), end_time: new Date(slot.end_time as string),
        appointment_type: "therapy", available: true, recurring: false, recurrence_pattern: null,
        provider: { id: provider.id, first_name: "Morgan", last_name: "Lee" }
      })

      const listed = yield* request("GET", `${base}/available_slots?provider_id=${provider.id}`, { token })
      expect(listed.body).toEqual({ available_slots: [slot], pagination: onePage })
      expect(yield* client.availability.listSlots({ urlParams: { provider_id: provider.id } })).toMatchObject({ available_slots: [typed], pagination: onePage })

      const [moved, movedResponse] = yield* client.availability.updateSlot({
        path: { id }, payload: { available_slot: { start_time: new Date(hoursFromNow(26)), end_time: new Date(hoursFromNow(28)), available: false } },
        withResponse: true
      })
      expect(movedResponse.status).toBe(200)
      expect(moved.available_slot).toMatchObject({
        id, start_time: new Date(hoursFromNow(26)), end_time: new Date(hoursFromNow(28)), available: false
      })
      const closed = yield* client.availability.listSlots({ urlParams: { provider_id: provider.id, available: false } })
      expect(closed.available_slots.map((s) => s.id)).toEqual([id])

      const [, deleted] = yield* client.availability.deleteSlot({ path: { id }, withResponse: true })
      expect(deleted.status).toBe(204)
      const gone = yield* request("GET", `${base}/available_slots/${slot.id}`, { token })
      expect(gone.status).toBe(404)
      expect(gone.body).toEqual({ errors: "Slot not found" })
      expect((yield* request("PUT", `${base}/available_slots/${slot.id}`, { token, body: { available_slot: {} } })).status).toBe(404)
      expect((yield* request("DELETE", `${base}/available_slots/${slot.id}`, { token })).status).toBe(404)
    }))

  it.effect("validation: end after start, start in the future, provider must exist, lists; nothing is created", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const sql = yield* SqlClient.SqlClient
      const before = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM available_slots`)[0]!.n
      const cases: Array<[Record<string, unknown>, unknown]> = [
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(5) }, { end_time: ["must be after start time"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(4) }, { end_time: ["must be after start time"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(-2), end_time: hoursFromNow(-1) }, { start_time: ["must be in the future"] }],
        [{ provider_id: 999999, start_time: hoursFromNow(5), end_time: hoursFromNow(6) }, { provider_id: ["must exist"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(6), appointment_type: "massage" }, { appointment_type: ["is not included in the list"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(6), recurring: true, recurrence_pattern: "yearly" }, { recurrence_pattern: ["is not included in the list"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(6), recurring: true }, { recurrence_pattern: ["can't be blank"] }],
        [{ provider_id: provider.id, start_time: hoursFromNow(5), end_time: hoursFromNow(6), recurring: true, recurrence_pattern: "custom", recurrence_rule: "FREQ=WEEKLY" }, { recurrence_rule: ["needs COUNT or UNTIL"] }],
        [{ provider_id: provider.id, start_time: "2030-01-01T09:00:00", end_time: hoursFromNow(6) }, { start_time: ["is invalid"] }]
      ]
      for (const [slot, errors] of cases) {
        const response = yield* createSlot(token, slot)
        expect(response.status, JSON.stringify(slot)).toBe(422)
        expect(response.body, JSON.stringify(slot)).toEqual({ errors })
      }
      expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM available_slots`)[0]!.n).toBe(before)
    }))

  it.effect("overlapping slots of one provider are 409; touching slots and other providers' slots are fine", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const other = yield* makeProvider(token)
      yield* slotAt(token, provider.id, 48, 2)
      const overlap = yield* createSlot(token, { provider_id: provider.id, start_time: hoursFromNow(49), end_time: hoursFromNow(51) })
      expect(overlap.status).toBe(409)
      expect(overlap.body).toEqual(conflictBody)
      const inside = yield* createSlot(token, { provider_id: provider.id, start_time: hoursFromNow(48), end_time: hoursFromNow(50) })
      expect(inside.status).toBe(409)
      expect((yield* createSlot(token, { provider_id: provider.id, start_time: hoursFromNow(50), end_time: hoursFromNow(51) })).status).toBe(201)
      expect((yield* createSlot(token, { provider_id: provider.id, start_time: hoursFromNow(47), end_time: hoursFromNow(48) })).status).toBe(201)
      expect((yield* createSlot(token, { provider_id: other.id, start_time: hoursFromNow(48), end_time: hoursFromNow(50) })).status).toBe(201)
      // Moving a slot onto another is the same conflict.
      const movable = yield* slotAt(token, provider.id, 60)
      const moved = yield* request("PUT", `${base}/available_slots/${movable}`, {
        token, body: { available_slot: { start_time: hoursFromNow(49), end_time: hoursFromNow(50) } }
      })
      expect(moved.status).toBe(409)
      expect(moved.body).toEqual(conflictBody)
      const backwards = yield* request("PUT", `${base}/available_slots/${movable}`, { token, body: { available_slot: { end_time: hoursFromNow(59) } } })
      expect(backwards.status).toBe(422)
      expect(backwards.body).toEqual({ errors: { end_time: ["must be after start time"] } })
    }))

  it.effect("search: free, future slots of the day at least `duration` long, by provider and type", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const sql = yield* SqlClient.SqlClient
      // A day two weeks ahead in the clinic's zone, 9:00–12:00 local in slots of 30, 60 and 90 minutes.
      const [{ day }] = (yield* sql<{ day: string }>`SELECT to_char((now() AT TIME ZONE 'America/Los_Angeles')::date + 14, 'YYYY-MM-DD') AS day`) as [{ day: string }]
      const at = (time: string) => Effect.map(sql<{ t: Date }>`SELECT (${`${day} ${time}`}::timestamp AT TIME ZONE 'America/Los_Angeles') AS t`, (rows) => rows[0]!.t.toISOString())
      const client = yield* clientAs(token)
      const make = (from: string, to: string, type?: AppointmentType) =>
        Effect.gen(function*() {
          const created = yield* client.availability.createSlot({
            payload: { available_slot: { provider_id: provider.id, start_time: new Date(yield* at(from)), end_time: new Date(yield* at(to)), ...(type ? { appointment_type: type } : {}) } }
          })
          return created.available_slot.id
        })
      const short = yield* make("09:00", "09:30", "therapy")
      const hour = yield* make("09:30", "10:30", "assessment")
      const long = yield* make("10:30", "12:00")
      const booked = yield* make("12:00", "13:00")
      const closed = yield* make("13:00", "14:00")
      yield* client.availability.updateSlot({ path: { id: closed }, payload: { available_slot: { available: false } } })
      yield* bookSlot(token, booked, yield* insertPatient())
      const search = (query: { readonly duration?: number; readonly appointment_type?: AppointmentType } = {}) =>
        Effect.map(client.availability.searchSlots({ urlParams: { provider_id: provider.id, date: day, ...query }, withResponse: true }), ([found, response]) => {
          expect(response.status).toBe(200)
          return found.available_slots.map((s) => s.id)
        })
      expect(yield* search()).toEqual([short, hour, long])
      expect(yield* search({ duration: 60 })).toEqual([hour, long])
      expect(yield* search({ duration: 61 })).toEqual([long])
      expect(yield* search({ appointment_type: "therapy" })).toEqual([short, long])
      expect(yield* search({ duration: 30, appointment_type: "assessment" })).toEqual([hour, long])
      const bad = yield* request("GET", `${base}/available_slots/search?duration=0&date=2030-02-30`, { token })
      expect(bad.status).toBe(422)
      // Both fields are reported, and only they.
      expect(bad.body).toEqual({ errors: { date: expect.anything(), duration: expect.anything() } })
    }))

  it.effect("batch create: bad and overlapping slots (also within the batch) fail alone; the rest are created", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      yield* slotAt(token, provider.id, 100)
      const response = yield* request("POST", `${base}/providers/available_slots/create_in_batch`, {
        token,
        body: {
          provider_id: provider.id,
          slots: [
            { start_time: hoursFromNow(90), end_time: hoursFromNow(91), appointment_type: "therapy" },
            { start_time: hoursFromNow(100), end_time: hoursFromNow(101) },
            { start_time: hoursFromNow(92), end_time: hoursFromNow(91) },
            { start_time: hoursFromNow(-5), end_time: hoursFromNow(-4) },
            { start_time: hoursFromNow(93), end_time: hoursFromNow(95) },
            { start_time: hoursFromNow(94), end_time: hoursFromNow(96) },
            { start_time: hoursFromNow(95), end_time: hoursFromNow(96) }
          ]
        }
      })
      expect(response.status).toBe(200)
      const body = response.body as { created_slots: number; failed_slots: number; slot_ids: Array<number>; errors: Array<unknown> }
      expect(body.created_slots).toBe(3)
      expect(body.failed_slots).toBe(4)
      expect(body.slot_ids).toHaveLength(3)
      expect(body.errors).toEqual([
        { start_time: hoursFromNow(92), end_time: hoursFromNow(91), error: "End time must be after start time" },
        { start_time: hoursFromNow(-5), end_time: hoursFromNow(-4), error: "Start time must be in the future" },
        { start_time: hoursFromNow(100), end_time: hoursFromNow(101), error: "Slot conflicts with existing availability" },
        { start_time: hoursFromNow(94), end_time: hoursFromNow(96), error: "Slot conflicts with existing availability" }
      ])
      const client = yield* clientAs(token)
      const starts = (yield* client.availability.providerSlots({ urlParams: { provider_id: provider.id } })).available_slots
      expect(starts.map((s) => s.start_time.toISOString())).toEqual([hoursFromNow(90), hoursFromNow(93), hoursFromNow(95), hoursFromNow(100)])
      expect(starts.filter((s) => body.slot_ids.includes(s.id)).map((s) => s.start_time.toISOString()))
        .toEqual([hoursFromNow(90), hoursFromNow(93), hoursFromNow(95)])
      const unknown = yield* request("POST", `${base}/providers/available_slots/create_in_batch`, {
        token, body: { provider_id: 999999, slots: [{ start_time: hoursFromNow(90), end_time: hoursFromNow(91) }] }
      })
      expect(unknown.status).toBe(422)
      expect(unknown.body).toEqual({ errors: { provider_id: ["must exist"] } })
    }))

  it.effect("batch delete: booked slots, unknown ids and other providers' slots stay and are reported", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const other = yield* makeProvider(token)
      const free1 = yield* slotAt(token, provider.id, 200)
      const free2 = yield* slotAt(token, provider.id, 201)
      const booked = yield* slotAt(token, provider.id, 202)
      const theirs = yield* slotAt(token, other.id, 200)
      yield* bookSlot(token, booked, yield* insertPatient())
      const response = yield* request("DELETE", `${base}/providers/available_slots/destroy_in_batch`, {
        token, body: { provider_id: provider.id, slot_ids: [free1, free2, booked, theirs, 999999] }
      })
      expect(response.status).toBe(200)
      expect(response.body).toEqual({
        deleted_slots: 2,
        failed_slots: 3,
        errors: [
          { slot_id: booked, error: "Slot is booked and cannot be deleted" },
          { slot_id: theirs, error: "Slot belongs to another provider" },
          { slot_id: 999999, error: "Slot not found" }
        ]
      })
      const client = yield* clientAs(token)
      expect((yield* client.availability.showSlot({ path: { id: booked } })).available_slot.id).toBe(booked)
      expect((yield* client.availability.showSlot({ path: { id: theirs } })).available_slot.id).toBe(theirs)
      expect((yield* request("GET", `${base}/available_slots/${free1}`, { token })).status).toBe(404)
    }))

  it.effect("booking makes a scheduled appointment and closes the slot; booked, unavailable and past slots are 409", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const patient = yield* insertPatient()
      const slot = yield* slotAt(token, provider.id, 300, 1)
      const response = yield* book(token, slot, patient, { appointment_type: "consultation", notes: "First visit" })
      expect(response.status).toBe(201)
      const created = (response.body as { book: Record<string, unknown> & { appointment_id: number } }).book
      expect(Object.keys(created).sort()).toEqual([
        "appointment_id", "appointment_type", "available_slot_id", "created_at", "id", "notes", "patient_id", "status", "updated_at"
      ])
      expect(created).toMatchObject({
        available_slot_id: slot, patient_id: patient, appointment_type: "consultation", notes: "First visit", status: "confirmed"
      })
      const client = yield* clientAs(token)
      const { appointment } = yield* client.appointments.show({ path: { id: AppointmentId.make(created.appointment_id) } })
      expect(appointment).toMatchObject({
        status: "scheduled", scheduled_at: new Date(hoursFromNow(300)), duration_minutes: 60, provider_id: provider.id, patient_id: patient,
        appointment_type: "consultation", no_show: false
      })
      expect(yield* slotAvailable(token, slot)).toBe(false)
      const books = yield* request("GET", `${base}/books?patient_id=${patient}`, { token })
      expect(books.body).toEqual({ books: [created], pagination: onePage })
      const typedBooks = yield* client.availability.listBooks({ urlParams: { patient_id: patient } })
      expect(typedBooks.books.map((b) => [b.id, b.appointment_id, b.status])).toEqual([[created.id, created.appointment_id, "confirmed"]])

      const again = yield* book(token, slot, yield* insertPatient())
      expect(again.status).toBe(409)
      expect(again.body).toEqual({ errors: "Slot is already booked" })
      // A booked slot cannot be moved or deleted.
      const move = yield* request("PUT", `${base}/available_slots/${slot}`, { token, body: { available_slot: { start_time: hoursFromNow(400), end_time: hoursFromNow(401) } } })
      expect(move.status).toBe(409)
      expect(move.body).toEqual({ errors: "Slot is booked and cannot be changed" })
      const remove = yield* request("DELETE", `${base}/available_slots/${slot}`, { token })
      expect(remove.status).toBe(409)
      expect(remove.body).toEqual({ errors: "Slot is booked and cannot be deleted" })

      const closed = yield* slotAt(token, provider.id, 310)
      yield* client.availability.updateSlot({ path: { id: closed }, payload: { available_slot: { available: false } } })
      const unavailable = yield* book(token, closed, patient)
      expect(unavailable.status).toBe(409)
      expect(unavailable.body).toEqual({ errors: "Slot is not available" })

      const sql = yield* SqlClient.SqlClient
      const past = yield* slotAt(token, provider.id, 320)
      yield* sql`UPDATE available_slots SET start_time = now() - interval '2 hours', end_time = now() - interval '1 hour' WHERE id = ${past}`
      const late = yield* book(token, past, patient)
      expect(late.status).toBe(409)
      expect(late.body).toEqual({ errors: "Slot is in the past" })

      const free = yield* slotAt(token, provider.id, 330)
      expect((yield* book(token, 999999, patient)).body).toEqual({ errors: { available_slot_id: ["must exist"] } })
      const noPatient = yield* book(token, free, 999999)
      expect(noPatient.status).toBe(422)
      expect(noPatient.body).toEqual({ errors: { patient_id: ["must exist"] } })
      // The failed booking changed nothing.
      expect(yield* slotAvailable(token, free)).toBe(true)
    }))

  it.effect("20 concurrent bookings of one slot: exactly one 201, one appointment", () =>
    Effect.gen(function*() {
      const token = yield* adminToken
      const provider = yield* makeProvider(token)
      const slot = yield* slotAt(token, provider.id, 500)
      const patients = yield* Effect.forEach(Array.from({ length: 20 }), () => insertPatient())
      const responses = yield* Effect.forEach(patients, (patient) => book(token, slot, patient), { concurrency: "unbounded" })
      const statuses = responses.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      expect(statuses.filter((s) => s === 409)).toHaveLength(19)
      const sql = yield* SqlClient.SqlClient
      const [{ n }] = (yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM appointments WHERE available_slot_id = ${slot}`) as [{ n: number }]
      expect(n).toBe(1)
      const [{ b }] = (yield* sql<{ b: number }>`SELECT count(*)::int AS b FROM books WHERE available_slot_id = ${slot}`) as [{ b: number }]
      expect(b).toBe(1)
    }))
})
