/**
 * The content bundle: the whole library as one JSON document, keyed by `slug` (admin import and
 * export, `npm run content:import`, seeds/content/demo.json). Pieces name their tags and
 * collections by slug; a collection's order is the order its pieces appear in the bundle.
 */
import { Schema } from "effect"
import { AgeGroup, ContentType, DifficultyLevel } from "../../Domain/Content/Content.js"
import { BoundedArray, BoundedString, RequiredString } from "../Schemas.js"

export const bundleLimits = { tags: 1000, collections: 1000, pieces: 10_000, tagsPerItem: 20, collectionsPerPiece: 20 } as const

const bounded = BoundedString
const required = RequiredString
const list = BoundedArray

const slugPattern = "^[a-z0-9]+(-[a-z0-9]+)*$"
const slugRegex = new RegExp(slugPattern)
export const Slug = bounded(100).pipe(
  Schema.filter((s) => slugRegex.test(s), { message: () => "invalid format", jsonSchema: { pattern: slugPattern } })
).annotations({ description: "Lower-case letters and digits in dash-separated words (`sleep-hygiene`)" })

const colorPattern = "^#[0-9A-Fa-f]{6}$"
const colorRegex = new RegExp(colorPattern)
const Color = bounded(7).pipe(
  Schema.filter((s) => colorRegex.test(s), { message: () => "invalid format", jsonSchema: { pattern: colorPattern } })
).annotations({ description: "`#RRGGBB`" })

export const isHttpsUrl = (s: string): boolean => {
  try {
    const url = new URL(s)
    return url.protocol === "https:" && url.hostname.length > 0 && url.username === "" && url.password === ""
  } catch {
    return false
  }
}

const HttpsUrl = bounded(2000).pipe(
  Schema.filter(isHttpsUrl, { message: () => "invalid format" })
).annotations({ description: "An external https link" })

const FileKey = bounded(300).annotations({ description: "An `object_key` from `POST /v1/admin/content/files`" })

const Minutes = Schema.Number.pipe(
  Schema.filter((n) => Number.isInteger(n) && n >= 0 && n <= 100_000, {
    message: () => "must be a whole number of minutes",
    jsonSchema: { type: "integer", minimum: 0, maximum: 100_000 }
  })
)

export const BundleTag = Schema.Struct({
  slug: Slug,
  name: required(100),
  display_name: Schema.optional(Schema.NullOr(bounded(100))),
  category: Schema.optional(Schema.NullOr(bounded(100))),
  description: Schema.optional(Schema.NullOr(bounded(2000))),
  color: Schema.optional(Schema.NullOr(Color))
})
export type BundleTag = typeof BundleTag.Type

export const BundleCollection = Schema.Struct({
  slug: Slug,
  title: required(200),
  description: Schema.optional(Schema.NullOr(bounded(2000))),
  age_group: AgeGroup,
  estimated_duration: Schema.optional(Schema.NullOr(Minutes)),
  published: Schema.optional(Schema.Boolean),
  tags: Schema.optional(list(Slug, bundleLimits.tagsPerItem))
})
export type BundleCollection = typeof BundleCollection.Type

export const BundlePiece = Schema.Struct({
  slug: Slug,
  title: required(200),
  description: Schema.optional(Schema.NullOr(bounded(2000))),
  content_type: ContentType,
  duration_minutes: Schema.optional(Schema.NullOr(Minutes)),
  url: Schema.optional(Schema.NullOr(HttpsUrl)),
  file_key: Schema.optional(Schema.NullOr(FileKey)),
  thumbnail_url: Schema.optional(Schema.NullOr(HttpsUrl)),
  thumbnail_file_key: Schema.optional(Schema.NullOr(FileKey)),
  age_group: AgeGroup,
  difficulty_level: Schema.optional(DifficultyLevel),
  published: Schema.optional(Schema.Boolean),
  tags: Schema.optional(list(Slug, bundleLimits.tagsPerItem)),
  collections: Schema.optional(list(Slug, bundleLimits.collectionsPerPiece))
})
export type BundlePiece = typeof BundlePiece.Type

export const ContentBundle = Schema.Struct({
  tags: list(BundleTag, bundleLimits.tags),
  collections: list(BundleCollection, bundleLimits.collections),
  pieces: list(BundlePiece, bundleLimits.pieces)
})
export type ContentBundle = typeof ContentBundle.Type
