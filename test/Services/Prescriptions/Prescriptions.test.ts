/**
 * The prescription status machine (general §2.8, docs/spec-decisions.md) through the
 * `Prescriptions` service over fake repositories: every move, who may make it, cancels, refills,
 * the daily expiry, and what each writes (the row, its history, the audit trail). Lists, the
 * medication history and the access scopes' SQL are test/Http/Prescriptions.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { MedicationId, PatientId, PrescriptionId, ProviderId, UserId } from "../../../src/Domain/Ids.js"
import { type HistoryEvent, type PrescriptionStatus, prescriptionStatuses } from "../../../src/Domain/Prescriptions/Prescription.js"
import type { Viewer } from "../../../src/Services/Access/Viewer.js"
import { MedicationsRepo } from "../../../src/Services/Prescriptions/MedicationsRepo.js"
import { PrescriptionHistoryRepo } from "../../../src/Services/Prescriptions/PrescriptionHistoryRepo.js"
import { Prescriptions } from "../../../src/Services/Prescriptions/Prescriptions.js"
import { type PrescriptionRow, PrescriptionsRepo, type Terms } from "../../../src/Services/Prescriptions/PrescriptionsRepo.js"
import { ProvidersRepo } from "../../../src/Services/Providers/ProvidersRepo.js"
import { now } from "../../../src/Services/Time.js"
import { testConfig } from "../../Layers/fixtures.js"
import {
  auditActions, type AuditRow, type BreakGlassAccess, FakeDatabase, fakeAccess, fakeAuditLog, type Table, unused
} from "../../support/fakes.js"

const patient = 10
const otherPatient = 11
const medication = 50
/** The prescriber (provider 20), their supervisor (provider 24), another provider (22) and the patient's parent. */
const admin: Viewer = { id: 1, role: "admin" }
const prescriber: Viewer = { id: 21, role: "provider" }
const otherProvider: Viewer = { id: 23, role: "provider" }
const supervisor: Viewer = { id: 25, role: "supervisor" }
const parent: Viewer = { id: 30, role: "parent" }
const otherParent: Viewer = { id: 31, role: "parent" }
const frontDesk: Viewer = { id: 40, role: "support" }
/** 03:00 UTC on 11 March is still 10 March in Los Angeles (the clinic's zone). */
const nowMs = Date.UTC(2026, 2, 11, 3, 0)
const clinicToday = "2026-03-10"

interface History {
  readonly id: number
  readonly prescription_id: number
  readonly event: HistoryEvent
  readonly from_status: PrescriptionStatus | null
  readonly status: PrescriptionStatus
  readonly actor_id: number | null
}

const prescriptionRow = (id: number, status: PrescriptionStatus, more: Partial<PrescriptionRow> = {}): PrescriptionRow => ({
  id: PrescriptionId.make(id), patient_id: PatientId.make(patient), provider_id: ProviderId.make(20), medication_id: MedicationId.make(medication),
  dosage: "10 mg", frequency: "once daily", quantity: 30, refills: 2, refills_remaining: 2, instructions: null,
  prescription_date: "2026-03-01", status, start_date: "2026-03-01", end_date: "2026-06-01", created_at: new Date(Date.UTC(2026, 2, 1)),
  updated_at: new Date(Date.UTC(2026, 2, 1)), medication_name: "Sertraline", generic_name: "sertraline", brand_names: ["Zoloft"],
  strength: "50 mg", dosage_form: "tablet", patient_first_name: "Pat", patient_last_name: "Doe", patient_user_id: UserId.make(parent.id),
  provider_first_name: "Lee", provider_last_name: "Roe", provider_supervisor_id: ProviderId.make(24), ...more
})

const withTerms = (row: PrescriptionRow, t: Terms): PrescriptionRow => ({
  ...row, patient_id: PatientId.make(t.patientId), provider_id: ProviderId.make(t.providerId), medication_id: MedicationId.make(t.medicationId),
  dosage: t.dosage, frequency: t.frequency, quantity: t.quantity, refills: t.refills, refills_remaining: t.refillsRemaining,
  instructions: t.instructions, prescription_date: t.prescriptionDate, start_date: t.startDate, end_date: t.endDate
})

const fakePrescriptionsRepo = (rows: Table<PrescriptionRow>) => {
  const write = (id: number, change: (row: PrescriptionRow) => PrescriptionRow) =>
    Effect.map(now, (at) => rows.update(id, (row) => ({ ...change(row), updated_at: at })))
  return PrescriptionsRepo.make({
    list: unused("PrescriptionsRepo.list"),
    findById: (id) => Effect.succeed(rows.find(id)),
    insert: (terms) => Effect.map(now, (at) => rows.insert((id) => withTerms(prescriptionRow(id, "active", { created_at: at, updated_at: at }), terms)).id),
    update: (id, terms, status) => Effect.asVoid(write(id, (row) => ({ ...withTerms(row, terms), status }))),
    cancel: (id) => Effect.asVoid(write(id, (row) => ({ ...row, status: "cancelled" }))),
    refill: (id) =>
      rows.get(id)!.refills_remaining === 0
        ? Effect.succeed(false)
        : Effect.as(write(id, (row) => ({ ...row, refills_remaining: row.refills_remaining - 1 })), true),
    expireBatch: (day) =>
      Effect.forEach(
        rows.where((r) => r.status === "active" && r.end_date !== null && r.end_date < day),
        (r) => Effect.as(write(r.id, (row) => ({ ...row, status: "expired" })), r.id)
      ),
    medicationGroups: unused("PrescriptionsRepo.medicationGroups"),
    ofMedications: unused("PrescriptionsRepo.ofMedications")
  })
}

/** The history as the repository appends it: each prescription's status after the change. */
const fakeHistoryRepo = (history: Table<History>, rows: Table<PrescriptionRow>) =>
  PrescriptionHistoryRepo.make({
    append: (ids, event, fromStatus, actorId) =>
      Effect.sync(() =>
        ids.forEach((prescriptionId) =>
          history.insert((id) => ({
            id, prescription_id: prescriptionId, event, from_status: fromStatus, status: rows.get(prescriptionId)!.status, actor_id: actorId
          }))
        )
      ),
    entriesOf: unused("PrescriptionHistoryRepo.entriesOf")
  })

const fakeMedicationsRepo = MedicationsRepo.make({
  list: unused("MedicationsRepo.list"),
  findById: unused("MedicationsRepo.findById"),
  insert: unused("MedicationsRepo.insert"),
  update: unused("MedicationsRepo.update"),
  /** Medication 50 is active, 51 is not. */
  activeOf: (id) => Effect.succeed(id === medication ? Option.some(true) : id === 51 ? Option.some(false) : Option.none())
})

const fakeProvidersRepo = ProvidersRepo.make({
  list: unused("ProvidersRepo.list"),
  findById: unused("ProvidersRepo.findById"),
  advisoryLock: unused("ProvidersRepo.advisoryLock"),
  lockSupervisor: unused("ProvidersRepo.lockSupervisor"),
  supervises: unused("ProvidersRepo.supervises"),
  update: unused("ProvidersRepo.update"),
  supervisorsList: unused("ProvidersRepo.supervisorsList"),
  superviseesOf: unused("ProvidersRepo.superviseesOf"),
  upsertForRole: unused("ProvidersRepo.upsertForRole"),
  deactivateOf: unused("ProvidersRepo.deactivateOf"),
  lockActiveSupervisor: unused("ProvidersRepo.lockActiveSupervisor"),
  insert: unused("ProvidersRepo.insert"),
  supervisorActiveOf: unused("ProvidersRepo.supervisorActiveOf"),
  /** Providers 20 and 22 may prescribe. */
  canPrescribe: (id) => Effect.succeed(id === 20 || id === 22),
  activeOf: unused("ProvidersRepo.activeOf"),
  activeOptions: Effect.dieMessage("fake: ProvidersRepo.activeOptions is not faked")
})

/** A fresh world: the prescriber's patient 10 (the parent's child) and `Prescriptions` over them. */
const world = (...seed: ReadonlyArray<PrescriptionRow>) => {
  const db = new FakeDatabase()
  const rows = db.table<PrescriptionRow>()
  const history = db.table<History>()
  const audit = db.table<AuditRow>()
  const breakGlass = db.table<BreakGlassAccess>()
  seed.forEach((row) => rows.put(row))
  const access = fakeAccess({
    patients: [patient, otherPatient],
    // The prescriber and their supervisor follow patient 10; the parent is its family; another provider follows patient 11.
    related: (viewer, patientId) =>
      viewer.role === "admin" || (patientId === patient ? [prescriber.id, supervisor.id, parent.id] : [otherProvider.id]).includes(viewer.id),
    providerOfUser: { [prescriber.id]: 20, [otherProvider.id]: 22, [supervisor.id]: 24 },
    linkedPatients: { [parent.id]: [patient], [otherParent.id]: [otherPatient] }
  }, breakGlass)
  const layer = Prescriptions.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(PrescriptionsRepo, fakePrescriptionsRepo(rows)),
      Layer.succeed(PrescriptionHistoryRepo, fakeHistoryRepo(history, rows)),
      Layer.succeed(MedicationsRepo, fakeMedicationsRepo),
      Layer.succeed(ProvidersRepo, fakeProvidersRepo),
      access,
      fakeAuditLog(audit),
      testConfig()
    )),
    Layer.provide(db.sqlClient)
  )
  const run = <A, E>(f: (service: Prescriptions) => Effect.Effect<A, E>) =>
    Effect.zipRight(TestClock.setTime(nowMs), Effect.provide(Effect.flatMap(Prescriptions, f), layer))
  const untouched = () => {
    expect(rows.all()).toEqual(seed)
    expect(history.all()).toEqual([])
    expect(audit.all()).toEqual([])
  }
  return { rows, history, audit, breakGlass, run, untouched }
}

/** The moves a PUT may make; expired only by the daily job. */
const allowed: ReadonlyArray<readonly [PrescriptionStatus, PrescriptionStatus]> = [
  ["active", "completed"], ["active", "discontinued"], ["active", "on_hold"], ["active", "cancelled"], ["on_hold", "active"]
]

const refusal = (field: string, message: string) => ({ _tag: "ValidationFailed", errors: { [field]: [message] } })
const forbidden = { _tag: "Forbidden", errors: "You are not authorized to perform this action." }
const notFound = { _tag: "NotFound", errors: "Prescription not found" }

describe("Prescriptions over fake repositories", () => {
  describe("every move between two statuses", () => {
    for (const from of prescriptionStatuses) {
      for (const to of prescriptionStatuses.filter((s) => s !== from)) {
        const allows = allowed.some(([a, b]) => a === from && b === to)
        it.effect(`${from} → ${to}: ${allows ? "moves, recorded" : "refused, nothing written"}`, () =>
          Effect.gen(function*() {
            const w = world(prescriptionRow(1, from))
            const result = yield* Effect.either(w.run((service) => service.update(prescriber, 1, { status: to })))
            if (!allows) {
              const message = to === "expired" ? "can only become expired when the end date has passed" : `can't change from ${from} to ${to}`
              expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(refusal("status", message))))
              return w.untouched()
            }
            expect(Option.map(Option.getRight(result), (p) => p.status)).toEqual(Option.some(to))
            expect(w.rows.get(1)).toMatchObject({ status: to, updated_at: new Date(nowMs) })
            expect(w.history.all()).toMatchObject([{ prescription_id: 1, event: "status_changed", from_status: from, status: to, actor_id: prescriber.id }])
            expect(auditActions(w.audit, "prescription", 1)).toEqual(["prescription.update", `prescription.${to}`])
          }))
      }
    }
  })

  it.effect("who may change it: admins and its prescriber; the supervisor and a parent are 403; anyone else 404", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [Viewer, object]> = [
        [supervisor, forbidden], [parent, forbidden], [otherParent, notFound], [otherProvider, notFound], [frontDesk, notFound]
      ]
      for (const [viewer, error] of cases) {
        const w = world(prescriptionRow(1, "active"))
        expect(yield* Effect.flip(w.run((service) => service.update(viewer, 1, { status: "on_hold" }))), viewer.role).toMatchObject(error)
        expect(yield* Effect.flip(w.run((service) => service.cancel(viewer, 1)))).toMatchObject(error)
        expect(yield* Effect.flip(w.run((service) => service.refill(viewer, 1)))).toMatchObject(error)
        w.untouched()
      }
      const w = world(prescriptionRow(1, "active"))
      yield* w.run((service) => service.update(admin, 1, { status: "on_hold" }))
      expect(w.rows.get(1)?.status).toBe("on_hold")
    }))

  it.effect("a provider who breaks the glass sees it is there (403, not 404) and the access stays recorded", () =>
    Effect.gen(function*() {
      const w = world(prescriptionRow(1, "active"))
      const glass: Viewer = { ...otherProvider, breakGlass: { reason: "Covering on call", method: "PUT", path: "/v1/prescriptions/1" } }
      expect(yield* Effect.flip(w.run((service) => service.update(glass, 1, { status: "on_hold" })))).toMatchObject(forbidden)
      expect(w.breakGlass.all()).toMatchObject([{ user_id: otherProvider.id, patient_id: patient, reason: "Covering on call" }])
      expect(w.rows.get(1)?.status).toBe("active")
    }))

  it.effect("terms change only while active or on hold; refills move what remains; the prescriber only by an admin", () =>
    Effect.gen(function*() {
      for (const status of prescriptionStatuses) {
        const w = world(prescriptionRow(1, status, { refills: 2, refills_remaining: 1 }))
        const result = yield* Effect.either(w.run((service) => service.update(prescriber, 1, { refills: 5, dosage: " 20 mg " })))
        if (status === "active" || status === "on_hold") {
          expect(w.rows.get(1)).toMatchObject({ status, refills: 5, refills_remaining: 4, dosage: "20 mg" })
          expect(w.history.all()).toMatchObject([{ event: "changed", from_status: null, status }])
          expect(auditActions(w.audit, "prescription", 1)).toEqual(["prescription.update"])
        } else {
          expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(
            refusal("status", `is ${status}: only active and on_hold prescriptions can be changed`)
          )))
          w.untouched()
        }
      }
      const w = world(prescriptionRow(1, "active"))
      expect(yield* Effect.flip(w.run((service) => service.update(prescriber, 1, { provider_id: ProviderId.make(22) }))))
        .toMatchObject(refusal("provider_id", "can only be changed by an admin"))
      expect(yield* Effect.flip(w.run((service) => service.update(admin, 1, { medication_id: MedicationId.make(51), quantity: 0 }))))
        .toMatchObject({ _tag: "ValidationFailed", errors: { medication_id: ["must be active"], quantity: ["must be greater than 0"] } })
      w.untouched()
      yield* w.run((service) => service.update(admin, 1, { provider_id: ProviderId.make(22) }))
      expect(w.rows.get(1)?.provider_id).toBe(22)
    }))

  it.effect("create: active, every refill remaining, written with its history; a parent may not", () =>
    Effect.gen(function*() {
      const w = world()
      const input = {
        patient_id: PatientId.make(patient), medication_id: MedicationId.make(medication), dosage: "10 mg", frequency: " Once  Daily ",
        quantity: 30, refills: 3, prescription_date: clinicToday
      }
      const created = yield* w.run((service) => service.create(prescriber, input))
      expect(created).toMatchObject({ status: "active", provider_id: 20, refills: 3, refills_remaining: 3, frequency: "once daily" })
      expect(w.history.all()).toMatchObject([{ prescription_id: created.id, event: "created", status: "active", actor_id: prescriber.id }])
      expect(auditActions(w.audit, "prescription", created.id)).toEqual(["prescription.create"])
      const tomorrow = yield* Effect.flip(w.run((service) => service.create(prescriber, { ...input, prescription_date: "2026-03-11" })))
      expect(tomorrow).toMatchObject(refusal("prescription_date", "can't be in the future"))
      expect(yield* Effect.flip(w.run((service) => service.create(parent, input)))).toMatchObject(forbidden)
      expect(w.rows.all()).toHaveLength(1)
    }))

  it.effect("cancel: only an active one, which stays readable as cancelled", () =>
    Effect.gen(function*() {
      for (const status of prescriptionStatuses) {
        const w = world(prescriptionRow(1, status))
        const result = yield* Effect.either(w.run((service) => service.cancel(prescriber, 1)))
        if (status === "active") {
          expect(w.rows.get(1)?.status).toBe("cancelled")
          expect(w.history.all()).toMatchObject([{ event: "status_changed", from_status: "active", status: "cancelled" }])
          expect(auditActions(w.audit, "prescription", 1)).toEqual(["prescription.cancelled"])
          expect((yield* w.run((service) => service.show(prescriber, 1))).status).toBe("cancelled")
        } else {
          expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(
            refusal("status", `is ${status}: only an active prescription can be cancelled`)
          )))
          w.untouched()
        }
      }
    }))

  it.effect("refill: one less remaining, never below 0; only an active prescription", () =>
    Effect.gen(function*() {
      const w = world(prescriptionRow(1, "active", { refills: 1, refills_remaining: 1 }))
      expect(yield* w.run((service) => service.refill(prescriber, 1))).toMatchObject({ refills_remaining: 0 })
      expect(yield* Effect.flip(w.run((service) => service.refill(prescriber, 1)))).toMatchObject(refusal("refills_remaining", "has no refills remaining"))
      expect(w.rows.get(1)?.refills_remaining).toBe(0)
      expect(w.history.all().map((h) => h.event)).toEqual(["refilled"])
      expect(auditActions(w.audit, "prescription", 1)).toEqual(["prescription.refill"])
      const held = world(prescriptionRow(1, "on_hold"))
      expect(yield* Effect.flip(held.run((service) => service.refill(prescriber, 1))))
        .toMatchObject(refusal("status", "is on_hold: only an active prescription can be refilled"))
      held.untouched()
    }))

  it.effect("the daily expiry: active ones whose end date passed (clinic day) expire once, by no one", () =>
    Effect.gen(function*() {
      const w = world(
        prescriptionRow(1, "active", { end_date: "2026-03-09" }),
        prescriptionRow(2, "active", { end_date: clinicToday }),
        prescriptionRow(3, "on_hold", { end_date: "2026-03-01" }),
        prescriptionRow(4, "active", { end_date: null })
      )
      expect(yield* w.run((service) => service.expireDue)).toBe(1)
      expect(yield* w.run((service) => service.expireDue)).toBe(0)
      expect(w.rows.all().map((r) => r.status)).toEqual(["expired", "active", "on_hold", "active"])
      expect(w.history.all()).toMatchObject([{ prescription_id: 1, event: "status_changed", from_status: "active", status: "expired", actor_id: null }])
      expect(w.audit.all()).toMatchObject([{ actor_id: null, action: "prescription.expired", target_type: "prescription", target_id: 1 }])
    }))
})
