import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  canMoveNote, canonicalContent, normaliseContent, putTriggers, sessionNoteStatuses, triggerOf
} from "../../../src/Domain/SessionNotes/SessionNote.js"

const status = fc.constantFrom(...sessionNoteStatuses)

describe("the session note machine", () => {
  it("archived is final, completed only reopens through an addendum, nothing returns to draft", () => {
    fc.assert(fc.property(status, status, (from, to) => {
      if (from === "archived" || to === "draft") expect(canMoveNote(from, to)).toBe(false)
      if (from === "completed") expect(canMoveNote(from, to)).toBe(to === "requires_addendum")
      if (to === "archived") expect(canMoveNote(from, to)).toBe(from !== "completed" && from !== "archived")
    }))
  })

  it("every move has exactly one trigger, and PUT makes only submit, review and archive", () => {
    fc.assert(fc.property(status, status, (from, to) => {
      const trigger = triggerOf(from, to)
      expect(trigger !== undefined).toBe(canMoveNote(from, to))
      if (trigger !== undefined && putTriggers.includes(trigger)) expect(["pending_review", "pending_signature", "archived"]).toContain(to)
    }))
  })

  it("the signed text depends on the sections only, not on key order, blanks or extra keys", () => {
    const section = fc.option(fc.string(), { nil: null })
    fc.assert(fc.property(section, section, section, (subjective, plan, free_text) => {
      const a = normaliseContent({ subjective, plan, free_text })
      const b = { free_text: a.free_text, plan: a.plan, extra: "ignored", subjective: a.subjective, objective: null, assessment: null }
      expect(canonicalContent(a)).toBe(canonicalContent(b))
    }))
  })
})
