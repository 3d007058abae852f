/**
 * The only SQL on `collaborators` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects,
 * an address the owner already uses (collaborators_owner_email_key) a 422 on `email`. The list
 * statements keep their shapes (bench/collaborators.ts): see `everyPage` and `readablePage`.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { invalidField, type ValidationFailed } from "../../Api/Errors.js"
import { CollaboratorStatus, CollaboratorType, Specialization } from "../../Domain/Collaborators/Collaborator.js"
import { CollaboratorId, UserId } from "../../Domain/Ids.js"
import { type PageRequest, paginationOf } from "../../Api/Pagination.js"
import { makeListPage } from "../Lists.js"
import { Access, type Viewer } from "../Access/Access.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlFilters.js"
import { now } from "../Time.js"

export const CollaboratorRow = Schema.Struct({
  id: CollaboratorId,
  owner_id: UserId,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  phone: Schema.NullOr(Schema.String),
  organization: Schema.String,
  title: Schema.NullOr(Schema.String),
  type: CollaboratorType,
  specialization: Schema.NullOr(Specialization),
  status: CollaboratorStatus,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type CollaboratorRow = typeof CollaboratorRow.Type

const CountedRow = Schema.Struct({ ...CollaboratorRow.fields, total: Schema.Int })
const Count = Schema.Struct({ count: Schema.Int })

/** What a collaborator list is narrowed by; an empty organization is no filter. */
export const CollaboratorCriteria = Schema.Struct({
  type: Schema.optional(CollaboratorType),
  status: Schema.optional(CollaboratorStatus),
  organization: Schema.String,
  patientId: Schema.optional(Schema.Number)
})
export type CollaboratorCriteria = typeof CollaboratorCriteria.Type


export const NewCollaborator = Schema.Struct({
  owner_id: Schema.Number,
  first_name: Schema.String,
  last_name: Schema.String,
  email: Schema.String,
  phone: Schema.NullOr(Schema.String),
  organization: Schema.String,
  title: Schema.NullOr(Schema.String),
  type: CollaboratorType,
  specialization: Schema.NullOr(Specialization),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})

/** The columns to set; absent ones keep their value. */
export const CollaboratorChange = Schema.Struct({
  updated_at: Schema.DateFromSelf,
  first_name: Schema.optional(Schema.String),
  last_name: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  organization: Schema.optional(Schema.String),
  type: Schema.optional(CollaboratorType),
  title: Schema.optional(Schema.NullOr(Schema.String)),
  specialization: Schema.optional(Schema.NullOr(Specialization)),
  phone: Schema.optional(Schema.NullOr(Schema.String)),
  status: Schema.optional(CollaboratorStatus)
})
export type CollaboratorChange = typeof CollaboratorChange.Type

const Lookup = Schema.Struct({ id: Schema.Number, lock: Schema.Literal("none", "share", "update") })
const Stamp = Schema.Struct({ id: Schema.Number, at: Schema.DateFromSelf })
const IdRow = Schema.Struct({ id: Schema.Number })

const emailTaken = () => invalidField("email", "has already been taken")
const emailErrors = (error: unknown): Effect.Effect<never, ValidationFailed> =>
  isUniqueViolation(error) ? Effect.fail(emailTaken()) : Effect.die(error)

export class CollaboratorsRepo extends Effect.Service<CollaboratorsRepo>()("app/CollaboratorsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const columns = sql.literal(`c.id, c.owner_id, c.first_name, c.last_name, c.email, c.phone, c.organization, c.title, c.type,
      c.specialization, c.status, c.created_at, c.updated_at`)

    const where = (criteria: CollaboratorCriteria) =>
      sql.and([
        sql`c.deleted_at IS NULL`,
        ...(criteria.type === undefined ? [] : [sql`c.type = ${criteria.type}`]),
        ...(criteria.status === undefined ? [] : [sql`c.status = ${criteria.status}`]),
        ...(criteria.organization === "" ? [] : [sql`c.organization ILIKE ${likePattern(criteria.organization)}`]),
        ...(criteria.patientId === undefined ? [] : [
          sql`c.id IN (SELECT collaborator_id FROM collaborator_patients WHERE patient_id = ${criteria.patientId})`
        ])
      ])

    const findLive = SqlSchema.findOne({
      Request: Lookup,
      Result: CollaboratorRow,
      execute: ({ id, lock }) => {
        const lockClause = sql.literal(lock === "update" ? "FOR UPDATE" : lock === "share" ? "FOR SHARE" : "")
        return sql`SELECT ${columns} FROM collaborators c WHERE c.id = ${id} AND c.deleted_at IS NULL ${lockClause}`
      }
    })

    /**
     * The page of the ids in `matched` (a materialised CTE that `ctes` ends with) and how many there
     * are, in one statement: the matches are gathered once, counted, and only the page's rows read
     * by primary key. An empty page past the end costs a second statement for the count.
     */
    const pageOfMatched = (ctes: Statement.Fragment, page: PageRequest) =>
      Effect.gen(function*() {
        const { offset, perPage: limit } = page
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: CountedRow,
          execute: () =>
            sql`${ctes}
          SELECT ${columns}, (SELECT count(*) FROM matched)::int AS total FROM collaborators c
          WHERE c.id IN (SELECT id FROM matched ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}) ORDER BY c.id DESC`
        })(undefined)
        if (rows.length > 0 || offset === 0) return { rows: rows, pagination: paginationOf(page, rows[0]?.total ?? 0) }
        const count = yield* SqlSchema.single({
          Request: Schema.Void,
          Result: Count,
          execute: () => sql`${ctes} SELECT count(*)::int AS count FROM matched`
        })(undefined)
        return { rows: rows, pagination: paginationOf(page, count.count) }
      })

    const newestFirst = { id: sql`c.id` }

    /**
     * Every collaborator (admins). Without an organization search the sort index stops after the
     * page and the count runs beside it (index-only on the type and status indexes). With one, the
     * matches come through the trigram index once (pageOfMatched): PostgreSQL cannot estimate a
     * trigram match, and when it matches few rows (a rare organization, type and status) it would
     * walk the id index past most of the table looking for a page of them.
     */
    const everyPage = (criteria: CollaboratorCriteria, page: PageRequest) =>
      criteria.organization !== ""
        ? orDefect(pageOfMatched(sql`WITH matched AS MATERIALIZED (SELECT c.id FROM collaborators c WHERE ${where(criteria)})`, page))
        : listPage({
          select: columns,
          from: sql`collaborators c`,
          row: CollaboratorRow,
          filters: [where(criteria)],
          sort: { columns: newestFirst, by: "id", dir: "DESC", id: newestFirst.id },
          concurrent: true
        }, page)

    /**
     * The collaborators a non-admin reads: the ones they own (owner index) and the ones linked to the
     * patients of their care relationships (`Access.scope.caredFor`: none for other roles). Owners
     * and providers read few collaborators of many, so these are gathered first, then each is
     * looked up by primary key and filtered. The LATERAL … LIMIT 1
     * keeps those lookups: left to itself PostgreSQL hashes the whole table, or walks the id index
     * past every other caller's rows when a filter matches none of theirs. The cost follows the
     * caller's own collaborators, not the table (bench/collaborators.ts).
     */
    const readablePage = (viewer: Viewer, at: Date, criteria: CollaboratorCriteria, page: PageRequest) =>
      pageOfMatched(
        sql`WITH readable AS MATERIALIZED (
          SELECT id FROM collaborators WHERE owner_id = ${viewer.id} AND deleted_at IS NULL
          UNION
          SELECT cp.collaborator_id FROM collaborator_patients cp
            WHERE cp.patient_id IN (SELECT p.id FROM patients p WHERE ${Access.scope.caredFor(sql, viewer, at, "p")})
        ), matched AS MATERIALIZED (
          SELECT c.id FROM readable r CROSS JOIN LATERAL (SELECT c.id FROM collaborators c WHERE c.id = r.id AND ${where(criteria)} LIMIT 1) c
        )`,
        page
      )

    /** None when the owner already has a live collaborator with this address. */
    const insertOne = SqlSchema.findOne({
      Request: NewCollaborator,
      Result: CollaboratorRow,
      execute: (row) =>
        sql`INSERT INTO collaborators AS c ${sql.insert(row)}
          ON CONFLICT (owner_id, lower(email)) WHERE deleted_at IS NULL DO NOTHING RETURNING ${columns}`
    })

    const updateOne = SqlSchema.single({
      Request: Schema.Struct({ id: Schema.Number, change: CollaboratorChange }),
      Result: CollaboratorRow,
      execute: ({ change, id }) => sql`UPDATE collaborators c SET ${sql.update(change)} WHERE c.id = ${id} RETURNING ${columns}`
    })

    const softDelete = SqlSchema.void({
      Request: Stamp,
      execute: ({ at, id }) => sql`UPDATE collaborators SET deleted_at = ${at}, updated_at = ${at} WHERE id = ${id}`
    })

    const declinePending = SqlSchema.findOne({
      Request: Stamp,
      Result: IdRow,
      execute: ({ at, id }) => sql`UPDATE collaborators SET status = 'declined', updated_at = ${at}
            WHERE id = ${id} AND status = 'pending' RETURNING id`
    })

    return {
      /** The collaborator unless deleted; `lock` takes a row lock (inside a transaction). */
      findLive: (id: number, lock: "none" | "share" | "update") => orDefect(findLive({ id, lock })),
      /** A page of every collaborator matching, newest first, and how many match. */
      everyPage,
      /** A page of the collaborators the viewer owns or reads through the patients of their care relationships. */
      readablePage: (viewer: Viewer, criteria: CollaboratorCriteria, page: PageRequest) =>
        orDefect(Effect.flatMap(now, (at) => readablePage(viewer, at, criteria, page))),
      /** The new row; the owner's address already taken is `email: has already been taken`. */
      insert: (row: typeof NewCollaborator.Type) =>
        orDefect(Effect.flatMap(insertOne(row), Option.match({ onNone: () => Effect.fail(emailTaken()), onSome: Effect.succeed }))),
      /** The row as changed; an address the owner already uses is `email: has already been taken`. */
      update: (id: number, change: CollaboratorChange) => orDefect(updateOne({ id, change }).pipe(Effect.catchTag("SqlError", emailErrors))),
      softDelete: (id: number, at: Date) => orDefect(softDelete({ id, at })),
      /** Pending → declined; false when the collaborator was not pending. */
      declinePending: (id: number, at: Date) => Effect.map(orDefect(declinePending({ id, at })), Option.isSome)
    } as const
  })
}) {}
