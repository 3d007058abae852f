/** Scoring of every seeded instrument and the response status machine. */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import {
  type Answer,
  answerProblem,
  derivedStatus,
  nextStatus,
  type QuestionDef,
  ResponseStatus,
  scoreRange,
  scoreResponse,
  type ScoringSpec
} from "../../../src/Domain/Questionnaires/Scoring.js"
import { SeedFile, seedsDir } from "../../../src/Services/Questionnaires/Catalogue.js"

const load = (slug: string) => {
  const seed = Schema.decodeUnknownSync(SeedFile)(JSON.parse(readFileSync(join(seedsDir, `${slug}.json`), "utf8")))
  const questions: Array<QuestionDef> = seed.questions.map((q, i) => ({
    id: i + 1,
    key: q.key,
    type: q.type,
    options: q.options ?? seed.default_options ?? [],
    required: q.required ?? true
  }))
  return { questions, spec: seed.scoring as ScoringSpec, key: (k: string) => questions.find((q) => q.key === k)! }
}

const instruments = { phq9: load("phq9"), phqa: load("phqa"), gad7: load("gad7"), psc17: load("psc17") }

/** Scored items answered with the option of the given points. */
const answersWith = (questions: ReadonlyArray<QuestionDef>, points: (q: QuestionDef, i: number) => number | undefined) => {
  const answers = new Map<number, Answer>()
  questions.filter((q) => q.options.some((o) => o.points !== null)).forEach((q, i) => {
    const p = points(q, i)
    if (p === undefined) return
    answers.set(q.id, q.options.find((o) => o.points === p)!.label)
  })
  return answers
}

/** Answers summing to `total` over the scored items (each 0…3). */
const answersSumming = (questions: ReadonlyArray<QuestionDef>, total: number, maxPerItem = 3) => {
  let left = total
  return answersWith(questions, () => {
    const p = Math.min(maxPerItem, left)
    left -= p
    return p
  })
}

describe("PHQ-9", () => {
  const { questions, spec, key } = instruments.phq9
  it("scores 0 to 27 with the published bands at each edge", () => {
    expect(scoreRange(questions)).toEqual({ min: 0, max: 27 })
    const bands: Array<[number, string]> = [
      [0, "minimal"], [4, "minimal"], [5, "mild"], [9, "mild"], [10, "moderate"], [14, "moderate"],
      [15, "moderately_severe"], [19, "moderately_severe"], [20, "severe"], [27, "severe"]
    ]
    for (const [total, severity] of bands) {
      const result = scoreResponse(questions, spec, answersSumming(questions, total))
      expect(result).toMatchObject({ complete: true, score: total, severity })
    }
  })

  it("item 10 (difficulty) is unscored and optional; item 9 above 0 flags self_harm even mid-form", () => {
    const all = answersSumming(questions, 3)
    const withDifficulty = new Map(all).set(key("phq9_10").id, "Extremely difficult")
    expect(scoreResponse(questions, spec, withDifficulty).score).toBe(3)
    expect(scoreResponse(questions, spec, all).score).toBe(3)
    const midForm = new Map<number, Answer>([[key("phq9_9").id, "Several days"]])
    expect(scoreResponse(questions, spec, midForm)).toMatchObject({ complete: false, score: null, severity: null, flags: ["self_harm"] })
    expect(scoreResponse(questions, spec, new Map([[key("phq9_9").id, "Not at all"]])).flags).toEqual([])
  })

  it("score is null until all nine are answered", () => {
    const eight = answersWith(questions, (_, i) => (i < 8 ? 3 : undefined))
    expect(scoreResponse(questions, spec, eight)).toMatchObject({ complete: false, score: null })
  })
})

describe("PHQ-A", () => {
  const { questions, spec, key } = instruments.phqa
  it("scores like the PHQ-9 (0–27, same bands)", () => {
    expect(scoreRange(questions)).toEqual({ min: 0, max: 27 })
    for (const [total, severity] of [[0, "minimal"], [4, "minimal"], [5, "mild"], [14, "moderate"], [15, "moderately_severe"], [19, "moderately_severe"], [20, "severe"], [27, "severe"]] as const) {
      expect(scoreResponse(questions, spec, answersSumming(questions, total))).toMatchObject({ score: total, severity })
    }
  })
  it("its own wording and order; self-harm is still item 9; the suicide items flag on Yes", () => {
    expect(questions[0]!.key).toBe("phqa_1")
    expect(questions[8]!.key).toBe("phqa_9")
    for (const item of ["phqa_suicide_thoughts_month", "phqa_suicide_attempt_ever"]) {
      expect(scoreResponse(questions, spec, new Map([[key(item).id, "Yes"]])).flags).toEqual(["self_harm"])
      expect(scoreResponse(questions, spec, new Map([[key(item).id, "No"]])).flags).toEqual([])
    }
    expect(scoreResponse(questions, spec, new Map([[key("phqa_sad_past_year").id, "Yes"]])).flags).toEqual([])
    expect(scoreResponse(questions, spec, new Map([[key("phqa_9").id, "Nearly every day"]])).flags).toEqual(["self_harm"])
  })
})

describe("GAD-7", () => {
  const { questions, spec } = instruments.gad7
  it("scores 0 to 21 with the published bands at each edge", () => {
    expect(scoreRange(questions)).toEqual({ min: 0, max: 21 })
    for (const [total, severity] of [[0, "minimal"], [4, "minimal"], [5, "mild"], [9, "mild"], [10, "moderate"], [14, "moderate"], [15, "severe"], [21, "severe"]] as const) {
      expect(scoreResponse(questions, spec, answersSumming(questions, total))).toMatchObject({ score: total, severity, flags: [] })
    }
  })
})

describe("PSC-17", () => {
  const { questions, spec, key } = instruments.psc17
  const subscaleKeys = (name: string) => spec.subscales!.find((s) => s.key === name)!.items
  const only = (points: Record<string, number>) => answersWith(questions, (q) => points[q.key] ?? 0)

  it("scores 0 to 34; subscales by key, not position", () => {
    expect(scoreRange(questions)).toEqual({ min: 0, max: 34 })
    expect(subscaleKeys("internalizing")).toHaveLength(5)
    expect(subscaleKeys("attention")).toHaveLength(5)
    expect(subscaleKeys("externalizing")).toHaveLength(7)
    const none = scoreResponse(questions, spec, only({}))
    expect(none).toMatchObject({ score: 0, severity: "negative", subscales: { internalizing: 0, attention: 0, externalizing: 0 }, flags: [] })
    const max = scoreResponse(questions, spec, answersWith(questions, () => 2))
    expect(max).toMatchObject({ score: 34, severity: "positive", subscales: { internalizing: 10, attention: 10, externalizing: 14 } })
  })

  it("positive at total 15 and at subscale cutoffs 5 / 7 / 7, negative one below", () => {
    const points = (keys: ReadonlyArray<string>, total: number) => {
      const result: Record<string, number> = {}
      let left = total
      for (const k of keys) { const p = Math.min(2, left); result[k] = p; left -= p }
      return result
    }
    for (const [name, cutoff] of [["internalizing", 5], ["attention", 7], ["externalizing", 7]] as const) {
      const at = scoreResponse(questions, spec, only(points(subscaleKeys(name), cutoff)))
      expect(at.subscales[name]).toBe(cutoff)
      expect(at).toMatchObject({ severity: "positive" })
      expect(at.flags).toContain(`${name}_positive`)
      const below = scoreResponse(questions, spec, only(points(subscaleKeys(name), cutoff - 1)))
      expect(below).toMatchObject({ severity: "negative", flags: [] })
    }
    // Total 14 spread so no subscale reaches its cutoff (4 / 5 / 5), then 15 (4 / 6 / 5).
    const spread = (i: number, a: number, e: number) => ({
      ...points(subscaleKeys("internalizing"), i), ...points(subscaleKeys("attention"), a), ...points(subscaleKeys("externalizing"), e)
    })
    expect(scoreResponse(questions, spec, only(spread(4, 5, 5)))).toMatchObject({ score: 14, severity: "negative" })
    expect(scoreResponse(questions, spec, only(spread(4, 6, 5)))).toMatchObject({ score: 15, severity: "positive", flags: ["positive"] })
  })

  it("3 blanks still score (as 0); 4 blanks make it invalid", () => {
    const threeBlank = answersWith(questions, (_, i) => (i < 3 ? undefined : 1))
    expect(scoreResponse(questions, spec, threeBlank)).toMatchObject({ complete: true, invalid: false, score: 14 })
    const fourBlank = answersWith(questions, (_, i) => (i < 4 ? undefined : 1))
    expect(scoreResponse(questions, spec, fourBlank)).toMatchObject({ complete: false, invalid: true, score: null, severity: "invalid" })
    expect(key("psc17_1").required).toBe(false)
  })
})

describe("answers", () => {
  const q = (type: QuestionDef["type"], labels: Array<string> = []): QuestionDef => ({
    id: 1, key: "k", type, required: true, options: labels.map((label, i) => ({ label, points: i }))
  })
  it("an option label, a list of labels, text up to 2000, a real date", () => {
    expect(answerProblem(q("scale", ["A", "B"]), "A")).toBeUndefined()
    expect(answerProblem(q("scale", ["A", "B"]), "C")).toBe("is not included in the list")
    expect(answerProblem(q("scale", ["A", "B"]), ["A"])).toBe("is not included in the list")
    expect(answerProblem(q("checkbox", ["A", "B"]), ["A", "B"])).toBeUndefined()
    expect(answerProblem(q("checkbox", ["A", "B"]), ["A", "A"])).toBe("is not included in the list")
    expect(answerProblem(q("checkbox", ["A", "B"]), "A")).toBe("is not included in the list")
    expect(answerProblem(q("text"), "x".repeat(2000))).toBeUndefined()
    expect(answerProblem(q("text"), "x".repeat(2001))).toBe("is too long (maximum is 2000 characters)")
    expect(answerProblem(q("date"), "2026-02-28")).toBeUndefined()
    expect(answerProblem(q("date"), "2026-02-30")).toBe("invalid format")
  })
})

describe("properties", () => {
  const all = Object.entries(instruments)
  it("any complete set of answers scores within the range, and the total is the sum of the items", () => {
    for (const [, { questions, spec }] of all) {
      const scored = questions.filter((q) => q.options.some((o) => o.points !== null))
      fc.assert(fc.property(fc.array(fc.nat(10), { minLength: scored.length, maxLength: scored.length }), (choices) => {
        const answers = new Map<number, Answer>()
        let sum = 0
        scored.forEach((q, i) => {
          const option = q.options[choices[i]! % q.options.length]!
          answers.set(q.id, option.label)
          sum += option.points ?? 0
        })
        const result = scoreResponse(questions, spec, answers)
        const range = scoreRange(questions)
        expect(result.complete).toBe(true)
        expect(result.score).toBe(sum)
        expect(result.score!).toBeGreaterThanOrEqual(range.min)
        expect(result.score!).toBeLessThanOrEqual(range.max)
        expect(result.severity).not.toBeNull()
      }))
    }
  })

  it("self_harm depends only on the self-harm items, and is raised with any subset of answers", () => {
    const { questions, spec, key } = instruments.phq9
    fc.assert(fc.property(fc.subarray(questions.filter((q) => q.key !== "phq9_10")), fc.nat(3), (subset, item9) => {
      const answers = new Map<number, Answer>(subset.map((q) => [q.id, q.options[0]!.label]))
      answers.set(key("phq9_9").id, questions[8]!.options[item9]!.label)
      expect(scoreResponse(questions, spec, answers).flags.includes("self_harm")).toBe(item9 > 0)
    }))
  })

  it("the status machine: answers decide open statuses; submission freezes them; reviewed is final", () => {
    const statuses = ResponseStatus.literals
    fc.assert(fc.property(
      fc.constantFrom(...statuses), fc.constantFrom("started", "in_progress", "completed" as const), fc.boolean(),
      fc.option(fc.constantFrom(...statuses), { nil: undefined }),
      (current, derived, answersChanged, requested) => {
        const t = nextStatus(current, derived, answersChanged, requested)
        if (current === "reviewed") expect(t._tag === "Ok" ? t.status : "reviewed").toBe("reviewed")
        if ((current === "submitted" || current === "reviewed") && answersChanged) expect(t._tag).toBe("Refused")
        if (t._tag === "Ok" && (t.status === "submitted" || t.status === "reviewed") && current !== t.status) {
          expect(current === "submitted" || derived === "completed").toBe(true)
        }
      }
    ))
  })
})

describe("every status pair", () => {
  // From each stored status (answers unchanged: the derived status is the stored one while open).
  const table: Record<ResponseStatus, Record<ResponseStatus, string>> = {
    started: { started: "started", in_progress: "cannot change from started to in_progress", completed: "cannot change from started to completed", submitted: "cannot change from started to submitted", reviewed: "cannot change from started to reviewed" },
    in_progress: { started: "cannot change from in_progress to started", in_progress: "in_progress", completed: "cannot change from in_progress to completed", submitted: "cannot change from in_progress to submitted", reviewed: "cannot change from in_progress to reviewed" },
    completed: { started: "cannot change from completed to started", in_progress: "cannot change from completed to in_progress", completed: "completed", submitted: "submitted", reviewed: "reviewed" },
    submitted: { started: "cannot change from submitted to started", in_progress: "cannot change from submitted to in_progress", completed: "cannot change from submitted to completed", submitted: "submitted", reviewed: "reviewed" },
    reviewed: { started: "cannot change from reviewed to started", in_progress: "cannot change from reviewed to in_progress", completed: "cannot change from reviewed to completed", submitted: "cannot change from reviewed to submitted", reviewed: "reviewed" }
  }
  for (const from of ResponseStatus.literals) {
    for (const to of ResponseStatus.literals) {
      it(`${from} → ${to}`, () => {
        const derived = from === "submitted" || from === "reviewed" ? "completed" : from
        const t = nextStatus(from, derived, false, to)
        expect(t._tag === "Ok" ? t.status : t.message).toBe(table[from][to])
      })
    }
  }
  it("answers move open statuses both ways; clearing one reverts completed", () => {
    expect(derivedStatus(0, false)).toBe("started")
    expect(derivedStatus(3, false)).toBe("in_progress")
    expect(derivedStatus(9, true)).toBe("completed")
    expect(nextStatus("completed", "in_progress", true, undefined)).toEqual({ _tag: "Ok", status: "in_progress" })
    expect(nextStatus("submitted", "in_progress", true, undefined)).toEqual({ _tag: "Refused", message: "cannot change from submitted to in_progress" })
  })
})
