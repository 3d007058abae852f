/**
 * The only SQL on `collaborator_patients`, the links between collaborators and patients
 * (ARCHITECTURE "Persistence"). The lookups on `patients` and `providers` that linking needs stay
 * here until the patients area has a repository of its own. A parent sees and changes only the
 * links to their own patients: that scope is written here until the access module provides it.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { CollaboratorId, PatientId } from "../../Domain/Ids.js"
import { orDefect } from "../Repository.js"

const LinkRow = Schema.Struct({ collaborator_id: CollaboratorId, patient_id: PatientId })
const IdRow = Schema.Struct({ id: Schema.Number })
/** A `SELECT 1` row: only whether there is one matters. */
const One = Schema.Struct({})

/** `parentId`: the parent whose own patients are the only ones in scope; null for staff (every patient). */
const Scoped = Schema.Struct({ ids: Schema.Array(Schema.Number), parentId: Schema.NullOr(Schema.Number) })

export const NewLink = Schema.Struct({
  collaborator_id: Schema.Number,
  patient_id: Schema.Number,
  added_by: Schema.Number,
  created_at: Schema.DateFromSelf
})
export type NewLink = typeof NewLink.Type

const Unlink = Schema.Struct({ collaboratorId: Schema.Number, keep: Schema.Array(Schema.Number), parentId: Schema.NullOr(Schema.Number) })
const Pair = Schema.Struct({ collaboratorId: Schema.Number, patientId: Schema.Number })
const ProviderOf = Schema.Struct({ id: Schema.Number, userId: Schema.Number })

export class CollaboratorPatientsRepo extends Effect.Service<CollaboratorPatientsRepo>()("app/CollaboratorPatientsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const linksOf = SqlSchema.findAll({
      Request: Scoped,
      Result: LinkRow,
      execute: ({ ids, parentId }) =>
        parentId === null
          ? sql`SELECT collaborator_id, patient_id FROM collaborator_patients
              WHERE collaborator_id IN ${sql.in(ids)} ORDER BY patient_id`
          : sql`SELECT cp.collaborator_id, cp.patient_id
              FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
              WHERE cp.collaborator_id IN ${sql.in(ids)} AND p.user_id = ${parentId} ORDER BY cp.patient_id`
    })

    const existingPatients = SqlSchema.findAll({
      Request: Scoped,
      Result: IdRow,
      execute: ({ ids, parentId }) =>
        parentId === null
          ? sql`SELECT id FROM patients WHERE id IN ${sql.in(ids)}`
          : sql`SELECT id FROM patients WHERE id IN ${sql.in(ids)} AND user_id = ${parentId}`
    })

    const linkedToPatientOfProvider = SqlSchema.findOne({
      Request: ProviderOf,
      Result: One,
      execute: ({ id, userId }) =>
        sql`SELECT 1 FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
          JOIN providers pr ON pr.id = p.provider_id WHERE cp.collaborator_id = ${id} AND pr.user_id = ${userId} LIMIT 1`
    })

    const isPrimaryProvider = SqlSchema.findOne({
      Request: ProviderOf,
      Result: One,
      execute: ({ id, userId }) =>
        sql`SELECT 1 FROM patients p JOIN providers pr ON pr.id = p.provider_id
          WHERE p.id = ${id} AND pr.user_id = ${userId}`
    })

    const isLinked = SqlSchema.findOne({
      Request: Pair,
      Result: One,
      execute: ({ collaboratorId, patientId }) =>
        sql`SELECT 1 FROM collaborator_patients WHERE collaborator_id = ${collaboratorId} AND patient_id = ${patientId}`
    })

    const insertLinks = SqlSchema.void({
      Request: Schema.Array(NewLink),
      execute: (links) => sql`INSERT INTO collaborator_patients ${sql.insert(links)}`
    })

    const insertMissingLinks = SqlSchema.void({
      Request: Schema.Array(NewLink),
      execute: (links) => sql`INSERT INTO collaborator_patients ${sql.insert(links)} ON CONFLICT DO NOTHING`
    })

    const unlinkOthers = SqlSchema.void({
      Request: Unlink,
      execute: ({ collaboratorId, keep, parentId }) =>
        parentId === null
          ? sql`DELETE FROM collaborator_patients WHERE collaborator_id = ${collaboratorId}
                ${keep.length === 0 ? sql`` : sql`AND patient_id NOT IN ${sql.in(keep)}`}`
          : sql`DELETE FROM collaborator_patients cp USING patients p WHERE cp.collaborator_id = ${collaboratorId} AND p.id = cp.patient_id
                AND p.user_id = ${parentId} ${keep.length === 0 ? sql`` : sql`AND cp.patient_id NOT IN ${sql.in(keep)}`}`
    })

    return {
      /** The links of these collaborators in the scope, by patient id. */
      linksOf: (ids: ReadonlyArray<number>, parentId: number | null) =>
        ids.length === 0 ? Effect.succeed([]) : orDefect(linksOf({ ids, parentId })),
      /** Which of these patients exist in the scope. */
      existingPatients: (ids: ReadonlyArray<number>, parentId: number | null) =>
        ids.length === 0 ? Effect.succeed([]) : Effect.map(orDefect(existingPatients({ ids, parentId })), (rows) => rows.map((row) => row.id)),
      /** Whether the collaborator is linked to a patient whose primary provider is `userId`. */
      linkedToPatientOf: (collaboratorId: number, userId: number) =>
        Effect.map(orDefect(linkedToPatientOfProvider({ id: collaboratorId, userId })), Option.isSome),
      /** Whether `userId` is the patient's primary provider. */
      isPrimaryProvider: (patientId: number, userId: number) => Effect.map(orDefect(isPrimaryProvider({ id: patientId, userId })), Option.isSome),
      isLinked: (collaboratorId: number, patientId: number) => Effect.map(orDefect(isLinked({ collaboratorId, patientId })), Option.isSome),
      link: (links: ReadonlyArray<NewLink>) => links.length === 0 ? Effect.void : orDefect(insertLinks(links)),
      /** Links the ones not linked yet. */
      linkMissing: (links: ReadonlyArray<NewLink>) => links.length === 0 ? Effect.void : orDefect(insertMissingLinks(links)),
      /** Removes the collaborator's links in the scope except to `keep`. */
      unlinkOthers: (collaboratorId: number, keep: ReadonlyArray<number>, parentId: number | null) =>
        orDefect(unlinkOthers({ collaboratorId, keep, parentId }))
    } as const
  })
}) {}
