/**
 * The only SQL on `providers` (ARCHITECTURE "Persistence"): profiles with their user's names,
 * email and flags, the supervision graph, and the lookups other areas make of a provider. Rows are
 * decoded with schemas; SQL errors are defects except a taken NPI (422). `updated_at` comes from
 * the clock.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { ProviderSortColumn } from "../../Api/Providers/Providers.js"
import { invalid, type ValidationFailed } from "../../Api/Errors.js"
import { ProviderId, UserId } from "../../Domain/Ids.js"
import { Role } from "../../Domain/Accounts/User.js"
import { Provider, ProviderRole } from "../../Domain/Providers/Provider.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type ListFilter, makeListPage } from "../Lists.js"
import { blankToNull, orDefect, SqlSchema, textArray } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlFilters.js"
import { now } from "../Time.js"

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

/** A profile with its user's names, email and flags. */
export const ProviderRow = Schema.Struct({
  id: ProviderId,
  user_id: UserId,
  first_name: Text,
  last_name: Text,
  email: Text,
  roles: Schema.Array(ProviderRole),
  specialty: NullText,
  license_number: NullText,
  npi: NullText,
  department: NullText,
  supervisor_id: Schema.NullOr(ProviderId),
  active: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  /** The user's: a clinical provider keeps a license number. */
  clinical: Schema.Boolean,
  user_role: Role
})
export type ProviderRow = typeof ProviderRow.Type

/** `FROM providers p JOIN users u` columns of a `ProviderRow`. */
const providerColumns = `p.id, p.user_id, u.first_name, u.last_name, u.email, p.roles, p.specialty,
  p.license_number, p.npi, p.department, p.supervisor_id, p.active, p.created_at, p.updated_at, u.clinical, u.role AS user_role`

export const toProvider = (row: ProviderRow): Provider =>
  Provider.make({
    id: row.id,
    user_id: row.user_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    roles: row.roles,
    specialty: row.specialty,
    license_number: row.license_number,
    npi: row.npi,
    department: row.department,
    has_supervisor: row.supervisor_id !== null,
    supervisor_id: row.supervisor_id,
    active: row.active,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

/** What the provider list may be narrowed and ordered by (general §4.9). */
export interface ProviderCriteria {
  readonly search?: string | null | undefined
  readonly sortBy?: ProviderSortColumn | undefined
  readonly sortDir?: "ASC" | "DESC" | undefined
}

/** What the supervisor list may be narrowed by (general §4.15). */
export interface SupervisorCriteria {
  readonly active?: boolean | undefined
  readonly specialty?: string | undefined
}

/** The fields of a profile an admin edits, normalised and checked by `Providers`. */
export const ProfileFields = Schema.Struct({
  roles: Schema.Array(ProviderRole),
  specialty: NullText,
  license_number: NullText,
  npi: NullText,
  department: NullText,
  supervisor_id: Schema.NullOr(Schema.Number),
  active: Schema.Boolean
})
export type ProfileFields = typeof ProfileFields.Type

/** A supervisee of a listed supervisor. */
export const SuperviseeRow = Schema.Struct({ id: ProviderId, supervisor_id: ProviderId, first_name: Text, last_name: Text })
export type SuperviseeRow = typeof SuperviseeRow.Type

/** An active provider by name, for filter screens. */
const ProviderOptionRow = Schema.Struct({ id: Schema.Int, name: Schema.String })
const Id = Schema.Struct({ id: ProviderId })

const writeErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
  isUniqueViolation(error, "providers_npi_key") ? Effect.fail(invalid({ npi: ["has already been taken"] })) : Effect.die(error)

export class ProvidersRepo extends Effect.Service<ProvidersRepo>()("app/ProvidersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(providerColumns)
    const from = sql`providers p JOIN users u ON u.id = p.user_id`
    const live = sql`u.deleted_at IS NULL`

    const sortColumns: Record<ProviderSortColumn, Statement.Fragment> = {
      id: sql`p.id`,
      first_name: sql`lower(u.first_name)`,
      last_name: sql`lower(u.last_name)`,
      email: sql`lower(u.email)`,
      specialty: sql`p.specialty`,
      license_number: sql`p.license_number`,
      npi: sql`p.npi`,
      active: sql`p.active`,
      created_at: sql`p.created_at`,
      updated_at: sql`p.updated_at`
    }
    /** The API's sort columns, and the default order: by name (last, then first). */
    const orders = { ...sortColumns, name: [sql`lower(u.last_name)`, sql`lower(u.first_name)`] }

    const searchOf = (criteria: ProviderCriteria): ListFilter => {
      const search = blankToNull(criteria.search)
      if (search === null) return undefined
      const pattern = likePattern(search)
      return sql`(u.email ILIKE ${pattern} ESCAPE '\\' OR u.first_name ILIKE ${pattern} ESCAPE '\\'
          OR u.last_name ILIKE ${pattern} ESCAPE '\\' OR (u.first_name || ' ' || u.last_name) ILIKE ${pattern} ESCAPE '\\'
          OR p.specialty ILIKE ${pattern} ESCAPE '\\' OR p.license_number ILIKE ${pattern} ESCAPE '\\'
          OR p.npi ILIKE ${pattern} ESCAPE '\\')`
    }

    /** A page of the profiles of live users: by last and first name unless `sortBy` says otherwise (then without a value last). */
    const list = (criteria: ProviderCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: ProviderRow,
        filters: [live, searchOf(criteria)],
        sort: {
          columns: orders,
          by: criteria.sortBy ?? "name",
          dir: criteria.sortDir ?? "ASC",
          id: sortColumns.id,
          nulls: criteria.sortBy === undefined ? undefined : "LAST"
        }
      }, page)

    /** A page of live profiles holding the supervisor role, by name. */
    const supervisorsList = (criteria: SupervisorCriteria, page: PageRequest) =>
      listPage({
        select: columns,
        from,
        row: ProviderRow,
        filters: [
          live,
          sql`p.roles @> ARRAY['supervisor']::text[]`,
          criteria.active !== undefined && sql`p.active = ${criteria.active}`,
          criteria.specialty !== undefined && sql`p.specialty = ${criteria.specialty.trim()}`
        ],
        sort: { columns: orders, by: "name", dir: "ASC", id: sortColumns.id }
      }, page)
    const findById = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Number, lock: Schema.Boolean }),
      Result: ProviderRow,
      execute: ({ id, lock }) =>
        sql`SELECT ${columns} FROM providers p JOIN users u ON u.id = p.user_id
        WHERE p.id = ${id} AND ${live} ${lock ? sql`FOR UPDATE OF p` : sql``}`
    })
    const takeLock = SqlSchema.void({ Request: Schema.Number, execute: (key) => sql`SELECT pg_advisory_xact_lock(${key})` })
    const findSupervisorLocked = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean, supervises: Schema.Boolean }),
      execute: (id) =>
        sql`SELECT p.active, 'supervisor' = ANY(p.roles) AS supervises FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.id = ${id} AND ${live} FOR SHARE OF p`
    })
    // Walk up from the new supervisor: meeting the provider means the new link closes a cycle.
    const findCycle = SqlSchema.findAll({
      Request: Schema.Struct({ providerId: Schema.Number, supervisorId: Schema.Number }),
      Result: Schema.Struct({ found: Schema.Int }),
      execute: ({ providerId, supervisorId }) =>
        sql`WITH RECURSIVE chain (id) AS (
            SELECT ${supervisorId}::integer
            UNION
            SELECT p.supervisor_id FROM providers p JOIN chain c ON p.id = c.id WHERE p.supervisor_id IS NOT NULL
          ) SELECT 1 AS found FROM chain WHERE id = ${providerId}`
    })
    const updateOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Number, fields: ProfileFields, at: Schema.DateFromSelf }),
      execute: ({ at, fields: f, id }) =>
        sql`UPDATE providers SET
              roles = ${textArray(f.roles)}::text[],
              specialty = ${f.specialty},
              license_number = ${f.license_number},
              npi = ${f.npi},
              department = ${f.department},
              supervisor_id = ${f.supervisor_id},
              active = ${f.active},
              updated_at = ${at}
            WHERE id = ${id}`
    })
    const findSupervisees = SqlSchema.findAll({
      Request: Schema.Array(Schema.Number),
      Result: SuperviseeRow,
      execute: (ids) =>
        sql`SELECT p.id, p.supervisor_id, u.first_name, u.last_name FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.supervisor_id IN ${sql.in(ids)} AND ${live}
          ORDER BY lower(u.last_name), lower(u.first_name), p.id`
    })

    // xmax = 0 only for a row this statement inserted.
    const upsertForRole = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.Number, role: Text, at: Schema.DateFromSelf }),
      Result: Schema.Struct({ id: ProviderId, inserted: Schema.Boolean, reactivated: Schema.Boolean }),
      execute: ({ at, role, userId }) =>
        sql`WITH before AS (SELECT active FROM providers WHERE user_id = ${userId})
            INSERT INTO providers AS p (user_id, roles, active) VALUES (${userId}, ARRAY[${role}]::text[], true)
            ON CONFLICT (user_id) DO UPDATE SET
              active = true,
              roles = CASE WHEN ${role} = ANY(p.roles) THEN p.roles ELSE p.roles || ARRAY[${role}]::text[] END,
              updated_at = ${at}
            WHERE NOT p.active OR NOT ${role} = ANY(p.roles)
            RETURNING p.id, (xmax = 0) AS inserted, NOT COALESCE((SELECT active FROM before), true) AS reactivated`
    })
    const deactivateOf = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.Number, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, userId }) =>
        sql`UPDATE providers SET active = false, updated_at = ${at}
          WHERE user_id = ${userId} AND active RETURNING id`
    })
    const findActiveSupervisorLocked = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Id,
      execute: (id) =>
        sql`SELECT p.id FROM providers p JOIN users u ON u.id = p.user_id
          WHERE p.id = ${id} AND p.active AND 'supervisor' = ANY(p.roles) AND u.deleted_at IS NULL
          FOR SHARE OF p`
    })
    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ userId: Schema.Number, role: Text, supervisorId: Schema.NullOr(Schema.Number) }),
      Result: Id,
      execute: ({ role, supervisorId, userId }) =>
        sql`INSERT INTO providers (user_id, roles, active, supervisor_id)
          VALUES (${userId}, ARRAY[${role}]::text[], true, ${supervisorId}) RETURNING id`
    })
    const findSupervisorActive = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: (id) =>
        sql`SELECT p.active FROM providers p JOIN users u ON u.id = p.user_id
            WHERE p.id = ${id} AND 'supervisor' = ANY(p.roles) AND u.deleted_at IS NULL`
    })

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
      /** One page of the profiles of live users, with its pagination. */
      list,
      /** A profile of a live user, locked `FOR UPDATE` inside a transaction when `lock`. */
      findById: (id: number, lock = false) => orDefect(findById({ id, lock })),
      /** A transaction-scoped advisory lock: the transactions taking `key` take turns. */
      advisoryLock: (key: number) => orDefect(takeLock(key)),
      /** A live profile's active flag and whether it holds the supervisor role, share-locked until commit. */
      lockSupervisor: (id: number) => orDefect(findSupervisorLocked(id)),
      /** Whether `supervisorId` is `providerId` or supervised by it, directly or not. */
      supervises: (providerId: number, supervisorId: number) =>
        Effect.map(orDefect(findCycle({ providerId, supervisorId })), (rows) => rows.length > 0),
      /** Writes an admin's edit (a taken NPI is a 422). */
      update: (id: number, fields: ProfileFields) =>
        Effect.flatMap(now, (at) => updateOne({ id, fields, at })).pipe(Effect.catchTag("SqlError", writeErrors), orDefect),
      /** One page of live profiles holding the supervisor role, by name, with its pagination. */
      supervisorsList,
      /** The live profiles these supervisors supervise, by name. */
      superviseesOf: (ids: ReadonlyArray<number>) => ids.length === 0 ? Effect.succeed([]) : orDefect(findSupervisees(ids)),
      /**
       * The user's profile made active and holding `role` (created, or reactivated with the role
       * added); none when it already was.
       */
      upsertForRole: (userId: number, role: string) => orDefect(Effect.flatMap(now, (at) => upsertForRole({ userId, role, at }))),
      /** The user's active profile, if any, made inactive; the ids it changed. */
      deactivateOf: (userId: number) =>
        orDefect(Effect.flatMap(now, (at) => deactivateOf({ userId, at }))).pipe(Effect.map((rows) => rows.map((r) => r.id))),
      /** The id when it is an active supervisor of a live user, share-locked until commit. */
      lockActiveSupervisor: (id: number) => Effect.map(orDefect(findActiveSupervisorLocked(id)), Option.map((row) => row.id)),
      /** A new active profile's id. */
      insert: (userId: number, role: string, supervisorId: number | null) =>
        Effect.map(orDefect(insertOne({ userId, role, supervisorId })), (row) => row.id),
      /** Whether the live profile holding the supervisor role is active; none when there is none. */
      supervisorActiveOf: (id: number) => Effect.map(orDefect(findSupervisorActive(id)), Option.map((row) => row.active)),
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
