/**
 * Which operations have a uniqueness or single-use rule: the same request sent many times at once
 * must succeed exactly once (race mode). An endpoint declares it in the document with an
 * `x-single-use` extension — `.annotate(OpenApi.Override, { "x-single-use": "an email is invited
 * once" })` on the `HttpApiEndpoint` — and the harness reads it from there. Operations that do not
 * declare it yet are listed here, keyed by operationId; the document's declaration wins.
 */
import type { Operation } from "./document.js"

export const singleUseTable: Readonly<Record<string, string>> = {
  "users.register": "an email registers one account",
  "users.confirm": "a confirmation code confirms once",
  "users.resendConfirmation": "one confirmation code a minute per account",
  "users.resetPassword": "a reset token resets once"
}

/** The operation's rule, from the document or the table; undefined when it has none. */
export const singleUseOf = (operation: Operation): string | undefined => operation.singleUse ?? singleUseTable[operation.id]
