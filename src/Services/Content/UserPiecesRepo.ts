/**
 * The only SQL on `content_user_pieces` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. One open assignment of a piece per account and patient is the unique index
 * `content_user_pieces_open_key`, never a look first: a second one is a 422 `has already been taken`.
 * The viewer's list scope is the access module's (`Access.scope.contentAssignments`), applied here.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { ContentType, UserPieceStatus } from "../../Domain/Content/Content.js"
import { ContentPieceId, PatientId, UserId, UserPieceId } from "../../Domain/Ids.js"
import { Access, type Viewer } from "../Access/Access.js"
import { makeListPage } from "../Lists.js"
import { orDefect, ScopeAnswer, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { now } from "../Time.js"

export const UserPieceRow = Schema.Struct({
  id: UserPieceId,
  content_piece_id: ContentPieceId,
  user_id: UserId,
  patient_id: Schema.NullOr(PatientId),
  status: UserPieceStatus,
  assigned_by: Schema.NullOr(UserId),
  assigned_at: Schema.DateFromSelf,
  due_date: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  rating: Schema.NullOr(Schema.Int),
  feedback: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  piece_title: Schema.String,
  piece_content_type: ContentType
})
export type UserPieceRow = typeof UserPieceRow.Type

/** A row and whether the viewer's list scope holds it (`Access.visibleAssignment` decides the rest). */
const VisibleRow = Schema.Struct({ ...UserPieceRow.fields, visible: ScopeAnswer })

const columns = `up.id, up.content_piece_id, up.user_id, up.patient_id, up.status, up.assigned_by, up.assigned_at,
  to_char(up.due_date, 'YYYY-MM-DD') AS due_date, up.completed_at, up.rating, up.feedback, up.notes,
  cp.title AS piece_title, cp.content_type AS piece_content_type`
const from = `content_user_pieces up JOIN content_pieces cp ON cp.id = up.content_piece_id`

/** What a list is narrowed by; without `patientId` (one patient already checked) the viewer's scope applies. */
export interface UserPieceCriteria {
  readonly userId?: number | undefined
  readonly patientId?: number | undefined
  readonly status?: UserPieceStatus | undefined
  readonly contentType?: ContentType | undefined
}

const Assignment = Schema.Struct({
  user_id: Schema.Number,
  patient_id: Schema.NullOr(Schema.Number),
  assigned_by: Schema.Number,
  assigned_at: Schema.DateFromSelf,
  due_date: Schema.NullOr(Schema.String)
})
export type Assignment = typeof Assignment.Type

const NewUserPiece = Schema.Struct({ ...Assignment.fields, content_piece_id: Schema.Number, notes: Schema.NullOr(Schema.String) })
export type NewUserPiece = typeof NewUserPiece.Type

const Progress = Schema.Struct({
  id: Schema.Number,
  status: UserPieceStatus,
  completed_at: Schema.NullOr(Schema.DateFromSelf),
  rating: Schema.NullOr(Schema.Int),
  feedback: Schema.NullOr(Schema.String),
  updated_at: Schema.DateFromSelf
})
export type Progress = typeof Progress.Type

const OfCollection = Schema.Struct({ userCollectionId: Schema.Number, at: Schema.DateFromSelf })

const taken = (field: string) => (error: unknown): Effect.Effect<never, ValidationFailed, never> =>
  isUniqueViolation(error, "content_user_pieces_open_key") ? Effect.fail(invalidField(field, "has already been taken")) : Effect.die(error)

export class UserPiecesRepo extends Effect.Service<UserPiecesRepo>()("app/UserPiecesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const select = sql.literal(columns)
    const fromPieces = sql.literal(from)
    const newestFirst = { assigned_at: sql`up.assigned_at` }
    const scopeOf = (viewer: Viewer, at: Date) => Access.scope.contentAssignments(sql, viewer, at, "up")

    /** A page of assignments, newest first. */
    const list = (viewer: Viewer, criteria: UserPieceCriteria, page: PageRequest) =>
      Effect.flatMap(now, (at) =>
        listPage({
          select,
          from: fromPieces,
          row: UserPieceRow,
          filters: [
            criteria.userId !== undefined && sql`up.user_id = ${criteria.userId}`,
            criteria.patientId !== undefined ? sql`up.patient_id = ${criteria.patientId}` : scopeOf(viewer, at),
            criteria.status !== undefined && sql`up.status = ${criteria.status}`,
            criteria.contentType !== undefined && sql`cp.content_type = ${criteria.contentType}`
          ],
          sort: { columns: newestFirst, by: "assigned_at", dir: "DESC", id: sql`up.id` }
        }, page))

    const findVisible = (viewer: Viewer, id: number, lock: boolean) =>
      Effect.flatMap(now, (at) =>
        SqlSchema.findOne({
          Request: Schema.Number,
          Result: VisibleRow,
          execute: (id) =>
            sql`SELECT ${scopeOf(viewer, at)} AS visible, up.* FROM (SELECT ${select} FROM ${fromPieces}
              WHERE up.id = ${id} ${lock ? sql`FOR UPDATE OF up` : sql``}) up`
        })(id))

    const insertOne = SqlSchema.single({
      Request: NewUserPiece,
      Result: Schema.Struct({ id: UserPieceId }),
      execute: (row) =>
        sql`INSERT INTO content_user_pieces (content_piece_id, user_id, patient_id, assigned_by, assigned_at, due_date, notes)
          VALUES (${row.content_piece_id}, ${row.user_id}, ${row.patient_id}, ${row.assigned_by}, ${row.assigned_at},
            ${row.due_date}::date, ${row.notes})
          RETURNING id`
    })

    const updateOne = SqlSchema.void({
      Request: Progress,
      execute: (p) =>
        sql`UPDATE content_user_pieces SET status = ${p.status}, completed_at = ${p.completed_at}, rating = ${p.rating},
            feedback = ${p.feedback}, updated_at = ${p.updated_at}
          WHERE id = ${p.id}`
    })

    const assignMany = SqlSchema.void({
      Request: Schema.Struct({ pieceIds: Schema.Array(Schema.Number), assignment: Assignment }),
      execute: ({ assignment: a, pieceIds }) =>
        sql`INSERT INTO content_user_pieces (content_piece_id, user_id, patient_id, assigned_by, assigned_at, due_date)
          SELECT piece_id, ${a.user_id}, ${a.patient_id}, ${a.assigned_by}, ${a.assigned_at}, ${a.due_date}::date
          FROM unnest(${pieceIds}::int[]) AS x(piece_id)
          ON CONFLICT (user_id, coalesce(patient_id, 0), content_piece_id) WHERE status IN ('assigned', 'started', 'in_progress') DO NOTHING`
    })

    /** The open pieces of a user collection. */
    const openIn = (userCollectionId: number): Statement.Fragment =>
      sql`id IN (SELECT user_piece_id FROM content_user_collection_pieces WHERE user_collection_id = ${userCollectionId})
        AND status IN ('assigned', 'started', 'in_progress')`

    const setDueDateIn = SqlSchema.void({
      Request: Schema.Struct({ ...OfCollection.fields, dueDate: Schema.NullOr(Schema.String) }),
      execute: ({ at, dueDate, userCollectionId }) =>
        sql`UPDATE content_user_pieces SET due_date = ${dueDate}::date, updated_at = ${at} WHERE ${openIn(userCollectionId)}`
    })

    const skipOpenIn = SqlSchema.void({
      Request: OfCollection,
      execute: ({ at, userCollectionId }) =>
        sql`UPDATE content_user_pieces SET status = 'skipped', updated_at = ${at} WHERE ${openIn(userCollectionId)}`
    })

    return {
      list,
      /** The assignment and whether the viewer's scope holds it; `lock` takes its row lock (inside a transaction). */
      findVisible: (viewer: Viewer, id: number, lock: boolean) => orDefect(findVisible(viewer, id, lock)),
      /** The new assignment's id; an open one of the piece for that account and patient is `content_piece_id: has already been taken`. */
      insert: (row: NewUserPiece) =>
        orDefect(Effect.map(insertOne(row).pipe(Effect.catchTag("SqlError", taken("content_piece_id"))), (created) => created.id)),
      /** Moves an assignment; reopening a piece that has another open assignment is `status: has already been taken`. */
      update: (progress: Progress) => orDefect(updateOne(progress).pipe(Effect.catchTag("SqlError", taken("status")))),
      /** Assigns each piece where no open assignment of it exists for that account and patient (those are reused). */
      assignMany: (pieceIds: ReadonlyArray<number>, assignment: Assignment) => orDefect(assignMany({ pieceIds, assignment })),
      /** Moves the due date of a user collection's open pieces. */
      setDueDateIn: (userCollectionId: number, dueDate: string | null, at: Date) => orDefect(setDueDateIn({ userCollectionId, dueDate, at })),
      /** Skips a user collection's open pieces. */
      skipOpenIn: (userCollectionId: number, at: Date) => orDefect(skipOpenIn({ userCollectionId, at }))
    } as const
  })
}) {}
