/**
 * The only SQL on `questionnaires` (ARCHITECTURE "Persistence"): instrument versions, written by
 * the start-up seeding and read for the catalogue and for scoring. Rows decoded, SQL errors defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { QuestionnaireId } from "../../Domain/Ids.js"
import { QuestionnaireCategory, TargetAudience } from "../../Domain/Questionnaires/Questionnaire.js"
import { ScoringSpec } from "../../Domain/Questionnaires/Scoring.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { now } from "../Time.js"

/** A version as stored, its scoring spec decoded. */
export const QuestionnaireRow = Schema.Struct({
  id: QuestionnaireId,
  slug: Schema.String,
  version: Schema.Int,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  category: QuestionnaireCategory,
  age_group: Schema.NullOr(Schema.String),
  estimated_duration: Schema.NullOr(Schema.Int),
  active: Schema.Boolean,
  attribution: Schema.NullOr(Schema.String),
  target_audience: Schema.NullOr(TargetAudience),
  scoring: ScoringSpec,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type QuestionnaireRow = typeof QuestionnaireRow.Type

const columns = `id, slug, version, title, description, category, age_group, estimated_duration, active, attribution,
  target_audience, scoring, created_at, updated_at`

/** What a catalogue list may be narrowed by; `screenersOnly`: active versions with a public audience. */
export const CatalogueFilters = Schema.Struct({
  category: Schema.optional(Schema.String),
  active: Schema.optional(Schema.Boolean),
  ageGroup: Schema.optional(Schema.String),
  targetAudience: Schema.optional(Schema.String),
  screenersOnly: Schema.optional(Schema.Boolean)
})
export type CatalogueFilters = typeof CatalogueFilters.Type


/** The latest version of a slug and the hash of the seed file it came from. */
const LatestVersion = Schema.Struct({ version: Schema.Int, content_hash: Schema.String })

/** A version made from a seed file, active from the start. */
export const NewVersion = Schema.Struct({
  slug: Schema.String,
  version: Schema.Int,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  category: QuestionnaireCategory,
  ageGroup: Schema.NullOr(Schema.String),
  estimatedDuration: Schema.NullOr(Schema.Int),
  attribution: Schema.NullOr(Schema.String),
  targetAudience: Schema.NullOr(TargetAudience),
  scoring: ScoringSpec,
  contentHash: Schema.String
})

/** Arbitrary constant: the advisory lock that serialises seeding across instances starting together. */
const seedLockKey = 7_340_219

export class QuestionnairesRepo extends Effect.Service<QuestionnairesRepo>()("app/QuestionnairesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)

    const listPage = yield* makeListPage
    const byTitle = { title: sql`title` }

    const lockSeeding = SqlSchema.void({
      Request: Schema.Void,
      execute: () => sql`SELECT pg_advisory_xact_lock(${seedLockKey})`
    })

    const latest = SqlSchema.findOne({
      Request: Schema.String,
      Result: LatestVersion,
      execute: (slug) => sql`SELECT version, content_hash FROM questionnaires
          WHERE slug = ${slug} ORDER BY version DESC LIMIT 1`
    })

    const deactivate = SqlSchema.void({
      Request: Schema.Struct({ slug: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ at, slug }) => sql`UPDATE questionnaires SET active = false, updated_at = ${at} WHERE slug = ${slug} AND active`
    })

    const insertVersion = SqlSchema.single({
      Request: NewVersion,
      Result: Schema.Struct({ id: QuestionnaireId }),
      execute: (v) =>
        sql`INSERT INTO questionnaires (slug, version, title, description, category, age_group,
            estimated_duration, active, attribution, target_audience, scoring, content_hash)
          VALUES (${v.slug}, ${v.version}, ${v.title}, ${v.description}, ${v.category},
            ${v.ageGroup}, ${v.estimatedDuration}, true, ${v.attribution},
            ${v.targetAudience}, ${JSON.stringify(v.scoring)}::jsonb, ${v.contentHash})
          RETURNING id`
    })

    /** A page of versions by title. */
    const list = (filters: CatalogueFilters, page: PageRequest) =>
      listPage({
        select: cols,
        from: sql`questionnaires`,
        row: QuestionnaireRow,
        filters: [
          filters.category !== undefined && sql`category = ${filters.category}`,
          filters.active !== undefined && sql`active = ${filters.active}`,
          filters.ageGroup !== undefined && sql`age_group = ${filters.ageGroup}`,
          filters.targetAudience !== undefined && sql`target_audience = ${filters.targetAudience}`,
          filters.screenersOnly === true && sql`target_audience IS NOT NULL AND active`
        ],
        sort: { columns: byTitle, by: "title", dir: "ASC", id: sql`id` }
      }, page)

    const findById = SqlSchema.findOne({
      Request: Schema.Number,
      Result: QuestionnaireRow,
      execute: (id) => sql`SELECT ${cols} FROM questionnaires WHERE id = ${id}`
    })

    const findActive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: (id) => sql`SELECT active FROM questionnaires WHERE id = ${id}`
    })

    return {
      /** Call inside the seeding transaction: instances starting together queue here. */
      lockSeeding: orDefect(lockSeeding(undefined)),
      /** The latest version of an instrument, if any. */
      latest: (slug: string) => orDefect(latest(slug)),
      /** The instrument's active version (if any) becomes inactive. */
      deactivate: (slug: string) => Effect.flatMap(now, (at) => orDefect(deactivate({ slug, at }))),
      insertVersion: (version: typeof NewVersion.Type) => Effect.map(orDefect(insertVersion(version)), (row) => row.id),
      list,
      findById: (id: number) => orDefect(findById(id)),
      /** Whether the version exists and is the active one. */
      isActive: (id: number) => Effect.map(orDefect(findActive(id)), Option.exists((row) => row.active))
    } as const
  })
}) {}
