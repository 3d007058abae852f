/**
 * User collections (ours): a collection assigned at once. One transaction assigns each
 * published piece of the collection, reusing an open assignment of the same piece for that account
 * and patient; the collection's status and progress are derived from those user pieces.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import {
  contentMessages, type CreateUserCollectionRequest, type UpdateUserCollectionRequest, UserCollectionList
} from "../../Api/Content/Content.js"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import {
  collectionStatusOf, UserCollection, type UserCollectionStatus, type UserPieceStatus
} from "../../Domain/Content/Content.js"
import type { ContentCollectionId, ContentPieceId, PatientId, UserCollectionId, UserId, UserPieceId } from "../../Domain/Ids.js"
import { AuditLog } from "../AuditLog.js"
import { Access, isParent, type Viewer } from "../Access/Access.js"
import { now } from "../Time.js"
import { Assignees } from "./Assignees.js"
import { blankToNull } from "./Library.js"

interface UserCollectionRow {
  readonly id: number
  readonly content_collection_id: number
  readonly user_id: number
  readonly patient_id: number | null
  readonly assigned_by: number | null
  readonly assigned_at: Date
  readonly due_date: string | null
  readonly notes: string | null
  readonly title: string
  readonly piece_count: number
  readonly pieces: ReadonlyArray<{ readonly id: number; readonly content_piece_id: number; readonly status: UserPieceStatus; readonly completed_at: string | null }>
}

/** The derived status in SQL (the list filters by it): `collectionStatusOf` of the pieces' statuses. */
const derivedStatus = `(SELECT CASE
    WHEN bool_or(up.status IN ('assigned', 'started', 'in_progress'))
      THEN CASE WHEN bool_and(up.status IN ('assigned', 'skipped')) THEN 'assigned' ELSE 'in_progress' END
    WHEN bool_or(up.status = 'completed') THEN 'completed'
    ELSE 'skipped' END
  FROM content_user_collection_pieces ucp JOIN content_user_pieces up ON up.id = ucp.user_piece_id
  WHERE ucp.user_collection_id = uc.id)`

const select = `SELECT uc.id, uc.content_collection_id, uc.user_id, uc.patient_id, uc.assigned_by, uc.assigned_at,
  to_char(uc.due_date, 'YYYY-MM-DD') AS due_date, uc.notes, c.title,
  (SELECT count(*)::int FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id
    WHERE ccp.collection_id = c.id AND cp.published) AS piece_count,
  coalesce((SELECT json_agg(json_build_object('id', up.id, 'content_piece_id', up.content_piece_id, 'status', up.status,
      'completed_at', up.completed_at) ORDER BY ucp.position, up.id)
    FROM content_user_collection_pieces ucp JOIN content_user_pieces up ON up.id = ucp.user_piece_id
    WHERE ucp.user_collection_id = uc.id), '[]'::json) AS pieces
  FROM content_user_collections uc JOIN content_collections c ON c.id = uc.content_collection_id`

const toUserCollection = (row: UserCollectionRow): UserCollection => {
  const statuses = row.pieces.map((p) => p.status)
  const status = collectionStatusOf(statuses)
  const completedTimes = row.pieces.flatMap((p) => (p.status === "completed" && p.completed_at !== null ? [new Date(p.completed_at).getTime()] : []))
  return UserCollection.make({
    id: row.id as UserCollectionId,
    content_collection_id: row.content_collection_id as ContentCollectionId,
    user_id: row.user_id as UserId,
    patient_id: row.patient_id as PatientId | null,
    status,
    assigned_by: row.assigned_by as UserId | null,
    assigned_at: row.assigned_at,
    due_date: row.due_date,
    completed_at: status === "completed" && completedTimes.length > 0 ? new Date(Math.max(...completedTimes)) : null,
    notes: row.notes,
    progress: {
      completed: statuses.filter((s) => s === "completed").length,
      skipped: statuses.filter((s) => s === "skipped").length,
      total: statuses.length
    },
    content_collection: { id: row.content_collection_id as ContentCollectionId, title: row.title, piece_count: row.piece_count },
    user_pieces: row.pieces.map((p) => ({ id: p.id as UserPieceId, content_piece_id: p.content_piece_id as ContentPieceId, status: p.status }))
  }, true)
}

export class UserCollections extends Effect.Service<UserCollections>()("app/UserCollections", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const assignees = yield* Assignees
    const selectSql = sql.literal(select)

    const list = (
      caller: Viewer,
      criteria: { readonly status?: UserCollectionStatus | undefined; readonly patientId?: number | undefined; readonly userId?: number | undefined },
      request: PageRequest
    ) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = []
        if (isParent(caller)) {
          if (criteria.userId !== undefined && criteria.userId !== caller.id) return yield* Effect.fail(invalidField("user_id", "is invalid"))
          clauses.push(sql`uc.user_id = ${caller.id}`)
        } else if (criteria.userId !== undefined) clauses.push(sql`uc.user_id = ${criteria.userId}`)
        if (criteria.patientId !== undefined) {
          // One patient the caller may see (break-glass included): that patient's assignments.
          yield* access.visiblePatient(caller, criteria.patientId)
          clauses.push(sql`uc.patient_id = ${criteria.patientId}`)
        } else clauses.push(Access.scope.contentAssignments(sql, caller, yield* now, "uc"))
        if (criteria.status !== undefined) clauses.push(sql`${sql.literal(derivedStatus)} = ${criteria.status}`)
        const where = clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
        const rows = yield* sql<UserCollectionRow>`${selectSql} WHERE ${where} ORDER BY uc.assigned_at DESC, uc.id DESC
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM content_user_collections uc WHERE ${where}`
        return UserCollectionList.make({ user_collections: rows.map(toUserCollection), pagination: paginationOf(request, count?.count ?? 0) })
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("UserCollections.list"))

    const findRow = (caller: Viewer, id: number) =>
      Effect.gen(function*() {
        const visible = Access.scope.contentAssignments(sql, caller, yield* now, "uc")
        const [row] = yield* sql<UserCollectionRow & { readonly visible: boolean }>`SELECT ${visible} AS visible, uc.* FROM (${selectSql}
          WHERE uc.id = ${id}) uc`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("User collection"))
        yield* access.visibleAssignment(caller, row, () => notFound("User collection"))
        return row
      })

    const create = (caller: Viewer, input: CreateUserCollectionRequest["user_collection"]) =>
      Effect.gen(function*() {
        const target = yield* assignees.resolve(caller, input)
        const { at, today } = yield* assignees.now
        const collectionId = input.content_collection_id
        const errors: Record<string, Array<string>> = {}
        const [collection] = yield* sql`SELECT 1 FROM content_collections WHERE id = ${collectionId} AND published`
        const pieces = collection === undefined ? [] : yield* sql<{ piece_id: number }>`SELECT ccp.piece_id
          FROM content_collection_pieces ccp JOIN content_pieces cp ON cp.id = ccp.piece_id AND cp.published
          WHERE ccp.collection_id = ${collectionId} ORDER BY ccp.position, ccp.piece_id`
        if (collection === undefined) errors.content_collection_id = ["must exist"]
        else if (pieces.length === 0) errors.content_collection_id = ["has no published pieces"]
        if (input.due_date != null && input.due_date < today) errors.due_date = [contentMessages.future]
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
        const pieceIds = pieces.map((p) => p.piece_id)
        const id = yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<{ id: number }>`INSERT INTO content_user_collections
              (content_collection_id, user_id, patient_id, assigned_by, assigned_at, due_date, notes)
            VALUES (${collectionId}, ${target.userId}, ${target.patientId}, ${caller.id}, ${at}, ${input.due_date ?? null}::date,
              ${blankToNull(input.notes)})
            RETURNING id`
          // New assignments where none is open; the open ones are reused (the unique index decides, not a look first).
          yield* sql`INSERT INTO content_user_pieces (content_piece_id, user_id, patient_id, assigned_by, assigned_at, due_date)
            SELECT piece_id, ${target.userId}, ${target.patientId}, ${caller.id}, ${at}, ${input.due_date ?? null}::date
            FROM unnest(${pieceIds}::int[]) AS x(piece_id)
            ON CONFLICT (user_id, coalesce(patient_id, 0), content_piece_id) WHERE status IN ('assigned', 'started', 'in_progress') DO NOTHING`
          yield* sql`INSERT INTO content_user_collection_pieces (user_collection_id, user_piece_id, position)
            SELECT ${row!.id}, up.id, x.n FROM unnest(${pieceIds}::int[]) WITH ORDINALITY AS x(piece_id, n)
            JOIN content_user_pieces up ON up.content_piece_id = x.piece_id AND up.user_id = ${target.userId}
              AND coalesce(up.patient_id, 0) = ${target.patientId ?? 0} AND up.status IN ('assigned', 'started', 'in_progress')`
          yield* audit.record({ actorId: caller.id, action: "user_collection.create", targetType: "user_collection", targetId: row!.id })
          return row!.id
        }))
        return toUserCollection(yield* findRow(caller, id).pipe(Effect.orDie))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("UserCollections.create", { attributes: { "content_collection.id": input.content_collection_id } }))

    const update = (caller: Viewer, id: number, changes: UpdateUserCollectionRequest["user_collection"]) =>
      Effect.gen(function*() {
        const { at, today } = yield* assignees.now
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* findRow(caller, id)
          yield* sql`SELECT 1 FROM content_user_collections WHERE id = ${id} FOR UPDATE`
          if (changes.due_date != null && changes.due_date < today) return yield* Effect.fail(invalidField("due_date", contentMessages.future))
          const open = sql`id IN (SELECT user_piece_id FROM content_user_collection_pieces WHERE user_collection_id = ${id})
            AND status IN ('assigned', 'started', 'in_progress')`
          if (changes.due_date !== undefined) {
            yield* sql`UPDATE content_user_collections SET due_date = ${changes.due_date}::date, updated_at = ${at} WHERE id = ${id}`
            yield* sql`UPDATE content_user_pieces SET due_date = ${changes.due_date}::date, updated_at = ${at} WHERE ${open}`
          }
          if (changes.notes !== undefined) {
            yield* sql`UPDATE content_user_collections SET notes = ${blankToNull(changes.notes)}, updated_at = ${at} WHERE id = ${id}`
          }
          if (changes.status === "skipped") {
            yield* sql`UPDATE content_user_pieces SET status = 'skipped', updated_at = ${at} WHERE ${open}`
          }
          yield* audit.record({ actorId: caller.id, action: "user_collection.update", targetType: "user_collection", targetId: id })
        }))
        return toUserCollection(yield* findRow(caller, id))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("UserCollections.update", { attributes: { "user_collection.id": id } }))

    return { list, create, update } as const
  })
}) {}
