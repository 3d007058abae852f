/**
 * The reads the access rules need (ARCHITECTURE "Access"), the one place their SQL lives: a
 * patient with the caller's care relationship computed beside it (`Scopes.patientsOf`: one indexed
 * statement), an appointment's patient, a parent's linked patients, a user's provider profile.
 * They read tables other areas own (patients, appointments, providers) and never write.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { PatientId, ProviderId } from "../../Domain/Ids.js"
import { orDefect, ScopeAnswer, SqlSchema } from "../Repository.js"
import { scope } from "./Scopes.js"
import type { Purpose, Viewer } from "./Viewer.js"

const Related = Schema.Struct({ id: PatientId, related: ScopeAnswer })
const PatientOf = Schema.Struct({ patient_id: PatientId })
const PatientRow = Schema.Struct({ id: PatientId })
const ProviderRow = Schema.Struct({ id: ProviderId })

export class AccessRepo extends Effect.Service<AccessRepo>()("app/AccessRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const relatedOne = (viewer: Viewer, purpose: Purpose, at: Date) =>
      SqlSchema.findOne({
        Request: Schema.Number,
        Result: Related,
        execute: (id) => sql`SELECT p.id, ${scope.patientsOf(sql, viewer, at, purpose, "p", "one")} AS related
          FROM patients p WHERE p.id = ${id}`
      })

    const relatedMany = (viewer: Viewer, purpose: Purpose, at: Date) =>
      SqlSchema.findAll({
        Request: Schema.Array(Schema.Number),
        Result: Related,
        execute: (ids) => sql`SELECT p.id, ${scope.patientsOf(sql, viewer, at, purpose, "p", "many")} AS related
          FROM patients p WHERE p.id IN ${sql.in(ids)}`
      })

    const appointmentPatient = SqlSchema.findOne({
      Request: Schema.Number,
      Result: PatientOf,
      execute: (id) => sql`SELECT patient_id FROM appointments WHERE id = ${id}`
    })

    const linkedPatients = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.Number, limit: Schema.Int }),
      Result: PatientRow,
      execute: ({ limit, userId }) => sql`SELECT id FROM patients WHERE user_id = ${userId} ORDER BY id LIMIT ${limit}`
    })

    const providerProfile = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.Number, activeOnly: Schema.Boolean }),
      Result: ProviderRow,
      execute: ({ activeOnly, userId }) =>
        sql`SELECT id FROM providers WHERE user_id = ${userId}${activeOnly ? sql` AND active` : sql``}`
    })

    return {
      /** The patient, if it exists, and whether the viewer sees it for the purpose at `at` without breaking the glass. */
      related: (viewer: Viewer, patientId: number, purpose: Purpose, at: Date) => orDefect(relatedOne(viewer, purpose, at)(patientId)),
      /** `related` for several patients in one statement; unknown ids are not among the rows. */
      relatedAll: (viewer: Viewer, patientIds: ReadonlyArray<number>, purpose: Purpose, at: Date) =>
        orDefect(relatedMany(viewer, purpose, at)(patientIds)),
      /** The appointment's patient, if the appointment exists. */
      appointmentPatient: (appointmentId: number) => Effect.map(orDefect(appointmentPatient(appointmentId)), Option.map((row) => row.patient_id)),
      /** The ids of the patients linked to a user's account, oldest first (at most `limit`). */
      linkedPatients: (userId: number, limit: number) =>
        Effect.map(orDefect(linkedPatients({ userId, limit })), (rows) => rows.map((row) => row.id)),
      /** The user's provider profile (only an active one when `activeOnly`), if any. */
      providerProfile: (userId: number, activeOnly: boolean) =>
        Effect.map(orDefect(providerProfile({ userId, activeOnly })), Option.map((row) => row.id))
    } as const
  })
}) {}
