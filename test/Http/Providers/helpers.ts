/** Users and provider profiles for the provider tests, made the way an admin makes them. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ProviderId } from "../../../src/Domain/Ids.js"
import { request, signIn } from "../../support/app.js"
import { insertUser, type NewUser } from "../../support/fixtures.js"

export { insertUser, type NewUser, password } from "../../support/fixtures.js"

export const providerIdOf = (userId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`SELECT id FROM providers WHERE user_id = ${userId}`
    return row?.id
  }).pipe(Effect.orDie)

/** A user given the role by an admin (PUT /v1/admin/clinic/users/{id}); the provider id. */
export const makeProvider = (token: string, role: "provider" | "supervisor" = "provider", user: NewUser = {}) =>
  Effect.gen(function*() {
    const userId = yield* insertUser(user)
    const response = yield* request("PUT", `/v1/admin/clinic/users/${userId}`, { token, body: { user: { role } } })
    if (response.status !== 200) return yield* Effect.dieMessage(`role change failed: ${response.status} ${JSON.stringify(response.body)}`)
    const id = yield* providerIdOf(userId)
    if (id === undefined) return yield* Effect.dieMessage("no profile after the role change")
    return { id: ProviderId.make(id), userId }
  })

export const auditActions = (targetType: string, targetId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ action: string }>`SELECT action FROM audit_events
      WHERE target_type = ${targetType} AND target_id = ${targetId} ORDER BY id`
    return rows.map((r) => r.action)
  }).pipe(Effect.orDie)

export const adminToken = signIn()

export const put = (token: string, id: number, provider: Record<string, unknown>) =>
  request("PUT", `/v1/admin/clinic/providers/${id}`, { token, body: { provider } })

export const providerOf = (body: unknown) => (body as { provider: Record<string, unknown> }).provider
