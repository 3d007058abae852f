/**
 * The only SQL on `provider_invites` (ARCHITECTURE "Persistence"). One pending invite per address
 * is a partial unique index and a new invite is an upsert on it; acceptance claims the invite with
 * one conditional `UPDATE … WHERE status = 'pending' AND expires_at > now RETURNING`. Tokens are
 * stored as their SHA-256. Rows are decoded with schemas; SQL errors are defects.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { ProviderId, ProviderInviteId } from "../../Domain/Ids.js"
import { ProfileRole } from "../../Domain/Providers/Provider.js"
import { orDefect, SqlSchema } from "../Repository.js"

const Text = Schema.String

export const InviteRow = Schema.Struct({
  id: ProviderInviteId,
  email: Text,
  first_name: Text,
  last_name: Text,
  role: ProfileRole,
  supervisor_id: Schema.NullOr(ProviderId),
  status: Schema.Literal("pending", "accepted"),
  expires_at: Schema.DateFromSelf,
  created_at: Schema.DateFromSelf
})
export type InviteRow = typeof InviteRow.Type

/** What an invitee sees of a pending invite before accepting it. */
export const InviteSummaryRow = Schema.Struct({ email: Text, first_name: Text, last_name: Text, role: ProfileRole, expires_at: Schema.DateFromSelf })
export type InviteSummaryRow = typeof InviteSummaryRow.Type

/** A new invite, its fields normalised by `ProviderInvites`; `at` is its creation time. */
export const NewInvite = Schema.Struct({
  email: Text,
  firstName: Text,
  lastName: Text,
  role: ProfileRole,
  supervisorId: Schema.NullOr(Schema.Number),
  tokenHash: Schema.Uint8ArrayFromSelf,
  invitedBy: Schema.Number,
  expiresAt: Schema.DateFromSelf,
  at: Schema.DateFromSelf
})
export type NewInvite = typeof NewInvite.Type

const TokenAt = Schema.Struct({ tokenHash: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf })

const inviteColumns = "id, email, first_name, last_name, role, supervisor_id, status, expires_at, created_at"

export class ProviderInvitesRepo extends Effect.Service<ProviderInvitesRepo>()("app/ProviderInvitesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(inviteColumns)

    // Concurrent invites to one address queue on the pending row; the last one's token is the one that works.
    const upsert = SqlSchema.single({
      Request: NewInvite,
      Result: Schema.Struct({ ...InviteRow.fields, inserted: Schema.Boolean }),
      execute: (i) =>
        sql`INSERT INTO provider_invites AS i (email, first_name, last_name, role, supervisor_id, token_hash, invited_by,
              expires_at, created_at, updated_at)
            VALUES (${i.email}, ${i.firstName}, ${i.lastName}, ${i.role}, ${i.supervisorId},
              ${i.tokenHash}, ${i.invitedBy}, ${i.expiresAt}, ${i.at}, ${i.at})
            ON CONFLICT (lower(email)) WHERE status = 'pending' DO UPDATE SET
              first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name, role = EXCLUDED.role,
              supervisor_id = EXCLUDED.supervisor_id, token_hash = EXCLUDED.token_hash, invited_by = EXCLUDED.invited_by,
              expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
            RETURNING ${columns}, (xmax = 0) AS inserted`
    })
    const findPending = SqlSchema.findOne({
      Request: TokenAt,
      Result: InviteSummaryRow,
      execute: ({ at, tokenHash }) =>
        sql`SELECT email, first_name, last_name, role, expires_at FROM provider_invites
          WHERE token_hash = ${tokenHash} AND status = 'pending' AND expires_at > ${at}`
    })
    // Of concurrent accepts, one updates the row; the others wait for its commit, re-check
    // `status = 'pending'` and claim nothing.
    const claimOne = SqlSchema.findOne({
      Request: TokenAt,
      Result: InviteRow,
      execute: ({ at, tokenHash }) =>
        sql`UPDATE provider_invites SET status = 'accepted', accepted_at = ${at}, updated_at = ${at}
            WHERE token_hash = ${tokenHash} AND status = 'pending' AND expires_at > ${at}
            RETURNING ${columns}`
    })
    const linkUser = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, userId: Schema.Number }),
      execute: ({ id, userId }) => sql`UPDATE provider_invites SET user_id = ${userId} WHERE id = ${id}`
    })

    return {
      /** The pending invite of the address, created or replaced (`inserted` tells which). */
      upsertPending: (invite: NewInvite) => orDefect(upsert(invite)),
      /** The pending, unexpired invite of a token hash at `at`. */
      findPending: (tokenHash: Uint8Array, at: Date) => orDefect(findPending({ tokenHash, at })),
      /** The pending, unexpired invite of a token hash, moved to accepted at `at`; none when there was none to claim. */
      claim: (tokenHash: Uint8Array, at: Date) => orDefect(claimOne({ tokenHash, at })),
      /** Records the account an accepted invite created. */
      linkUser: (id: number, userId: number) => orDefect(linkUser({ id, userId }))
    } as const
  })
}) {}
