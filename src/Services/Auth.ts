/** Sign in, sign out and the per-request token check. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import type { Caller } from "../Api/Security.js"
import type { UserId } from "../Domain/Ids.js"
import type { Role, User } from "../Domain/User.js"
import { dummyHash, verifyPassword } from "./Passwords.js"
import { hashToken, newToken } from "./Tokens.js"
import { toUser, UsersRepo } from "./UsersRepo.js"

export type SignInFailure = "invalid_credentials"

export class Auth extends Effect.Service<Auth>()("app/Auth", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* UsersRepo

    /** Issues a new session token; only its hash is stored. */
    const issueToken = (userId: number) =>
      Effect.gen(function*() {
        const token = newToken()
        yield* sql`INSERT INTO user_tokens (token_hash, user_id) VALUES (${hashToken(token)}, ${userId})`.pipe(Effect.orDie)
        return token
      })

    const signIn = (email: string, password: string) =>
      Effect.gen(function*() {
        const row = yield* users.findByEmail(email)
        // Always pay for one hash check, so response time doesn't reveal whether the email exists.
        const matches = yield* verifyPassword(password, Option.match(row, { onNone: () => dummyHash, onSome: (r) => r.password_hash }))
        if (Option.isNone(row) || !matches || row.value.status !== "active") {
          return yield* Effect.fail<SignInFailure>("invalid_credentials")
        }
        const updated = yield* sql<{ last_login: Date }>`UPDATE users SET last_login = now() WHERE id = ${row.value.id} RETURNING last_login`.pipe(Effect.orDie)
        const token = yield* issueToken(row.value.id)
        const user: User = toUser(row.value)
        return { token, user, lastLogin: updated[0]?.last_login }
      }).pipe(Effect.withSpan("Auth.signIn"))

    const signOut = (tokenHash: string) =>
      sql`DELETE FROM user_tokens WHERE token_hash = ${Buffer.from(tokenHash, "hex")}`.pipe(
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("Auth.signOut")
      )

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

    return { signIn, signOut, authenticate, issueToken } as const
  }),
  dependencies: [UsersRepo.Default]
}) {}
