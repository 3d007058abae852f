/** Signed-in users of a role for the ECM handler tests. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import { hashPassword } from "../../../src/Services/Accounts/Passwords.js"
import { signIn } from "../../support/app.js"

const password = "user-password-1"
let passwordHash: string | undefined

export const insertUser = (user: { readonly email: string; readonly role: Role; readonly first_name?: string; readonly last_name?: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    passwordHash ??= yield* hashPassword(password)
    const [row] = yield* sql<{ id: number }>`INSERT INTO users ${
      sql.insert({
        email: user.email,
        password_hash: passwordHash,
        first_name: user.first_name ?? "Test",
        last_name: user.last_name ?? "User",
        role: user.role,
        confirmed: true
      })
    } RETURNING id`.pipe(Effect.orDie)
    return { id: row!.id, token: yield* signIn(user.email, password) }
  })
