/**
 * Requests the harness once found to break the server, replayed on every run: each must now get
 * the stated status and pass every response check. Add one per class of bug found.
 */
import type { Caller } from "./cases.js"
import type { Draft } from "./generate.js"

export interface Regression {
  readonly bug: string
  readonly operation: string
  readonly caller: Caller
  readonly draft: Draft
  readonly status: number
}

const json = (value: unknown): Draft => ({ pathParams: {}, query: [], headers: {}, body: { kind: "json", value } })
const text = (body: string, contentType: string): Draft => ({ pathParams: {}, query: [], headers: {}, body: { kind: "text", text: body, contentType } })

export const regressions: ReadonlyArray<Regression> = [
  {
    bug: "500: an id past PostgreSQL's integer range",
    operation: "users.confirm",
    caller: "anonymous",
    draft: json({ user_id: 2147483648, confirmation_code: "379340" }),
    status: 422
  },
  {
    bug: "500: U+0000 in text PostgreSQL stores",
    operation: "users.emailHasAccount",
    caller: "anonymous",
    draft: json({ email: "a\u0000b" }),
    status: 422
  },
  {
    bug: "500: U+0000 in a search",
    operation: "adminUsers.list",
    caller: "admin",
    draft: { pathParams: {}, query: [["search", "a\u0000b"]], headers: {}, body: { kind: "none" } },
    status: 422
  },
  {
    bug: "500: year 0000, which PostgreSQL's date does not have",
    operation: "users.register",
    caller: "anonymous",
    draft: json({ user: { email: "zorquil.regression@example.test", password: "pw-regression-1", first_name: "Zorquilmirel", last_name: "Vathlunebexa", date_of_birth: "0000-01-01" } }),
    status: 422
  },
  {
    bug: "500: JSON nested 5000 deep overflowed the stack while the decode error was formatted",
    operation: "users.requestPasswordReset",
    caller: "anonymous",
    draft: text(`${"[".repeat(5000)}${"]".repeat(5000)}`, "application/json"),
    status: 422
  },
  {
    bug: "200: an XML body decoded as an empty filter",
    operation: "adminUsers.filter",
    caller: "admin",
    draft: text("<filter/>", "application/xml"),
    status: 422
  }
]
