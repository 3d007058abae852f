/**
 * The quality harness, bounded: every operation of the served OpenAPI document fuzzed,
 * contract-checked and access-checked, a BOLA check over every owned-record path, every operation
 * raced (the same request 20 times at once) and every bounded string and array sent one past its
 * maximum, and the server's telemetry scanned for everything the harness generated. `npm run fuzz -- --runs N`
 * runs the same code as a long campaign (test/harness/README.md).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { formatAccessFailures, runAccessMatrix } from "./harness/access.js"
import { HarnessApp } from "./harness/app.js"
import { formatBolaFailures, patients, runBola, users } from "./harness/bola.js"
import { formatReport, runCampaign } from "./harness/campaign.js"
import { tokensOf } from "./harness/cases.js"
import { exchange } from "./harness/exchange.js"
import { fixtures } from "./harness/fixtures.js"
import { type Harness, serverHarness } from "./harness/harness.js"
import { memoryInbox } from "./harness/inbox.js"
import { formatOversizeFailures, formatOversizeReport, runOversize } from "./harness/oversize.js"
import { formatRaceFailures, formatRaceReport, runRace } from "./harness/race.js"
import { regressions } from "./harness/regressions.js"
import { singleUseOf } from "./harness/singleUse.js"
import { formatBreakGlassSamples, formatStaffBolaFigures, runStaffBola } from "./harness/staff.js"
import { describeHits, Telemetry } from "./harness/telemetry.js"
import { ecmPatientFamilies } from "./harness/patients.js"
import { makeSeeder } from "./harness/world.js"
import { freshDatabase } from "./support/database.js"

/** HARNESS_SEED and HARNESS_RUNS reproduce or widen a run; the default is the bounded sample. */
const seed = Number(process.env.HARNESS_SEED ?? 20_240_601)
const runs = Number(process.env.HARNESS_RUNS ?? 700)

/**
 * Patient-scoped operations the document has today, by area; a new one changes the count, so
 * whoever adds it sees the BOLA check cover it.
 */
// ECM patients: show: 1.
// ECM Form C (create, list, show, admin list) and lead care managers (assign, update, remove, for patient): 8.
// ECM activities (list, show, create, update, delete, comment) and events (list, counts, show): 9.
// Clinic patients (show, update) and the list/create/show/update/last operations of help requests,
// treatment plans, spots and documents: 15.
// Scheduling: availability.listBooks, availability.createBook, appointments.list, appointments.update (admin
// only: a parent is refused) and clinicAppointments.list: 5.
// Billing: claims.list (query patient_id), claims.create and .update (claim.patient_id),
// claims.showDocument, .updateDocument, .deleteDocument (the `/documents/{id}` path rule; all admin-only:
// a parent is refused), coverage.show and coverage.update: 8.
// Appointment reminders: create and list (by the patient's appointment), show and cancel: 4.
// ECM communications (SMS, call): 2.
// Engagement status (update, show): 2.
// Session notes: clinic list, last (query patient_id) and create (session_note.patient_id), and the
// admin list (query patient_id): 4 (the clinic ones are staff-only, the admin one admin-only: a parent is refused).
// Prescriptions: list and create (patient_id), show, update, cancel and refill (a prescription of the patient), medication history: 7.
// Collaborators: collaborators.list, the assessment token, submit and list (patient_id in the query or the body): 4.
// Questionnaires: responses (create, update, list, show) and invites (create): 5.
// Content: user pieces and user collections (list: patient_id query; create: body patient_id) and
// recommendations (patient_id query): 5.
// Clinic videos: list (query patient_id), create and update (video.patient_id): 3.
// Break-glass accesses for admins to review (patient_id query, admin only): 1.
// The return files' member fields (ECM, show and update): 2.
const expectedPatientScopedOperations = 1 + 8 + 9 + 15 + 5 + 8 + 4 + 2 + 2 + 4 + 7 + 4 + 5 + 5 + 3 + 1 + 2

/**
 * Operations in the staff-vs-staff matrix: the patient-scoped ones of the general area that are not
 * admin-only or public (the family count above minus 24 ECM, 12 admin-only and the assessment
 * submit, which a link token decides), plus the two that link a list of patients (collaborator
 * create and update).
 */
const expectedStaffMatrixOperations = expectedPatientScopedOperations - 24 - 12 - 1 + 2

const telemetry = new Telemetry()
let shared: Harness | undefined
/** One harness for the file: its generated values accumulate for the telemetry scans. */
const harness = Effect.suspend(() => (shared ? Effect.succeed(shared) : Effect.tap(serverHarness(telemetry), (h) => (shared = h))))

/** Drains the captured telemetry and fails naming every generated value found in it. */
const expectCleanTelemetry = (h: Harness) =>
  Effect.sync(() => {
    const scan = telemetry.scan(h.secrets)
    expect(scan.spans, "spans were captured").toBeGreaterThan(0)
    expect(describeHits(scan.hits), "generated personal data or tokens in telemetry").toEqual([])
  })

layer(HarnessApp({
  databaseUrl: Effect.map(freshDatabase(), (d) => d.url),
  observability: telemetry.layer,
  underTestClock: true
}), { timeout: 120_000 })("quality harness", (it) => {
  it.effect("fuzzes every operation of the document: no 5xx, declared statuses, documented bodies, no leaks", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const report = yield* runCampaign(h, { seed, runs })
      console.log(formatReport(report))
      for (const operation of h.operations) {
        const cases = report.coverage.get(operation.id)
        expect(cases?.valid, `${operation.id}: generated valid requests`).toBeGreaterThan(0)
        expect(cases?.hostile, `${operation.id}: generated hostile requests`).toBeGreaterThan(0)
      }
      expect(report.failureCount, formatReport(report)).toBe(0)
      yield* expectCleanTelemetry(h)
    }), 300_000)

  it.effect("replays the requests that once broke the server", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      const world = yield* seeder.world([])
      for (const regression of regressions) {
        const operation = h.operations.find((o) => o.id === regression.operation)
        expect(operation, `${regression.operation} is in the document`).toBeDefined()
        const outcome = yield* exchange(h, {
          operation: operation!,
          caller: regression.caller,
          badToken: "",
          variant: "regression",
          draft: regression.draft,
          refusedByConstruction: false
        }, tokensOf(world))
        expect([outcome.received?.status, ...outcome.violations.map((v) => v.check)], `${regression.bug}\n${outcome.request}\n→ ${outcome.response}`)
          .toEqual([regression.status])
      }
    }))

  it.effect("access matrix: no token, a bad token, parent, staff and admin on every operation", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      const report = yield* runAccessMatrix(h, seeder, seed)
      console.log(`access matrix: ${report.operations} operations, ${report.requests} requests, ${report.failures.length} failures`)
      expect(report.operations).toBe(h.operations.length)
      expect(h.operations.filter((o) => o.adminOnly).length, "admin-only operations found").toBeGreaterThan(0)
      expect(formatAccessFailures(report.failures)).toBe("")
      yield* expectCleanTelemetry(h)
    }), 300_000)

  it.effect("BOLA: a parent never reads or changes another family's records", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      const report = yield* runBola({
        harness: h,
        kinds: [patients(ecmPatientFamilies(h.pii, seed)), users],
        newParent: seeder.user({ role: "parent" }),
        seed
      })
      console.log(`BOLA: ${[...report.scoped].map(([kind, ops]) => `${ops.length} ${kind}-scoped`).join(", ")} operations, ${report.requests} requests`)
      expect(report.scoped.get("patient")?.length, `patient-scoped operations: ${report.scoped.get("patient")?.join(", ")}`)
        .toBe(expectedPatientScopedOperations)
      expect(report.scoped.get("user")).toEqual(expect.arrayContaining(["users.update", "users.delete", "users.cancel"]))
      expect(report.requests).toBeGreaterThan(0)
      expect(formatBolaFailures(report.failures)).toBe("")
      yield* expectCleanTelemetry(h)
    }), 300_000)

  it.effect("BOLA staff against staff: no provider reaches another's patient, no front office clinical content; break-glass opens and is recorded", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      const report = yield* runStaffBola({
        harness: h,
        seeder: ecmPatientFamilies(h.pii, seed),
        newParent: seeder.user({ role: "parent" }),
        frontOffice: (staffRole) => seeder.user({ role: "staff", staffRole }),
        seed
      })
      console.log(`${formatStaffBolaFigures(report)}\n${formatBreakGlassSamples(report)}`)
      expect(report.matrix.get("outsider provider")?.length, `${report.matrix.get("outsider provider")?.join(", ")}`).toBe(expectedStaffMatrixOperations)
      expect(report.matrix.get("front desk")?.length, "clinical operations").toBeGreaterThan(0)
      expect(report.controls).toBe(expectedStaffMatrixOperations)
      expect(formatBolaFailures(report.failures)).toBe("")
      expect([...report.breakGlass].filter(([, id]) => id === undefined).map(([kind]) => kind), "kinds without a break-glass sample").toEqual([])
      yield* expectCleanTelemetry(h)
    }), 600_000)

  it.effect("race mode: the same request 20 times at once never fails the server; single-use rules hold exactly once", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      // 20 identical requests at once; 10 independent ones keep the bounded run short (the script sends 20).
      const report = yield* runRace({ harness: h, seeder, inbox: yield* memoryInbox, seed, copies: 20, freshCopies: 10 })
      console.log(formatRaceReport(report))
      expect(report.operations).toBe(h.operations.length)
      const ids = h.operations.map((o) => o.id)
      // The fixture table names operations that exist: a renamed operation must not silently drop out.
      expect([...Object.keys(fixtures)].filter((id) => !ids.includes(id)), "table entries for unknown operations").toEqual([])
      expect(h.operations.filter((o) => singleUseOf(o) !== undefined).map((o) => o.id))
        .toEqual(expect.arrayContaining(["users.register", "users.confirm", "users.resendConfirmation", "users.resetPassword", "providerInvites.accept"]))
      expect(formatRaceFailures(report.failures)).toBe("")
      yield* expectCleanTelemetry(h)
    }), 300_000)

  it.effect("oversize mode: every string and array one past its declared maximum is refused with 422, quickly", () =>
    Effect.gen(function*() {
      const h = yield* harness
      const seeder = yield* makeSeeder(h.pii, seed)
      const report = yield* runOversize({ harness: h, seeder, seed })
      console.log(formatOversizeReport(report))
      expect(report.operations).toBe(h.operations.length)
      expect(formatOversizeFailures(report.failures)).toBe("")
      yield* expectCleanTelemetry(h)
    }), 300_000)
})
