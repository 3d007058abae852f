/**
 * Collaborators (general §2.4, §4.4, §5.4): whoever adds one owns it. Owner and admins
 * read, edit, delete and link patients; a provider or supervisor with a care relationship to a
 * linked patient (the access module's rule) reads it; anyone else gets 403. Callers link only
 * patients they may see and see only the links to those. Deleting is soft (assessments are kept);
 * suspending or deleting revokes open links and cancels pending assessments.
 */
import { Clock, Effect, Option } from "effect"
import type { CreateCollaboratorRequest, UpdateCollaboratorRequest } from "../../Api/Collaborators/Collaborators.js"
import { collaboratorMessages, collaboratorsPageSize } from "../../Api/Collaborators/Collaborators.js"
import { forbidden, invalid, messages, notFound, type FieldMessages } from "../../Api/Errors.js"
import { pageRequest } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import { canChangeStatus, Collaborator, type CollaboratorStatus, type CollaboratorType } from "../../Domain/Collaborators/Collaborator.js"
import type { PatientId } from "../../Domain/Ids.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { AuditLog } from "../AuditLog.js"
import { Access, followsCareRelationships, isAdmin } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import { AssessmentTokensRepo } from "./AssessmentTokensRepo.js"
import { CollaboratorAssessmentsRepo } from "./CollaboratorAssessmentsRepo.js"
import { CollaboratorPatientsRepo } from "./CollaboratorPatientsRepo.js"
import { type CollaboratorChange, type CollaboratorRow, CollaboratorsRepo } from "./CollaboratorsRepo.js"

export type { CollaboratorRow } from "./CollaboratorsRepo.js"

export const collaboratorNotFound = () => notFound("Collaborator")
export const notAuthorized = () => forbidden(messages.unauthorized)

const toCollaborator = (row: CollaboratorRow, patientIds: ReadonlyArray<PatientId>) =>
  Collaborator.make({
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    organization: row.organization,
    title: row.title,
    type: row.type,
    specialization: row.specialization,
    status: row.status,
    patient_ids: patientIds,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

/** What the caller is to a collaborator. */
export interface Standing {
  readonly row: CollaboratorRow
  /** Owner or admin: edits, deletes, links patients. */
  readonly manages: boolean
  /** Manages, or has a care relationship with a linked patient. */
  readonly reads: boolean
}

export class Collaborators extends Effect.Service<Collaborators>()("app/Collaborators", {
  effect: Effect.gen(function*() {
    const repo = yield* CollaboratorsRepo
    const links = yield* CollaboratorPatientsRepo
    const assessments = yield* CollaboratorAssessmentsRepo
    const tokens = yield* AssessmentTokensRepo
    const transaction = yield* makeTransaction
    const audit = yield* AuditLog
    const access = yield* Access
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Linked patients as the caller may see them (Access: the patients the caller sees). */
    const linkedPatients = (caller: Caller, ids: ReadonlyArray<number>) =>
      Effect.map(links.linksOf(ids, caller), (rows) => {
        const byCollaborator = new Map<number, Array<PatientId>>()
        for (const row of rows) {
          const list = byCollaborator.get(row.collaborator_id) ?? []
          list.push(row.patient_id)
          byCollaborator.set(row.collaborator_id, list)
        }
        return byCollaborator
      })

    const represent = (caller: Caller, rows: ReadonlyArray<CollaboratorRow>) =>
      Effect.map(linkedPatients(caller, rows.map((r) => r.id)), (linked) => rows.map((row) => toCollaborator(row, linked.get(row.id) ?? [])))

    /**
     * The collaborator and what the caller is to it; 404 when deleted or unknown. `lock` takes a row
     * lock (inside a transaction) so a status change and a link being issued do not cross.
     */
    const standing = (caller: Caller, id: number, lock: "none" | "share" | "update" = "none") =>
      Effect.gen(function*() {
        const found = yield* repo.findLive(id, lock)
        if (Option.isNone(found)) return yield* Effect.fail(collaboratorNotFound())
        const row = found.value
        const manages = isAdmin(caller) || row.owner_id === caller.id
        if (manages) return { row, manages, reads: true } satisfies Standing
        return { row, manages: false, reads: yield* links.linkedToCaredFor(id, caller) } satisfies Standing
      })

    /**
     * Distinct ids, every one a patient the caller may see (Access; break-glass applies), else
     * `patient_ids: must exist` — a patient outside the caller's view answers like an unknown one.
     */
    const visiblePatients = (caller: Caller, ids: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const wanted = [...new Set(ids)]
        const found = yield* access.visiblePatients(caller, wanted)
        return { ok: found.length === wanted.length, ids: wanted }
      })

    const phoneOf = (text: string | null | undefined): Option.Option<string | null> | "invalid" => {
      if (text === undefined) return Option.none()
      const trimmed = text?.trim() ?? ""
      if (trimmed === "") return Option.some(null)
      return Option.match(normalizePhone(trimmed), { onNone: () => "invalid" as const, onSome: (p) => Option.some(p) })
    }

    const list = Effect.fn("Collaborators.list")(function*(caller: Caller, query: {
      readonly page?: number | undefined
      readonly page_size?: number | undefined
      readonly type?: CollaboratorType | undefined
      readonly status?: CollaboratorStatus | undefined
      readonly organization?: string | undefined
      readonly patient_id?: PatientId | undefined
    }) {
      if (query.patient_id !== undefined) yield* access.visiblePatient(caller, query.patient_id)
      const page = pageRequest(query, collaboratorsPageSize)
      const criteria = {
        type: query.type,
        status: query.status,
        organization: query.organization?.trim() ?? "",
        patientId: query.patient_id
      }
      // A provider or supervisor who may see the patient (care relationship or break-glass) reads its collaborators.
      const everyOne = isAdmin(caller) || (query.patient_id !== undefined && followsCareRelationships(caller))
      const { pagination, rows } = everyOne ? yield* repo.everyPage(criteria, page) : yield* repo.readablePage(caller, criteria, page)
      yield* Effect.annotateCurrentSpan({ "collaborators.count": rows.length, "collaborators.total_count": pagination.total_count })
      return { collaborators: yield* represent(caller, rows), pagination }
    })

    const show = Effect.fn("Collaborators.show")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "collaborator.id": id })
      const found = yield* standing(caller, id)
      if (!found.reads) return yield* Effect.fail(notAuthorized())
      return (yield* represent(caller, [found.row]))[0]!
    })

    const create = Effect.fn("Collaborators.create")(function*(caller: Caller, input: CreateCollaboratorRequest["collaborator"]) {
      const errors: Record<string, Array<string>> = {}
      const phone = phoneOf(input.phone)
      if (phone === "invalid") errors.phone = ["is invalid"]
      const patients = yield* visiblePatients(caller, input.patient_ids ?? [])
      if (!patients.ok) errors.patient_ids = ["must exist"]
      if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      const at = yield* now
      return yield* transaction(Effect.gen(function*() {
        const row = yield* repo.insert({
          owner_id: caller.id,
          first_name: input.first_name.trim(),
          last_name: input.last_name.trim(),
          email: normalizeEmail(input.email),
          phone: phone === "invalid" ? null : Option.getOrNull(phone),
          organization: input.organization.trim(),
          title: input.title?.trim() || null,
          type: input.type,
          specialization: input.specialization ?? null,
          created_at: at,
          updated_at: at
        })
        yield* links.link(patients.ids.map((patientId) => ({ collaborator_id: row.id, patient_id: patientId, added_by: caller.id, created_at: at })))
        yield* audit.record({ actorId: caller.id, action: "collaborator.create", targetType: "collaborator", targetId: row.id })
        return (yield* represent(caller, [row]))[0]!
      }))
    })

    /** Revokes the open links of the collaborator's pending assessments and cancels them. */
    const closeOpenAssessments = (collaboratorId: number, at: Date) =>
      Effect.flatMap(assessments.cancelPendingOf(collaboratorId, at), (cancelled) => tokens.revokeOpen(cancelled, at))

    const update = Effect.fn("Collaborators.update")(function*(caller: Caller, id: number, input: UpdateCollaboratorRequest["collaborator"]) {
      yield* Effect.annotateCurrentSpan({ "collaborator.id": id })
      const phone = phoneOf(input.phone)
      const patients = input.patient_ids === undefined ? undefined : yield* visiblePatients(caller, input.patient_ids)
      const at = yield* now
      return yield* transaction(Effect.gen(function*() {
        const found = yield* standing(caller, id, "update")
        if (!found.manages) return yield* Effect.fail(notAuthorized())
        const errors: Record<string, Array<string>> = {}
        if (phone === "invalid") errors.phone = ["is invalid"]
        if (patients !== undefined && !patients.ok) errors.patient_ids = ["must exist"]
        const from = found.row.status
        const to = input.status ?? from
        if (!canChangeStatus(from, to, isAdmin(caller) ? "admin" : "owner")) errors.status = [collaboratorMessages.move(from, to)]
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
        const change: { -readonly [K in keyof CollaboratorChange]: CollaboratorChange[K] } = { updated_at: at }
        if (input.first_name !== undefined) change.first_name = input.first_name.trim()
        if (input.last_name !== undefined) change.last_name = input.last_name.trim()
        if (input.email !== undefined) change.email = normalizeEmail(input.email)
        if (input.organization !== undefined) change.organization = input.organization.trim()
        if (input.type !== undefined) change.type = input.type
        if (input.title !== undefined) change.title = input.title?.trim() || null
        if (input.specialization !== undefined) change.specialization = input.specialization
        if (phone !== "invalid" && Option.isSome(phone)) change.phone = phone.value
        if (to !== from) change.status = to
        const row = yield* repo.update(id, change)
        if (patients !== undefined) {
          // Links to patients the caller may see become exactly the given ones; others stay.
          const keep = patients.ids
          yield* links.unlinkOthers(id, keep, caller)
          yield* links.linkMissing(keep.map((patientId) => ({ collaborator_id: id, patient_id: patientId, added_by: caller.id, created_at: at })))
        }
        if (to === "suspended" && from !== "suspended") yield* closeOpenAssessments(id, at)
        yield* audit.record({ actorId: caller.id, action: "collaborator.update", targetType: "collaborator", targetId: id })
        if (to !== from) yield* audit.record({ actorId: caller.id, action: "collaborator.status", targetType: "collaborator", targetId: id })
        return (yield* represent(caller, [row]))[0]!
      }))
    })

    const remove = Effect.fn("Collaborators.delete")(function*(caller: Caller, id: number) {
      yield* Effect.annotateCurrentSpan({ "collaborator.id": id })
      const at = yield* now
      yield* transaction(Effect.gen(function*() {
        const found = yield* standing(caller, id, "update")
        if (!found.manages) return yield* Effect.fail(notAuthorized())
        yield* repo.softDelete(id, at)
        yield* closeOpenAssessments(id, at)
        yield* audit.record({ actorId: caller.id, action: "collaborator.delete", targetType: "collaborator", targetId: id })
      }))
    })

    return { list, show, create, update, remove, standing, closeOpenAssessments } as const
  }),
  dependencies: [
    CollaboratorsRepo.Default,
    CollaboratorPatientsRepo.Default,
    CollaboratorAssessmentsRepo.Default,
    AssessmentTokensRepo.Default,
    AuditLog.Default,
    Access.Default
  ]
}) {}
