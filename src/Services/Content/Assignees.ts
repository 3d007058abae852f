/**
 * Who a content assignment goes to, shared by user pieces and user collections: an
 * account, optionally for one patient. Staff assign to a patient's account (`patient_id`; a patient
 * without one → 422 `has no account`), to a `user_id`, or to themselves; a parent to themself or
 * for their own patient (another patient: 404 `Patient not found`, through Access).
 */
import { Clock, Effect, Option } from "effect"
import { contentMessages } from "../../Api/Content/Content.js"
import { invalidField } from "../../Api/Errors.js"
import { wallClockAt } from "../../Domain/Scheduling/ZonedTime.js"
import { AppConfig } from "../AppConfig.js"
import { Access, isParent, type Viewer } from "../Access/Access.js"
import { UsersRepo } from "../Accounts/UsersRepo.js"
import { PatientsRepo } from "../Patients/PatientsRepo.js"

export interface Assignee {
  readonly userId: number
  readonly patientId: number | null
}

const pad = (n: number) => String(n).padStart(2, "0")

export class Assignees extends Effect.Service<Assignees>()("app/ContentAssignees", {
  effect: Effect.gen(function*() {
    const users = yield* UsersRepo
    const patients = yield* PatientsRepo
    const access = yield* Access
    const zone = (yield* AppConfig).clinicTimeZone

    /** Now (through Clock, so tests may move it) and today's date in the clinic's zone. */
    const now = Effect.map(Clock.currentTimeMillis, (ms) => {
      const at = new Date(ms)
      const w = wallClockAt(at, zone)
      return { at, today: `${w.year}-${pad(w.month)}-${pad(w.day)}` }
    })

    /** The patient's own account, unless it is deleted. */
    const accountOf = (patientId: number) =>
      Effect.gen(function*() {
        const userId = Option.getOrUndefined(yield* patients.findById(patientId))?.user_id ?? null
        return userId !== null && (yield* users.exists(userId)) ? userId : null
      })

    const resolve = Effect.fn("ContentAssignees.resolve")(function*(
      caller: Viewer,
      input: { readonly patient_id?: number | null | undefined; readonly user_id?: number | null | undefined }
    ) {
      const patientId = input.patient_id ?? undefined
      const userId = input.user_id ?? undefined
      if (isParent(caller)) {
        if (userId !== undefined && userId !== caller.id) return yield* Effect.fail(invalidField("user_id", "is invalid"))
        if (patientId === undefined) return { userId: caller.id, patientId: null } satisfies Assignee
        return { userId: caller.id, patientId: yield* access.visiblePatient(caller, patientId) } satisfies Assignee
      }
      if (patientId !== undefined) {
        yield* access.visiblePatient(caller, patientId)
        const account = yield* accountOf(patientId)
        if (account === null) return yield* Effect.fail(invalidField("patient_id", contentMessages.noAccount))
        if (userId !== undefined && userId !== account) return yield* Effect.fail(invalidField("user_id", "is invalid"))
        return { userId: account, patientId } satisfies Assignee
      }
      if (userId !== undefined) {
        if (!(yield* users.exists(userId))) return yield* Effect.fail(invalidField("user_id", "must exist"))
        return { userId, patientId: null } satisfies Assignee
      }
      return { userId: caller.id, patientId: null } satisfies Assignee
    })

    /** `assigned_by`: the caller by default; only staff may name another staff user. */
    const assigner = (caller: Viewer, assignedBy: number | null | undefined) =>
      Effect.gen(function*() {
        if (assignedBy == null || assignedBy === caller.id) return caller.id
        if (isParent(caller)) return yield* Effect.fail(invalidField("assigned_by", "is invalid"))
        const staff = Option.exists(yield* users.findById(assignedBy), (user) => user.role !== "parent")
        if (!staff) return yield* Effect.fail(invalidField("assigned_by", "is invalid"))
        return assignedBy
      })

    /**
     * Who a list of assignments is about: a parent only their own account (another `user_id`:
     * 422); a `patient_id` the caller may see (break-glass included; else 404), whose assignments
     * the list then shows beyond the caller's scope.
     */
    const listFilter = (caller: Viewer, filter: { readonly userId?: number | undefined; readonly patientId?: number | undefined }) =>
      Effect.gen(function*() {
        let userId = filter.userId
        if (isParent(caller)) {
          if (userId !== undefined && userId !== caller.id) return yield* Effect.fail(invalidField("user_id", "is invalid"))
          userId = caller.id
        }
        if (filter.patientId !== undefined) yield* access.visiblePatient(caller, filter.patientId)
        return { userId }
      })

    return { now, resolve, assigner, listFilter } as const
  }),
  dependencies: [UsersRepo.Default, PatientsRepo.Default]
}) {}
