/**
 * Prescriptions (general §2.8, §4.8) with record-level access (§5.4), the status machine, refills,
 * the append-only history every change writes, and a patient's medication history (§4.2).
 *
 * Who may do what (docs/spec-decisions.md): admins everything; a provider reads and writes the
 * prescriptions they wrote; a supervisor also reads their supervisees'; a parent reads their own
 * patients' (the parent rule of Access: another patient's is 404) and writes none; support
 * and billing none. Refusals are 403 `You are not authorized to perform this action.`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { type FieldMessages, type Forbidden, forbidden, invalid, invalidField, messages, notFound, type NotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import {
  type CreatePrescriptionRequest, MedicationHistory, PrescriptionList, prescriptionMessages, type UpdatePrescriptionRequest
} from "../../Api/Prescriptions/Prescriptions.js"
import type { PatientId } from "../../Domain/Ids.js"
import {
  canMove, canonicalFrequency, HistoryPrescription, MedicationHistoryGroup, PrescriptionHistoryEntry, setByJobOnly
} from "../../Domain/Prescriptions/Prescription.js"
import { PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { calendarDayIn } from "../../Domain/Time.js"
import { AppConfig } from "../AppConfig.js"
import { AuditLog } from "../AuditLog.js"
import { Access, canReadPrescription, canWritePrescription, isAdmin, isParent, type ProviderViewer, type Viewer } from "../Access/Access.js"
import { ProvidersRepo } from "../Providers/ProvidersRepo.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { MedicationsRepo } from "./MedicationsRepo.js"
import { PrescriptionHistoryRepo } from "./PrescriptionHistoryRepo.js"
import {
  expiryBatchSize, type PrescriptionCriteria, type PrescriptionRow, PrescriptionsRepo, type Terms, toMedicationSummary, toPrescription
} from "./PrescriptionsRepo.js"

export type { PrescriptionCriteria } from "./PrescriptionsRepo.js"

type PrescriptionInput = CreatePrescriptionRequest["prescription"]
type PrescriptionChanges = UpdatePrescriptionRequest["prescription"]

const notAuthorized = () => forbidden(messages.unauthorized)
const prescriptionNotFound = () => notFound("Prescription")

/** What a prescription says that the history tracks, besides its status. */
const sameTerms = (a: Terms, b: Terms) =>
  a.medicationId === b.medicationId && a.dosage === b.dosage && a.frequency === b.frequency && a.quantity === b.quantity &&
  a.refills === b.refills && a.startDate === b.startDate && a.endDate === b.endDate && a.patientId === b.patientId &&
  a.providerId === b.providerId && a.prescriptionDate === b.prescriptionDate && a.instructions === b.instructions &&
  a.refillsRemaining === b.refillsRemaining

export class Prescriptions extends Effect.Service<Prescriptions>()("app/Prescriptions", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const config = yield* AppConfig
    const prescriptions = yield* PrescriptionsRepo
    const prescriptionHistory = yield* PrescriptionHistoryRepo
    const medications = yield* MedicationsRepo
    const providers = yield* ProvidersRepo
    const transaction = yield* makeTransaction

    const today = Effect.map(Clock.currentTimeMillis, (ms) => calendarDayIn(ms, config.clinicTimeZone))

    /** The caller with their provider profile as prescriber, as the rules read them. */
    const actorOf = (viewer: Viewer) => access.withPrescriberProfile(viewer)

    const findRow = (id: number, lock = false) => Effect.map(prescriptions.findById(id, lock), Option.getOrUndefined)

    /**
     * The row when the actor may read it (the prescription rules: its prescriber, their supervisor,
     * admins, the patient's parent); else 404 when unknown or of a patient whose clinical content
     * the actor does not see (a parent: not their patient; staff: the access module, break-glass
     * included), so ids never leak; else 403.
     */
    const readable = (actor: ProviderViewer, id: number, lock = false): Effect.Effect<PrescriptionRow, NotFound | Forbidden> =>
      Effect.gen(function*() {
        const row = yield* findRow(id, lock)
        if (row === undefined) return yield* Effect.fail(prescriptionNotFound())
        if (isParent(actor) && row.patient_user_id !== actor.id) return yield* Effect.fail(prescriptionNotFound())
        if (canReadPrescription(actor, row)) return row
        if (!isParent(actor)) yield* Effect.mapError(access.visiblePatient(actor, row.patient_id, "clinical"), prescriptionNotFound)
        return yield* Effect.fail(notAuthorized())
      })

    /**
     * The row the actor may change (locked): a parent is checked against the patient named in the
     * body first (404 for another family's), then refused outright; staff need to have written it.
     */
    const writable = (actor: ProviderViewer, id: number, bodyPatientId: number | undefined) =>
      Effect.gen(function*() {
        if (isParent(actor) && bodyPatientId !== undefined) yield* access.visiblePatient(actor, bodyPatientId)
        const row = yield* readable(actor, id, true)
        if (!canWritePrescription(actor, row)) return yield* Effect.fail(notAuthorized())
        return row
      })

    /**
     * Staff's read of the prescription before a write's transaction: a break-glass access stays on
     * the record when the prescription rules then refuse the write (the transaction would take it back).
     */
    const openedForWrite = (actor: ProviderViewer, id: number) => (isParent(actor) ? Effect.void : Effect.asVoid(readable(actor, id)))

    const list = Effect.fn("Prescriptions.list")(function*(viewer: Viewer, criteria: PrescriptionCriteria, request: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      if (isParent(viewer) && criteria.patientId !== undefined) yield* access.visiblePatient(viewer, criteria.patientId)
      const visible = Access.scope.prescriptions(sql, actor)
      if (visible === undefined) return yield* Effect.fail(notAuthorized())
      const { pagination, rows } = yield* prescriptions.list(visible, criteria, request)
      yield* Effect.annotateCurrentSpan({ "prescriptions.count": rows.length })
      return PrescriptionList.make({ prescriptions: rows.map(toPrescription), pagination })
    })

    const show = Effect.fn("Prescriptions.show")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "prescription.id": id, "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      return toPrescription(yield* readable(actor, id))
    })

    /**
     * Every rule at once (Rails style); only what changed is checked against the database. A patient
     * the caller may not see (Access, clinical content; break-glass applies) is `must exist`, exactly
     * as an unknown one.
     */
    const checkTerms = (viewer: Viewer, terms: Terms, before: Terms | undefined) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        const add = (field: string, message: string) => (errors[field] ??= []).push(message)
        if (terms.quantity <= 0) add("quantity", prescriptionMessages.quantity)
        if (terms.refillsRemaining > terms.refills) add("refills_remaining", prescriptionMessages.refillsRemaining)
        if (before?.prescriptionDate !== terms.prescriptionDate && terms.prescriptionDate > (yield* today)) {
          add("prescription_date", prescriptionMessages.future)
        }
        if (terms.startDate !== null && terms.endDate !== null && terms.endDate <= terms.startDate) add("end_date", prescriptionMessages.endAfterStart)
        if (before?.patientId !== terms.patientId) {
          if (!(yield* Effect.isSuccess(access.visiblePatient(viewer, terms.patientId, "clinical")))) add("patient_id", "must exist")
        }
        if (before?.medicationId !== terms.medicationId) {
          const active = yield* medications.activeOf(terms.medicationId)
          if (Option.isNone(active)) add("medication_id", "must exist")
          else if (!active.value) add("medication_id", prescriptionMessages.medicationInactive)
        }
        if (before?.providerId !== terms.providerId) {
          // Share-locked until commit: the prescriber cannot be deactivated in between.
          if (!(yield* providers.canPrescribe(terms.providerId))) add("provider_id", prescriptionMessages.prescriber)
        }
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
      })

    const appendHistory = prescriptionHistory.append

    const create = Effect.fn("Prescriptions.create")(function*(viewer: Viewer, input: PrescriptionInput) {
      yield* Effect.annotateCurrentSpan({ "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      if (isParent(viewer)) {
        yield* access.visiblePatient(viewer, input.patient_id)
        return yield* Effect.fail(notAuthorized())
      }
      let providerId: number
      if (isAdmin(viewer)) {
        if (input.provider_id === undefined) return yield* Effect.fail(invalidField("provider_id", "can't be blank"))
        providerId = input.provider_id
      } else if (actor.providerId !== null) {
        providerId = actor.providerId
      } else {
        return yield* Effect.fail(notAuthorized())
      }
      const refills = input.refills ?? 0
      const terms: Terms = {
        patientId: input.patient_id,
        providerId,
        medicationId: input.medication_id,
        dosage: input.dosage.trim(),
        frequency: canonicalFrequency(input.frequency),
        quantity: input.quantity,
        refills,
        refillsRemaining: refills,
        instructions: blankToNull(input.instructions),
        prescriptionDate: input.prescription_date,
        startDate: input.start_date ?? null,
        endDate: input.end_date ?? null
      }
      const id = yield* transaction(Effect.gen(function*() {
        yield* checkTerms(viewer, terms, undefined)
        const id = yield* prescriptions.insert(terms, viewer.id)
        yield* appendHistory([id], "created", null, viewer.id)
        yield* audit.record({ actorId: viewer.id, action: "prescription.create", targetType: "prescription", targetId: id })
        return id
      }))
      return toPrescription((yield* findRow(id))!)
    })

    const termsOf = (row: PrescriptionRow): Terms => ({
      patientId: row.patient_id,
      providerId: row.provider_id,
      medicationId: row.medication_id,
      dosage: row.dosage,
      frequency: row.frequency,
      quantity: row.quantity,
      refills: row.refills,
      refillsRemaining: row.refills_remaining,
      instructions: row.instructions,
      prescriptionDate: row.prescription_date,
      startDate: row.start_date,
      endDate: row.end_date
    })

    const update = Effect.fn("Prescriptions.update")(function*(viewer: Viewer, id: number, changes: PrescriptionChanges) {
      yield* Effect.annotateCurrentSpan({ "prescription.id": id, "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      yield* openedForWrite(actor, id)
      yield* transaction(Effect.gen(function*() {
        const current = yield* writable(actor, id, changes.patient_id)
        const before = termsOf(current)
        if (changes.provider_id !== undefined && changes.provider_id !== current.provider_id && !isAdmin(viewer)) {
          return yield* Effect.fail(invalidField("provider_id", "can only be changed by an admin"))
        }
        const refills = changes.refills ?? current.refills
        // A change of refills moves what remains by as much, never below 0 nor above refills.
        const refillsRemaining = changes.refills_remaining ??
          Math.min(refills, Math.max(0, current.refills_remaining + (refills - current.refills)))
        const after: Terms = {
          patientId: changes.patient_id ?? current.patient_id,
          providerId: changes.provider_id ?? current.provider_id,
          medicationId: changes.medication_id ?? current.medication_id,
          dosage: changes.dosage?.trim() ?? current.dosage,
          frequency: changes.frequency === undefined ? current.frequency : canonicalFrequency(changes.frequency),
          quantity: changes.quantity ?? current.quantity,
          refills,
          refillsRemaining,
          instructions: changes.instructions === undefined ? current.instructions : blankToNull(changes.instructions),
          prescriptionDate: changes.prescription_date ?? current.prescription_date,
          startDate: changes.start_date === undefined ? current.start_date : changes.start_date,
          endDate: changes.end_date === undefined ? current.end_date : changes.end_date
        }
        const edits = !sameTerms(before, after)
        const status = changes.status ?? current.status
        if (edits && current.status !== "active" && current.status !== "on_hold") {
          return yield* Effect.fail(invalidField("status", prescriptionMessages.notEditable(current.status)))
        }
        if (status !== current.status) {
          if (setByJobOnly.includes(status)) return yield* Effect.fail(invalidField("status", prescriptionMessages.expiredByJob))
          if (!canMove(current.status, status)) return yield* Effect.fail(invalidField("status", prescriptionMessages.move(current.status, status)))
        }
        if (edits) yield* checkTerms(viewer, after, before)
        if (!edits && status === current.status) return
        yield* prescriptions.update(id, after, status)
        if (edits) yield* appendHistory([id], "changed", null, viewer.id)
        if (status !== current.status) yield* appendHistory([id], "status_changed", current.status, viewer.id)
        yield* audit.record({ actorId: viewer.id, action: "prescription.update", targetType: "prescription", targetId: id })
        if (status !== current.status) yield* audit.record({ actorId: viewer.id, action: `prescription.${status}`, targetType: "prescription", targetId: id })
      }))
      return toPrescription((yield* findRow(id))!)
    })

    /** DELETE: an active prescription written in error becomes `cancelled` and stays readable. */
    const cancel = Effect.fn("Prescriptions.cancel")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "prescription.id": id, "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      yield* openedForWrite(actor, id)
      yield* transaction(Effect.gen(function*() {
        const current = yield* writable(actor, id, undefined)
        if (current.status !== "active") return yield* Effect.fail(invalidField("status", prescriptionMessages.cancelActiveOnly(current.status)))
        yield* prescriptions.cancel(id)
        yield* appendHistory([id], "status_changed", "active", viewer.id)
        yield* audit.record({ actorId: viewer.id, action: "prescription.cancelled", targetType: "prescription", targetId: id })
      }))
    })

    /** One refill: `refills_remaining` − 1 on an active prescription, never below 0 (the row is locked). */
    const refill = Effect.fn("Prescriptions.refill")(function*(viewer: Viewer, id: number) {
      yield* Effect.annotateCurrentSpan({ "prescription.id": id, "actor.id": viewer.id })
      const actor = yield* actorOf(viewer)
      yield* openedForWrite(actor, id)
      yield* transaction(Effect.gen(function*() {
        const current = yield* writable(actor, id, undefined)
        if (current.status !== "active") {
          return yield* Effect.fail(invalidField("status", `is ${current.status}: only an active prescription can be refilled`))
        }
        if (!(yield* prescriptions.refill(id))) return yield* Effect.fail(invalidField("refills_remaining", prescriptionMessages.noRefills))
        yield* appendHistory([id], "refilled", null, viewer.id)
        yield* audit.record({ actorId: viewer.id, action: "prescription.refill", targetType: "prescription", targetId: id })
      }))
      return toPrescription((yield* findRow(id))!)
    })

    /** §4.2 medication history: the patient's prescriptions grouped by medication, most recently prescribed first. */
    const history = Effect.fn("Prescriptions.history")(function*(viewer: Viewer, patientId: number, request: PageRequest) {
      yield* Effect.annotateCurrentSpan({ "patient.id": patientId, "actor.id": viewer.id })
      const patient: PatientId = yield* access.visiblePatient(viewer, patientId, "clinical")
      const { pagination, rows: groups } = yield* prescriptions.medicationGroups(patient, request)
      const rows = yield* prescriptions.ofMedications(patient, groups.map((g) => g.medication_id))
      const entries = yield* prescriptionHistory.entriesOf(rows.map((r) => r.id))
      const entriesOf = new Map<number, Array<PrescriptionHistoryEntry>>()
      for (const { prescription_id, ...entry } of entries) {
        const list = entriesOf.get(prescription_id) ?? []
        list.push(PrescriptionHistoryEntry.make(entry, true))
        entriesOf.set(prescription_id, list)
      }
      const medications = groups.map((group) => {
        const ofGroup = rows.filter((r) => r.medication_id === group.medication_id)
        return MedicationHistoryGroup.make({
          medication: toMedicationSummary(ofGroup[0]!),
          first_prescribed: group.first_prescribed,
          last_prescribed: group.last_prescribed,
          prescriptions: ofGroup.map((r) => HistoryPrescription.make({
            id: r.id,
            provider: PersonName.make({ id: r.provider_id, first_name: r.provider_first_name, last_name: r.provider_last_name }),
            prescription_date: r.prescription_date,
            start_date: r.start_date,
            end_date: r.end_date,
            status: r.status,
            dosage: r.dosage,
            frequency: r.frequency,
            history: entriesOf.get(r.id) ?? []
          }, true))
        }, true)
      })
      yield* Effect.annotateCurrentSpan({ "medications.count": medications.length })
      return MedicationHistory.make({ patient_id: patient, medications, pagination })
    })

    /**
     * The daily job: active prescriptions whose end date has passed (clinic time zone) become
     * `expired`, a batch at a time. Each batch claims its rows (compare-and-swap on the status,
     * skipping rows another transaction holds), so running twice expires nothing twice.
     */
    const expireDue = Effect.gen(function*() {
      const day = yield* today
      let expired = 0
      for (;;) {
        const ids = yield* transaction(Effect.gen(function*() {
          const claimed = yield* prescriptions.expireBatch(day)
          if (claimed.length > 0) {
            yield* appendHistory(claimed, "status_changed", "active", null)
            yield* audit.recordMany(claimed.map((id) => ({ actorId: null, action: "prescription.expired", targetType: "prescription", targetId: id })))
          }
          return claimed
        }))
        expired += ids.length
        if (ids.length < expiryBatchSize) break
      }
      yield* Effect.annotateCurrentSpan({ "prescriptions.expired": expired })
      return expired
    }).pipe(Effect.withSpan("Prescriptions.expireDue"))

    return { list, show, create, update, cancel, refill, history, expireDue } as const
  }),
  dependencies: [PrescriptionsRepo.Default, PrescriptionHistoryRepo.Default, MedicationsRepo.Default, ProvidersRepo.Default]
}) {}
