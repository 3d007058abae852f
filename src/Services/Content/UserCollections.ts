/**
 * User collections (ours): a collection assigned at once. One transaction assigns each
 * published piece of the collection, reusing an open assignment of the same piece for that account
 * and patient; the collection's status and progress are derived from those user pieces.
 */
import { Effect, Option } from "effect"
import {
  contentMessages, type CreateUserCollectionRequest, type UpdateUserCollectionRequest, UserCollectionList
} from "../../Api/Content/Content.js"
import { invalid, invalidField, notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { collectionStatusOf, UserCollection } from "../../Domain/Content/Content.js"
import { AuditLog } from "../AuditLog.js"
import { Access, type Viewer } from "../Access/Access.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { Assignees } from "./Assignees.js"
import { ContentCollectionsRepo } from "./ContentCollectionsRepo.js"
import { ContentPiecesRepo } from "./ContentPiecesRepo.js"
import { type UserCollectionCriteria, type UserCollectionRow, UserCollectionsRepo } from "./UserCollectionsRepo.js"
import { UserPiecesRepo } from "./UserPiecesRepo.js"

const toUserCollection = (row: UserCollectionRow): UserCollection => {
  const statuses = row.pieces.map((p) => p.status)
  const status = collectionStatusOf(statuses)
  const completedTimes = row.pieces.flatMap((p) => (p.status === "completed" && p.completed_at !== null ? [new Date(p.completed_at).getTime()] : []))
  return UserCollection.make({
    id: row.id,
    content_collection_id: row.content_collection_id,
    user_id: row.user_id,
    patient_id: row.patient_id,
    status,
    assigned_by: row.assigned_by,
    assigned_at: row.assigned_at,
    due_date: row.due_date,
    completed_at: status === "completed" && completedTimes.length > 0 ? new Date(Math.max(...completedTimes)) : null,
    notes: row.notes,
    progress: {
      completed: statuses.filter((s) => s === "completed").length,
      skipped: statuses.filter((s) => s === "skipped").length,
      total: statuses.length
    },
    content_collection: { id: row.content_collection_id, title: row.title, piece_count: row.piece_count },
    user_pieces: row.pieces.map((p) => ({ id: p.id, content_piece_id: p.content_piece_id, status: p.status }))
  }, true)
}

export class UserCollections extends Effect.Service<UserCollections>()("app/UserCollections", {
  effect: Effect.gen(function*() {
    const audit = yield* AuditLog
    const access = yield* Access
    const assignees = yield* Assignees
    const repo = yield* UserCollectionsRepo
    const userPieces = yield* UserPiecesRepo
    const collections = yield* ContentCollectionsRepo
    const pieces = yield* ContentPiecesRepo
    const transaction = yield* makeTransaction

    const list = Effect.fn("UserCollections.list")(function*(caller: Viewer, criteria: UserCollectionCriteria, request: PageRequest) {
      const { userId } = yield* assignees.listFilter(caller, criteria)
      const { pagination, rows } = yield* repo.list(caller, { ...criteria, userId }, request)
      return UserCollectionList.make({ user_collections: rows.map(toUserCollection), pagination })
    })

    const findRow = (caller: Viewer, id: number) =>
      Effect.gen(function*() {
        const found = yield* repo.findVisible(caller, id)
        if (Option.isNone(found)) return yield* Effect.fail(notFound("User collection"))
        yield* access.visibleAssignment(caller, found.value, () => notFound("User collection"))
        return found.value
      })

    const create = Effect.fn("UserCollections.create")(function*(caller: Viewer, input: CreateUserCollectionRequest["user_collection"]) {
      yield* Effect.annotateCurrentSpan({ "content_collection.id": input.content_collection_id })
      const target = yield* assignees.resolve(caller, input)
      const { at, today } = yield* assignees.now
      const collectionId = input.content_collection_id
      const errors: Record<string, Array<string>> = {}
      const published = yield* collections.isPublished(collectionId)
      const pieceIds = published ? yield* pieces.publishedIdsOf(collectionId) : []
      if (!published) errors.content_collection_id = ["must exist"]
      else if (pieceIds.length === 0) errors.content_collection_id = ["has no published pieces"]
      if (input.due_date != null && input.due_date < today) errors.due_date = [contentMessages.future]
      if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
      const assignment = {
        user_id: target.userId,
        patient_id: target.patientId,
        assigned_by: caller.id,
        assigned_at: at,
        due_date: input.due_date ?? null
      }
      const id = yield* transaction(Effect.gen(function*() {
        const id = yield* repo.insert({ ...assignment, content_collection_id: collectionId, notes: blankToNull(input.notes) })
        // New assignments where none is open; the open ones are reused (the unique index decides, not a look first).
        yield* userPieces.assignMany(pieceIds, assignment)
        yield* repo.linkOpenPieces(id, pieceIds, target)
        yield* audit.record({ actorId: caller.id, action: "user_collection.create", targetType: "user_collection", targetId: id })
        return id
      }))
      return toUserCollection(yield* findRow(caller, id).pipe(Effect.orDie))
    })

    const update = Effect.fn("UserCollections.update")(function*(
      caller: Viewer,
      id: number,
      changes: UpdateUserCollectionRequest["user_collection"]
    ) {
      yield* Effect.annotateCurrentSpan({ "user_collection.id": id })
      const { at, today } = yield* assignees.now
      yield* transaction(Effect.gen(function*() {
        yield* findRow(caller, id)
        yield* repo.lock(id)
        if (changes.due_date != null && changes.due_date < today) return yield* Effect.fail(invalidField("due_date", contentMessages.future))
        if (changes.due_date !== undefined || changes.notes !== undefined) {
          yield* repo.update(id, {
            ...(changes.due_date === undefined ? {} : { due_date: changes.due_date }),
            ...(changes.notes === undefined ? {} : { notes: blankToNull(changes.notes) })
          }, at)
        }
        if (changes.due_date !== undefined) yield* userPieces.setDueDateIn(id, changes.due_date, at)
        if (changes.status === "skipped") yield* userPieces.skipOpenIn(id, at)
        yield* audit.record({ actorId: caller.id, action: "user_collection.update", targetType: "user_collection", targetId: id })
      }))
      return toUserCollection(yield* findRow(caller, id))
    })

    return { list, create, update } as const
  }),
  dependencies: [UserCollectionsRepo.Default, UserPiecesRepo.Default, ContentCollectionsRepo.Default, ContentPiecesRepo.Default]
}) {}
