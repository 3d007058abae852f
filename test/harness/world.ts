/**
 * The records the harness's requests act on: signed-in callers of each role and a few other
 * users in various states, inserted with SQL (one password hash for all, tokens stored as the
 * server stores them). Fuzzed requests may sign out, delete, archive or demote any of them, so
 * every request gets callers of its own rather than shared ones that would need repair.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import { hashPassword } from "../../src/Services/Accounts/Passwords.js"
import { hashToken } from "../../src/Services/Tokens.js"
import type { Pii } from "./pii.js"

/** Callers of the access matrix: the spec's roles as the harness uses them. */
export type Role = "parent" | "staff" | "admin"
export const roles: ReadonlyArray<Role> = ["parent", "staff", "admin"]

/** The database role each caller gets (`provider` is clinic staff). */
const databaseRole: Record<Role, string> = { parent: "parent", staff: "provider", admin: "admin" }

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
  /** Ids of other records requests may name (issue 11: an ECM member, its activities and events). */
  readonly recordIds?: ReadonlyArray<number>
}

/** Users seeded by this process, whatever the seeder: makes every seeded email unique. */
let seededUsers = 0

/** Draws made by this process: seeders of the same seed still draw different values. */
let draws = 0

/** Draws values from arbitraries, deterministically for a seed and the draws made before. */
export const sampler = (seed: number) => <A>(arbitrary: fc.Arbitrary<A>): A =>
  fc.sample(arbitrary, { seed: (seed + draws++) | 0, numRuns: 1 })[0]!

export interface Seeder {
  /** A user of the role (confirmed and active unless said otherwise), signed in unless `signedIn` is false. */
  readonly user: (options: {
    readonly role: Role
    readonly status?: "active" | "inactive" | "archived"
    readonly confirmed?: boolean
    readonly signedIn?: boolean
    /** The database role of a `staff` user (default `provider`): front desk is `support`. */
    readonly staffRole?: "provider" | "supervisor" | "support" | "billing"
  }) => Effect.Effect<Principal>
  /**
   * A world for one request: a fresh signed-in user per role (a request may sign its caller out,
   * cancel, demote or delete them, so callers are never shared) and the given other users.
   */
  readonly world: (others: ReadonlyArray<Principal>, recordIds?: ReadonlyArray<number>) => Effect.Effect<World>
  /**
   * Records shared by a batch of requests (issue 11): an ECM member named from the harness's
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
    const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.orDie, Effect.withTracerEnabled(false))

    const user: Seeder["user"] = ({ confirmed = true, role, signedIn = true, staffRole, status = "active" }) =>
      untraced(Effect.gen(function*() {
        const digits = draw(pii.phone).replace(/\D/g, "").slice(-10)
        // Unique whatever the draw: a counter in the local part.
        const email = draw(pii.email).replace("@", `.${++seededUsers}@`)
        const phone = `+1${digits}`
        const [row] = yield* sql<{ id: number }>`INSERT INTO users ${sql.insert({
          email,
          password_hash: passwordHash,
          first_name: draw(pii.name),
          last_name: draw(pii.name),
          phone,
          role: role === "staff" && staffRole !== undefined ? staffRole : databaseRole[role],
          status,
          confirmed
        })} RETURNING id`
        const token = draw(pii.token)
        if (signedIn) yield* sql`INSERT INTO user_tokens (token_hash, user_id) VALUES (${hashToken(token)}, ${row!.id})`
        return { role, id: row!.id, email, phone, token }
      }))

    // Test data written with SQL like the users: the activities and their events as the EventGenerator pairs them.
    const records = untraced(Effect.gen(function*() {
      const staff = yield* user({ role: "staff", signedIn: false })
      const [patient] = yield* sql<{ id: number }>`INSERT INTO patients (first_name, last_name) VALUES (${draw(pii.name)}, ${draw(pii.name)}) RETURNING id`
      const [task] = yield* sql<{ id: number }>`INSERT INTO ecm_activities (patient_id, activity_type, message, occurred_at, performed_by_id, assigned_to_id)
        VALUES (${patient!.id}, 'task', 'Harness task', now(), ${staff.id}, ${staff.id}) RETURNING id`
      const [subtask] = yield* sql<{ id: number }>`INSERT INTO ecm_activities (patient_id, activity_type, message, occurred_at, performed_by_id, assigned_to_id, parent_id, blocked_by_id)
        VALUES (${patient!.id}, 'task', 'Harness subtask', now(), ${staff.id}, ${staff.id}, ${task!.id}, ${task!.id}) RETURNING id`
      const [call] = yield* sql<{ id: number }>`INSERT INTO ecm_activities (patient_id, activity_type, status, voice_call_id, duration, occurred_at, performed_by_id, assigned_to_id)
        VALUES (${patient!.id}, 'call', 'complete', 1, 5, now(), ${staff.id}, ${staff.id}) RETURNING id`
      const events = yield* sql<{ id: number }>`INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, body, duration) VALUES
        (${patient!.id}, ${task!.id}, 'task', 'scheduled', now(), 'Harness task', NULL),
        (${patient!.id}, ${subtask!.id}, 'task', 'scheduled', now(), 'Harness subtask', NULL),
        (${patient!.id}, ${call!.id}, 'call', 'complete', now(), NULL, 5) RETURNING id`
      yield* sql`INSERT INTO ecm_activity_comments (activity_id, user_id, body) VALUES (${task!.id}, ${staff.id}, 'Harness comment')`
      return [patient!.id, task!.id, subtask!.id, call!.id, ...events.map((e) => e.id)]
    }))

    const world = (others: ReadonlyArray<Principal>, recordIds: ReadonlyArray<number> = []) =>
      Effect.map(Effect.forEach(roles, (role) => user({ role })), ([parent, staff, admin]): World => {
        const everyone = [parent!, staff!, admin!, ...others]
        return {
          principals: { parent: parent!, staff: staff!, admin: admin! },
          userIds: everyone.map((u) => u.id),
          emails: everyone.map((u) => u.email),
          recordIds
        }
      })

    const others = Effect.forEach([
      { role: "parent", status: "archived", signedIn: false },
      { role: "staff", status: "inactive", signedIn: false },
      { role: "parent", confirmed: false, signedIn: false }
    ] as const, user)

    const resetThrottles = untraced(Effect.asVoid(Effect.all([sql`DELETE FROM rate_limits`, sql`DELETE FROM sign_in_throttles`])))

    return { user, world, records, others, password, resetThrottles }
  }).pipe(Effect.withTracerEnabled(false))
