/**
 * User pieces (general §2.10, §4.11): content pieces assigned to an account, optionally for a
 * patient, and their status machine. One open assignment of a piece per account and patient is the
 * unique index `content_user_pieces_open_key`, never a look first.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { contentMessages, type CreateUserPieceRequest, type UpdateUserPieceRequest, UserPieceList } from "../../Api/Content/Content.js"
import { invalid, invalidField, notFound, type ValidationFailed } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { canMove, type ContentType, moveMessage, PieceRef, UserPiece, type UserPieceStatus } from "../../Domain/Content/Content.js"
import type { ContentPieceId, PatientId, UserId, UserPieceId } from "../../Domain/Ids.js"
import { AuditLog } from "../AuditLog.js"
import { Access, isParent, type Viewer } from "../Access/Access.js"
import { now } from "../Time.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { Assignees } from "./Assignees.js"
import { blankToNull } from "./Library.js"

export interface UserPieceRow {
  readonly id: number
  readonly content_piece_id: number
  readonly user_id: number
  readonly patient_id: number | null
  readonly status: UserPieceStatus
  readonly assigned_by: number | null
  readonly assigned_at: Date
  readonly due_date: string | null
  readonly completed_at: Date | null
  readonly rating: number | null
  readonly feedback: string | null
  readonly notes: string | null
  readonly piece_title: string
  readonly piece_content_type: ContentType
}

export const userPieceSelect = `SELECT up.id, up.content_piece_id, up.user_id, up.patient_id, up.status, up.assigned_by, up.assigned_at,
  to_char(up.due_date, 'YYYY-MM-DD') AS due_date, up.completed_at, up.rating, up.feedback, up.notes,
  cp.title AS piece_title, cp.content_type AS piece_content_type
  FROM content_user_pieces up JOIN content_pieces cp ON cp.id = up.content_piece_id`

export const toUserPiece = (row: UserPieceRow): UserPiece =>
  UserPiece.make({
    id: row.id as UserPieceId,
    content_piece_id: row.content_piece_id as ContentPieceId,
    user_id: row.user_id as UserId,
    patient_id: row.patient_id as PatientId | null,
    status: row.status,
    assigned_by: row.assigned_by as UserId | null,
    assigned_at: row.assigned_at,
    due_date: row.due_date,
    completed_at: row.completed_at,
    rating: row.rating,
    feedback: row.feedback,
    notes: row.notes,
    content_piece: PieceRef.make({ id: row.content_piece_id as ContentPieceId, title: row.piece_title, content_type: row.piece_content_type })
  }, true)

export interface UserPieceCriteria {
  readonly status?: UserPieceStatus | undefined
  readonly contentType?: ContentType | undefined
  readonly patientId?: number | undefined
  readonly userId?: number | undefined
}

export class UserPieces extends Effect.Service<UserPieces>()("app/UserPieces", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const assignees = yield* Assignees
    const select = sql.literal(userPieceSelect)

    const list = (caller: Viewer, criteria: UserPieceCriteria, request: PageRequest) =>
      Effect.gen(function*() {
        const clauses: Array<Statement.Fragment> = []
        if (isParent(caller)) {
          if (criteria.userId !== undefined && criteria.userId !== caller.id) return yield* Effect.fail(invalidField("user_id", "is invalid"))
          clauses.push(sql`up.user_id = ${caller.id}`)
        } else if (criteria.userId !== undefined) clauses.push(sql`up.user_id = ${criteria.userId}`)
        if (criteria.patientId !== undefined) {
          // One patient the caller may see (break-glass included): that patient's assignments.
          yield* access.visiblePatient(caller, criteria.patientId)
          clauses.push(sql`up.patient_id = ${criteria.patientId}`)
        } else clauses.push(Access.scope.contentAssignments(sql, caller, yield* now, "up"))
        if (criteria.status !== undefined) clauses.push(sql`up.status = ${criteria.status}`)
        if (criteria.contentType !== undefined) clauses.push(sql`cp.content_type = ${criteria.contentType}`)
        const where = clauses.length === 0 ? sql`TRUE` : sql.and(clauses)
        const rows = yield* sql<UserPieceRow>`${select} WHERE ${where} ORDER BY up.assigned_at DESC, up.id DESC
          LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [count] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM content_user_pieces up
          JOIN content_pieces cp ON cp.id = up.content_piece_id WHERE ${where}`
        return UserPieceList.make({ user_pieces: rows.map(toUserPiece), pagination: paginationOf(request, count?.count ?? 0) })
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("UserPieces.list"))

    const findRow = (caller: Viewer, id: number, lock: boolean) =>
      Effect.gen(function*() {
        const visible = Access.scope.contentAssignments(sql, caller, yield* now, "up")
        const [row] = yield* sql<UserPieceRow & { readonly visible: boolean }>`SELECT ${visible} AS visible, up.* FROM (${select}
          WHERE up.id = ${id} ${lock ? sql`FOR UPDATE OF up` : sql``}) up`.pipe(Effect.orDie)
        if (row === undefined) return yield* Effect.fail(notFound("User piece"))
        yield* access.visibleAssignment(caller, row, () => notFound("User piece"))
        return row
      })

    const takenOnConflict = (field: string) => (error: unknown): Effect.Effect<never, ValidationFailed> =>
      isUniqueViolation(error, "content_user_pieces_open_key")
        ? Effect.fail(invalidField(field, "has already been taken"))
        : Effect.die(error)

    const create = (caller: Viewer, input: CreateUserPieceRequest["user_piece"]) =>
      Effect.gen(function*() {
        const target = yield* assignees.resolve(caller, input)
        const assignedBy = yield* assignees.assigner(caller, input.assigned_by)
        const { at, today } = yield* assignees.now
        const errors: Record<string, Array<string>> = {}
        const [piece] = yield* sql`SELECT 1 FROM content_pieces WHERE id = ${input.content_piece_id} AND published`.pipe(Effect.orDie)
        if (piece === undefined) errors.content_piece_id = ["must exist"]
        if (input.due_date != null && input.due_date < today) errors.due_date = [contentMessages.future]
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
        const [row] = yield* sql<{ id: number }>`INSERT INTO content_user_pieces
            (content_piece_id, user_id, patient_id, assigned_by, assigned_at, due_date, notes)
          VALUES (${input.content_piece_id}, ${target.userId}, ${target.patientId}, ${assignedBy}, ${at}, ${input.due_date ?? null}::date,
            ${blankToNull(input.notes)})
          RETURNING id`.pipe(Effect.catchTag("SqlError", takenOnConflict("content_piece_id")))
        yield* audit.record({ actorId: caller.id, action: "user_piece.create", targetType: "user_piece", targetId: row!.id })
        return toUserPiece(yield* findRow(caller, row!.id, false).pipe(Effect.orDie))
      }).pipe(Effect.withSpan("UserPieces.create", { attributes: { "content_piece.id": input.content_piece_id } }))

    const update = (caller: Viewer, id: number, changes: UpdateUserPieceRequest["user_piece"]) =>
      Effect.gen(function*() {
        yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* findRow(caller, id, true)
          const { at } = yield* assignees.now
          const to = changes.status ?? current.status
          if (!canMove(current.status, to)) return yield* Effect.fail(invalidField("status", moveMessage(current.status, to)))
          const errors: Record<string, Array<string>> = {}
          const add = (field: string, message: string) => (errors[field] ??= []).push(message)
          let completedAt: Date | null = null
          if (to === "completed") {
            completedAt = changes.completed_at ?? (current.status === "completed" ? current.completed_at : at)
            if (completedAt !== null && (completedAt.getTime() > at.getTime() || completedAt.getTime() < current.assigned_at.getTime())) {
              add("completed_at", "is invalid")
            }
          } else if (changes.completed_at != null) add("completed_at", contentMessages.ratingBeforeCompletion)
          const rating = changes.rating === undefined ? current.rating : changes.rating
          if (changes.rating != null && to !== "completed") add("rating", contentMessages.ratingBeforeCompletion)
          const feedback = changes.feedback === undefined ? current.feedback : blankToNull(changes.feedback)
          if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
          yield* sql`UPDATE content_user_pieces SET status = ${to}, completed_at = ${completedAt}, rating = ${to === "completed" ? rating : null},
              feedback = ${feedback}, updated_at = ${at}
            WHERE id = ${id}`.pipe(Effect.catchTag("SqlError", takenOnConflict("status")))
          yield* audit.record({ actorId: caller.id, action: "user_piece.update", targetType: "user_piece", targetId: id })
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        return toUserPiece(yield* findRow(caller, id, false))
      }).pipe(Effect.withSpan("UserPieces.update", { attributes: { "user_piece.id": id } }))

    return { list, create, update } as const
  })
}) {}
