/**
 * The claim status machine (general §2.6, docs/spec-decisions.md) through the `Claims` service over
 * fake repositories: every move, the ones refused and what each writes (the row, the audit trail).
 * The database's side (the unique active claim per appointment under concurrency, the plan billed)
 * is test/Http/Billing/Claims.test.ts.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { ValidationFailed } from "../../../src/Api/Errors.js"
import { type ClaimStatus, claimStatuses } from "../../../src/Domain/Billing/Claim.js"
import { AppointmentId, ClaimDocumentId, ClaimId, PatientId, ProviderId } from "../../../src/Domain/Ids.js"
import { MemoryObjectStore } from "../../../src/Layers/MemoryObjectStore.js"
import { ClaimDocumentsRepo, type DocumentRow } from "../../../src/Services/Billing/ClaimDocumentsRepo.js"
import { Claims } from "../../../src/Services/Billing/Claims.js"
import { type AppointmentOfClaim, type ClaimFields, type ClaimRow, ClaimsRepo } from "../../../src/Services/Billing/ClaimsRepo.js"
import { InsurancePlansRepo } from "../../../src/Services/Billing/InsurancePlansRepo.js"
import { ObjectStore } from "../../../src/Services/ObjectStore.js"
import { now } from "../../../src/Services/Time.js"
import { auditActions, type AuditRow, FakeDatabase, fakeAuditLog, type Table, unused } from "../../support/fakes.js"
import { testConfig } from "../../Layers/fixtures.js"

const admin = 1
const patient = 10
const provider = 20
/** A completed appointment of the patient with the provider, on the clinic day `seen`. */
const appointment = 30
const seen = "2026-03-09"
/** 03:00 UTC on 11 March is still 10 March in Los Angeles (the clinic's zone). */
const clinicToday = "2026-03-10"
const nowMs = Date.UTC(2026, 2, 11, 3, 0)

const appointments: Readonly<Record<number, AppointmentOfClaim>> = {
  [appointment]: { patient_id: patient, provider_id: provider, status: "completed", day: seen },
  31: { patient_id: patient, provider_id: provider, status: "scheduled", day: clinicToday }
}

/** `claims` as the repository reads and writes it, with the unique active claim per appointment. */
const fakeClaimsRepo = (claims: Table<ClaimRow>) => {
  const taken = (appointmentId: number, except: number) =>
    claims.all().some((c) => c.appointment_id === appointmentId && c.id !== except && c.status !== "denied")
  return ClaimsRepo.make({
    list: unused("ClaimsRepo.list"),
    findById: (id) => Effect.succeed(claims.find(id)),
    exists: (id) => Effect.succeed(claims.get(id) !== undefined),
    references: (r) =>
      Effect.succeed({
        found: { patient: r.patientId === patient, provider: r.providerId === provider },
        appointment: appointments[r.appointmentId]
      }),
    insert: (fields, _createdById) =>
      Effect.gen(function*() {
        if (taken(fields.appointmentId, 0)) return yield* Effect.fail(new ValidationFailed({ errors: { appointment_id: ["has already been taken"] } }))
        const at = yield* now
        return claims.insert((id) => claimRow({ id, fields, at })).id
      }),
    update: (change) =>
      Effect.gen(function*() {
        const at = yield* now
        claims.update(change.id, (row) => ({
          ...claimRow({ id: row.id, fields: change.fields, at: row.created_at }),
          claim_number: row.claim_number,
          status: change.status,
          payment_amount: change.paymentAmount,
          payment_date: change.paymentDate,
          denial_reason: change.denialReason,
          submission_date: row.submission_date,
          edi_batch_id: row.edi_batch_id,
          updated_at: at
        }))
      }),
    delete: (id) => Effect.sync(() => void claims.delete(id)),
    lockForBatch: unused("ClaimsRepo.lockForBatch"),
    markSubmitted: unused("ClaimsRepo.markSubmitted"),
    activeProviders: Effect.succeed([])
  })
}

const billed: ClaimFields = {
  patientId: patient, providerId: provider, appointmentId: appointment, cptCode: "90837", modifiers: [], placeOfService: "11",
  diagnosisCodes: ["F32.9"], serviceDate: seen, amount: "150.00"
}

const claimRow = (r: { id: number; fields?: ClaimFields; at?: Date; status?: ClaimStatus }): ClaimRow => {
  const f = r.fields ?? billed
  const at = r.at ?? new Date(nowMs)
  return {
    id: ClaimId.make(r.id), patient_id: PatientId.make(f.patientId), provider_id: ProviderId.make(f.providerId),
    appointment_id: AppointmentId.make(f.appointmentId), claim_number: `CLM${String(r.id).padStart(8, "0")}`, cpt_code: f.cptCode,
    modifiers: f.modifiers, place_of_service: f.placeOfService, diagnosis_codes: f.diagnosisCodes, service_date: f.serviceDate,
    amount: f.amount, status: r.status ?? "draft", submission_date: null, payment_amount: null, payment_date: null, denial_reason: null,
    insurance_plan_id: null, edi_batch_id: null, created_at: at, updated_at: at, patient_first_name: "Pat", patient_last_name: "Doe",
    provider_first_name: "Lee", provider_last_name: "Roe"
  }
}

const fakeDocumentsRepo = (documents: Table<DocumentRow>) =>
  ClaimDocumentsRepo.make({
    findOne: unused("ClaimDocumentsRepo.findOne"),
    listOf: unused("ClaimDocumentsRepo.listOf"),
    insert: unused("ClaimDocumentsRepo.insert"),
    update: unused("ClaimDocumentsRepo.update"),
    delete: unused("ClaimDocumentsRepo.delete"),
    deleteAllOf: (claimId) =>
      Effect.sync(() => documents.where((d) => d.claim_id === claimId).map((d) => (documents.delete(d.id), d.object_key)))
  })

const fakePlansRepo = InsurancePlansRepo.make({
  findById: unused("InsurancePlansRepo.findById"),
  list: unused("InsurancePlansRepo.list"),
  insert: unused("InsurancePlansRepo.insert"),
  update: unused("InsurancePlansRepo.update"),
  isActive: unused("InsurancePlansRepo.isActive"),
  activeNames: Effect.succeed([])
})

/** A fresh world: the tables, and `Claims` built over them at the clinic's `nowMs`. */
const world = () => {
  const db = new FakeDatabase()
  const claims = db.table<ClaimRow>()
  const documents = db.table<DocumentRow>()
  const audit = db.table<AuditRow>()
  const layer = Claims.DefaultWithoutDependencies.pipe(
    Layer.provideMerge(Layer.mergeAll(
      Layer.succeed(ClaimsRepo, fakeClaimsRepo(claims)),
      Layer.succeed(ClaimDocumentsRepo, fakeDocumentsRepo(documents)),
      Layer.succeed(InsurancePlansRepo, fakePlansRepo),
      fakeAuditLog(audit),
      db.sqlClient,
      testConfig(),
      MemoryObjectStore.layer
    ))
  )
  const run = <A, E>(f: (service: Claims) => Effect.Effect<A, E, ObjectStore | MemoryObjectStore>) =>
    Effect.zipRight(TestClock.setTime(nowMs), Effect.provide(Effect.flatMap(Claims, f), layer))
  return { claims, documents, audit, run }
}

const input = {
  patient_id: PatientId.make(patient), provider_id: ProviderId.make(provider), appointment_id: AppointmentId.make(appointment),
  cpt_code: "90837", diagnosis_codes: ["f32.9"], service_date: seen, amount: 150.5
}

/** The moves a PUT may make (submitted only through EDI generation); everything else is refused. */
const allowed: ReadonlyArray<readonly [ClaimStatus, ClaimStatus]> = [
  ["draft", "ready"], ["ready", "draft"], ["submitted", "pending"], ["submitted", "denied"], ["submitted", "rejected"],
  ["pending", "approved"], ["pending", "denied"], ["pending", "rejected"], ["approved", "paid"], ["rejected", "ready"]
]

/** What a move needs besides its status: a payment for paid, a reason for denied and rejected. */
const moveTo = (to: ClaimStatus) => ({
  status: to,
  ...(to === "paid" ? { payment_amount: 120 } : {}),
  ...(to === "denied" || to === "rejected" ? { denial_reason: "Not covered" } : {})
})

const refusal = (field: string, message: string) => ({ _tag: "ValidationFailed", errors: { [field]: [message] } })

describe("Claims over fake repositories", () => {
  it.effect("create: a draft with the codes upper case and the amount as exact decimal text, audited", () =>
    Effect.gen(function*() {
      const w = world()
      const claim = yield* w.run((claims) => claims.create(admin, input))
      expect(claim).toMatchObject({ status: "draft", diagnosis_codes: ["F32.9"], amount: 150.5, place_of_service: "11", modifiers: [] })
      expect(w.claims.all()).toMatchObject([{ id: claim.id, status: "draft", diagnosis_codes: ["F32.9"], amount: "150.50" }])
      expect(auditActions(w.audit, "claim", claim.id)).toEqual(["claim.create"])
      expect(w.audit.all()[0]).toMatchObject({ actor_id: admin, created_at: new Date(nowMs) })
    }))

  it.effect("create: every rule at once; nothing written", () =>
    Effect.gen(function*() {
      const w = world()
      const error = yield* Effect.flip(w.run((claims) =>
        claims.create(admin, { ...input, appointment_id: AppointmentId.make(31), cpt_code: "99999", diagnosis_codes: ["F32.9", "F329"], service_date: "2026-03-11" })))
      expect(error).toBeInstanceOf(ValidationFailed)
      expect(error).toMatchObject({
        errors: {
          cpt_code: ["is invalid"],
          diagnosis_codes: ["must not repeat a code"],
          appointment_id: ["is invalid"],
          service_date: ["can't be in the future"]
        }
      })
      const wrongDay = yield* Effect.flip(w.run((claims) => claims.create(admin, { ...input, service_date: "2026-03-08" })))
      expect(wrongDay).toMatchObject(refusal("service_date", "must be the appointment's date"))
      expect(w.claims.all()).toEqual([])
      expect(w.audit.all()).toEqual([])
    }))

  it.effect("a second active claim for one appointment is refused; a denied one frees it", () =>
    Effect.gen(function*() {
      const w = world()
      w.claims.put(claimRow({ id: 1 }))
      expect(yield* Effect.flip(w.run((claims) => claims.create(admin, input)))).toMatchObject(refusal("appointment_id", "has already been taken"))
      w.claims.update(1, (row) => ({ ...row, status: "denied" }))
      const second = yield* w.run((claims) => claims.create(admin, input))
      expect(w.claims.all().map((c) => [c.id, c.status])).toEqual([[1, "denied"], [second.id, "draft"]])
    }))

  describe("every move between two statuses", () => {
    for (const from of claimStatuses) {
      for (const to of claimStatuses.filter((s) => s !== from)) {
        const allows = allowed.some(([a, b]) => a === from && b === to)
        it.effect(`${from} → ${to}: ${allows ? "moves, audited" : "refused, the row unchanged"}`, () =>
          Effect.gen(function*() {
            const w = world()
            const before = w.claims.put(claimRow({ id: 1, status: from, at: new Date(Date.UTC(2026, 2, 1)) }))
            const result = yield* Effect.either(w.run((claims) => claims.update(admin, 1, moveTo(to))))
            if (allows) {
              expect(Option.getRight(result).pipe(Option.map((c) => c.status))).toEqual(Option.some(to))
              expect(w.claims.get(1)).toMatchObject({ status: to, updated_at: new Date(nowMs) })
              expect(auditActions(w.audit, "claim", 1)).toEqual(["claim.update", `claim.${to}`])
            } else {
              const message = to === "submitted" ? "can only become submitted through EDI generation" : `can't change from ${from} to ${to}`
              expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(refusal("status", message))))
              expect(w.claims.get(1)).toEqual(before)
              expect(w.audit.all()).toEqual([])
            }
          }))
      }
    }
  })

  it.effect("paid needs a payment amount; its date defaults to the clinic's today", () =>
    Effect.gen(function*() {
      const w = world()
      const before = w.claims.put(claimRow({ id: 1, status: "approved" }))
      expect(yield* Effect.flip(w.run((claims) => claims.update(admin, 1, { status: "paid" })))).toMatchObject(refusal("payment_amount", "can't be blank"))
      expect(w.claims.get(1)).toEqual(before)
      const paid = yield* w.run((claims) => claims.update(admin, 1, { status: "paid", payment_amount: 99.9 }))
      expect(paid).toMatchObject({ status: "paid", payment_amount: 99.9, payment_date: clinicToday })
      expect(w.claims.get(1)).toMatchObject({ payment_amount: "99.90", payment_date: clinicToday })
    }))

  it.effect("denied and rejected need a reason that is not blank", () =>
    Effect.gen(function*() {
      const w = world()
      const before = w.claims.put(claimRow({ id: 1, status: "submitted" }))
      for (const to of ["denied", "rejected"] as const) {
        for (const reason of [undefined, "   "]) {
          const error = yield* Effect.flip(w.run((claims) => claims.update(admin, 1, { status: to, ...(reason === undefined ? {} : { denial_reason: reason }) })))
          expect(error).toMatchObject(refusal("denial_reason", "can't be blank"))
        }
      }
      expect(w.claims.get(1)).toEqual(before)
      yield* w.run((claims) => claims.update(admin, 1, { status: "rejected", denial_reason: "  Wrong member id " }))
      expect(w.claims.get(1)).toMatchObject({ status: "rejected", denial_reason: "Wrong member id" })
    }))

  it.effect("billing fields change only in draft, ready and rejected; codes spelt the other way are no change", () =>
    Effect.gen(function*() {
      for (const status of claimStatuses) {
        const w = world()
        const before = w.claims.put(claimRow({ id: 1, status }))
        const result = yield* Effect.either(w.run((claims) => claims.update(admin, 1, { amount: 175 })))
        if (status === "draft" || status === "ready" || status === "rejected") {
          expect(w.claims.get(1)).toMatchObject({ status, amount: "175.00" })
        } else {
          expect(Option.getLeft(result)).toEqual(Option.some(expect.objectContaining(
            refusal("status", `is ${status}: only draft, ready and rejected claims can be edited`)
          )))
          expect(w.claims.get(1)).toEqual(before)
          // The same code without its dot is the code as billed: not an edit, and it stays as written.
          yield* w.run((claims) => claims.update(admin, 1, { diagnosis_codes: ["F329"] }))
          expect(w.claims.get(1)).toMatchObject({ status, diagnosis_codes: ["F32.9"] })
          expect(auditActions(w.audit, "claim", 1)).toEqual(["claim.update"])
        }
      }
    }))

  it.effect("an edit is checked by the create rules; a refused one writes nothing", () =>
    Effect.gen(function*() {
      const w = world()
      const before = w.claims.put(claimRow({ id: 1, status: "ready" }))
      const error = yield* Effect.flip(w.run((claims) => claims.update(admin, 1, { status: "draft", appointment_id: AppointmentId.make(31) })))
      expect(error).toMatchObject(refusal("appointment_id", "is invalid"))
      expect(w.claims.get(1)).toEqual(before)
      expect(w.audit.all()).toEqual([])
    }))

  it.effect("unknown claims are 404 for every change", () =>
    Effect.gen(function*() {
      const w = world()
      const notFound = { _tag: "NotFound", errors: "Claim not found" }
      expect(yield* Effect.flip(w.run((claims) => claims.update(admin, 7, { status: "ready" })))).toMatchObject(notFound)
      expect(yield* Effect.flip(w.run((claims) => claims.remove(admin, 7)))).toMatchObject(notFound)
      expect(yield* Effect.flip(w.run((claims) => claims.show(7)))).toMatchObject(notFound)
    }))

  it.effect("delete: only drafts, with their documents and files; anything else stays whole", () =>
    Effect.gen(function*() {
      const w = world()
      w.claims.put(claimRow({ id: 1 }))
      const kept = w.claims.put(claimRow({ id: 2, status: "ready" }))
      const document = (id: number, claimId: number): DocumentRow => ({
        id: ClaimDocumentId.make(id), claim_id: ClaimId.make(claimId), name: "eob.pdf", content_type: "application/pdf", size: 3,
        kind: "eob", object_key: `claims/${claimId}/${id}.pdf`, created_at: new Date(nowMs), updated_at: new Date(nowMs)
      })
      w.documents.put(document(1, 1))
      w.documents.put(document(2, 2))
      const files = yield* w.run((claims) =>
        Effect.gen(function*() {
          const store = yield* ObjectStore
          for (const d of w.documents.all()) yield* store.put(d.object_key, new Uint8Array([1, 2, 3]), d.content_type)
          const refused = yield* Effect.flip(claims.remove(admin, 2))
          expect(refused).toMatchObject(refusal("status", "is ready: only draft claims can be deleted"))
          yield* claims.remove(admin, 1)
          return [...(yield* (yield* MemoryObjectStore).objects).keys()]
        }))
      expect(w.claims.all()).toEqual([kept])
      expect(w.documents.all().map((d) => d.claim_id)).toEqual([2])
      expect(files).toEqual(["claims/2/2.pdf"])
      expect(auditActions(w.audit, "claim", 1)).toEqual(["claim.delete"])
      expect(auditActions(w.audit, "claim", 2)).toEqual([])
    }))
})
