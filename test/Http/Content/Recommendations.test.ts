import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { ContentType } from "../../../src/Domain/Content/Content.js"
import { PatientId } from "../../../src/Domain/Ids.js"
import { Recommendations, refreshContentStats } from "../../../src/Services/Content/Recommendations.js"
import { clientAs, request, TestApp } from "../../support/app.js"
import { insertQuestionnaireResponse } from "../../support/fixtures.js"
import { assign, family, idOf, importBundle, piece, pieceIds, tag, updatePiece } from "./helpers.js"

/** The hand-built library: ids follow this order (one import), so equal scores fall back to the lowest id. */
const pieces = [
  piece("calm-video", { tags: ["anxiety"], age_group: "child" }),
  piece("sleep-story", { tags: ["sleep"], age_group: "child", content_type: "audio" }),
  piece("focus-game", { tags: ["adhd"], difficulty_level: "intermediate", content_type: "interactive" }),
  piece("teen-only", { tags: ["anxiety"], age_group: "teen" }),
  piece("advanced-anxiety", { tags: ["anxiety"], difficulty_level: "advanced", content_type: "article" }),
  piece("untagged"),
  piece("behavior-chart", { tags: ["behavior"], age_group: "child", content_type: "worksheet" }),
  piece("mixed", { tags: ["anxiety", "sleep"] }),
  piece("unpublished", { tags: ["anxiety"], published: false }),
  piece("sleep-tips", { tags: ["sleep"] })
]
const bundle = { tags: ["anxiety", "sleep", "adhd", "behavior", "depression"].map((slug) => tag(slug)), pieces }

interface Recommended {
  readonly url: string | null
}

/** The recommendations through the typed client. */
const recommend = (token: string, query: { patient_id?: number; limit?: number; content_type?: ContentType } = {}) =>
  Effect.gen(function*() {
    const client = yield* clientAs(token)
    const { patient_id, ...rest } = query
    const list = yield* client.recommendations.contentPieces({ urlParams: { ...rest, ...(patient_id === undefined ? {} : { patient_id: PatientId.make(patient_id) }) } })
    return list.content_pieces
  }).pipe(Effect.orDie)
const slugs = (list: ReadonlyArray<Recommended>) => list.map((p) => p.url?.replace("https://content.test/", ""))

/** A user piece for the patient, moved to completed (with a rating) or skipped. */
const history = (token: string, patientId: number, pieceId: number, change: Record<string, unknown>) =>
  Effect.gen(function*() {
    const created = yield* assign(token, { content_piece_id: pieceId, patient_id: patientId })
    const moved = yield* updatePiece(token, idOf(created.body), change)
    if (moved.status !== 200) return yield* Effect.dieMessage(`update: ${moved.status} ${JSON.stringify(moved.body)}`)
  })

layer(TestApp({ contentDemo: false }))("recommendations", (it) => {
  it.effect("cold start, popularity, exclusions, history weights, a low rating demoting a tag, ties, limit and filters", () =>
    Effect.gen(function*() {
      yield* importBundle(bundle)
      const ids = yield* pieceIds
      const child = yield* family("2016-01-01")

      // Cold start: nobody has completed anything. Fit (+0.5) for beginner and intermediate, then the lowest id.
      const coldResponse = yield* request("GET", "/v1/recommendations/content_pieces", { token: child.parent.token })
      expect(coldResponse.status).toBe(200)
      const cold = (coldResponse.body as { content_pieces: Array<Recommended> }).content_pieces
      expect(slugs(yield* recommend(child.parent.token))).toEqual(slugs(cold))
      expect(slugs(cold)).toEqual(["calm-video", "sleep-story", "focus-game", "untagged", "behavior-chart", "mixed", "sleep-tips", "advanced-anxiety"])
      expect(cold[0]).toMatchObject({ score: 0.5, reasons: ["beginner level", "for age group child"] })
      expect(cold[2]).toMatchObject({ score: 0.5, reasons: ["intermediate level"] })
      expect(cold[7]).toMatchObject({ score: 0, reasons: [] })
      expect(cold[0]).toEqual({
        id: ids.get("calm-video"), title: "Title of calm-video", description: null, content_type: "video", duration_minutes: null,
        url: "https://content.test/calm-video", thumbnail_url: null, age_group: "child", difficulty_level: "beginner",
        tags: [{ id: expect.any(Number), name: "anxiety" }], created_at: expect.any(String), score: 0.5,
        reasons: ["beginner level", "for age group child"]
      })

      // Other families complete behavior-chart twice and sleep-story once; the nightly job counts them.
      for (let i = 0; i < 2; i++) {
        const other = yield* family("2016-05-05")
        yield* history(other.parent.token, other.patient, ids.get("behavior-chart")!, { status: "completed" })
        if (i === 0) yield* history(other.parent.token, other.patient, ids.get("sleep-story")!, { status: "completed", rating: 5 })
      }
      yield* refreshContentStats.run({}, { id: "test", attempt: 1, maxAttempts: 1 })
      const popular = yield* recommend(child.parent.token)
      expect(slugs(popular).slice(0, 3)).toEqual(["behavior-chart", "sleep-story", "calm-video"])
      expect(popular[0]).toMatchObject({ score: 1.5, reasons: ["popular with other families", "beginner level", "for age group child"] })
      expect(popular[1]!.score).toBeCloseTo(0.5 + Math.log(2) / Math.log(3), 4)

      // History: calm-video completed and rated 5 (anxiety +2), sleep-story skipped (sleep −1). Both are now excluded.
      yield* history(child.parent.token, child.patient, ids.get("calm-video")!, { status: "completed", rating: 5 })
      yield* history(child.parent.token, child.patient, ids.get("sleep-story")!, { status: "skipped" })
      const learned = yield* recommend(child.parent.token)
      expect(slugs(learned)).toEqual(["advanced-anxiety", "mixed", "behavior-chart", "focus-game", "untagged", "sleep-tips"])
      expect(learned.map((p) => p.score)).toEqual([6, 2, 1.5, 0.5, 0.5, -2.5])
      expect(learned[0]!.reasons).toEqual(["shares tags: anxiety"])
      expect(learned[1]!.reasons).toEqual(["shares tags: anxiety", "beginner level"])

      // A low rating demotes its tags: mixed completed and rated 1 → anxiety +2 −1, sleep −1 −1.
      yield* history(child.parent.token, child.patient, ids.get("mixed")!, { status: "completed", rating: 1 })
      const demoted = yield* recommend(child.parent.token)
      expect(slugs(demoted)).toEqual(["advanced-anxiety", "behavior-chart", "focus-game", "untagged", "sleep-tips"])
      expect(demoted.map((p) => p.score)).toEqual([3, 1.5, 0.5, 0.5, -5.5])

      // Limit, type and the parent rule.
      expect(slugs(yield* recommend(child.parent.token, { limit: 2 }))).toEqual(["advanced-anxiety", "behavior-chart"])
      expect(slugs(yield* recommend(child.parent.token, { limit: 500 }))).toHaveLength(5)
      expect(slugs(yield* recommend(child.parent.token, { patient_id: child.patient, content_type: "article" }))).toEqual(["advanced-anxiety"])
      const zero = yield* request("GET", "/v1/recommendations/content_pieces?limit=0", { token: child.parent.token })
      expect(zero.status).toBe(422)
      expect(zero.body).toEqual({ errors: { limit: ["must be greater than 0"] } })
      const badType = yield* request("GET", "/v1/recommendations/content_pieces?content_type=film", { token: child.parent.token })
      expect(badType.body).toEqual({ errors: { content_type: ["is not included in the list"] } })
      const stranger = yield* family("2016-01-01")
      const foreign = yield* request("GET", `/v1/recommendations/content_pieces?patient_id=${child.patient}`, { token: stranger.parent.token })
      expect(foreign.status).toBe(404)
      expect(foreign.body).toEqual({ errors: "Patient not found" })
      const unnamed = yield* request("GET", "/v1/recommendations/content_pieces", { token: child.staff.token })
      expect(unnamed.body).toEqual({ errors: { patient_id: ["can't be blank"] } })
      const byStaff = yield* recommend(child.staff.token, { patient_id: child.patient })
      expect(slugs(byStaff)).toEqual(slugs(demoted))

      // A teen gets the teen piece; a later import makes a newer piece win a tie over lower ids.
      const teen = yield* family("2011-01-01")
      yield* importBundle({ ...bundle, pieces: [...pieces, piece("late-untagged")] })
      const teens = yield* recommend(teen.parent.token)
      // behavior-chart and sleep-story are for children: not candidates, however popular.
      expect(slugs(teens)).toEqual(["late-untagged", "focus-game", "teen-only", "untagged", "mixed", "sleep-tips", "advanced-anxiety"])
      expect(teens.find((p) => p.url.endsWith("teen-only"))!.reasons).toEqual(["beginner level", "for age group teen"])
    }))

  it.effect("questionnaire signals: the latest completed response of each instrument within 180 days, weighed by the rules", () =>
    Effect.gen(function*() {
      const recommendations = yield* Recommendations
      yield* recommendations.refreshStats
      const child = yield* family("2016-01-01")
      const respond = (slug: string, daysAgo: number, score: number | null, subscales: Record<string, number> = {}, flags: Array<string> = []) =>
        insertQuestionnaireResponse({ patientId: child.patient, slug, status: "completed", score, subscales, flags, daysAgo })
      yield* respond("gad7", 20, 3)
      yield* respond("gad7", 10, 12)
      yield* respond("psc17", 5, 12, { internalizing: 2, attention: 8, externalizing: 2 })
      // Too old: externalizing would weigh behavior +2.
      yield* respond("psc17", 200, 20, { internalizing: 2, attention: 2, externalizing: 9 })
      // A self-harm flag adds nothing; the score is below every rule.
      yield* respond("phq9", 3, 4, {}, ["self_harm"])
      // Not completed: ignored.
      yield* insertQuestionnaireResponse({ patientId: child.patient, slug: "phq9", status: "in_progress", score: 27 })

      const list = yield* recommend(child.parent.token)
      expect(slugs(list)).toEqual([
        "calm-video", "focus-game", "advanced-anxiety", "mixed", "behavior-chart", "sleep-story", "late-untagged", "untagged", "sleep-tips"
      ])
      const popularity = Math.log(2) / Math.log(3)
      expect(list.map((p) => p.score)).toEqual([6.5 + popularity, 6.5, 6, 3.5 + popularity, 1.5, 0.5 + popularity, 0.5, 0.5, 0.5]
        .map((n) => Math.round(n * 10_000) / 10_000))
      expect(list[0]!.reasons).toEqual(["matches a recent GAD-7 result", "popular with other families", "beginner level", "for age group child"])
      expect(list[1]!.reasons).toEqual(["matches a recent PSC-17 result", "intermediate level"])
      expect(list[2]!.reasons).toEqual(["matches a recent GAD-7 result"])
    }))

  it.effect("the nightly job is safe to run twice", () =>
    Effect.gen(function*() {
      const recommendations = yield* Recommendations
      const first = yield* recommendations.refreshStats
      const second = yield* recommendations.refreshStats
      expect(second).toBe(first)
    }))
})
