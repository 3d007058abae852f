/**
 * The only SQL on `content_user_collections` and their links to user pieces
 * `content_user_collection_pieces` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects.
 * A user collection's status is derived from its pieces' (in SQL where the list filters by it).
 * The viewer's list scope is the access module's (`Access.scope.contentAssignments`), applied here.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { type PageRequest } from "../../Api/Pagination.js"
import { type UserCollectionStatus, UserPieceStatus } from "../../Domain/Content/Content.js"
import { ContentCollectionId, ContentPieceId, PatientId, UserCollectionId, UserId, UserPieceId } from "../../Domain/Ids.js"
import { Access, type Viewer } from "../Access/Access.js"
import { makeListPage } from "../Lists.js"
import { orDefect, ScopeAnswer, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

export const UserCollectionRow = Schema.Struct({
  id: UserCollectionId,
  content_collection_id: ContentCollectionId,
  user_id: UserId,
  patient_id: Schema.NullOr(PatientId),
  assigned_by: Schema.NullOr(UserId),
  assigned_at: Schema.DateFromSelf,
  due_date: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  title: Schema.String,
  piece_count: Schema.Int,
  /** Its user pieces in the collection's order (JSON: `completed_at` as text). */
  pieces: Schema.Array(Schema.Struct({
    id: UserPieceId,
    content_piece_id: ContentPieceId,
    status: UserPieceStatus,
    completed_at: Schema.NullOr(Schema.String)
  }))
})
export type UserCollectionRow = typeof UserCollectionRow.Type

/** A row and whether the viewer's list scope holds it (`Access.visibleAssignment` decides the rest). */
const VisibleRow = Schema.Struct({ ...UserCollectionRow.fields, visible: ScopeAnswer })

/** The derived status in SQL (the list filters by it): `collectionStatusOf` of the pieces' statuses. */
const derivedStatus = `(SELECT CASE
    WHEN bool_or(up.status IN ('assigned', 'started', 'in_progress'))
      THEN CASE WHEN bool_and(up.status IN ('assigned', 'skipped')) THEN 'assigned' ELSE 'in_progress' END
    WHEN bool_or(up.status = 'completed') THEN 'completed'
    ELSE 'skipped' END
  FROM content_user_collection_pieces ucp JOIN content_user_pieces up ON up.id = ucp.user_piece_id
  WHERE ucp.user_collection_id = uc.id)`

/** The columns of a user collection (`uc`): its collection's title and published pieces, its user pieces as JSON. */
const columns = `uc.id, uc.content_collection_id, uc.user_id, uc.patient_id, uc.assigned_by, uc.assigned_at,
  to_char(uc.due_date, 'YYYY-MM-DD') AS due_date, uc.notes,
  (SELECT c.title FROM content_collections c WHERE c.id = uc.content_collection_id) AS title,
  (SELECT count(*)::int FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id
    WHERE ccp.collection_id = uc.content_collection_id AND cp.published) AS piece_count,
  coalesce((SELECT json_agg(json_build_object('id', up.id, 'content_piece_id', up.content_piece_id, 'status', up.status,
      'completed_at', up.completed_at) ORDER BY ucp.position, up.id)
    FROM content_user_collection_pieces ucp JOIN content_user_pieces up ON up.id = ucp.user_piece_id
    WHERE ucp.user_collection_id = uc.id), '[]'::json) AS pieces`

/** What a list is narrowed by; without `patientId` (one patient already checked) the viewer's scope applies. */
export interface UserCollectionCriteria {
  readonly userId?: number | undefined
  readonly patientId?: number | undefined
  readonly status?: UserCollectionStatus | undefined
}

const NewUserCollection = Schema.Struct({
  content_collection_id: Schema.Number,
  user_id: Schema.Number,
  patient_id: Schema.NullOr(Schema.Number),
  assigned_by: Schema.Number,
  assigned_at: Schema.DateFromSelf,
  due_date: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String)
})
export type NewUserCollection = typeof NewUserCollection.Type

const Link = Schema.Struct({
  userCollectionId: Schema.Number,
  pieceIds: Schema.Array(Schema.Number),
  userId: Schema.Number,
  patientId: Schema.NullOr(Schema.Number)
})

/** The columns to set; absent ones keep their value. */
const Change = Schema.Struct({
  id: Schema.Number,
  at: Schema.DateFromSelf,
  due_date: Schema.optional(Schema.NullOr(Schema.String)),
  notes: Schema.optional(Schema.NullOr(Schema.String))
})
export type UserCollectionChange = Omit<typeof Change.Type, "id" | "at">

export class UserCollectionsRepo extends Effect.Service<UserCollectionsRepo>()("app/UserCollectionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const select = sql.literal(columns)
    const newestFirst = { assigned_at: sql`uc.assigned_at` }
    const scopeOf = (viewer: Viewer, at: Date) => Access.scope.contentAssignments(sql, viewer, at, "uc")

    /** A page of user collections, newest first. */
    const list = (viewer: Viewer, criteria: UserCollectionCriteria, page: PageRequest) =>
      Effect.flatMap(now, (at) =>
        listPage({
          select,
          from: sql`content_user_collections uc`,
          row: UserCollectionRow,
          filters: [
            criteria.userId !== undefined && sql`uc.user_id = ${criteria.userId}`,
            criteria.patientId !== undefined ? sql`uc.patient_id = ${criteria.patientId}` : scopeOf(viewer, at),
            criteria.status !== undefined && sql`${sql.literal(derivedStatus)} = ${criteria.status}`
          ],
          sort: { columns: newestFirst, by: "assigned_at", dir: "DESC", id: sql`uc.id` }
        }, page))

    const findVisible = (viewer: Viewer, id: number) =>
      Effect.flatMap(now, (at) =>
        SqlSchema.findOne({
          Request: Schema.Number,
          Result: VisibleRow,
          execute: (id) =>
            sql`SELECT ${scopeOf(viewer, at)} AS visible, uc.* FROM (SELECT ${select} FROM content_user_collections uc
              WHERE uc.id = ${id}) uc`
        })(id))

    const lock = SqlSchema.void({
      Request: Schema.Number,
      execute: (id) => sql`SELECT 1 FROM content_user_collections WHERE id = ${id} FOR UPDATE`
    })

    const insertOne = SqlSchema.single({
      Request: NewUserCollection,
      Result: Schema.Struct({ id: UserCollectionId }),
      execute: (row) =>
        sql`INSERT INTO content_user_collections (content_collection_id, user_id, patient_id, assigned_by, assigned_at, due_date, notes)
          VALUES (${row.content_collection_id}, ${row.user_id}, ${row.patient_id}, ${row.assigned_by}, ${row.assigned_at},
            ${row.due_date}::date, ${row.notes})
          RETURNING id`
    })

    const link = SqlSchema.void({
      Request: Link,
      execute: ({ patientId, pieceIds, userCollectionId, userId }) =>
        sql`INSERT INTO content_user_collection_pieces (user_collection_id, user_piece_id, position)
          SELECT ${userCollectionId}, up.id, x.n FROM unnest(${pieceIds}::int[]) WITH ORDINALITY AS x(piece_id, n)
          JOIN content_user_pieces up ON up.content_piece_id = x.piece_id AND up.user_id = ${userId}
            AND coalesce(up.patient_id, 0) = ${patientId ?? 0} AND up.status IN ('assigned', 'started', 'in_progress')`
    })

    const updateOne = SqlSchema.void({
      Request: Change,
      execute: ({ at, due_date, id, notes }) =>
        sql`UPDATE content_user_collections SET ${
          sql.update({
            ...(due_date === undefined ? {} : { due_date }),
            ...(notes === undefined ? {} : { notes }),
            updated_at: at
          })
        } WHERE id = ${id}`
    })

    return {
      list,
      /** The user collection and whether the viewer's scope holds it. */
      findVisible: (viewer: Viewer, id: number) => orDefect(findVisible(viewer, id)),
      /** Takes the user collection's row lock (inside a transaction). */
      lock: (id: number) => orDefect(lock(id)),
      /** The new user collection's id. */
      insert: (row: NewUserCollection) => Effect.map(orDefect(insertOne(row)), (created) => created.id),
      /** Links the open user pieces of `pieceIds` (that account and patient) in that order. */
      linkOpenPieces: (userCollectionId: number, pieceIds: ReadonlyArray<number>, target: { readonly userId: number; readonly patientId: number | null }) =>
        orDefect(link({ userCollectionId, pieceIds, userId: target.userId, patientId: target.patientId })),
      update: (id: number, change: UserCollectionChange, at: Date) => orDefect(updateOne({ id, at, ...change }))
    } as const
  })
}) {}
