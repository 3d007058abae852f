/**
 * One rule for attempts and encounters (docs/prtf.md "The rule"): the events counts endpoint and the
 * PRTF file give `contactOf`'s answer — exhaustively, on every event type × event status ×
 * engagement status on the day × duration class stored in PostgreSQL, and over random engagement
 * histories and event histories, member by member.
 */
import type { HttpClient } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Runtime } from "effect"
import fc from "fast-check"
import { type EventStatus, eventStatuses, type EventType, eventTypes } from "../../../src/Domain/Ecm/Activity.js"
import { type EngagementStatus, engagementStatuses } from "../../../src/Domain/Ecm/Engagement.js"
import { type PrtfCategory, prtfCategories, prtfCategoryOf } from "../../../src/Domain/Ecm/Prtf.js"
import { type PrtfColumn, prtfColumns } from "../../../src/Domain/Ecm/PrtfReport.js"
import type { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { signIn, TestApp } from "../../support/app.js"
import { insertEcmMembers, insertEvents, insertStatusEntries } from "../../support/fixtures.js"
import { eventCounts } from "./activitySupport.js"
import { csvText, generateReport, insertEvent, insertMember, insertStatus, parseCsv } from "./prtfSupport.js"
import { insertUser } from "./users.js"

const period = { start_date: "2026-01-01", end_date: "2026-03-31" }
const categoryColumns: Record<PrtfCategory, PrtfColumn> = {
  telehealth_encounters: "Telehealth Encounters",
  in_person_encounters: "In-Person Encounters",
  telehealth_outreach: "Telehealth Outreach Attempts",
  in_person_outreach: "In-Person Outreach Attempts"
}
const typeColumns: Record<EventType, PrtfColumn> = {
  sms: "SMS Count", call: "Call Count", email: "Email Count", appointment: "Appointment Count", meeting: "Meeting Count", task: "Task Count"
}
const zeroCategories = () => Object.fromEntries(prtfCategories.map((c) => [c, 0])) as Record<PrtfCategory, number>

interface Counts {
  readonly total: number
  readonly by_type: Record<EventType, number>
  readonly prtf_categories: Record<PrtfCategory, number>
}

const countsOf = (token: string, patientId: number) => Effect.map(eventCounts(token, patientId, period), (r) => r.counts)

/** The report's rows by member id. */
const reportRows = (token: string) =>
  Effect.gen(function*() {
    const created = yield* generateReport(token, period)
    const [header, ...rows] = parseCsv(yield* csvText(created.prtf_report.url))
    expect(header).toEqual([...prtfColumns])
    const column = (name: PrtfColumn) => prtfColumns.indexOf(name)
    return new Map(rows.map((row) => [row[column("Member ID (CIN)")]!, (name: PrtfColumn) => row[column(name)]!]))
  })

const categoriesOfRow = (cell: (name: PrtfColumn) => string) =>
  Object.fromEntries(prtfCategories.map((c) => [c, Number(cell(categoryColumns[c]))])) as Record<PrtfCategory, number>

layer(TestApp())("one rule for attempts and encounters", (it) => {
  it.effect("every event type × status × engagement status × duration class: counts and file give the rule's answer", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const staff = yield* insertUser({ email: "rule@prtf.test", role: "provider" })
      const durations: ReadonlyArray<number | null> = [null, 0, 17]
      const engagements: ReadonlyArray<EngagementStatus | null> = [null, ...engagementStatuses]
      const cases = engagements.flatMap((engagement) =>
        eventTypes.flatMap((type) =>
          eventStatuses.flatMap((status) =>
            durations.map((duration) => ({ engagement, type, status, duration, expected: prtfCategoryOf({ event_type: type, status, duration }, engagement) })))))
      expect(cases.length).toBe(8 * 6 * 4 * 3)
      // One member per case, written in a few set-based statements: the event is on 2026-02-10 and
      // the status in force that day is the case's (none: the first entry comes later, still
      // inside the period so the member is in the file).
      const ids = yield* insertEcmMembers(cases.map((_, i) => `RULE${i + 1}`))
      yield* insertStatusEntries(cases.map((c, i) => ({
        patientId: ids[i]!, status: c.engagement ?? "new_member", effectiveDate: c.engagement === null ? "2026-03-01" : "2026-01-15",
        source: c.engagement === null ? "mif" : "user", reason: c.engagement === "disenrolled" ? "Moved" : null
      })))
      yield* insertEvents(staff.id, cases.map((c, i) => ({ patientId: ids[i]!, type: c.type, status: c.status, at: "2026-02-10T12:00:00Z", duration: c.duration })))
      const rows = yield* reportRows(token)
      const counted = yield* Effect.forEach(ids, (id) => countsOf(token, id), { concurrency: 4 })
      for (const [i, c] of cases.entries()) {
        const memberId = `RULE${i + 1}`
        const expected = { ...zeroCategories(), ...(c.expected === null ? {} : { [c.expected]: 1 }) }
        expect([memberId, c, counted[i]!.prtf_categories]).toEqual([memberId, c, expected])
        const row = rows.get(memberId)
        expect(row, memberId).toBeDefined()
        expect([memberId, c, categoriesOfRow(row!)]).toEqual([memberId, c, expected])
        expect(row!(typeColumns[c.type])).toBe("1")
      }
    }), { timeout: 120_000 })

  it.effect("over random engagement and event histories, the counts endpoint and the file agree with the rule, member by member", () =>
    Effect.gen(function*() {
      const token = yield* signIn()
      const staff = yield* insertUser({ email: "random@prtf.test", role: "provider" })
      const runtime = yield* Effect.runtime<SqlClient.SqlClient | HttpClient.HttpClient | MemoryObjectStore>()
      const run = Runtime.runPromise(runtime)
      const day = (from: string, days: number) => fc.integer({ min: 0, max: days }).map((k) =>
        new Date(Date.parse(`${from}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10))
      const entry = fc.record({ status: fc.constantFrom(...engagementStatuses), day: day("2025-12-20", 120) })
      const event = fc.record({
        type: fc.constantFrom(...eventTypes),
        status: fc.constantFrom<EventStatus>(...eventStatuses),
        duration: fc.option(fc.integer({ min: 0, max: 90 }), { nil: null }),
        at: fc.integer({ min: Date.parse("2025-12-28T00:00:00Z"), max: Date.parse("2026-04-04T00:00:00Z") })
      })
      const member = fc.record({ entries: fc.array(entry, { maxLength: 5 }), events: fc.array(event, { maxLength: 12 }) })
      let n = 0
      yield* Effect.promise(() => fc.assert(fc.asyncProperty(fc.array(member, { minLength: 1, maxLength: 4 }), (members) => run(Effect.gen(function*() {
        const built: Array<{ memberId: string; patientId: number; expected: Counts; included: boolean }> = []
        for (const m of members) {
          const memberId = `RND${++n}`
          const patientId = yield* insertMember({ first_name: `Rnd${n}`, last_name: "Member", member_id: memberId, auth_to: null })
          for (const e of m.entries) yield* insertStatus(patientId, e.status, e.day, "Recorded")
          // The oracle: the status on a day is the last entry (by effective day, then as written) on or before it.
          const ordered = m.entries.map((e, i) => ({ ...e, i })).sort((a, b) => a.day.localeCompare(b.day) || a.i - b.i)
          const statusOnDay = (d: string) => ordered.reduce<EngagementStatus | null>((s, e) => (e.day <= d ? e.status : s), null)
          const expected = { total: 0, by_type: Object.fromEntries(eventTypes.map((t) => [t, 0])) as Record<EventType, number>, prtf_categories: zeroCategories() }
          for (const e of m.events) {
            const at = new Date(e.at).toISOString()
            yield* insertEvent(patientId, staff.id, e.type, e.status, at, e.duration)
            const d = at.slice(0, 10)
            if (d < period.start_date || d > period.end_date) continue
            expected.total += 1
            expected.by_type[e.type] += 1
            const category = prtfCategoryOf({ event_type: e.type, status: e.status, duration: e.duration }, statusOnDay(d))
            if (category !== null) expected.prtf_categories[category] += 1
          }
          const included = m.entries.some((e) => e.day >= period.start_date && e.day <= period.end_date)
          built.push({ memberId, patientId, expected, included })
        }
        const rows = yield* reportRows(token)
        for (const b of built) {
          const counts = yield* countsOf(token, b.patientId)
          expect([b.memberId, counts]).toEqual([b.memberId, b.expected])
          const row = rows.get(b.memberId)
          expect([b.memberId, row !== undefined]).toEqual([b.memberId, b.included])
          if (row === undefined) continue
          expect([b.memberId, categoriesOfRow(row)]).toEqual([b.memberId, counts.prtf_categories])
          expect([b.memberId, Object.fromEntries(eventTypes.map((t) => [t, Number(row(typeColumns[t]))]))]).toEqual([b.memberId, counts.by_type])
        }
      }))), { numRuns: 25 }))
    }), { timeout: 180_000 })
})
