/**
 * The only SQL on `providers` (ARCHITECTURE "Persistence"): a profile row with its user's names,
 * email and flags, and the lookups other areas make of a provider. Rows are decoded with schemas;
 * SQL errors are defects.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { ProviderId, UserId } from "../../Domain/Ids.js"
import { orDefect } from "../Repository.js"
import type { Role } from "../../Domain/Accounts/User.js"
import { Provider, type ProviderRole } from "../../Domain/Providers/Provider.js"

export interface ProviderRow {
  readonly id: number
  readonly user_id: number
  readonly first_name: string
  readonly last_name: string
  readonly email: string
  readonly roles: ReadonlyArray<ProviderRole>
  readonly specialty: string | null
  readonly license_number: string | null
  readonly npi: string | null
  readonly department: string | null
  readonly supervisor_id: number | null
  readonly active: boolean
  readonly created_at: Date
  readonly updated_at: Date
  /** The user's: a clinical provider keeps a license number. */
  readonly clinical: boolean
  readonly user_role: Role
}

/** `FROM providers p JOIN users u` columns of a `ProviderRow`. */
export const providerColumns = `p.id, p.user_id, u.first_name, u.last_name, u.email, p.roles, p.specialty,
  p.license_number, p.npi, p.department, p.supervisor_id, p.active, p.created_at, p.updated_at, u.clinical, u.role AS user_role`

/** Rows are trusted (typed and checked by the database); the encoder still checks them on the way out. */
export const toProvider = (row: ProviderRow): Provider =>
  Provider.make({
    id: row.id as ProviderId,
    user_id: row.user_id as UserId,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    roles: row.roles,
    specialty: row.specialty,
    license_number: row.license_number,
    npi: row.npi,
    department: row.department,
    has_supervisor: row.supervisor_id !== null,
    supervisor_id: row.supervisor_id as ProviderId | null,
    active: row.active,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

export const blankToNull = (s: string | null | undefined): string | null => {
  const trimmed = s?.trim() ?? ""
  return trimmed.length === 0 ? null : trimmed
}

/** An active provider by name, for filter screens. */
const ProviderOptionRow = Schema.Struct({ id: Schema.Int, name: Schema.String })

export class ProvidersRepo extends Effect.Service<ProvidersRepo>()("app/ProvidersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findActive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: (id) => sql`SELECT pr.active FROM providers pr JOIN users u ON u.id = pr.user_id
        WHERE pr.id = ${id} AND u.deleted_at IS NULL`
    })

    const findOptions = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ProviderOptionRow,
      execute: () => sql`SELECT pr.id, u.first_name || ' ' || u.last_name AS name
      FROM providers pr JOIN users u ON u.id = pr.user_id
      WHERE pr.active AND u.deleted_at IS NULL ORDER BY lower(u.last_name), lower(u.first_name), pr.id`
    })

    // Share-locked until commit: the prescriber cannot be deactivated in between.
    const lockPrescriber = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ ok: Schema.Boolean }),
      execute: (id) => sql`SELECT (p.active AND u.deleted_at IS NULL AND coalesce(btrim(p.license_number), '') <> '') AS ok
            FROM providers p JOIN users u ON u.id = p.user_id WHERE p.id = ${id} FOR SHARE OF p`
    })

    return {
      /**
       * Whether the profile may prescribe (active, its user not deleted, a license number),
       * share-locked until the transaction commits; false when it does not exist.
       */
      canPrescribe: (id: number) => Effect.map(orDefect(lockPrescriber(id)), (row) => Option.isSome(row) && row.value.ok),
      /** Whether the profile is active; none when it does not exist or its user was deleted. */
      activeOf: (id: number) => Effect.map(orDefect(findActive(id)), Option.map((row) => row.active)),
      /** Every active provider `{id, name}`, by last and first name. */
      activeOptions: orDefect(findOptions(undefined))
    } as const
  })
}) {}
