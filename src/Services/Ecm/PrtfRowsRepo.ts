/**
 * The PRTF report's rows (ECM §4.7, docs/prtf.md): the only SQL of the aggregation, one generated
 * set-based statement over `@effect/sql` that selects the included members and counts their events
 * of the period with grouped aggregates — events are never loaded into memory; the rows stream
 * from a cursor, decoded batch by batch (`PrtfRowBatch`). Categories come from `ruleTable()`, the single
 * rule `prtfCategoryOf` evaluated on every combination of what it reads (src/Domain/Ecm/PrtfReport.ts).
 *
 * Inclusion (§4.7): 1. an eligibility record whose ECM benefit authorization overlaps the period
 * (effective on or before its end, ending on or after its start or open-ended; the latest such
 * record gives the eligibility columns); 2. at least one engagement status entry effective inside
 * the period; 3. with an NPI, that NPI on the record, on the case load, or on the case load's
 * provider; 4. events with `occurred_at` inside the period (whole UTC days) are counted.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema, SchemaAST, Stream } from "effect"
import { type EventType, eventTypes } from "../../Domain/Ecm/Activity.js"
import { enrolledStatus, prtfCategories } from "../../Domain/Ecm/Prtf.js"
import { disenrolledStatus } from "../../Domain/Ecm/Engagement.js"
import { type Cell, durationClassSql, encounterCategories, outreachCategories, ruleTable } from "../../Domain/Ecm/PrtfReport.js"
import { orDefect } from "../Repository.js"
import { dayEndIn, dayStartIn } from "../SqlFilters.js"

export interface PrtfCriteria {
  /** First and last day of the period, YYYY-MM-DD (UTC, inclusive). */
  readonly startDate: string
  readonly endDate: string
  readonly npi: string | null
  /** Header values that replace each row's provider name / phone when given. */
  readonly providerName: string | null
  readonly providerPhone: string | null
  /** The generation day (UTC), YYYY-MM-DD: the Report Production Date column. */
  readonly producedOn: string
}

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const Count = Schema.Int

/**
 * One row of the file, in column order (src/Domain/Ecm/PrtfReport.ts `prtfColumns`): rows arrive
 * as arrays of cells in this order, decoded by `PrtfRowBatch`.
 */
export const PrtfRow = Schema.Struct({
  period_start: Text,
  period_end: Text,
  provider_name: NullText,
  provider_npi: NullText,
  provider_phone: NullText,
  member_id: NullText,
  cin: NullText,
  last_name: Text,
  first_name: Text,
  date_of_birth: NullText,
  gender: NullText,
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText,
  phone: NullText,
  service_auth_id: NullText,
  auth_eff_date: NullText,
  auth_end_date: NullText,
  acuity_level: NullText,
  member_record_status: Text,
  enrollment_start: NullText,
  enrollment_end: NullText,
  current_status: NullText,
  current_status_date: NullText,
  previous_status: NullText,
  previous_status_date: NullText,
  first_outreach: NullText,
  last_outreach: NullText,
  last_encounter: NullText,
  telehealth_encounters: Count,
  in_person_encounters: Count,
  telehealth_outreach: Count,
  in_person_outreach: Count,
  total_encounters: Count,
  total_outreach: Count,
  sms: Count,
  call: Count,
  email: Count,
  appointment: Count,
  meeting: Count,
  task: Count,
  call_minutes: Count,
  last_form_c: NullText,
  olcm_name: NullText,
  olcm_email: NullText,
  ilcm_name: NullText,
  ilcm_email: NullText,
  discontinuation_date: NullText,
  discontinuation_reason: NullText,
  produced_on: Text
})
export type PrtfRow = typeof PrtfRow.Type

/** A row as it streams: its cells in column order. */
export type PrtfCells = ReadonlyArray<Cell>

/**
 * A cell's check, from its field's schema: the same answer as decoding the cell with that schema
 * (these schemas transform nothing), without the parser's per-value cost — a report decodes
 * a million cells.
 */
const cellCheckOf = (ast: SchemaAST.AST): ((cell: unknown) => boolean) => {
  switch (ast._tag) {
    case "StringKeyword":
      return (cell) => typeof cell === "string"
    case "NumberKeyword":
      return (cell) => typeof cell === "number"
    case "Literal":
      return (cell) => cell === ast.literal
    case "Union": {
      const members = ast.types.map(cellCheckOf)
      if (members.length === 2) {
        const [first, second] = members as [(cell: unknown) => boolean, (cell: unknown) => boolean]
        return (cell) => first(cell) || second(cell)
      }
      return (cell) => members.some((member) => member(cell))
    }
    case "Refinement": {
      // Schema.Int's own predicate, without the filter's result allocation.
      if (Option.getOrUndefined(SchemaAST.getSchemaIdAnnotation(ast)) === Schema.IntSchemaId) return (cell) => Number.isSafeInteger(cell)
      const from = cellCheckOf(ast.from)
      return (cell) => from(cell) && Option.isNone(ast.filter(cell, {}, ast))
    }
  }
  throw new Error(`PrtfRow: no cell check for ${ast._tag}`)
}

const cellChecks = Object.values(PrtfRow.fields).map((field) => cellCheckOf(field.ast))

const isRow = (row: unknown): row is PrtfCells => {
  if (!Array.isArray(row) || row.length !== cellChecks.length) return false
  for (let i = 0; i < cellChecks.length; i++) if (!cellChecks[i]!(row[i])) return false
  return true
}

/** A batch of rows as the cursor returns them, each checked cell by cell against `PrtfRow`. */
export const PrtfRowBatch = Schema.declare(
  (batch: unknown): batch is ReadonlyArray<PrtfCells> => Array.isArray(batch) && batch.every(isRow),
  { identifier: "PrtfRowBatch", description: "Rows of PrtfRow's cells in column order" }
)

/** SQL text for a list of names: `'a', 'b'`. */
export const quoted = (names: ReadonlyArray<string>) => names.map((n) => `'${n}'`).join(", ")
/** SQL text: a date (or timestamp without zone) as `YYYY-MM-DD`. */
export const day = (expression: string) => `to_char(${expression}, 'YYYY-MM-DD')`
/** SQL text: the UTC day of a timestamptz as `YYYY-MM-DD`. */
export const utcDay = (expression: string) => day(`(${expression}) AT TIME ZONE 'UTC'`)

/*
 * The PRTF's event rule in SQL, which the return files (src/Services/EcmExchange/ExchangeRowsRepo.ts)
 * apply too, so both read an event the same way.
 */

/**
 * The `histories` CTE: each member's (the `members` CTE) status entries as of `end`, newest first:
 * rn 1 is the status at the end; next_day is the effective day of the entry that followed (lag in
 * this order).
 */
export const statusHistories = (sql: SqlClient.SqlClient, end: string): Statement.Fragment =>
  sql`SELECT h.patient_id, h.status, h.effective_date, h.reason,
      row_number() OVER newest AS rn, lag(h.effective_date) OVER newest AS next_day
    FROM ecm_status_histories h JOIN members m ON m.patient_id = h.patient_id
    WHERE h.effective_date <= ${end}::date
    WINDOW newest AS (PARTITION BY h.patient_id ORDER BY h.effective_date DESC, h.id DESC)`

/** `histories` with `enrolled_rn`, the rank of the newest enrolled entry (the latest enrolment). */
export const rankedHistories = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql`SELECT *, min(rn) FILTER (WHERE status = ${enrolledStatus}) OVER (PARTITION BY patient_id) AS enrolled_rn FROM histories`

/**
 * Each member's enrolled days, over a `histories` CTE (patient_id, status, effective_date and
 * next_day, the following entry's day): from an enrolled entry's day until the next entry's, as one
 * multirange per member so each event is one hash lookup and one containment test.
 */
export const enrolledDays = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql`SELECT patient_id, range_agg(daterange(effective_date, next_day)) AS days FROM histories
    WHERE status = ${enrolledStatus} AND (next_day IS NULL OR next_day > effective_date)
    GROUP BY patient_id`

/** Whether the event `e` fell on a (UTC) day its member `s` was enrolled (`s.days`, from `enrolledDays`). */
export const enrolledOnEventDay = "coalesce((e.occurred_at AT TIME ZONE 'UTC')::date <@ s.days, false)"

/** The rule (`ruleTable()`) as rows: an event's type, status, enrolment and duration class → its category. */
export const ruleRows = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql`SELECT * FROM jsonb_to_recordset(${JSON.stringify(ruleTable())}::jsonb)
    AS r(event_type text, status text, enrolled boolean, duration_class text, category text)`

/** Per-member counts: one column per category and per event type (names are the constants'). */
const countColumns = [
  ...prtfCategories.map((c) => `coalesce(sum(t.n) FILTER (WHERE r.category = '${c}'), 0)::int AS ${c}`),
  ...eventTypes.map((type) => `coalesce(sum(t.n) FILTER (WHERE t.event_type = '${type}'), 0)::int AS ${type}`),
  `coalesce(sum(t.minutes) FILTER (WHERE t.event_type = 'call'), 0)::int AS call_minutes`,
  `min(t.first_at) FILTER (WHERE r.category IN (${quoted(outreachCategories)})) AS first_outreach`,
  `max(t.last_at) FILTER (WHERE r.category IN (${quoted(outreachCategories)})) AS last_outreach`,
  `max(t.last_at) FILTER (WHERE r.category IN (${quoted(encounterCategories)})) AS last_encounter`
].join(",\n      ")

const zero = (column: string) => `coalesce(c.${column}, 0)`

/** SMS, Call, Email, Appointment, Meeting, Task Count: the file's order (rows are arrays in column order). */
const typesInColumnOrder: ReadonlyArray<EventType> = ["sms", "call", "email", "appointment", "meeting", "task"]

/**
 * Settings for the transaction that runs the statement (`set_config(…, true)`: this transaction
 * only). JIT compiling its ~180 expressions costs more than it saves at these sizes; the grouped
 * aggregates and sorts of 20,000 members fit in 32 MB instead of spilling to disk at the 4 MB
 * default; and a cursor is planned for the whole result, not a fast first row.
 */
export const prtfSettings = [["jit", "off"], ["work_mem", "32MB"], ["cursor_tuple_fraction", "1"]] as const

/** The statement (streamed by the report in a transaction with `prtfSettings`, timed alone by bench/prtf.ts). */
export const prtfStatement = (criteria: PrtfCriteria): Effect.Effect<Statement.Statement<unknown>, never, SqlClient.SqlClient> =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    const start = criteria.startDate
    const end = criteria.endDate
    return sql`WITH in_range AS (
      SELECT DISTINCT patient_id FROM ecm_status_histories
      WHERE effective_date >= ${start}::date AND effective_date <= ${end}::date
    ), members AS (
      SELECT r.patient_id, el.member_id, el.cin, el.ecm_service_auth_id, el.ecm_provider_name, el.ecm_npi,
        el.ecm_benefit_auth_eff_date, el.ecm_benefit_auth_end_date, el.acuity_level, el.member_record_status,
        cl.provider_name AS case_load_provider_name, cl.provider_npi AS case_load_npi, cl.olcm_user_id, cl.ilcm_user_id,
        pr.npi AS provider_record_npi, pu.phone AS provider_record_phone,
        pu.first_name || ' ' || pu.last_name AS provider_record_name
      FROM in_range r
      CROSS JOIN LATERAL (
        SELECT * FROM ecm_eligibility_informations e
        WHERE e.patient_id = r.patient_id AND e.ecm_benefit_auth_eff_date <= ${end}::date
          AND (e.ecm_benefit_auth_end_date IS NULL OR e.ecm_benefit_auth_end_date >= ${start}::date)
        ORDER BY e.id DESC LIMIT 1
      ) el
      LEFT JOIN case_loads cl ON cl.patient_id = r.patient_id
      LEFT JOIN providers pr ON pr.id = cl.provider_id
      LEFT JOIN users pu ON pu.id = pr.user_id
      WHERE ${criteria.npi}::text IS NULL OR el.ecm_npi = ${criteria.npi} OR cl.provider_npi = ${criteria.npi} OR pr.npi = ${criteria.npi}
    ), histories AS (${statusHistories(sql, end)}
    ), ranked AS (${rankedHistories(sql)}
    ), statuses AS (
      SELECT patient_id,
        max(status) FILTER (WHERE rn = 1) AS current_status,
        max(effective_date) FILTER (WHERE rn = 1) AS status_day,
        max(reason) FILTER (WHERE rn = 1) AS current_reason,
        max(status) FILTER (WHERE rn = 2) AS previous_status,
        max(effective_date) FILTER (WHERE rn = 2) AS previous_day,
        -- The latest enrolment by the end, and the entry that ended it.
        max(effective_date) FILTER (WHERE rn = enrolled_rn) AS enrollment_start,
        max(effective_date) FILTER (WHERE rn = enrolled_rn - 1) AS enrollment_end
      FROM ranked GROUP BY patient_id
    ), enrolled AS (
      -- Days each member was enrolled, as the events counts endpoint reads them (src/Services/Ecm/Events.ts);
      -- entries after the end bound no counted day.
      SELECT m.patient_id, d.days FROM members m LEFT JOIN (${enrolledDays(sql)}) d ON d.patient_id = m.patient_id
    ), rule AS (${ruleRows(sql)}
    ), tallies AS (
      SELECT e.patient_id, e.event_type, e.status, ${sql.literal(enrolledOnEventDay)} AS enrolled,
        ${sql.literal(durationClassSql)} AS duration_class,
        count(*) AS n, min(e.occurred_at) AS first_at, max(e.occurred_at) AS last_at, sum(e.duration) AS minutes
      FROM ecm_events e JOIN enrolled s ON s.patient_id = e.patient_id
      -- Whole UTC days, computed by PostgreSQL (any IsoDate, 9999-12-31 included, has a next day there).
      WHERE e.occurred_at >= ${dayStartIn(sql, start, "UTC")} AND e.occurred_at < ${dayEndIn(sql, end, "UTC")}
      GROUP BY 1, 2, 3, 4, 5
    ), counts AS (
      SELECT t.patient_id,
      ${sql.literal(countColumns)}
      FROM tallies t JOIN rule r USING (event_type, status, enrolled, duration_class)
      GROUP BY t.patient_id
    )
    SELECT ${start}::text AS period_start, ${end}::text AS period_end,
      coalesce(${criteria.providerName}, m.ecm_provider_name, m.case_load_provider_name, m.provider_record_name) AS provider_name,
      coalesce(${criteria.npi}, m.ecm_npi, m.case_load_npi, m.provider_record_npi) AS provider_npi,
      coalesce(${criteria.providerPhone}, m.provider_record_phone) AS provider_phone,
      coalesce(m.member_id, p.member_id) AS member_id, coalesce(m.cin, p.cin) AS cin,
      p.last_name, p.first_name, ${sql.literal(day("p.date_of_birth"))} AS date_of_birth, p.gender,
      p.address, p.city, p.state, p.zip, p.phone,
      m.ecm_service_auth_id AS service_auth_id,
      ${sql.literal(day("m.ecm_benefit_auth_eff_date"))} AS auth_eff_date,
      ${sql.literal(day("m.ecm_benefit_auth_end_date"))} AS auth_end_date,
      m.acuity_level, m.member_record_status,
      ${sql.literal(day("st.enrollment_start"))} AS enrollment_start,
      ${sql.literal(day("st.enrollment_end"))} AS enrollment_end,
      st.current_status, ${sql.literal(day("st.status_day"))} AS current_status_date,
      st.previous_status, ${sql.literal(day("st.previous_day"))} AS previous_status_date,
      ${sql.literal(utcDay("c.first_outreach"))} AS first_outreach,
      ${sql.literal(utcDay("c.last_outreach"))} AS last_outreach,
      ${sql.literal(utcDay("c.last_encounter"))} AS last_encounter,
      ${sql.literal(prtfCategories.map((category) => `${zero(category)} AS ${category}`).join(", "))},
      ${sql.literal(`${zero("telehealth_encounters")} + ${zero("in_person_encounters")} AS total_encounters`)},
      ${sql.literal(`${zero("telehealth_outreach")} + ${zero("in_person_outreach")} AS total_outreach`)},
      ${sql.literal(typesInColumnOrder.map((type) => `${zero(type)} AS ${type}`).join(", "))},
      ${sql.literal(zero("call_minutes"))} AS call_minutes,
      (SELECT ${sql.literal(utcDay("max(f.created_at)"))} FROM form_c_submissions f
        WHERE f.patient_id = m.patient_id AND f.created_at < ${dayEndIn(sql, end, "UTC")}) AS last_form_c,
      ou.first_name || ' ' || ou.last_name AS olcm_name, ou.email AS olcm_email,
      iu.first_name || ' ' || iu.last_name AS ilcm_name, iu.email AS ilcm_email,
      CASE WHEN st.current_status = ${disenrolledStatus} THEN ${sql.literal(day("st.status_day"))} END AS discontinuation_date,
      CASE WHEN st.current_status = ${disenrolledStatus} THEN st.current_reason END AS discontinuation_reason,
      ${criteria.producedOn}::text AS produced_on
    FROM members m
    JOIN patients p ON p.id = m.patient_id
    LEFT JOIN statuses st ON st.patient_id = m.patient_id
    LEFT JOIN counts c ON c.patient_id = m.patient_id
    LEFT JOIN users ou ON ou.id = m.olcm_user_id
    LEFT JOIN users iu ON iu.id = m.ilcm_user_id
    ORDER BY p.last_name, p.first_name, p.id`
  })

export class PrtfRowsRepo extends Effect.Service<PrtfRowsRepo>()("app/EcmPrtfRowsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const applySettings = sql`SELECT ${sql.literal(prtfSettings.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(", "))}`
    const decodeBatch = Schema.decodeUnknown(PrtfRowBatch)

    /**
     * The rows in batches of `batchSize` from a server-side cursor of the current transaction (it
     * closes with it). DECLARE/FETCH rather than the driver's 128-row cursor: a few round trips for
     * 20,000 rows.
     */
    const batches = (criteria: PrtfCriteria, batchSize: number): Stream.Stream<ReadonlyArray<PrtfCells>> =>
      Stream.unwrap(Effect.gen(function*() {
        const [text, params] = (yield* prtfStatement(criteria)).compile()
        yield* sql.unsafe(`DECLARE prtf_rows NO SCROLL CURSOR FOR ${text}`, params)
        const fetch = orDefect(Effect.flatMap(sql.unsafe(`FETCH ${batchSize} FROM prtf_rows`).values, decodeBatch)).pipe(
          Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(Option.none()) : Effect.succeed(rows)))
        )
        return Stream.repeatEffectOption(fetch)
      }).pipe(orDefect, Effect.provideService(SqlClient.SqlClient, sql)))

    return {
      /**
       * Runs `use` over the period's rows (batches of `batchSize`, each row its cells in column
       * order) in one transaction with `prtfSettings`; the cursor and the settings end with it.
       */
      withRows: <A, E, R>(criteria: PrtfCriteria, use: (rows: Stream.Stream<ReadonlyArray<PrtfCells>>) => Effect.Effect<A, E, R>, batchSize = 5000) =>
        orDefect(sql.withTransaction(Effect.zipRight(applySettings, use(batches(criteria, batchSize)))))
    } as const
  })
}) {}
