/**
 * Content recommendations (general §4.11; the algorithm and its reasons: docs/content.md). One SQL
 * statement of CTEs (`ContentPiecesRepo.recommended`) ranks the candidates and returns the top
 * pieces with what counted; the nightly `content.refresh_stats` job keeps the popularity figures it
 * reads.
 */
import { Effect, Schema } from "effect"
import { defaultRecommendations, maxRecommendations, RecommendationList } from "../../Api/Content/Content.js"
import { type ContentType, type DifficultyLevel, RecommendedPiece } from "../../Domain/Content/Content.js"
import { defineTask } from "../Jobs.js"
import { ObjectStore } from "../ObjectStore.js"
import { Access, type Viewer } from "../Access/Access.js"
import { makeTransaction } from "../Repository.js"
import { Assignees } from "./Assignees.js"
import { ContentPiecesRepo } from "./ContentPiecesRepo.js"
import { ContentPieceStatsRepo } from "./ContentPieceStatsRepo.js"
import { pieceFieldsOf } from "./ContentLibrary.js"

/** The reasons a piece was suggested, in a fixed order. */
export const reasonsOf = (row: {
  readonly shared: ReadonlyArray<string> | null
  readonly signals: ReadonlyArray<string> | null
  readonly popularity: number
  readonly fit: number
  readonly difficulty_level: DifficultyLevel
  readonly age_group: string
  readonly patient_age_group: string | null
}): Array<string> => {
  const reasons: Array<string> = []
  if (row.shared !== null && row.shared.length > 0) reasons.push(`shares tags: ${row.shared.join(", ")}`)
  for (const label of row.signals ?? []) reasons.push(`matches a recent ${label} result`)
  if (row.popularity > 0) reasons.push("popular with other families")
  if (row.fit > 0) reasons.push(`${row.difficulty_level} level`)
  if (row.age_group !== "all" && row.age_group === row.patient_age_group) reasons.push(`for age group ${row.age_group}`)
  return reasons
}

export class Recommendations extends Effect.Service<Recommendations>()("app/Recommendations", {
  effect: Effect.gen(function*() {
    const store = yield* ObjectStore
    const access = yield* Access
    const assignees = yield* Assignees
    const pieces = yield* ContentPiecesRepo
    const stats = yield* ContentPieceStatsRepo
    const transaction = yield* makeTransaction
    const toFields = pieceFieldsOf(store)

    const forPatient = Effect.fn("Recommendations.forPatient")(function*(
      caller: Viewer,
      query: { readonly patientId?: number | undefined; readonly limit?: number | undefined; readonly contentType?: ContentType | undefined }
    ) {
      yield* Effect.annotateCurrentSpan({ "patient.id": query.patientId ?? 0 })
      const patientId = yield* access.defaultPatientFor(caller, query.patientId)
      const limit = Math.min(query.limit ?? defaultRecommendations, maxRecommendations)
      const { at, today } = yield* assignees.now
      const rows = yield* pieces.recommended({ patientId, today, at, limit, contentType: query.contentType ?? null })
      const recommended = yield* Effect.forEach(rows, (row) =>
        Effect.map(toFields(row), (fields) =>
          RecommendedPiece.make({ ...fields, score: Math.round(row.score * 10_000) / 10_000, reasons: reasonsOf(row) }, true)))
      yield* Effect.annotateCurrentSpan({ "recommendations.count": recommended.length })
      return RecommendationList.make({ content_pieces: recommended })
    })

    /**
     * The popularity figures (`ContentPieceStatsRepo.refresh`) under the library's lock, so an
     * import and the refresh never update the same pieces in opposite orders.
     */
    const refreshStats = transaction(Effect.gen(function*() {
      const { at } = yield* assignees.now
      yield* pieces.lockLibrary
      const counted = yield* stats.refresh(at)
      yield* Effect.annotateCurrentSpan({ "content.pieces": counted })
      return counted
    })).pipe(Effect.withSpan("Recommendations.refreshStats"))

    return { forPatient, refreshStats } as const
  }),
  dependencies: [ContentPiecesRepo.Default, ContentPieceStatsRepo.Default]
}) {}

/** Nightly (`src/Layers/Http/Content/index.ts`): the popularity figures recommendations read. */
export const refreshContentStats = defineTask({
  name: "content.refresh_stats",
  payload: Schema.Struct({}),
  run: () => Effect.flatMap(Recommendations, (r) => r.refreshStats).pipe(Effect.asVoid)
})
