/**
 * Collaborators (general §2.4, §4.4, §5.4; issue 22): whoever adds one owns it. Owner and admins
 * read, edit, delete and link patients; a linked patient's primary provider reads it; anyone else
 * gets 403. Deleting is soft (assessments are kept); suspending or deleting revokes open links and
 * cancels pending assessments.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { CreateCollaboratorRequest, UpdateCollaboratorRequest } from "../../Api/Collaborators/Collaborators.js"
import { collaboratorMessages, collaboratorsPageSize } from "../../Api/Collaborators/Collaborators.js"
import { forbidden, invalid, invalidField, messages, notFound, type FieldMessages } from "../../Api/Errors.js"
import { type PageRequest, pageRequest, paginationOf } from "../../Api/Pagination.js"
import type { Caller } from "../../Api/Security.js"
import { normalizeEmail } from "../../Domain/Accounts/Email.js"
import {
  canChangeStatus, Collaborator, type CollaboratorId, type CollaboratorStatus, type CollaboratorType, type Specialization
} from "../../Domain/Collaborators/Collaborator.js"
import type { PatientId } from "../../Domain/Ids.js"
import { normalizePhone } from "../../Domain/Phone.js"
import { AuditLog } from "../AuditLog.js"
import { Access, isAdmin, isStaff } from "../Access/Access.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { likePattern } from "../SqlSearch.js"

export interface CollaboratorRow {
  readonly id: number
  readonly owner_id: number
  readonly first_name: string
  readonly last_name: string
  readonly email: string
  readonly phone: string | null
  readonly organization: string
  readonly title: string | null
  readonly type: CollaboratorType
  readonly specialization: Specialization | null
  readonly status: CollaboratorStatus
  readonly created_at: Date
  readonly updated_at: Date
}

export const collaboratorNotFound = () => notFound("Collaborator")
export const notAuthorized = () => forbidden(messages.unauthorized)

const toCollaborator = (row: CollaboratorRow, patientIds: ReadonlyArray<number>) =>
  Collaborator.make({
    id: row.id as CollaboratorId,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    organization: row.organization,
    title: row.title,
    type: row.type,
    specialization: row.specialization,
    status: row.status,
    patient_ids: patientIds as ReadonlyArray<PatientId>,
    created_at: row.created_at,
    updated_at: row.updated_at
  }, true)

/** What the caller is to a collaborator. */
export interface Standing {
  readonly row: CollaboratorRow
  /** Owner or admin: edits, deletes, links patients. */
  readonly manages: boolean
  /** Manages, or primary provider of a linked patient. */
  readonly reads: boolean
}

export class Collaborators extends Effect.Service<Collaborators>()("app/Collaborators", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const access = yield* Access
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const columns = sql.literal(`c.id, c.owner_id, c.first_name, c.last_name, c.email, c.phone, c.organization, c.title, c.type,
      c.specialization, c.status, c.created_at, c.updated_at`)

    /** Linked patients as the caller may see them: a parent only their own. */
    const linkedPatients = (caller: Caller, ids: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        if (ids.length === 0) return new Map<number, Array<number>>()
        const rows = isStaff(caller.role)
          ? yield* sql<{ collaborator_id: number; patient_id: number }>`SELECT collaborator_id, patient_id FROM collaborator_patients
              WHERE collaborator_id IN ${sql.in(ids)} ORDER BY patient_id`
          : yield* sql<{ collaborator_id: number; patient_id: number }>`SELECT cp.collaborator_id, cp.patient_id
              FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
              WHERE cp.collaborator_id IN ${sql.in(ids)} AND p.user_id = ${caller.id} ORDER BY cp.patient_id`
        const byCollaborator = new Map<number, Array<number>>()
        for (const row of rows) {
          const list = byCollaborator.get(row.collaborator_id) ?? []
          list.push(row.patient_id)
          byCollaborator.set(row.collaborator_id, list)
        }
        return byCollaborator
      })

    const represent = (caller: Caller, rows: ReadonlyArray<CollaboratorRow>) =>
      Effect.map(linkedPatients(caller, rows.map((r) => r.id)), (linked) => rows.map((row) => toCollaborator(row, linked.get(row.id) ?? [])))

    /**
     * The collaborator and what the caller is to it; 404 when deleted or unknown. `lock` takes a row
     * lock (inside a transaction) so a status change and a link being issued do not cross.
     */
    const standing = (caller: Caller, id: number, lock: "none" | "share" | "update" = "none") =>
      Effect.gen(function*() {
        const lockClause = sql.literal(lock === "update" ? "FOR UPDATE" : lock === "share" ? "FOR SHARE" : "")
        const [row] = yield* sql<CollaboratorRow>`SELECT ${columns} FROM collaborators c WHERE c.id = ${id} AND c.deleted_at IS NULL ${lockClause}`
        if (row === undefined) return yield* Effect.fail(collaboratorNotFound())
        const manages = isAdmin(caller) || row.owner_id === caller.id
        if (manages) return { row, manages, reads: true } satisfies Standing
        const [provider] = yield* sql`SELECT 1 FROM collaborator_patients cp JOIN patients p ON p.id = cp.patient_id
          JOIN providers pr ON pr.id = p.provider_id WHERE cp.collaborator_id = ${id} AND pr.user_id = ${caller.id} LIMIT 1`
        return { row, manages: false, reads: provider !== undefined } satisfies Standing
      })

    /** Distinct ids, every one a patient the caller may see, else `patient_ids: must exist`. */
    const visiblePatients = (caller: Caller, ids: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const wanted = [...new Set(ids)]
        if (wanted.length === 0) return { ok: true as const, ids: wanted }
        const rows = isStaff(caller.role)
          ? yield* sql<{ id: number }>`SELECT id FROM patients WHERE id IN ${sql.in(wanted)}`
          : yield* sql<{ id: number }>`SELECT id FROM patients WHERE id IN ${sql.in(wanted)} AND user_id = ${caller.id}`
        return { ok: rows.length === wanted.length, ids: wanted }
      })

    const phoneOf = (text: string | null | undefined): Option.Option<string | null> | "invalid" => {
      if (text === undefined) return Option.none()
      const trimmed = text?.trim() ?? ""
      if (trimmed === "") return Option.some(null)
      return Option.match(normalizePhone(trimmed), { onNone: () => "invalid" as const, onSome: (p) => Option.some(p) })
    }

    const emailTaken = () => invalidField("email", "has already been taken")

    /**
     * The page of the ids in `matched` (a materialised CTE that `ctes` ends with) and how many there
     * are, in one statement: the matches are gathered once, counted, and only the page's 25 rows
     * read by primary key. An empty page past the end costs a second statement for the count.
     */
    const pageOfMatched = (ctes: Statement.Fragment, page: PageRequest) =>
      Effect.gen(function*() {
        const rows = yield* sql<CollaboratorRow & { total: number }>`${ctes}
          SELECT ${columns}, (SELECT count(*) FROM matched)::int AS total FROM collaborators c
          WHERE c.id IN (SELECT id FROM matched ORDER BY id DESC LIMIT ${page.perPage} OFFSET ${page.offset}) ORDER BY c.id DESC`
        if (rows.length > 0 || page.offset === 0) return { rows, total: rows[0]?.total ?? 0 }
        const [count] = yield* sql<{ count: number }>`${ctes} SELECT count(*)::int AS count FROM matched`
        return { rows, total: count?.count ?? 0 }
      })

    /**
     * Admins. Without an organization search the sort index stops after the page and the count runs
     * beside it (index-only on the type and status indexes). With one, the matches come through
     * the trigram index once (pageOfMatched): PostgreSQL cannot estimate a trigram match, and when
     * it matches few rows (a rare organization, type and status) it would walk the id index past
     * most of the table looking for 25 of them.
     */
    const everyCollaborator = (where: Statement.Fragment, searching: boolean, page: PageRequest) =>
      searching
        ? pageOfMatched(sql`WITH matched AS MATERIALIZED (SELECT c.id FROM collaborators c WHERE ${where})`, page)
        : Effect.map(Effect.all([
          sql<CollaboratorRow>`SELECT ${columns} FROM collaborators c WHERE ${where} ORDER BY c.id DESC LIMIT ${page.perPage} OFFSET ${page.offset}`,
          sql<{ count: number }>`SELECT count(*)::int AS count FROM collaborators c WHERE ${where}`
        ], { concurrency: 2 }), ([rows, [count]]) => ({ rows, total: count?.count ?? 0 }))

    /**
     * Owners and primary providers read few collaborators of many: the ones they own (owner index)
     * and the ones linked to their patients (providers → patients → links) are gathered first, then
     * each is looked up by primary key and filtered. The LATERAL … LIMIT 1 keeps those lookups: left
     * to itself PostgreSQL hashes the whole table, or walks the id index past every other caller's
     * rows when a filter matches none of theirs. The cost follows the caller's own collaborators,
     * not the table (bench/collaborators.ts).
     */
    const readableCollaborators = (caller: Caller, where: Statement.Fragment, page: PageRequest) =>
      pageOfMatched(sql`WITH readable AS MATERIALIZED (
          SELECT id FROM collaborators WHERE owner_id = ${caller.id} AND deleted_at IS NULL
          UNION
          SELECT cp.collaborator_id FROM providers pr JOIN patients p ON p.provider_id = pr.id
            JOIN collaborator_patients cp ON cp.patient_id = p.id WHERE pr.user_id = ${caller.id}
        ), matched AS MATERIALIZED (
          SELECT c.id FROM readable r CROSS JOIN LATERAL (SELECT c.id FROM collaborators c WHERE c.id = r.id AND ${where} LIMIT 1) c
        )`, page)

    const list = (caller: Caller, query: {
      readonly page?: number | undefined
      readonly page_size?: number | undefined
      readonly type?: CollaboratorType | undefined
      readonly status?: CollaboratorStatus | undefined
      readonly organization?: string | undefined
      readonly patient_id?: PatientId | undefined
    }) =>
      Effect.gen(function*() {
        if (query.patient_id !== undefined) yield* access.visiblePatient(caller, query.patient_id)
        const page = pageRequest(query, collaboratorsPageSize)
        const organization = query.organization?.trim() ?? ""
        const filters = [
          sql`c.deleted_at IS NULL`,
          ...(query.type === undefined ? [] : [sql`c.type = ${query.type}`]),
          ...(query.status === undefined ? [] : [sql`c.status = ${query.status}`]),
          ...(organization === "" ? [] : [sql`c.organization ILIKE ${likePattern(organization)}`]),
          ...(query.patient_id === undefined ? [] : [sql`c.id IN (SELECT collaborator_id FROM collaborator_patients WHERE patient_id = ${query.patient_id})`])
        ]
        const { rows, total } = isAdmin(caller)
          ? yield* everyCollaborator(sql.and(filters), organization !== "", page)
          : yield* readableCollaborators(caller, sql.and(filters), page)
        yield* Effect.annotateCurrentSpan({ "collaborators.count": rows.length, "collaborators.total_count": total })
        return { collaborators: yield* represent(caller, rows), pagination: paginationOf(page, total) }
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Collaborators.list"))

    const show = (caller: Caller, id: number) =>
      Effect.gen(function*() {
        const found = yield* standing(caller, id)
        if (!found.reads) return yield* Effect.fail(notAuthorized())
        return (yield* represent(caller, [found.row]))[0]!
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Collaborators.show", { attributes: { "collaborator.id": id } }))

    const create = (caller: Caller, input: CreateCollaboratorRequest["collaborator"]) =>
      Effect.gen(function*() {
        const errors: Record<string, Array<string>> = {}
        const phone = phoneOf(input.phone)
        if (phone === "invalid") errors.phone = ["is invalid"]
        const patients = yield* visiblePatients(caller, input.patient_ids ?? [])
        if (!patients.ok) errors.patient_ids = ["must exist"]
        if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors))
        const at = yield* now
        return yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<CollaboratorRow>`INSERT INTO collaborators AS c ${sql.insert({
            owner_id: caller.id,
            first_name: input.first_name.trim(),
            last_name: input.last_name.trim(),
            email: normalizeEmail(input.email),
            phone: phone === "invalid" ? null : Option.getOrNull(phone),
            organization: input.organization.trim(),
            title: input.title?.trim() || null,
            type: input.type,
            specialization: input.specialization ?? null,
            created_at: at,
            updated_at: at
          })} ON CONFLICT (owner_id, lower(email)) WHERE deleted_at IS NULL DO NOTHING RETURNING ${columns}`
          if (row === undefined) return yield* Effect.fail(emailTaken())
          if (patients.ids.length > 0) {
            yield* sql`INSERT INTO collaborator_patients ${sql.insert(patients.ids.map((patientId) => ({
              collaborator_id: row.id, patient_id: patientId, added_by: caller.id, created_at: at
            })))}`
          }
          yield* audit.record({ actorId: caller.id, action: "collaborator.create", targetType: "collaborator", targetId: row.id })
          return (yield* represent(caller, [row]))[0]!
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Collaborators.create"))

    /** Revokes the open links of the collaborator's pending assessments and cancels them. */
    const closeOpenAssessments = (collaboratorId: number, at: Date) =>
      Effect.gen(function*() {
        const cancelled = yield* sql<{ id: number }>`UPDATE collaborator_assessments SET status = 'cancelled', expires_at = NULL, updated_at = ${at}
          WHERE collaborator_id = ${collaboratorId} AND status = 'pending' RETURNING id`
        if (cancelled.length === 0) return
        yield* sql`UPDATE collaborator_assessment_tokens SET revoked_at = ${at}
          WHERE assessment_id IN ${sql.in(cancelled.map((r) => r.id))} AND used_at IS NULL AND revoked_at IS NULL`
      })

    const update = (caller: Caller, id: number, input: UpdateCollaboratorRequest["collaborator"]) =>
      Effect.gen(function*() {
        const phone = phoneOf(input.phone)
        const patients = input.patient_ids === undefined ? undefined : yield* visiblePatients(caller, input.patient_ids)
        const at = yield* now
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* standing(caller, id, "update")
          if (!found.manages) return yield* Effect.fail(notAuthorized())
          const errors: Record<string, Array<string>> = {}
          if (phone === "invalid") errors.phone = ["is invalid"]
          if (patients !== undefined && !patients.ok) errors.patient_ids = ["must exist"]
          const from = found.row.status
          const to = input.status ?? from
          if (!canChangeStatus(from, to, isAdmin(caller) ? "admin" : "owner")) errors.status = [collaboratorMessages.move(from, to)]
          if (Object.keys(errors).length > 0) return yield* Effect.fail(invalid(errors as FieldMessages))
          const changes: Record<string, unknown> = { updated_at: at }
          if (input.first_name !== undefined) changes.first_name = input.first_name.trim()
          if (input.last_name !== undefined) changes.last_name = input.last_name.trim()
          if (input.email !== undefined) changes.email = normalizeEmail(input.email)
          if (input.organization !== undefined) changes.organization = input.organization.trim()
          if (input.type !== undefined) changes.type = input.type
          if (input.title !== undefined) changes.title = input.title?.trim() || null
          if (input.specialization !== undefined) changes.specialization = input.specialization
          if (phone !== "invalid" && Option.isSome(phone)) changes.phone = phone.value
          if (to !== from) changes.status = to
          const [row] = yield* sql<CollaboratorRow>`UPDATE collaborators c SET ${sql.update(changes)} WHERE c.id = ${id} RETURNING ${columns}`.pipe(
            Effect.catchTag("SqlError", (error) => isUniqueViolation(error) ? Effect.fail(emailTaken()) : Effect.die(error))
          )
          if (patients !== undefined) {
            // Links to patients the caller may see become exactly the given ones; others stay.
            const keep = patients.ids
            if (isStaff(caller.role)) {
              yield* sql`DELETE FROM collaborator_patients WHERE collaborator_id = ${id}
                ${keep.length === 0 ? sql`` : sql`AND patient_id NOT IN ${sql.in(keep)}`}`
            } else {
              yield* sql`DELETE FROM collaborator_patients cp USING patients p WHERE cp.collaborator_id = ${id} AND p.id = cp.patient_id
                AND p.user_id = ${caller.id} ${keep.length === 0 ? sql`` : sql`AND cp.patient_id NOT IN ${sql.in(keep)}`}`
            }
            if (keep.length > 0) {
              yield* sql`INSERT INTO collaborator_patients ${sql.insert(keep.map((patientId) => ({
                collaborator_id: id, patient_id: patientId, added_by: caller.id, created_at: at
              })))} ON CONFLICT DO NOTHING`
            }
          }
          if (to === "suspended" && from !== "suspended") yield* closeOpenAssessments(id, at)
          yield* audit.record({ actorId: caller.id, action: "collaborator.update", targetType: "collaborator", targetId: id })
          if (to !== from) yield* audit.record({ actorId: caller.id, action: "collaborator.status", targetType: "collaborator", targetId: id })
          return (yield* represent(caller, [row!]))[0]!
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Collaborators.update", { attributes: { "collaborator.id": id } }))

    const remove = (caller: Caller, id: number) =>
      Effect.gen(function*() {
        const at = yield* now
        yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* standing(caller, id, "update")
          if (!found.manages) return yield* Effect.fail(notAuthorized())
          yield* sql`UPDATE collaborators SET deleted_at = ${at}, updated_at = ${at} WHERE id = ${id}`
          yield* closeOpenAssessments(id, at)
          yield* audit.record({ actorId: caller.id, action: "collaborator.delete", targetType: "collaborator", targetId: id })
        }))
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Collaborators.delete", { attributes: { "collaborator.id": id } }))

    return { list, show, create, update, remove, standing, closeOpenAssessments } as const
  }),
  dependencies: [AuditLog.Default, Access.Default]
}) {}
