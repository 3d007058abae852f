/**
 * The OTF's rows come from the PRTF's definition of an outreach attempt: over random engagement
 * histories and events, a member's rows in the Outreach Tracker File are exactly the PRTF's
 * outreach attempts (telehealth + in person) of the same period; and each file's progress total is
 * its row count.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Runtime, Stream } from "effect"
import fc from "fast-check"
import { eventStatuses, eventTypes } from "../../../src/Domain/Ecm/Activity.js"
import { engagementStatuses } from "../../../src/Domain/Ecm/Engagement.js"
import { prtfColumns } from "../../../src/Domain/Ecm/PrtfReport.js"
import { PrtfRowsRepo } from "../../../src/Services/Ecm/PrtfRowsRepo.js"
import { ExchangeRowsRepo } from "../../../src/Services/EcmExchange/ExchangeRowsRepo.js"
import { TestApp } from "../../support/app.js"
import { insertEvent, insertStatus } from "../../Http/Ecm/prtfSupport.js"
import { insertHealthPlan } from "../../support/fixtures.js"
import { insertUser } from "../../Http/Ecm/users.js"
import { insertPlanMember } from "../../Http/EcmExchange/exchangeSupport.js"

const period = { startDate: "2026-01-01", endDate: "2026-03-31" }
const memberIdColumn = prtfColumns.indexOf("Member ID (CIN)")
const outreachColumns = [prtfColumns.indexOf("Telehealth Outreach Attempts"), prtfColumns.indexOf("In-Person Outreach Attempts")]

const day = (from: string, days: number) =>
  fc.integer({ min: 0, max: days }).map((k) => new Date(Date.parse(`${from}T00:00:00Z`) + k * 86_400_000).toISOString().slice(0, 10))

layer(TestApp())("OTF rows and PRTF outreach counts", (it) => {
  it.effect("per member, the OTF's rows equal the PRTF's outreach attempts of the same period", () =>
    Effect.gen(function*() {
      const staff = yield* insertUser({ email: "otf@prop.test", role: "provider" })
      const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
      const run = Runtime.runPromise(runtime)
      const entry = fc.record({ status: fc.constantFrom(...engagementStatuses), day: day("2025-12-20", 120) })
      const event = fc.record({
        type: fc.constantFrom(...eventTypes),
        status: fc.constantFrom(...eventStatuses),
        duration: fc.option(fc.integer({ min: 0, max: 90 }), { nil: null }),
        at: fc.integer({ min: Date.parse("2025-12-28T00:00:00Z"), max: Date.parse("2026-04-04T00:00:00Z") })
      })
      const member = fc.record({ inPeriod: entry.map((e) => ({ ...e, day: e.day < "2026-01-01" ? "2026-01-01" : e.day > "2026-03-31" ? "2026-03-31" : e.day })), entries: fc.array(entry, { maxLength: 4 }), events: fc.array(event, { maxLength: 12 }) })
      let n = 0
      yield* Effect.promise(() => fc.assert(fc.asyncProperty(fc.array(member, { minLength: 1, maxLength: 4 }), (members) => run(Effect.gen(function*() {
        const plan = ++n
        const planId = yield* insertHealthPlan(`P${plan}`, `P${plan}`)
        const memberIds: Array<string> = []
        for (const [i, m] of members.entries()) {
          const memberId = `OTF${plan}-${i}`
          memberIds.push(memberId)
          const patientId = yield* insertPlanMember(planId, { first_name: `M${i}`, last_name: `Plan${plan}`, member_id: memberId, cin: memberId, auth_to: null })
          // One entry inside the period: the PRTF includes the member.
          for (const e of [m.inPeriod, ...m.entries]) yield* insertStatus(patientId, e.status, e.day, "Recorded")
          for (const e of m.events) yield* insertEvent(patientId, staff.id, e.type, e.status, new Date(e.at).toISOString(), e.duration)
        }
        const criteria = { healthPlanId: planId, ...period }
        const collect = <A>(total: number, batches: Stream.Stream<ReadonlyArray<A>>) =>
          Effect.map(Stream.runCollect(Stream.flattenIterables(batches)), (rows) => ({ total, rows: Chunk.toReadonlyArray(rows) }))
        const otf = yield* Effect.flatMap(ExchangeRowsRepo, (repo) => repo.withOtfRecords(criteria, collect))
        const rtf = yield* Effect.flatMap(ExchangeRowsRepo, (repo) => repo.withRtfRecords(criteria, collect))
        // The progress totals count the files' own rows.
        expect(otf.total).toBe(otf.rows.length)
        expect([rtf.total, rtf.rows.length]).toEqual([members.length, members.length])
        const otfPerMember = new Map<string, number>()
        for (const r of otf.rows) otfPerMember.set(r.cin!, (otfPerMember.get(r.cin!) ?? 0) + 1)
        const prtf = yield* Effect.flatMap(PrtfRowsRepo, (repo) =>
          repo.withRows({ ...period, npi: null, providerName: null, providerPhone: null, producedOn: "2026-04-02" }, (batches) =>
            Stream.runCollect(Stream.flattenIterables(batches))))
        const prtfPerMember = new Map(Chunk.toReadonlyArray(prtf)
          .filter((cells) => memberIds.includes(cells[memberIdColumn] as string))
          .map((cells) => [cells[memberIdColumn] as string, outreachColumns.reduce((sum, i) => sum + (cells[i] as number), 0)]))
        expect(prtfPerMember.size).toBe(members.length)
        for (const id of memberIds) expect([id, otfPerMember.get(id) ?? 0]).toEqual([id, prtfPerMember.get(id)])
      }).pipe(Effect.provide(ExchangeRowsRepo.Default), Effect.provide(PrtfRowsRepo.Default)))), { numRuns: 20 }))
    }), { timeout: 180_000 })
})
