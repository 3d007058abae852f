/**
 * Content bundles in and out: `POST /v1/admin/content/import`, `GET …/export`,
 * `npm run content:import` and the demo library loaded at start-up all go through `load`.
 *
 * An import is the whole library: items are keyed by slug, created or updated when they differ,
 * and items missing from the bundle are removed — except a piece or collection someone was
 * assigned, which is unpublished instead. One transaction under an advisory lock: all or nothing,
 * and two imports never interleave.
 */
import { Effect } from "effect"
import type { BundleCollection, BundlePiece, BundleTag, ContentBundle } from "../../Api/Content/Bundle.js"
import { ContentExport, ImportContentResult } from "../../Api/Content/AdminContent.js"
import { type FieldMessages, invalid } from "../../Api/Errors.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull, makeTransaction } from "../Repository.js"
import { now } from "../Time.js"
import { type CollectionValues, ContentCollectionsRepo } from "./ContentCollectionsRepo.js"
import { ContentFilesRepo } from "./ContentFilesRepo.js"
import { ContentPiecesRepo, type PieceValues } from "./ContentPiecesRepo.js"
import { ContentTagsRepo, type TagValues } from "./ContentTagsRepo.js"

interface Counts {
  tags: number
  collections: number
  pieces: number
}
const zero = (): Counts => ({ tags: 0, collections: 0, pieces: 0 })

const uniqueSorted = (list: ReadonlyArray<string> | undefined) => [...new Set(list ?? [])].sort()

const tagValues = (t: BundleTag): TagValues => ({
  slug: t.slug,
  name: t.name.trim(),
  display_name: blankToNull(t.display_name) ?? t.name.trim(),
  category: blankToNull(t.category),
  description: blankToNull(t.description),
  color: t.color?.toUpperCase() ?? null
})

const collectionValues = (c: BundleCollection): CollectionValues => ({
  slug: c.slug,
  title: c.title.trim(),
  description: blankToNull(c.description),
  age_group: c.age_group,
  estimated_duration: c.estimated_duration ?? null,
  published: c.published ?? true,
  tags: uniqueSorted(c.tags)
})

const same = (a: object, b: object) => JSON.stringify(a) === JSON.stringify(b)

/** Every rule the schema cannot state, by path (`pieces[3].tags[1]`). */
const bundleErrors = (bundle: ContentBundle, knownFiles: ReadonlySet<string>): FieldMessages => {
  const errors: Record<string, Array<string>> = {}
  const add = (path: string, message: string) => (errors[path] ??= []).push(message)
  const duplicates = (name: string, items: ReadonlyArray<{ readonly slug: string }>) => {
    const seen = new Set<string>()
    items.forEach((item, i) => {
      if (seen.has(item.slug)) add(`${name}[${i}].slug`, "has already been taken")
      seen.add(item.slug)
    })
    return seen
  }
  const tags = duplicates("tags", bundle.tags)
  const collections = duplicates("collections", bundle.collections)
  duplicates("pieces", bundle.pieces)
  bundle.collections.forEach((c, i) =>
    (c.tags ?? []).forEach((slug, j) => {
      if (!tags.has(slug)) add(`collections[${i}].tags[${j}]`, "must exist")
    }))
  bundle.pieces.forEach((p, i) => {
    const at = `pieces[${i}]`
    if (p.url != null && p.file_key != null) add(`${at}.file_key`, "can't be given with url")
    if (p.url == null && p.file_key == null) add(`${at}.url`, "can't be blank")
    if (p.file_key != null && !knownFiles.has(p.file_key)) add(`${at}.file_key`, "must exist")
    if (p.thumbnail_url != null && p.thumbnail_file_key != null) add(`${at}.thumbnail_file_key`, "can't be given with thumbnail_url")
    if (p.thumbnail_file_key != null && !knownFiles.has(p.thumbnail_file_key)) add(`${at}.thumbnail_file_key`, "must exist")
    ;(p.tags ?? []).forEach((slug, j) => {
      if (!tags.has(slug)) add(`${at}.tags[${j}]`, "must exist")
    })
    ;(p.collections ?? []).forEach((slug, j) => {
      if (!collections.has(slug)) add(`${at}.collections[${j}]`, "must exist")
    })
  })
  return errors
}

/** Each piece's values; positions in a collection follow the bundle's order of pieces. */
const pieceValuesOf = (pieces: ReadonlyArray<BundlePiece>): Array<PieceValues> => {
  const next = new Map<string, number>()
  return pieces.map((p) => {
    const memberships = uniqueSorted(p.collections).map((slug) => {
      const position = (next.get(slug) ?? 0) + 1
      next.set(slug, position)
      return `${slug}:${position}`
    })
    return {
      slug: p.slug,
      title: p.title.trim(),
      description: blankToNull(p.description),
      content_type: p.content_type,
      duration_minutes: p.duration_minutes ?? null,
      external_url: p.url ?? null,
      object_key: p.file_key ?? null,
      thumbnail_external_url: p.thumbnail_url ?? null,
      thumbnail_object_key: p.thumbnail_file_key ?? null,
      age_group: p.age_group,
      difficulty_level: p.difficulty_level ?? "beginner",
      published: p.published ?? true,
      tags: uniqueSorted(p.tags),
      memberships
    }
  })
}

export class ContentImport extends Effect.Service<ContentImport>()("app/ContentImport", {
  effect: Effect.gen(function*() {
    const audit = yield* AuditLog
    const tagsRepo = yield* ContentTagsRepo
    const collectionsRepo = yield* ContentCollectionsRepo
    const piecesRepo = yield* ContentPiecesRepo
    const filesRepo = yield* ContentFilesRepo
    const transaction = yield* makeTransaction

    /**
     * Validates, diffs against the library and (unless `dryRun`) applies the bundle. `actorId`
     * null: the start-up demo load or the command line.
     */
    const load = Effect.fn("ContentImport.load")(function*(
      bundle: ContentBundle,
      options: { readonly dryRun: boolean; readonly actorId: number | null }
    ) {
      yield* Effect.annotateCurrentSpan({ "content.pieces": bundle.pieces.length, "content.dry_run": options.dryRun })
      return yield* transaction(Effect.gen(function*() {
        yield* piecesRepo.lockLibrary
        const keys = [...new Set(bundle.pieces.flatMap((p) => [p.file_key, p.thumbnail_file_key]).filter((k): k is string => k != null))]
        const errors = bundleErrors(bundle, yield* filesRepo.known(keys))
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))

        const created = zero()
        const updated = zero()
        const unchanged = zero()
        const deleted = zero()
        const tally = <T extends { readonly slug: string }>(
          kind: keyof Counts,
          wanted: ReadonlyArray<T>,
          current: ReadonlyArray<T>,
          comparable: (t: T) => object
        ): Array<T> => {
          const bySlug = new Map(current.map((c) => [c.slug, c]))
          return wanted.filter((w) => {
            const existing = bySlug.get(w.slug)
            if (existing === undefined) created[kind]++
            else if (same(comparable(existing), comparable(w))) {
              unchanged[kind]++
              return false
            } else updated[kind]++
            return true
          })
        }

        const tags = bundle.tags.map(tagValues)
        const collections = bundle.collections.map(collectionValues)
        const pieces = pieceValuesOf(bundle.pieces)
        const oldTags = yield* tagsRepo.all
        const oldCollections = yield* collectionsRepo.all
        const oldPieces = yield* piecesRepo.all
        const tagFields = (t: TagValues) => [t.name, t.display_name, t.category, t.description, t.color]
        const collectionFields = (c: CollectionValues) => [c.title, c.description, c.age_group, c.estimated_duration, c.published, c.tags]
        const pieceFields = (p: PieceValues) => [p.title, p.description, p.content_type, p.duration_minutes, p.external_url, p.object_key,
          p.thumbnail_external_url, p.thumbnail_object_key, p.age_group, p.difficulty_level, p.published, p.tags, p.memberships]
        const changedTags = tally("tags", tags, oldTags, tagFields)
        const changedCollections = tally("collections", collections, oldCollections, collectionFields)
        const changedPieces = tally("pieces", pieces, oldPieces, pieceFields)

        const tagSlugs = new Set(tags.map((t) => t.slug))
        const collectionSlugs = new Set(collections.map((c) => c.slug))
        const pieceSlugs = new Set(pieces.map((p) => p.slug))
        deleted.tags = oldTags.filter((t) => !tagSlugs.has(t.slug)).length
        const goneCollections = oldCollections.filter((c) => !collectionSlugs.has(c.slug))
        const gonePieces = oldPieces.filter((p) => !pieceSlugs.has(p.slug))
        for (const gone of [goneCollections, gonePieces] as const) {
          const kind = gone === goneCollections ? "collections" : "pieces"
          for (const item of gone) {
            if (!item.assigned) deleted[kind]++
            else if (item.published) updated[kind]++
            else unchanged[kind]++
          }
        }
        const result = ImportContentResult.make({ created, updated, unchanged, deleted, dry_run: options.dryRun })
        if (options.dryRun) return result

        const at = yield* now
        // Removals first, so a slug freed here may be taken again below.
        yield* tagsRepo.deleteOthers([...tagSlugs])
        const goneCollectionIds = goneCollections.map((c) => c.id)
        yield* collectionsRepo.unpublishAssigned(goneCollectionIds, at)
        yield* collectionsRepo.deleteUnassigned(goneCollectionIds)
        const gonePieceIds = gonePieces.map((p) => p.id)
        yield* piecesRepo.unpublishAssigned(gonePieceIds, at)
        yield* piecesRepo.deleteUnassigned(gonePieceIds)

        yield* tagsRepo.upsert(changedTags, at)
        yield* collectionsRepo.upsert(changedCollections, at)
        yield* piecesRepo.upsert(changedPieces, at)
        // The bundle's order, so an export lists pieces as they were imported (collection order round-trips).
        yield* piecesRepo.setBundlePositions(pieces.map((p) => p.slug))
        yield* audit.record({ actorId: options.actorId, action: "content.import", targetType: "content_library", targetId: null })
        yield* Effect.annotateCurrentSpan({
          "content.created": created.pieces,
          "content.updated": updated.pieces,
          "content.deleted": deleted.pieces
        })
        return result
      }))
    })

    /** The library in the import format: importing it back changes nothing. */
    const exportBundle = Effect.gen(function*() {
      const tags = yield* tagsRepo.all
      const collections = yield* collectionsRepo.all
      const pieces = yield* piecesRepo.all
      return ContentExport.make({
        tags: tags.map((t) => ({
          slug: t.slug, name: t.name, display_name: t.display_name, category: t.category, description: t.description, color: t.color
        })),
        collections: collections.map((c) => ({
          slug: c.slug,
          title: c.title,
          description: c.description,
          age_group: c.age_group as BundleCollection["age_group"],
          estimated_duration: c.estimated_duration,
          published: c.published,
          tags: [...c.tags]
        })),
        pieces: pieces.map((p) => ({
          slug: p.slug,
          title: p.title,
          description: p.description,
          content_type: p.content_type as BundlePiece["content_type"],
          duration_minutes: p.duration_minutes,
          url: p.external_url,
          file_key: p.object_key,
          thumbnail_url: p.thumbnail_external_url,
          thumbnail_file_key: p.thumbnail_object_key,
          age_group: p.age_group as BundlePiece["age_group"],
          difficulty_level: p.difficulty_level as NonNullable<BundlePiece["difficulty_level"]>,
          published: p.published,
          tags: [...p.tags],
          collections: p.memberships.map((m) => m.slice(0, m.lastIndexOf(":")))
        }))
      })
    }).pipe(Effect.withSpan("ContentImport.export"))

    return {
      load,
      exportBundle,
      /** Whether the library has no piece yet (the demo bundle is loaded then). */
      isEmpty: piecesRepo.isEmpty
    } as const
  }),
  dependencies: [ContentTagsRepo.Default, ContentCollectionsRepo.Default, ContentPiecesRepo.Default, ContentFilesRepo.Default]
}) {}
