/**
 * User pieces (general §2.10, §4.11): content pieces assigned to an account, optionally for a
 * patient, and their status machine. One open assignment of a piece per account and patient is the
 * unique index `content_user_pieces_open_key`, never a look first.
 */
import { Effect, Option } from "effect"
import { contentMessages, type CreateUserPieceRequest, type UpdateUserPieceRequest, UserPieceList } from "../../Api/Content/Content.js"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { canMove, moveMessage, PieceRef, UserPiece } from "../../Domain/Content/Content.js"
import { AuditLog } from "../AuditLog.js"
import { Access, type Viewer } from "../Access/Access.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { Assignees } from "./Assignees.js"
import { ContentPiecesRepo } from "./ContentPiecesRepo.js"
import { type UserPieceCriteria, type UserPieceRow, UserPiecesRepo } from "./UserPiecesRepo.js"

const toUserPiece = (row: UserPieceRow): UserPiece =>
  UserPiece.make({
    id: row.id,
    content_piece_id: row.content_piece_id,
    user_id: row.user_id,
    patient_id: row.patient_id,
    status: row.status,
    assigned_by: row.assigned_by,
    assigned_at: row.assigned_at,
    due_date: row.due_date,
    completed_at: row.completed_at,
    rating: row.rating,
    feedback: row.feedback,
    notes: row.notes,
    content_piece: PieceRef.make({ id: row.content_piece_id, title: row.piece_title, content_type: row.piece_content_type })
  }, true)

export class UserPieces extends Effect.Service<UserPieces>()("app/UserPieces", {
  effect: Effect.gen(function*() {
    const audit = yield* AuditLog
    const access = yield* Access
    const assignees = yield* Assignees
    const repo = yield* UserPiecesRepo
    const pieces = yield* ContentPiecesRepo
    const transaction = yield* makeTransaction

    const list = Effect.fn("UserPieces.list")(function*(caller: Viewer, criteria: UserPieceCriteria, request: PageRequest) {
      const { userId } = yield* assignees.listFilter(caller, criteria)
      const { pagination, rows } = yield* repo.list(caller, { ...criteria, userId }, request)
      return UserPieceList.make({ user_pieces: rows.map(toUserPiece), pagination })
    })

    const findRow = (caller: Viewer, id: number, lock: boolean) =>
      Effect.gen(function*() {
        const found = yield* repo.findVisible(caller, id, lock)
        if (Option.isNone(found)) return yield* Effect.fail(notFound("User piece"))
        yield* access.visibleAssignment(caller, found.value, () => notFound("User piece"))
        return found.value
      })

    const create = Effect.fn("UserPieces.create")(function*(caller: Viewer, input: CreateUserPieceRequest["user_piece"]) {
      yield* Effect.annotateCurrentSpan({ "content_piece.id": input.content_piece_id })
      const target = yield* assignees.resolve(caller, input)
      const assignedBy = yield* assignees.assigner(caller, input.assigned_by)
      const { at, today } = yield* assignees.now
      const errors: Record<string, Array<string>> = {}
      if (!(yield* pieces.isPublished(input.content_piece_id))) errors.content_piece_id = ["must exist"]
      if (input.due_date != null && input.due_date < today) errors.due_date = [contentMessages.future]
      if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      const id = yield* repo.insert({
        content_piece_id: input.content_piece_id,
        user_id: target.userId,
        patient_id: target.patientId,
        assigned_by: assignedBy,
        assigned_at: at,
        due_date: input.due_date ?? null,
        notes: blankToNull(input.notes)
      })
      yield* audit.record({ actorId: caller.id, action: "user_piece.create", targetType: "user_piece", targetId: id })
      return toUserPiece(yield* findRow(caller, id, false).pipe(Effect.orDie))
    })

    const update = Effect.fn("UserPieces.update")(function*(caller: Viewer, id: number, changes: UpdateUserPieceRequest["user_piece"]) {
      yield* Effect.annotateCurrentSpan({ "user_piece.id": id })
      yield* transaction(Effect.gen(function*() {
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
        yield* repo.update({ id, status: to, completed_at: completedAt, rating: to === "completed" ? rating : null, feedback, updated_at: at })
        yield* audit.record({ actorId: caller.id, action: "user_piece.update", targetType: "user_piece", targetId: id })
      }))
      return toUserPiece(yield* findRow(caller, id, false))
    })

    return { list, create, update } as const
  }),
  dependencies: [UserPiecesRepo.Default, ContentPiecesRepo.Default]
}) {}
