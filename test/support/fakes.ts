/**
 * Fast service tests (ARCHITECTURE "Tests"): an application service built from its
 * `DefaultWithoutDependencies` over in-memory repositories instead of PostgreSQL. Each fake is
 * made with its repository's own `make` (`ClaimsRepo.make({ … })`), so it implements the real
 * interface and a repository's signature change fails `tsc`. What a fake leaves out dies with
 * `unused(…)`: a service reaching for it is a test that needs a richer fake.
 *
 * Rows live in `Table`s of one `FakeDatabase`, whose `SqlClient` only runs transactions: a failed
 * transaction puts every table back as it was, as PostgreSQL's rollback would.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Exit, Layer, Option } from "effect"
import { Access } from "../../src/Services/Access/Access.js"
import { AccessRepo } from "../../src/Services/Access/AccessRepo.js"
import { BreakGlassRepo, type NewBreakGlassAccess } from "../../src/Services/Access/BreakGlassRepo.js"
import type { Purpose, Viewer } from "../../src/Services/Access/Viewer.js"
import { AuditLog } from "../../src/Services/AuditLog.js"
import { type AuditEventRow, AuditLogRepo } from "../../src/Services/AuditLogRepo.js"
import { PatientId, ProviderId } from "../../src/Domain/Ids.js"

/** A statement a fake does not implement: dies, naming it. */
export const unused = (name: string) => (..._: ReadonlyArray<unknown>): Effect.Effect<never> => Effect.dieMessage(`fake: ${name} is not faked`)

/** One table: rows by id, ids from a sequence. */
export class Table<Row extends { readonly id: number }> {
  #rows = new Map<number, Row>()
  #lastId = 0

  /** Inserts the row `make` builds from the next id. */
  insert(make: (id: number) => Row): Row {
    const row = make(++this.#lastId)
    this.#rows.set(row.id, row)
    return row
  }

  /** Puts a row as it is (a test's fixture), its id included. */
  put(row: Row): Row {
    this.#rows.set(row.id, row)
    this.#lastId = Math.max(this.#lastId, row.id)
    return row
  }

  get(id: number): Row | undefined {
    return this.#rows.get(id)
  }

  find(id: number): Option.Option<Row> {
    return Option.fromNullable(this.#rows.get(id))
  }

  /** The row as `change` leaves it; none when there is no such row. */
  update(id: number, change: (row: Row) => Row): Row | undefined {
    const row = this.#rows.get(id)
    if (row === undefined) return undefined
    const changed = change(row)
    this.#rows.set(id, changed)
    return changed
  }

  delete(id: number): boolean {
    return this.#rows.delete(id)
  }

  /** Every row in id order. */
  all(): Array<Row> {
    return [...this.#rows.values()].sort((a, b) => a.id - b.id)
  }

  where(predicate: (row: Row) => boolean): Array<Row> {
    return this.all().filter(predicate)
  }

  /** @internal the transaction's savepoint */
  snapshot(): () => void {
    const rows = new Map(this.#rows)
    const lastId = this.#lastId
    return () => {
      this.#rows = rows
      // Like a sequence, ids are not given back.
      this.#lastId = Math.max(lastId, this.#lastId)
    }
  }
}

/** The tables of one test and a `SqlClient` whose transactions roll them back on failure. */
export class FakeDatabase {
  readonly #tables: Array<Table<{ readonly id: number }>> = []

  table<Row extends { readonly id: number }>(): Table<Row> {
    const table = new Table<Row>()
    this.#tables.push(table as unknown as Table<{ readonly id: number }>)
    return table
  }

  /** Runs `effect` as a transaction: when it fails (or dies), every table is as before. */
  withTransaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.suspend(() => {
      const restores = this.#tables.map((table) => table.snapshot())
      return Effect.onExit(effect, (exit) => Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => restores.forEach((restore) => restore())))
    })
  }

  /**
   * A `SqlClient` that only runs transactions (`makeTransaction`). Services capture the client when
   * they are built and hand it to SQL fragment builders (list scopes); anything else they touch
   * is a test that reached SQL, and dies naming it.
   */
  get sqlClient(): Layer.Layer<SqlClient.SqlClient> {
    const client = new Proxy({ withTransaction: this.withTransaction.bind(this) }, {
      get: (target, key) => {
        if (key in target) return target[key as keyof typeof target]
        throw new Error(`fake SqlClient: ${String(key)} is not faked (only repositories hold SQL)`)
      }
    })
    // The one cast of the fakes: the client's other members are SQL, which no fake runs.
    return Layer.succeed(SqlClient.SqlClient, client as unknown as SqlClient.SqlClient)
  }
}

export type AuditRow = AuditEventRow & { readonly id: number }

/** The real `AuditLog` over an in-memory `audit_events`. */
export const fakeAuditLog = (audit: Table<AuditRow>): Layer.Layer<AuditLog> =>
  AuditLog.DefaultWithoutDependencies.pipe(Layer.provide(Layer.succeed(AuditLogRepo, AuditLogRepo.make({
    insert: (row) => Effect.sync(() => void audit.insert((id) => ({ ...row, id }))),
    insertMany: (rows) => Effect.sync(() => rows.forEach((row) => audit.insert((id) => ({ ...row, id })))),
    recent: unused("AuditLogRepo.recent")
  }))))

/** The audit actions recorded on one target, in order. */
export const auditActions = (audit: Table<AuditRow>, targetType: string, targetId: number): Array<string> =>
  audit.where((row) => row.target_type === targetType && row.target_id === targetId).map((row) => row.action)

/** Who is related to whom, as the access rules' reads would answer. */
export interface AccessWorld {
  /** Patients that exist. */
  readonly patients: ReadonlyArray<number>
  /** Whether the viewer sees the patient for the purpose without breaking the glass (`scope.patientsOf`). */
  readonly related: (viewer: Viewer, patientId: number, purpose: Purpose) => boolean
  /** Provider profiles by user id. */
  readonly providerOfUser?: Readonly<Record<number, number>>
  /** Patients linked to a parent's account, by user id. */
  readonly linkedPatients?: Readonly<Record<number, ReadonlyArray<number>>>
  /** The patient of each appointment. */
  readonly appointmentPatients?: Readonly<Record<number, number>>
}

export type BreakGlassAccess = typeof NewBreakGlassAccess.Type & { readonly id: number }

/** The real `Access` service over the reads `world` answers; break-glass accesses land in `breakGlass`. */
export const fakeAccess = (world: AccessWorld, breakGlass: Table<BreakGlassAccess>): Layer.Layer<Access, never, SqlClient.SqlClient> =>
  Access.DefaultWithoutDependencies.pipe(
    Layer.provide(Layer.succeed(AccessRepo, AccessRepo.make({
      related: (viewer, patientId, purpose) =>
        Effect.succeed(Option.map(
          Option.liftPredicate(patientId, (id) => world.patients.includes(id)),
          (id) => ({ id: PatientId.make(id), related: world.related(viewer, id, purpose) })
        )),
      relatedAll: (viewer, patientIds, purpose) =>
        Effect.succeed(patientIds.filter((id) => world.patients.includes(id)).map((id) => ({
          id: PatientId.make(id), related: world.related(viewer, id, purpose)
        }))),
      appointmentPatient: (appointmentId) =>
        Effect.succeed(Option.map(Option.fromNullable(world.appointmentPatients?.[appointmentId]), PatientId.make)),
      linkedPatients: (userId, limit) => Effect.succeed((world.linkedPatients?.[userId] ?? []).slice(0, limit).map((id) => PatientId.make(id))),
      providerProfile: (userId) => Effect.succeed(Option.map(Option.fromNullable(world.providerOfUser?.[userId]), ProviderId.make))
    }))),
    Layer.provide(Layer.succeed(BreakGlassRepo, BreakGlassRepo.make({
      insert: (access) => Effect.sync(() => void breakGlass.insert((id) => ({ ...access, id }))),
      list: unused("BreakGlassRepo.list")
    })))
  )
