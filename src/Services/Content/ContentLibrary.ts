/**
 * The content library's reads (general §4.11): tags, published collections and pieces. A stored
 * piece's `url` (and thumbnail) is a signed ObjectStore link valid 30 minutes.
 */
import { Effect, Option } from "effect"
import { CollectionList, contentUrlMinutes, PieceList, TagList } from "../../Api/Content/Content.js"
import { notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { ContentCollection, ContentPiece, ContentTag, TagRef } from "../../Domain/Content/Content.js"
import { ObjectStore } from "../ObjectStore.js"
import { type CollectionCriteria, ContentCollectionsRepo } from "./ContentCollectionsRepo.js"
import { ContentPiecesRepo, type PieceCriteria, type PieceRow } from "./ContentPiecesRepo.js"
import { ContentTagsRepo } from "./ContentTagsRepo.js"

const tagRefs = (tags: PieceRow["tags"]) => tags.map((t) => TagRef.make(t, true))

/** What a piece row shows: links signed for stored files. */
export const pieceFieldsOf = (store: ObjectStore["Type"]) => (row: PieceRow) =>
  Effect.gen(function*() {
    const lifetime = `${contentUrlMinutes} minutes` as const
    const url = row.external_url ?? (yield* store.signedUrl(row.object_key!, lifetime))
    const thumbnail = row.thumbnail_external_url ??
      (row.thumbnail_object_key === null ? null : yield* store.signedUrl(row.thumbnail_object_key, lifetime))
    return {
      id: row.id,
      title: row.title,
      description: row.description,
      content_type: row.content_type,
      duration_minutes: row.duration_minutes,
      url,
      thumbnail_url: thumbnail,
      age_group: row.age_group,
      difficulty_level: row.difficulty_level,
      tags: tagRefs(row.tags),
      created_at: row.created_at
    }
  })

export class ContentLibrary extends Effect.Service<ContentLibrary>()("app/ContentLibrary", {
  effect: Effect.gen(function*() {
    const store = yield* ObjectStore
    const tagsRepo = yield* ContentTagsRepo
    const collectionsRepo = yield* ContentCollectionsRepo
    const piecesRepo = yield* ContentPiecesRepo
    const toFields = pieceFieldsOf(store)
    const toPiece = (row: PieceRow) => Effect.map(toFields(row), (fields) => ContentPiece.make(fields, true))

    const tags = Effect.fn("ContentLibrary.tags")(function*(category: string | undefined, request: PageRequest) {
      const { pagination, rows } = yield* tagsRepo.list(category, request)
      return TagList.make({ tags: rows.map((row) => ContentTag.make(row, true)), pagination })
    })

    const collections = Effect.fn("ContentLibrary.collections")(function*(criteria: CollectionCriteria, request: PageRequest) {
      const { pagination, rows } = yield* collectionsRepo.publishedPage(criteria, request)
      return CollectionList.make({
        collections: rows.map((row) => ContentCollection.make({ ...row, tags: tagRefs(row.tags) }, true)),
        pagination
      })
    })

    const pieces = Effect.fn("ContentLibrary.pieces")(function*(criteria: PieceCriteria, request: PageRequest) {
      const { pagination, rows } = yield* piecesRepo.publishedPage(criteria, request)
      return PieceList.make({ pieces: yield* Effect.forEach(rows, toPiece), pagination })
    })

    const piece = Effect.fn("ContentLibrary.piece")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "content_piece.id": id })
      const row = yield* piecesRepo.findPublished(id)
      if (Option.isNone(row)) return yield* Effect.fail(notFound("Content piece"))
      return { piece: yield* toPiece(row.value) }
    })

    return { tags, collections, pieces, piece } as const
  }),
  dependencies: [ContentTagsRepo.Default, ContentCollectionsRepo.Default, ContentPiecesRepo.Default]
}) {}
