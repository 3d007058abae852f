/** The per-request token check (sign in and out live in Accounts). */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import type { Caller } from "../Api/Security.js"
import type { UserId } from "../Domain/Ids.js"
import type { Role } from "../Domain/Accounts/User.js"
import { hashToken } from "./Tokens.js"

export class Auth extends Effect.Service<Auth>()("app/Auth", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One indexed query per request; the token never appears in spans or logs. */
    const authenticate = (token: Redacted.Redacted<string>): Effect.Effect<Option.Option<Caller>> => {
      const raw = Redacted.value(token)
      if (raw.length === 0 || raw.length > 256) return Effect.succeed(Option.none())
      const hash = hashToken(raw)
      return sql<{ id: number; role: Role }>`SELECT u.id, u.role FROM user_tokens t JOIN users u ON u.id = t.user_id
        WHERE t.token_hash = ${hash} AND u.status = 'active'`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (r): Caller => ({ id: r.id as UserId, role: r.role, tokenHash: hash.toString("hex") }))
        ),
        Effect.orDie
      )
    }

    return { authenticate } as const
  })
}) {}
