/**
 * Content bundles in and out: `POST /v1/admin/content/import`, `GET …/export`,
 * `npm run content:import` and the demo library loaded at start-up all go through `load`.
 *
 * An import is the whole library: items are keyed by slug, created or updated when they differ,
 * and items missing from the bundle are removed — except a piece or collection someone was
 * assigned, which is unpublished instead. One transaction under an advisory lock: all or nothing,
 * and two imports never interleave.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { BundleCollection, BundlePiece, BundleTag, ContentBundle } from "../../Api/Content/Bundle.js"
import { ContentExport, ImportContentResult } from "../../Api/Content/AdminContent.js"
import { type FieldMessages, invalid } from "../../Api/Errors.js"
import { AuditLog } from "../AuditLog.js"
import { blankToNull } from "./Library.js"

/** Any fixed key of ours: the advisory lock that serialises imports (and the nightly popularity refresh). */
export const importLockKey = 23_0021

interface Counts {
  tags: number
  collections: number
  pieces: number
}
const zero = (): Counts => ({ tags: 0, collections: 0, pieces: 0 })

interface TagValues {
  readonly slug: string
  readonly name: string
  readonly display_name: string
  readonly category: string | null
  readonly description: string | null
  readonly color: string | null
}

interface CollectionValues {
  readonly slug: string
  readonly title: string
  readonly description: string | null
  readonly age_group: string
  readonly estimated_duration: number | null
  readonly published: boolean
  readonly tags: ReadonlyArray<string>
}

interface PieceValues {
  readonly slug: string
  readonly title: string
  readonly description: string | null
  readonly content_type: string
  readonly duration_minutes: number | null
  readonly external_url: string | null
  readonly object_key: string | null
  readonly thumbnail_external_url: string | null
  readonly thumbnail_object_key: string | null
  readonly age_group: string
  readonly difficulty_level: string
  readonly published: boolean
  readonly tags: ReadonlyArray<string>
  /** `slug:position` of each collection, sorted. */
  readonly memberships: ReadonlyArray<string>
}

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
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog

    const currentTags = sql<TagValues & { id: number }>`SELECT id, slug, name, display_name, category, description, color
      FROM content_tags ORDER BY name, id`
    const currentCollections = sql<CollectionValues & { id: number; assigned: boolean }>`
      SELECT c.id, c.slug, c.title, c.description, c.age_group, c.estimated_duration, c.published,
        coalesce((SELECT array_agg(t.slug ORDER BY t.slug COLLATE "C") FROM content_collection_tags ct JOIN content_tags t ON t.id = ct.tag_id
          WHERE ct.collection_id = c.id), '{}') AS tags,
        EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = c.id) AS assigned
      FROM content_collections c ORDER BY c.created_at, c.id`
    const currentPieces = sql<PieceValues & { id: number; assigned: boolean }>`
      SELECT cp.id, cp.slug, cp.title, cp.description, cp.content_type, cp.duration_minutes, cp.external_url, cp.object_key,
        cp.thumbnail_external_url, cp.thumbnail_object_key, cp.age_group, cp.difficulty_level, cp.published,
        coalesce((SELECT array_agg(t.slug ORDER BY t.slug COLLATE "C") FROM content_piece_tags pt JOIN content_tags t ON t.id = pt.tag_id
          WHERE pt.piece_id = cp.id), '{}') AS tags,
        coalesce((SELECT array_agg(c.slug || ':' || ccp.position ORDER BY c.slug COLLATE "C") FROM content_collection_pieces ccp
          JOIN content_collections c ON c.id = ccp.collection_id WHERE ccp.piece_id = cp.id), '{}') AS memberships,
        EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = cp.id) AS assigned
      FROM content_pieces cp ORDER BY cp.bundle_position NULLS LAST, cp.id`

    /**
     * Validates, diffs against the library and (unless `dryRun`) applies the bundle. `actorId`
     * null: the start-up demo load or the command line.
     */
    const load = (bundle: ContentBundle, options: { readonly dryRun: boolean; readonly actorId: number | null }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${importLockKey})`
        const keys = [...new Set(bundle.pieces.flatMap((p) => [p.file_key, p.thumbnail_file_key]).filter((k): k is string => k != null))]
        const known = keys.length === 0
          ? []
          : yield* sql<{ object_key: string }>`SELECT object_key FROM content_files WHERE object_key IN ${sql.in(keys)}`
        const errors = bundleErrors(bundle, new Set(known.map((k) => k.object_key)))
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
        const oldTags = yield* currentTags
        const oldCollections = yield* currentCollections
        const oldPieces = yield* currentPieces
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

        // Removals first, so a slug freed here may be taken again below.
        yield* sql`DELETE FROM content_tags WHERE NOT (slug = ANY(${[...tagSlugs]}::text[]))`
        const goneCollectionIds = goneCollections.map((c) => c.id)
        if (goneCollectionIds.length > 0) {
          yield* sql`UPDATE content_collections SET published = false, updated_at = now()
            WHERE id IN ${sql.in(goneCollectionIds)} AND published AND EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = content_collections.id)`
          yield* sql`DELETE FROM content_collections c WHERE id IN ${sql.in(goneCollectionIds)}
            AND NOT EXISTS (SELECT 1 FROM content_user_collections uc WHERE uc.content_collection_id = c.id)`
        }
        const gonePieceIds = gonePieces.map((p) => p.id)
        if (gonePieceIds.length > 0) {
          yield* sql`UPDATE content_pieces SET published = false, updated_at = now()
            WHERE id IN ${sql.in(gonePieceIds)} AND published AND EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = content_pieces.id)`
          yield* sql`DELETE FROM content_pieces cp WHERE id IN ${sql.in(gonePieceIds)}
            AND NOT EXISTS (SELECT 1 FROM content_user_pieces up WHERE up.content_piece_id = cp.id)`
          // What is kept leaves its collections and goes to the end of the export.
          yield* sql`DELETE FROM content_collection_pieces WHERE piece_id IN ${sql.in(gonePieceIds)}`
          yield* sql`UPDATE content_pieces SET bundle_position = NULL WHERE id IN ${sql.in(gonePieceIds)}`
        }

        if (changedTags.length > 0) {
          yield* sql`INSERT INTO content_tags (slug, name, display_name, category, description, color)
            SELECT x.slug, x.name, x.display_name, x.category, x.description, x.color
            FROM json_to_recordset(${JSON.stringify(changedTags)}::json)
              AS x(slug text, name text, display_name text, category text, description text, color text)
            ON CONFLICT (slug) DO UPDATE SET name = excluded.name, display_name = excluded.display_name, category = excluded.category,
              description = excluded.description, color = excluded.color, updated_at = now()`
        }
        if (changedCollections.length > 0) {
          const json = JSON.stringify(changedCollections.map((c, n) => ({ ...c, n })))
          yield* sql`INSERT INTO content_collections (slug, title, description, age_group, estimated_duration, published)
            SELECT x.slug, x.title, x.description, x.age_group, x.estimated_duration, x.published
            FROM json_to_recordset(${json}::json)
              AS x(slug text, title text, description text, age_group text, estimated_duration integer, published boolean, n integer)
            ORDER BY x.n
            ON CONFLICT (slug) DO UPDATE SET title = excluded.title, description = excluded.description, age_group = excluded.age_group,
              estimated_duration = excluded.estimated_duration, published = excluded.published, updated_at = now()`
          yield* sql`DELETE FROM content_collection_tags WHERE collection_id IN
            (SELECT id FROM content_collections WHERE slug IN ${sql.in(changedCollections.map((c) => c.slug))})`
          yield* sql`INSERT INTO content_collection_tags (collection_id, tag_id)
            SELECT c.id, t.id FROM json_to_recordset(${json}::json) AS x(slug text, tags text[])
            JOIN content_collections c ON c.slug = x.slug CROSS JOIN LATERAL unnest(x.tags) AS s(slug)
            JOIN content_tags t ON t.slug = s.slug`
        }
        if (changedPieces.length > 0) {
          const json = JSON.stringify(changedPieces.map((p, n) => ({ ...p, n })))
          yield* sql`INSERT INTO content_pieces (slug, title, description, content_type, duration_minutes, external_url, object_key,
              thumbnail_external_url, thumbnail_object_key, age_group, difficulty_level, published)
            SELECT x.slug, x.title, x.description, x.content_type, x.duration_minutes, x.external_url, x.object_key,
              x.thumbnail_external_url, x.thumbnail_object_key, x.age_group, x.difficulty_level, x.published
            FROM json_to_recordset(${json}::json)
              AS x(slug text, title text, description text, content_type text, duration_minutes integer, external_url text,
                object_key text, thumbnail_external_url text, thumbnail_object_key text, age_group text, difficulty_level text,
                published boolean, n integer)
            ORDER BY x.n
            ON CONFLICT (slug) DO UPDATE SET title = excluded.title, description = excluded.description,
              content_type = excluded.content_type, duration_minutes = excluded.duration_minutes, external_url = excluded.external_url,
              object_key = excluded.object_key, thumbnail_external_url = excluded.thumbnail_external_url,
              thumbnail_object_key = excluded.thumbnail_object_key, age_group = excluded.age_group,
              difficulty_level = excluded.difficulty_level, published = excluded.published, updated_at = now()`
          yield* sql`DELETE FROM content_piece_tags WHERE piece_id IN
            (SELECT id FROM content_pieces WHERE slug IN ${sql.in(changedPieces.map((p) => p.slug))})`
          yield* sql`INSERT INTO content_piece_tags (piece_id, tag_id)
            SELECT p.id, t.id FROM json_to_recordset(${json}::json) AS x(slug text, tags text[])
            JOIN content_pieces p ON p.slug = x.slug CROSS JOIN LATERAL unnest(x.tags) AS s(slug)
            JOIN content_tags t ON t.slug = s.slug`
          yield* sql`DELETE FROM content_collection_pieces WHERE piece_id IN
            (SELECT id FROM content_pieces WHERE slug IN ${sql.in(changedPieces.map((p) => p.slug))})`
          yield* sql`INSERT INTO content_collection_pieces (collection_id, piece_id, position)
            SELECT c.id, p.id, split_part(m.entry, ':', 2)::int FROM json_to_recordset(${json}::json) AS x(slug text, memberships text[])
            JOIN content_pieces p ON p.slug = x.slug CROSS JOIN LATERAL unnest(x.memberships) AS m(entry)
            JOIN content_collections c ON c.slug = split_part(m.entry, ':', 1)`
        }
        // The bundle's order, so an export lists pieces as they were imported (collection order round-trips).
        if (pieces.length > 0) {
          yield* sql`UPDATE content_pieces cp SET bundle_position = x.n
            FROM json_to_recordset(${JSON.stringify(pieces.map((p, i) => ({ slug: p.slug, n: i + 1 })))}::json) AS x(slug text, n integer)
            WHERE cp.slug = x.slug AND cp.bundle_position IS DISTINCT FROM x.n`
        }
        yield* audit.record({ actorId: options.actorId, action: "content.import", targetType: "content_library", targetId: null })
        yield* Effect.annotateCurrentSpan({
          "content.created": created.pieces,
          "content.updated": updated.pieces,
          "content.deleted": deleted.pieces
        })
        return result
      })).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("ContentImport.load", { attributes: { "content.pieces": bundle.pieces.length, "content.dry_run": options.dryRun } })
      )

    /** The library in the import format: importing it back changes nothing. */
    const exportBundle = Effect.gen(function*() {
      const tags = yield* currentTags
      const collections = yield* currentCollections
      const pieces = yield* currentPieces
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
    }).pipe(Effect.orDie, Effect.withSpan("ContentImport.export"))

    /** Whether the library has no piece yet (the demo bundle is loaded then). */
    const isEmpty = sql<{ empty: boolean }>`SELECT NOT EXISTS (SELECT 1 FROM content_pieces) AS empty`.pipe(
      Effect.map((rows) => rows[0]?.empty ?? true),
      Effect.orDie
    )

    return { load, exportBundle, isEmpty } as const
  })
}) {}
