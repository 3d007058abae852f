/** The pure rules of ECM communications: status machines, opt-out keywords, segments, minutes. */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  callMinutes,
  callMoves,
  callStatuses,
  type CallStatus,
  optChangeOf,
  smsMoves,
  smsSegments,
  smsStatuses,
  type SmsStatus
} from "../../../src/Domain/Ecm/Communication.js"
import { escapeXml, forwardResponse, messageResponse } from "../../../src/Domain/Ecm/Twiml.js"

/** Where a record ends after a sequence of callbacks, in any order, from `start`. */
const settle = <S>(moves: (from: S, to: S) => boolean, start: S, callbacks: ReadonlyArray<S>) =>
  callbacks.reduce((status, next) => (moves(status, next) ? next : status), start)

describe("status machines", () => {
  it("SMS: a late sent never follows delivered; failed, undelivered, canceled and read are final", () => {
    expect(smsMoves("delivered", "sent")).toBe(false)
    expect(smsMoves("sent", "delivered")).toBe(true)
    expect(smsMoves("delivered", "read")).toBe(true)
    for (const final of ["failed", "undelivered", "canceled", "read"] as const) {
      for (const to of smsStatuses) expect(smsMoves(final, to), `${final} → ${to}`).toBe(false)
    }
  })

  it("calls: ringing after completed is ignored; every end status is final", () => {
    expect(callMoves("completed", "ringing")).toBe(false)
    expect(callMoves("ringing", "in-progress")).toBe(true)
    for (const final of ["completed", "busy", "no-answer", "failed", "canceled"] as const) {
      for (const to of callStatuses) expect(callMoves(final, to), `${final} → ${to}`).toBe(false)
    }
  })

  it("no status moves to itself (a repeated callback changes nothing), and no cycle exists", () => {
    fc.assert(fc.property(fc.constantFrom(...smsStatuses), fc.array(fc.constantFrom(...smsStatuses), { maxLength: 20 }), (start, path) => {
      expect(smsMoves(start, start)).toBe(false)
      // Following moves never returns to a status already left.
      const seen = new Set<SmsStatus>([start])
      let status = start
      for (const next of path) {
        if (!smsMoves(status, next)) continue
        expect(seen.has(next)).toBe(false)
        seen.add(next)
        status = next
      }
    }))
    fc.assert(fc.property(fc.constantFrom(...callStatuses), (status) => {
      expect(callMoves(status, status)).toBe(false)
    }))
  })

  it("callbacks shuffled and repeated end at the furthest status; delivering them again changes nothing", () => {
    fc.assert(fc.property(
      fc.shuffledSubarray(["initiated", "ringing", "in-progress", "completed"] as Array<CallStatus>, { minLength: 1 }),
      fc.integer({ min: 1, max: 3 }),
      (callbacks, times) => {
        const repeated = callbacks.flatMap((c) => Array.from({ length: times }, () => c))
        const settled = settle(callMoves, "queued", repeated)
        // Completed arrives, in whatever order: it is where the call ends.
        if (callbacks.includes("completed")) expect(settled).toBe("completed")
        // The furthest status delivered wins: never one delivered earlier in a lower rank.
        expect(callStatuses.indexOf(settled)).toBe(Math.max(...callbacks.map((c) => callStatuses.indexOf(c))))
        // Delivering everything again changes nothing.
        expect(settle(callMoves, settled, repeated)).toBe(settled)
      }
    ))
  })
})

describe("opt-out keywords", () => {
  it("STOP and its synonyms, START and UNSTOP, any case, alone in the message", () => {
    for (const word of ["STOP", "stop", " Stop. ", "STOPALL", "unsubscribe", "Cancel", "END", "quit!"]) expect(optChangeOf(word), word).toBe("opt_out")
    for (const word of ["START", "start", "Unstop"]) expect(optChangeOf(word), word).toBe("opt_in")
    for (const text of ["Please stop calling after 5", "STOP IT", "started", "", "ok"]) expect(optChangeOf(text), text).toBe(null)
  })
})

describe("segments", () => {
  it("GSM-7: 160 in one, then 153 a segment; extension characters count twice; UCS-2: 70, then 67", () => {
    expect(smsSegments("a".repeat(160))).toBe(1)
    expect(smsSegments("a".repeat(161))).toBe(2)
    expect(smsSegments("a".repeat(306))).toBe(2)
    expect(smsSegments("a".repeat(307))).toBe(3)
    expect(smsSegments("€".repeat(80))).toBe(1)
    expect(smsSegments("€".repeat(81))).toBe(2)
    expect(smsSegments("ä".repeat(70) + "你")).toBe(2)
    expect(smsSegments("你".repeat(70))).toBe(1)
    expect(smsSegments("你".repeat(71))).toBe(2)
  })

  it("never fewer segments for a longer message of the same alphabet", () => {
    fc.assert(fc.property(fc.string({ maxLength: 1600 }), fc.string({ maxLength: 50 }), (body, more) => {
      const ascii = body.replace(/[^ -~]/g, "a")
      expect(smsSegments(ascii + more.replace(/[^ -~]/g, "a"))).toBeGreaterThanOrEqual(smsSegments(ascii))
    }))
  })
})

describe("call minutes and TwiML", () => {
  it("minutes round up: 0 s is 0, 1–60 s is 1, 61 s is 2", () => {
    expect([0, 1, 60, 61, 3600].map(callMinutes)).toEqual([0, 1, 1, 2, 60])
    fc.assert(fc.property(fc.integer({ min: 0, max: 86_400 }), (s) => {
      expect(callMinutes(s) * 60).toBeGreaterThanOrEqual(s)
      expect((callMinutes(s) - 1) * 60).toBeLessThan(s)
    }))
  })

  it("text and numbers are XML-escaped", () => {
    expect(escapeXml(`<a href="x">&'`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;")
    expect(messageResponse("Tom & Jerry <3")).toBe(`<?xml version="1.0" encoding="UTF-8"?><Response><Message>Tom &amp; Jerry &lt;3</Message></Response>`)
    expect(forwardResponse("Hi", "+1<2>")).toContain("<Dial timeout=\"25\">+1&lt;2&gt;</Dial>")
  })
})
