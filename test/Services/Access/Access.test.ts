import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { NotFound, ValidationFailed } from "../../../src/Api/Errors.js"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import { Access } from "../../../src/Services/Access/Access.js"
import { TestSqlLive } from "../../support/database.js"
import { insertPatient, insertUser } from "../../support/fixtures.js"

const TestLive = Access.Default.pipe(Layer.provideMerge(TestSqlLive))

const user = (role: Role) => Effect.map(insertUser({ first_name: "A", last_name: "B", role }), (id) => ({ id, role }))

const patient = (userId: number | null) => insertPatient({ first_name: "P", last_name: "Q", date_of_birth: "2015-01-01", user_id: userId })

const failureOf = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.either(effect), Either.getLeft)

layer(TestLive)("Access", (it) => {
  describe("visiblePatient", () => {
    it.effect("staff see every patient; a parent only their own; others and unknown ids are 404 Patient not found", () =>
      Effect.gen(function*() {
        const access = yield* Access
        const parent = yield* user("parent")
        const other = yield* user("parent")
        const staff = yield* user("support")
        const own = yield* patient(parent.id)
        const theirs = yield* patient(other.id)
        const unlinked = yield* patient(null)

        expect(yield* access.visiblePatient(parent, own)).toBe(own)
        expect(yield* access.visiblePatient(staff, theirs)).toBe(theirs)
        expect(yield* access.visiblePatient(staff, unlinked)).toBe(unlinked)
        for (const id of [theirs, unlinked, 2_000_000_000]) {
          const error = yield* failureOf(access.visiblePatient(parent, id))
          expect(error._tag === "Some" && error.value instanceof NotFound).toBe(true)
          expect(error._tag === "Some" && error.value.errors).toBe("Patient not found")
        }
        const missing = yield* failureOf(access.visiblePatient(staff, 2_000_000_000))
        expect(missing._tag === "Some" && missing.value.errors).toBe("Patient not found")
      }))
  })

  describe("defaultPatientFor", () => {
    it.effect("a parent with exactly one linked patient may omit the id; none or several, or staff, must name one", () =>
      Effect.gen(function*() {
        const access = yield* Access
        const single = yield* user("parent")
        const many = yield* user("parent")
        const none = yield* user("parent")
        // Front desk: staff who see every patient (a provider would need a care relationship).
        const staff = yield* user("support")
        const only = yield* patient(single.id)
        const first = yield* patient(many.id)
        yield* patient(many.id)

        expect(yield* access.defaultPatientFor(single, undefined)).toBe(only)
        expect(yield* access.defaultPatientFor(many, first)).toBe(first)
        expect(yield* access.defaultPatientFor(staff, only)).toBe(only)
        for (const viewer of [many, none, staff]) {
          const error = yield* failureOf(access.defaultPatientFor(viewer, undefined))
          expect(error._tag === "Some" && error.value instanceof ValidationFailed).toBe(true)
          expect(error._tag === "Some" && error.value.errors).toEqual({ patient_id: ["can't be blank"] })
        }
        const foreign = yield* failureOf(access.defaultPatientFor(single, first))
        expect(foreign._tag === "Some" && foreign.value.errors).toBe("Patient not found")
      }))
  })
})
