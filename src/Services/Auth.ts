/** The per-request token check (sign in and out live in Accounts, token lifetime in Sessions). */
import { Effect, Option, Redacted } from "effect"
import type { Caller } from "../Api/Security.js"
import type { UserId } from "../Domain/Ids.js"
import { Sessions } from "./Accounts/Sessions.js"
import { hashToken } from "./Tokens.js"

export class Auth extends Effect.Service<Auth>()("app/Auth", {
  effect: Effect.gen(function*() {
    const sessions = yield* Sessions

    /**
     * One indexed statement per request; the token never appears in spans or logs. An expired
     * token is deleted there and answers like an unknown one.
     */
    const authenticate = (token: Redacted.Redacted<string>): Effect.Effect<Option.Option<Caller>> => {
      const raw = Redacted.value(token)
      if (raw.length === 0 || raw.length > 256) return Effect.succeed(Option.none())
      const hash = hashToken(raw)
      return Effect.map(sessions.lookup(hash), Option.map((r): Caller => ({ id: r.id as UserId, role: r.role, tokenHash: hash.toString("hex") })))
    }

    return { authenticate } as const
  }),
  dependencies: [Sessions.Default]
}) {}
