/**
 * The records the harness's requests act on: signed-in callers of each role and a few other
 * users in various states, from the fixtures module (one password hash for all, tokens stored as
 * the server stores them). Fuzzed requests may sign out, delete, archive or demote any of them, so
 * every request gets callers of its own rather than shared ones that would need repair.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import { hashPassword } from "../../src/Services/Accounts/Passwords.js"
import type { Role as UserRole } from "../../src/Domain/Accounts/User.js"
import { insertPatient, insertUsers } from "../support/fixtures.js"
import { insertHarnessActivities, insertSessions } from "../support/fixtures/Harness.js"
import type { Pii } from "./pii.js"

/** Callers of the access matrix: the spec's roles as the harness uses them. */
export type Role = "parent" | "staff" | "admin"
export const roles: ReadonlyArray<Role> = ["parent", "staff", "admin"]

/** The database role each caller gets (`provider` is clinic staff). */
const databaseRole: Record<Role, UserRole> = { parent: "parent", staff: "provider", admin: "admin" }

export interface Principal {
  readonly role: Role
  readonly id: number
  readonly email: string
  /** E.164, where the server texts confirmation codes. */
  readonly phone: string
  readonly token: string
}

export interface World {
  readonly principals: Readonly<Record<Role, Principal>>
  /** Every user id of this world: the principals and other users (archived, inactive, unconfirmed …). */
  readonly userIds: ReadonlyArray<number>
  /** Their emails; every one signs in with `Seeder.password`. */
  readonly emails: ReadonlyArray<string>
  /** Ids of other records requests may name (an ECM member, its activities and events). */
  readonly recordIds?: ReadonlyArray<number>
}

/** Users seeded by this process, whatever the seeder: makes every seeded email unique. */
let seededUsers = 0

/** Draws made by this process: seeders of the same seed still draw different values. */
let draws = 0

/** Draws values from arbitraries, deterministically for a seed and the draws made before. */
export const sampler = (seed: number) => <A>(arbitrary: fc.Arbitrary<A>): A =>
  fc.sample(arbitrary, { seed: (seed + draws++) | 0, numRuns: 1 })[0]!

export interface UserSpec {
  readonly role: Role
  readonly status?: "active" | "inactive" | "archived"
  readonly confirmed?: boolean
  readonly signedIn?: boolean
  /** The database role of a `staff` user (default `provider`): front desk is `support`. */
  readonly staffRole?: "provider" | "supervisor" | "support" | "billing"
}

export interface Seeder {
  /** A user of the role (confirmed and active unless said otherwise), signed in unless `signedIn` is false. */
  readonly user: (options: UserSpec) => Effect.Effect<Principal>
  /**
   * A world for one request: a fresh signed-in user per role (a request may sign its caller out,
   * cancel, demote or delete them, so callers are never shared) and the given other users.
   */
  readonly world: (others: ReadonlyArray<Principal>, recordIds?: ReadonlyArray<number>) => Effect.Effect<World>
  /** `count` worlds at once (each with callers of its own), written together: for batches of independent requests. */
  readonly worlds: (count: number, others?: ReadonlyArray<Principal>, recordIds?: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<World>>
  /**
   * Records shared by a batch of requests: an ECM member named from the harness's
   * generators, with a task, a subtask and a call, their events, and a comment; their ids.
   */
  readonly records: Effect.Effect<ReadonlyArray<number>>
  /** Users that are archived, inactive and unconfirmed: targets shared by a batch of requests. */
  readonly others: Effect.Effect<ReadonlyArray<Principal>>
  /** The password of every seeded user. */
  readonly password: string
  /** Forgets rate-limit windows and failed sign-ins, so throttles do not hide the handlers behind 429s. */
  readonly resetThrottles: Effect.Effect<void>
}

export const makeSeeder = (pii: Pii, seed: number): Effect.Effect<Seeder, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const draw = sampler(seed)
    // One hash for every seeded user: scrypt is slow on purpose.
    const password = draw(pii.password)
    const passwordHash = yield* hashPassword(password)
    // The fixtures read the harness app's database through the SqlClient.
    const untraced = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
      effect.pipe(Effect.orDie, Effect.withTracerEnabled(false), Effect.provideService(SqlClient.SqlClient, sql))

    // Users drawn in the order one-at-a-time seeding drew them, then written in two statements.
    const users = (specs: ReadonlyArray<UserSpec>) =>
      untraced(Effect.gen(function*() {
        const drawn = specs.map(({ confirmed = true, role, signedIn = true, staffRole, status = "active" }) => {
          const digits = draw(pii.phone).replace(/\D/g, "").slice(-10)
          // Unique whatever the draw: a counter in the local part.
          const email = draw(pii.email).replace("@", `.${++seededUsers}@`)
          const row = {
            email,
            password_hash: passwordHash,
            first_name: draw(pii.name),
            last_name: draw(pii.name),
            phone: `+1${digits}`,
            role: role === "staff" && staffRole !== undefined ? staffRole : databaseRole[role],
            status,
            confirmed
          }
          return { role, row, signedIn, token: draw(pii.token) }
        })
        const ids = yield* insertUsers(drawn.map((d) => d.row))
        yield* insertSessions(drawn.flatMap((d, i) => (d.signedIn ? [{ userId: ids[i]!, token: d.token }] : [])))
        return drawn.map(({ role, row, token }, i): Principal => ({ role, id: ids[i]!, email: row.email, phone: row.phone, token }))
      }))

    const user: Seeder["user"] = (spec) => Effect.map(users([spec]), ([principal]) => principal!)

    // An ECM member and its activities, written directly like the users: as the EventGenerator pairs them.
    const records = untraced(Effect.gen(function*() {
      const staff = yield* user({ role: "staff", signedIn: false })
      const patient = yield* insertPatient({ first_name: draw(pii.name), last_name: draw(pii.name), date_of_birth: null })
      const { activityIds, eventIds } = yield* insertHarnessActivities(patient, staff.id)
      return [patient, ...activityIds, ...eventIds]
    }))

    const worlds: Seeder["worlds"] = (count, others = [], recordIds = []) =>
      Effect.map(users(Array.from({ length: count }, () => roles.map((role) => ({ role }))).flat()), (principals) =>
        Array.from({ length: count }, (_, k): World => {
          const [parent, staff, admin] = principals.slice(k * roles.length, (k + 1) * roles.length)
          const everyone = [parent!, staff!, admin!, ...others]
          return {
            principals: { parent: parent!, staff: staff!, admin: admin! },
            userIds: everyone.map((u) => u.id),
            emails: everyone.map((u) => u.email),
            recordIds
          }
        }))

    const world: Seeder["world"] = (others, recordIds) => Effect.map(worlds(1, others, recordIds), ([one]) => one!)

    const others = users([
      { role: "parent", status: "archived", signedIn: false },
      { role: "staff", status: "inactive", signedIn: false },
      { role: "parent", confirmed: false, signedIn: false }
    ])

    const resetThrottles = untraced(Effect.asVoid(Effect.all([sql`DELETE FROM rate_limits`, sql`DELETE FROM sign_in_throttles`])))

    return { user, world, worlds, records, others, password, resetThrottles }
  }).pipe(Effect.withTracerEnabled(false))
