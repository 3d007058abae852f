/**
 * The questionnaire catalogue (general §2.11, §4.12; issue 21): instruments seeded from
 * `seeds/questionnaires/*.json` at start-up (a changed file makes a new version; the old one stays,
 * inactive, for the responses that answered it) and read back for lists and for scoring.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { notFound } from "../../Api/Errors.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { Question, Questionnaire, type TargetAudience } from "../../Domain/Questionnaires/Questionnaire.js"
import { type QuestionDef, QuestionOption, QuestionType, ScoringSpec } from "../../Domain/Questionnaires/Scoring.js"

/** `seeds/questionnaires` at the package root (three levels above this file in the sources, one above dist/). */
export const seedsDir = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "../../../seeds/questionnaires" : "../seeds/questionnaires", import.meta.url)
)

/** The shape of a seed file. */
export const SeedFile = Schema.Struct({
  slug: Schema.String,
  title: Schema.String,
  description: Schema.optional(Schema.NullOr(Schema.String)),
  category: Schema.Literal("screening", "diagnostic", "outcome", "progress", "satisfaction", "intake"),
  age_group: Schema.optional(Schema.NullOr(Schema.String)),
  target_audience: Schema.optional(Schema.NullOr(Schema.Literal("parents", "teens", "adults"))),
  estimated_duration: Schema.optional(Schema.NullOr(Schema.Int)),
  attribution: Schema.optional(Schema.NullOr(Schema.String)),
  default_options: Schema.optional(Schema.Array(QuestionOption)),
  questions: Schema.Array(Schema.Struct({
    key: Schema.String,
    text: Schema.String,
    type: QuestionType,
    options: Schema.optional(Schema.Array(QuestionOption)),
    required: Schema.optional(Schema.Boolean)
  })),
  scoring: ScoringSpec
})
export type SeedFile = typeof SeedFile.Type

/** A question with what scoring needs and what a response shows. */
export interface QuestionRow extends QuestionDef {
  readonly position: number
  readonly text: string
}

/** One instrument version ready for scoring. Versions never change (only `active` does), so they are cached. */
export interface Definition {
  readonly id: number
  readonly slug: string
  readonly version: number
  readonly title: string
  readonly targetAudience: TargetAudience | null
  readonly questions: ReadonlyArray<QuestionRow>
  readonly byId: ReadonlyMap<number, QuestionRow>
  readonly scoring: ScoringSpec
}

interface QuestionnaireRow {
  readonly id: number
  readonly slug: string
  readonly version: number
  readonly title: string
  readonly description: string | null
  readonly category: Questionnaire["category"]
  readonly age_group: string | null
  readonly estimated_duration: number | null
  readonly active: boolean
  readonly attribution: string | null
  readonly target_audience: TargetAudience | null
  readonly scoring: unknown
  readonly created_at: Date
  readonly updated_at: Date
}

interface QuestionDbRow {
  readonly id: number
  readonly questionnaire_id: number
  readonly position: number
  readonly key: string
  readonly text: string
  readonly type: QuestionType
  readonly options: ReadonlyArray<QuestionOption>
  readonly required: boolean
}

const columns = `id, slug, version, title, description, category, age_group, estimated_duration, active, attribution,
  target_audience, scoring, created_at, updated_at`

/** Arbitrary constant: the advisory lock that serialises seeding across instances starting together. */
const seedLockKey = 7_340_219

export const questionnaireNotFound = () => notFound("Questionnaire")

const decodeSpec = Schema.decodeUnknownSync(ScoringSpec)

export class Catalogue extends Effect.Service<Catalogue>()("app/QuestionnaireCatalogue", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cols = sql.literal(columns)
    const cache = new Map<number, Definition>()

    const seedOne = (seed: SeedFile, hash: string) =>
      Effect.gen(function*() {
        const [current] = yield* sql<{ version: number; content_hash: string }>`SELECT version, content_hash FROM questionnaires
          WHERE slug = ${seed.slug} ORDER BY version DESC LIMIT 1`
        if (current?.content_hash === hash) return false
        yield* sql`UPDATE questionnaires SET active = false, updated_at = now() WHERE slug = ${seed.slug} AND active`
        const [row] = yield* sql<{ id: number }>`INSERT INTO questionnaires (slug, version, title, description, category, age_group,
            estimated_duration, active, attribution, target_audience, scoring, content_hash)
          VALUES (${seed.slug}, ${(current?.version ?? 0) + 1}, ${seed.title}, ${seed.description ?? null}, ${seed.category},
            ${seed.age_group ?? null}, ${seed.estimated_duration ?? null}, true, ${seed.attribution ?? null},
            ${seed.target_audience ?? null}, ${JSON.stringify(seed.scoring)}::jsonb, ${hash})
          RETURNING id`
        const questions = seed.questions.map((q, i) => ({
          questionnaire_id: row!.id,
          position: i + 1,
          key: q.key,
          text: q.text,
          type: q.type,
          options: JSON.stringify(q.options ?? (q.type === "text" || q.type === "date" ? [] : seed.default_options ?? [])),
          required: q.required ?? true
        }))
        yield* sql`INSERT INTO questionnaire_questions ${sql.insert(questions)}`
        return true
      })

    /**
     * Seeds every file of `dir`: a slug not yet known becomes version 1, a file whose content
     * changed becomes the next version (the previous one inactive). Idempotent; instances starting
     * together queue on an advisory lock.
     */
    const seed = (dir: string = seedsDir) =>
      Effect.gen(function*() {
        const files = (yield* Effect.promise(() => readdir(dir))).filter((f) => f.endsWith(".json")).sort()
        const seeds = yield* Effect.forEach(files, (file) =>
          Effect.gen(function*() {
            const text = yield* Effect.promise(() => readFile(join(dir, file), "utf8"))
            const parsed: unknown = JSON.parse(text)
            const seed = yield* Schema.decodeUnknown(SeedFile)(parsed).pipe(Effect.orDie)
            return { seed, hash: createHash("sha256").update(JSON.stringify(parsed)).digest("hex") }
          }))
        const created = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${seedLockKey})`
          let count = 0
          for (const { seed, hash } of seeds) if (yield* seedOne(seed, hash)) count++
          return count
        }))
        yield* Effect.annotateCurrentSpan("questionnaires.versions_created", created)
        return created
      }).pipe(Effect.orDie, Effect.withSpan("Catalogue.seed"))

    const questionsOf = (ids: ReadonlyArray<number>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<QuestionDbRow>)
        : sql<QuestionDbRow>`SELECT id, questionnaire_id, position, key, text, type, options, required
            FROM questionnaire_questions WHERE questionnaire_id IN ${sql.in(ids)} ORDER BY questionnaire_id, position`

    const toQuestionnaire = (row: QuestionnaireRow, questions: ReadonlyArray<QuestionDbRow>) =>
      Questionnaire.make({
        id: row.id, slug: row.slug, version: row.version, title: row.title, description: row.description,
        category: row.category, age_group: row.age_group, estimated_duration: row.estimated_duration, active: row.active,
        attribution: row.attribution, target_audience: row.target_audience, created_at: row.created_at, updated_at: row.updated_at,
        questions: questions.filter((q) => q.questionnaire_id === row.id).map((q) =>
          Question.make({ id: q.id, key: q.key, position: q.position, text: q.text, type: q.type, options: q.options.map((o) => o.label), required: q.required }, true))
      }, true)

    const withQuestions = (rows: ReadonlyArray<QuestionnaireRow>) =>
      Effect.map(questionsOf(rows.map((r) => r.id)), (questions) => rows.map((r) => toQuestionnaire(r, questions)))

    const list = (
      filters: { readonly category?: string | undefined; readonly active?: boolean | undefined; readonly ageGroup?: string | undefined; readonly targetAudience?: string | undefined; readonly screenersOnly?: boolean },
      request: PageRequest
    ) =>
      Effect.gen(function*() {
        const conditions = [
          filters.category === undefined ? sql`true` : sql`category = ${filters.category}`,
          filters.active === undefined ? sql`true` : sql`active = ${filters.active}`,
          filters.ageGroup === undefined ? sql`true` : sql`age_group = ${filters.ageGroup}`,
          filters.targetAudience === undefined ? sql`true` : sql`target_audience = ${filters.targetAudience}`,
          filters.screenersOnly === true ? sql`target_audience IS NOT NULL AND active` : sql`true`
        ]
        const where = sql.and(conditions)
        const rows = yield* sql<QuestionnaireRow>`SELECT ${cols} FROM questionnaires WHERE ${where}
          ORDER BY title, id LIMIT ${request.perPage} OFFSET ${request.offset}`
        const [counted] = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM questionnaires WHERE ${where}`
        return { questionnaires: yield* withQuestions(rows), pagination: paginationOf(request, counted?.count ?? 0) }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Catalogue.list"))

    const show = (id: number) =>
      Effect.gen(function*() {
        const rows = yield* sql<QuestionnaireRow>`SELECT ${cols} FROM questionnaires WHERE id = ${id}`
        if (rows.length === 0) return yield* Effect.fail(questionnaireNotFound())
        return (yield* withQuestions(rows))[0]!
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Catalogue.show", { attributes: { "questionnaire.id": id } }))

    /** A version's questions and scoring spec (cached: versions never change). */
    const definition = (id: number): Effect.Effect<Definition | undefined> =>
      Effect.gen(function*() {
        const cached = cache.get(id)
        if (cached !== undefined) return cached
        const [row] = yield* sql<QuestionnaireRow>`SELECT ${cols} FROM questionnaires WHERE id = ${id}`
        if (row === undefined) return undefined
        const questions: Array<QuestionRow> = (yield* questionsOf([id])).map((q) => ({
          id: q.id, key: q.key, type: q.type, options: q.options, required: q.required, position: q.position, text: q.text
        }))
        const def: Definition = {
          id: row.id, slug: row.slug, version: row.version, title: row.title, targetAudience: row.target_audience, questions,
          byId: new Map(questions.map((q) => [q.id, q])), scoring: decodeSpec(row.scoring)
        }
        cache.set(id, def)
        return def
      }).pipe(Effect.orDie)

    /** Whether a version is the active one (the one new responses may use). */
    const isActive = (id: number) =>
      Effect.map(sql<{ active: boolean }>`SELECT active FROM questionnaires WHERE id = ${id}`, (rows) => rows[0]?.active === true).pipe(Effect.orDie)

    return { seed, list, show, definition, isActive } as const
  })
}) {}
