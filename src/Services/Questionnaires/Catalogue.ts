/**
 * The questionnaire catalogue (general §2.11, §4.12): instruments seeded from
 * `seeds/questionnaires/*.json` at start-up (a changed file makes a new version; the old one stays,
 * inactive, for the responses that answered it) and read back for lists and for scoring.
 */
import { Effect, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { notFound } from "../../Api/Errors.js"
import { type PageRequest } from "../../Api/Pagination.js"
import { Question, Questionnaire, type TargetAudience } from "../../Domain/Questionnaires/Questionnaire.js"
import { type QuestionDef, QuestionOption, QuestionType, ScoringSpec } from "../../Domain/Questionnaires/Scoring.js"
import { makeTransaction } from "../Repository.js"
import { QuestionnaireQuestionsRepo, type QuestionRow as QuestionnaireQuestionRow } from "./QuestionnaireQuestionsRepo.js"
import { type CatalogueFilters, QuestionnairesRepo, type QuestionnaireRow } from "./QuestionnairesRepo.js"

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

export const questionnaireNotFound = () => notFound("Questionnaire")

export class Catalogue extends Effect.Service<Catalogue>()("app/QuestionnaireCatalogue", {
  effect: Effect.gen(function*() {
    const versions = yield* QuestionnairesRepo
    const questionRows = yield* QuestionnaireQuestionsRepo
    const transaction = yield* makeTransaction
    const cache = new Map<number, Definition>()

    const seedOne = (seed: SeedFile, hash: string) =>
      Effect.gen(function*() {
        const current = Option.getOrUndefined(yield* versions.latest(seed.slug))
        if (current?.content_hash === hash) return false
        yield* versions.deactivate(seed.slug)
        const id = yield* versions.insertVersion({
          slug: seed.slug,
          version: (current?.version ?? 0) + 1,
          title: seed.title,
          description: seed.description ?? null,
          category: seed.category,
          ageGroup: seed.age_group ?? null,
          estimatedDuration: seed.estimated_duration ?? null,
          attribution: seed.attribution ?? null,
          targetAudience: seed.target_audience ?? null,
          scoring: seed.scoring,
          contentHash: hash
        })
        yield* questionRows.insertMany(seed.questions.map((q, i) => ({
          questionnaire_id: id,
          position: i + 1,
          key: q.key,
          text: q.text,
          type: q.type,
          options: q.options ?? (q.type === "text" || q.type === "date" ? [] : seed.default_options ?? []),
          required: q.required ?? true
        })))
        return true
      })

    /**
     * Seeds every file of `dir`: a slug not yet known becomes version 1, a file whose content
     * changed becomes the next version (the previous one inactive). Idempotent; instances starting
     * together queue on an advisory lock.
     */
    const seed = Effect.fn("Catalogue.seed")(function*(dir: string = seedsDir) {
      const files = (yield* Effect.promise(() => readdir(dir))).filter((f) => f.endsWith(".json")).sort()
      const seeds = yield* Effect.forEach(files, (file) =>
        Effect.gen(function*() {
          const text = yield* Effect.promise(() => readFile(join(dir, file), "utf8"))
          const parsed: unknown = JSON.parse(text)
          const seed = yield* Schema.decodeUnknown(SeedFile)(parsed).pipe(Effect.orDie)
          return { seed, hash: createHash("sha256").update(JSON.stringify(parsed)).digest("hex") }
        }))
      const created = yield* transaction(Effect.gen(function*() {
        yield* versions.lockSeeding
        let count = 0
        for (const { seed, hash } of seeds) if (yield* seedOne(seed, hash)) count++
        return count
      }))
      yield* Effect.annotateCurrentSpan("questionnaires.versions_created", created)
      return created
    })

    const toQuestionnaire = (row: QuestionnaireRow, questions: ReadonlyArray<QuestionnaireQuestionRow>) =>
      Questionnaire.make({
        id: row.id, slug: row.slug, version: row.version, title: row.title, description: row.description,
        category: row.category, age_group: row.age_group, estimated_duration: row.estimated_duration, active: row.active,
        attribution: row.attribution, target_audience: row.target_audience, created_at: row.created_at, updated_at: row.updated_at,
        questions: questions.filter((q) => q.questionnaire_id === row.id).map((q) =>
          Question.make({ id: q.id, key: q.key, position: q.position, text: q.text, type: q.type, options: q.options.map((o) => o.label), required: q.required }, true))
      }, true)

    const withQuestions = (rows: ReadonlyArray<QuestionnaireRow>) =>
      Effect.map(questionRows.ofVersions(rows.map((r) => r.id)), (questions) => rows.map((r) => toQuestionnaire(r, questions)))

    const list = Effect.fn("Catalogue.list")(function*(filters: CatalogueFilters, request: PageRequest) {
      const { pagination, rows } = yield* versions.list(filters, request)
      return { questionnaires: yield* withQuestions(rows), pagination }
    })

    const show = Effect.fn("Catalogue.show")(function*(id: number) {
      yield* Effect.annotateCurrentSpan({ "questionnaire.id": id })
      const row = yield* versions.findById(id)
      if (Option.isNone(row)) return yield* Effect.fail(questionnaireNotFound())
      return (yield* withQuestions([row.value]))[0]!
    })

    /** A version's questions and scoring spec (cached: versions never change). */
    const definition = (id: number): Effect.Effect<Definition | undefined> =>
      Effect.gen(function*() {
        const cached = cache.get(id)
        if (cached !== undefined) return cached
        const found = yield* versions.findById(id)
        if (Option.isNone(found)) return undefined
        const row = found.value
        const questions: Array<QuestionRow> = (yield* questionRows.ofVersions([id])).map((q) => ({
          id: q.id, key: q.key, type: q.type, options: q.options, required: q.required, position: q.position, text: q.text
        }))
        const def: Definition = {
          id: row.id, slug: row.slug, version: row.version, title: row.title, targetAudience: row.target_audience, questions,
          byId: new Map(questions.map((q) => [q.id, q])), scoring: row.scoring
        }
        cache.set(id, def)
        return def
      })

    /** Whether a version is the active one (the one new responses may use). */
    const isActive = (id: number) => versions.isActive(id)

    return { seed, list, show, definition, isActive } as const
  }),
  dependencies: [QuestionnairesRepo.Default, QuestionnaireQuestionsRepo.Default]
}) {}
