/** Signed-in users of a role for the ECM handler tests. */
import { Effect } from "effect"
import type { Role } from "../../../src/Domain/Accounts/User.js"
import { signIn } from "../../support/app.js"
import { insertUser as insertFixtureUser, password } from "../../support/fixtures.js"

export const insertUser = (user: { readonly email: string; readonly role: Role; readonly first_name?: string; readonly last_name?: string }) =>
  Effect.gen(function*() {
    const id = yield* insertFixtureUser({ last_name: "User", ...user })
    return { id, token: yield* signIn(user.email, password) }
  })
