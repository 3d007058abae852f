/**
 * Accounts that must exist before requests are served: the bootstrap admin from
 * BOOTSTRAP_ADMIN_EMAIL/PASSWORD when no such user exists, and the system account.
 */
import { Effect, Option, Redacted } from "effect"
import { hashPassword } from "./Passwords.js"
import { UsersRepo } from "./UsersRepo.js"

export const ensureBootstrapAdmin = Effect.fn("Bootstrap.ensureAdmin")(function*(
  email: Option.Option<string>,
  password: Option.Option<Redacted.Redacted>
) {
  if (Option.isNone(email) || Option.isNone(password)) return
  const users = yield* UsersRepo
  if (Option.isSome(yield* users.findByEmail(email.value))) return
  // Instances starting together may race here: the conflict clause lets only one insert.
  const created = yield* users.insertIfAbsent({
    email: email.value,
    password_hash: yield* hashPassword(Redacted.value(password.value)),
    first_name: "Admin",
    last_name: "User",
    role: "admin",
    confirmed: true
  })
  if (Option.isSome(created)) {
    yield* Effect.logInfo("bootstrap admin created").pipe(Effect.annotateLogs("user.id", created.value.id))
  }
})

/** The system account, created after the bootstrap admin so a fresh database gives the admin id 1. */
export const ensureSystemAccount = Effect.flatMap(UsersRepo, (users) => users.ensureSystemAccount).pipe(
  Effect.tap((id) => Effect.annotateCurrentSpan("user.id", id)),
  Effect.withSpan("Bootstrap.ensureSystemAccount")
)
