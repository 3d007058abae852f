/**
 * The only SQL on `collaborator_patients`, the links between collaborators and patients
 * (ARCHITECTURE "Persistence"). Which links a caller sees and changes is the access module's rule
 * (`Access.scope.patientsOf`: the patients the caller may see), and which collaborators a provider
 * reads through their patients is `Access.scope.caredFor` (their care relationships).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { CollaboratorId, PatientId } from "../../Domain/Ids.js"
import { Access, type Viewer } from "../Access/Access.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

const LinkRow = Schema.Struct({ collaborator_id: CollaboratorId, patient_id: PatientId })
/** A `SELECT 1` row: only whether there is one matters. */
const One = Schema.Struct({})
const Ids = Schema.Array(Schema.Number)

export const NewLink = Schema.Struct({
  collaborator_id: Schema.Number,
  patient_id: Schema.Number,
  added_by: Schema.Number,
  created_at: Schema.DateFromSelf
})
export type NewLink = typeof NewLink.Type

const Unlink = Schema.Struct({ collaboratorId: Schema.Number, keep: Schema.Array(Schema.Number) })
const Pair = Schema.Struct({ collaboratorId: Schema.Number, patientId: Schema.Number })

export class CollaboratorPatientsRepo extends Effect.Service<CollaboratorPatientsRepo>()("app/CollaboratorPatientsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The patients (`p`) whose links the viewer sees and changes. */
    const seen = (viewer: Viewer, at: Date) => Access.scope.patientsOf(sql, viewer, at, "general", "p", "many")

    const linksOf = (viewer: Viewer, at: Date) =>
      SqlSchema.findAll({
        Request: Ids,
        Result: LinkRow,
        execute: (ids) =>
          sql`SELECT cp.collaborator_id, cp.patient_id
            FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
            WHERE cp.collaborator_id IN ${sql.in(ids)} AND ${seen(viewer, at)} ORDER BY cp.patient_id`
      })

    const linkedToCaredFor = (viewer: Viewer, at: Date) =>
      SqlSchema.findOne({
        Request: Schema.Number,
        Result: One,
        execute: (id) =>
          sql`SELECT 1 FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
            WHERE cp.collaborator_id = ${id} AND ${Access.scope.caredFor(sql, viewer, at, "p", "one")} LIMIT 1`
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

    const unlinkOthers = (viewer: Viewer, at: Date) =>
      SqlSchema.void({
        Request: Unlink,
        execute: ({ collaboratorId, keep }) =>
          sql`DELETE FROM collaborator_patients cp USING patients p WHERE cp.collaborator_id = ${collaboratorId} AND p.id = cp.patient_id
            AND ${seen(viewer, at)} ${keep.length === 0 ? sql`` : sql`AND cp.patient_id NOT IN ${sql.in(keep)}`}`
      })

    return {
      /** The links of these collaborators to the patients the viewer may see, by patient id. */
      linksOf: (ids: ReadonlyArray<number>, viewer: Viewer) =>
        ids.length === 0 ? Effect.succeed([]) : orDefect(Effect.flatMap(now, (at) => linksOf(viewer, at)(ids))),
      /** Whether the collaborator is linked to a patient of the viewer's care relationships (`Access.scope.caredFor`). */
      linkedToCaredFor: (collaboratorId: number, viewer: Viewer) =>
        Effect.map(orDefect(Effect.flatMap(now, (at) => linkedToCaredFor(viewer, at)(collaboratorId))), Option.isSome),
      isLinked: (collaboratorId: number, patientId: number) => Effect.map(orDefect(isLinked({ collaboratorId, patientId })), Option.isSome),
      link: (links: ReadonlyArray<NewLink>) => links.length === 0 ? Effect.void : orDefect(insertLinks(links)),
      /** Links the ones not linked yet. */
      linkMissing: (links: ReadonlyArray<NewLink>) => links.length === 0 ? Effect.void : orDefect(insertMissingLinks(links)),
      /** Removes the collaborator's links to patients the viewer may see, except to `keep`. */
      unlinkOthers: (collaboratorId: number, keep: ReadonlyArray<number>, viewer: Viewer) =>
        orDefect(Effect.flatMap(now, (at) => unlinkOthers(viewer, at)({ collaboratorId, keep })))
    } as const
  })
}) {}
