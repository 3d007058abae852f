/**
 * Confirmation codes (docs/spec-decisions.md, Accounts): one live code per user, stored hashed.
 * Every step is one atomic statement (in `ConfirmationCodesRepo`) whose returned rows decide what
 * happens, so concurrent requests cannot check more codes, or confirm or send more often, than
 * the rules allow.
 */
import { Duration, Effect, Either, Option } from "effect"
import { randomInt } from "node:crypto"
import * as Time from "../Time.js"
import { hashToken } from "../Tokens.js"
import { ConfirmationCodesRepo } from "./ConfirmationCodesRepo.js"

export const confirmationRules = {
  lifetime: Duration.minutes(15),
  /** Wrong tries per user within `attemptWindow`, however many codes were sent meanwhile. */
  maxWrongAttempts: 5,
  attemptWindow: Duration.minutes(15),
  resendInterval: Duration.seconds(60)
} as const

/** What checking a code came to. */
export type CodeCheck =
  | { readonly _tag: "Confirmed" }
  /** A try was counted and the code did not match. */
  | { readonly _tag: "Wrong" }
  /** Not checked: no code (or it was just used), an expired one, or the tries are used up. */
  | { readonly _tag: "NoCode" }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "TooManyTries"; readonly retryInMs: number }

const codeHash = (userId: number, code: string) => hashToken(`${userId}:${code}`)
const newCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0")

export class ConfirmationCodes extends Effect.Service<ConfirmationCodes>()("app/ConfirmationCodes", {
  effect: Effect.gen(function*() {
    const codes = yield* ConfirmationCodesRepo
    const clock = Effect.map(Time.nowMillis, (ms) => ({ ms, date: new Date(ms) }))
    const fresh = (userId: number, code: string, nowMs: number) => ({
      userId,
      codeHash: codeHash(userId, code),
      expiresAt: new Date(nowMs + Duration.toMillis(confirmationRules.lifetime)),
      createdAt: new Date(nowMs)
    })

    /** The first code of a new user; returns the code to send. */
    const create = Effect.fn("ConfirmationCodes.create")(function*(userId: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const now = yield* clock
      const code = newCode()
      yield* codes.insert(fresh(userId, code, now.ms))
      return code
    })

    /**
     * A fresh code (Right) unless the last one was sent less than `resendInterval` ago (Left: how
     * long until one may be sent). Only the request whose upsert returns a row may send; the
     * wrong-try count is kept.
     */
    const replace = Effect.fn("ConfirmationCodes.replace")(function*(userId: number) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const now = yield* clock
      const code = newCode()
      const interval = Duration.toMillis(confirmationRules.resendInterval)
      if (yield* codes.replaceIfDue(fresh(userId, code, now.ms), new Date(now.ms - interval))) return Either.right(code)
      // Only names the wait: the upsert above has already decided. A code deleted meanwhile
      // (confirmed) leaves the full interval, which errs on the side of waiting.
      const sentAt = Option.match(yield* codes.sentAt(userId), { onNone: () => now.ms, onSome: (at) => at.getTime() })
      return Either.left(Duration.millis(Math.max(0, sentAt + interval - now.ms)))
    })

    /**
     * Claims one try (counting it before the comparison), then consumes the code if it matches.
     * Run inside the caller's transaction, with whatever confirming changes.
     */
    const check = Effect.fn("ConfirmationCodes.check")(function*(userId: number, code: string) {
      yield* Effect.annotateCurrentSpan({ "user.id": userId })
      const now = yield* clock
      const windowStart = new Date(now.ms - Duration.toMillis(confirmationRules.attemptWindow))
      const claimed = yield* codes.claimTry({ userId, now: now.date, windowStart, maxWrongAttempts: confirmationRules.maxWrongAttempts })
      if (Option.isNone(claimed)) return yield* whyNotClaimed(userId, now.ms, windowStart)
      const given = codeHash(userId, code.trim())
      if (!Buffer.from(claimed.value).equals(given)) return { _tag: "Wrong" } as const
      return (yield* codes.consume(userId, given)) ? { _tag: "Confirmed" } as const : { _tag: "NoCode" } as const
    })

    /** Only names the refusal: the claim above has already decided. */
    const whyNotClaimed = (userId: number, nowMs: number, windowStart: Date) =>
      Effect.map(codes.state(userId), (state): CodeCheck => {
        if (Option.isNone(state)) return { _tag: "NoCode" }
        const row = state.value
        if (row.failed_attempts >= confirmationRules.maxWrongAttempts && row.failures_since !== null && row.failures_since > windowStart) {
          return { _tag: "TooManyTries", retryInMs: row.failures_since.getTime() - windowStart.getTime() }
        }
        return row.expires_at.getTime() <= nowMs ? { _tag: "Expired" } : { _tag: "NoCode" }
      })

    return { create, replace, check } as const
  }),
  dependencies: [ConfirmationCodesRepo.Default]
}) {}
