/**
 * The records the return files are built from (docs/ecm-exchange.md): one statement per file,
 * streamed from a cursor in batches and decoded; the rows themselves are built by the pure
 * builders of src/Domain/EcmExchange/Rows.ts.
 *
 * The plan's members for a period: each member's latest eligibility record whose ECM benefit
 * authorization overlaps the period (as the PRTF reads it), when that record came in a MIF file of
 * the plan. What an event is — an outreach attempt or an encounter, and its mode — is the PRTF's
 * one rule (`ruleTable()` of src/Domain/Ecm/PrtfReport.ts, generated from `contactOf`), applied
 * with the member's enrolment on the event's day exactly as the PRTF statement does, so the OTF's
 * attempts per member are the PRTF's outreach counts.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema, Stream } from "effect"
import { eventTypes } from "../../Domain/Ecm/Activity.js"
import { durationClassSql, encounterCategories, outreachCategories } from "../../Domain/Ecm/PrtfReport.js"
import type { OtfRecord, RtfRecord } from "../../Domain/EcmExchange/Rows.js"
import { responseWindowHours } from "../../Domain/EcmExchange/Rows.js"
import { orDefect } from "../Repository.js"
import { dayEndIn, dayStartIn } from "../SqlFilters.js"
import {
  day, enrolledDays, enrolledOnEventDay, quoted, rankedHistories, ruleRows, statusHistories, utcDay
} from "../Ecm/PrtfRowsRepo.js"

export interface ExchangeCriteria {
  readonly healthPlanId: number
  /** First and last day of the period, YYYY-MM-DD (UTC, inclusive). */
  readonly startDate: string
  readonly endDate: string
}

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)

export const RtfRecordSchema = Schema.Struct({
  cin: NullText,
  last_name: Text,
  first_name: Text,
  address: NullText,
  city: NullText,
  state: NullText,
  zip: NullText,
  phone: NullText,
  mif_address: NullText,
  mif_city: NullText,
  mif_state: NullText,
  mif_zip: NullText,
  mif_phone: NullText,
  homelessness_indicator: NullText,
  pof_indicator: NullText,
  pof: NullText,
  ecm_status: NullText,
  status_day: NullText,
  status_reason: NullText,
  acuity_level: NullText,
  enrollment_start: NullText,
  enrollment_end: NullText,
  assessment_started: NullText,
  assessment_completed: NullText,
  last_encounter: NullText,
  lcm_name: NullText,
  lcm_phone: NullText,
  lcm_email: NullText,
  in_person: Schema.Int,
  telephonic_video: Schema.Int,
  provider_name: NullText,
  provider_npi: NullText,
  provider_phone: NullText
})

export const OtfRecordSchema = Schema.Struct({
  patient_id: Schema.Int,
  cin: NullText,
  last_name: Text,
  first_name: Text,
  provider_name: NullText,
  provider_npi: NullText,
  outreach_day: Text,
  event_type: Schema.Literal(...eventTypes),
  status: Text,
  duration: Schema.NullOr(Schema.Int),
  activity_duration: Schema.NullOr(Schema.Int),
  responded: Schema.Boolean
})

const CountSchema = Schema.Struct({ count: Schema.Int })

// The decoded records are the builders' inputs.
const _rtf: Schema.Schema.Type<typeof RtfRecordSchema> extends RtfRecord ? true : never = true
const _otf: Schema.Schema.Type<typeof OtfRecordSchema> extends OtfRecord ? true : never = true
void _rtf
void _otf

/** Settings of the transaction that streams a file (as the PRTF's: no JIT, sorts in memory, whole-result plans). */
const settings = [["jit", "off"], ["work_mem", "32MB"], ["cursor_tuple_fraction", "1"]] as const

/**
 * The plan's members of the period (`members`), their status entries up to its end
 * (`histories`), and the days each was enrolled (`enrolled`, a multirange): the CTEs both files
 * start with.
 */
const membersCtes = (sql: SqlClient.SqlClient, c: ExchangeCriteria) =>
  sql`members AS (
      SELECT el.id AS eligibility_id, el.patient_id, el.cin, el.acuity_level, el.ecm_provider_name, el.ecm_npi
      FROM (
        SELECT DISTINCT ON (e.patient_id) e.id, e.patient_id, e.mif_file_id, e.cin, e.acuity_level, e.ecm_provider_name, e.ecm_npi
        FROM ecm_eligibility_informations e
        WHERE e.ecm_benefit_auth_eff_date <= ${c.endDate}::date
          AND (e.ecm_benefit_auth_end_date IS NULL OR e.ecm_benefit_auth_end_date >= ${c.startDate}::date)
        ORDER BY e.patient_id, e.id DESC
      ) el JOIN mif_files f ON f.id = el.mif_file_id
      WHERE f.health_plan_id = ${c.healthPlanId}
    ), histories AS (${statusHistories(sql, c.endDate)}
    ), enrolled AS (
      SELECT m.patient_id, m.cin, m.ecm_provider_name, m.ecm_npi, d.days FROM members m
        LEFT JOIN (${enrolledDays(sql)}) d ON d.patient_id = m.patient_id
    ), rule AS (${ruleRows(sql)}
    ), period_events AS (
      -- The period's events (whole UTC days) with the rule's category for each, and what the
      -- eligibility record says of the member (the rows need no second pass over the members).
      SELECT e.id, e.patient_id, e.activity_id, e.event_type, e.status, e.occurred_at, e.duration, r.category,
        s.cin, s.ecm_provider_name, s.ecm_npi
      FROM ecm_events e JOIN enrolled s ON s.patient_id = e.patient_id
      JOIN rule r ON r.event_type = e.event_type AND r.status = e.status
        AND r.enrolled = ${sql.literal(enrolledOnEventDay)}
        AND r.duration_class = ${sql.literal(durationClassSql)}
      WHERE e.occurred_at >= ${dayStartIn(sql, c.startDate, "UTC")} AND e.occurred_at < ${dayEndIn(sql, c.endDate, "UTC")}
        AND r.category IS NOT NULL
    )`

/** The RTF statement: one row per member of the plan authorised in the period. */
export const rtfStatement = (c: ExchangeCriteria) =>
  Effect.map(SqlClient.SqlClient, (sql): Statement.Statement<unknown> =>
    sql`WITH ${membersCtes(sql, c)}, ranked AS (${rankedHistories(sql)}
    ), statuses AS (
      SELECT patient_id,
        max(status) FILTER (WHERE rn = 1) AS current_status,
        max(effective_date) FILTER (WHERE rn = 1) AS status_day,
        max(reason) FILTER (WHERE rn = 1) AS current_reason,
        max(effective_date) FILTER (WHERE rn = enrolled_rn) AS enrollment_start,
        max(effective_date) FILTER (WHERE rn = enrolled_rn - 1) AS enrollment_end
      FROM ranked GROUP BY patient_id
    ), encounters AS (
      SELECT patient_id,
        count(*) FILTER (WHERE category = 'in_person_encounters')::int AS in_person,
        count(*) FILTER (WHERE category = 'telehealth_encounters')::int AS telephonic_video,
        max(occurred_at) AS last_encounter
      FROM period_events WHERE category IN (${sql.literal(quoted(encounterCategories))})
      GROUP BY patient_id
    )
    SELECT m.cin, p.last_name, p.first_name, p.address, p.city, p.state, p.zip, p.phone,
      mif.address AS mif_address, mif.city AS mif_city, mif.state AS mif_state, mif.zip AS mif_zip, mif.phone AS mif_phone,
      p.homelessness_indicator, p.pof_indicator, p.pof,
      st.current_status AS ecm_status, ${sql.literal(day("st.status_day"))} AS status_day, st.current_reason AS status_reason,
      m.acuity_level,
      ${sql.literal(day("st.enrollment_start"))} AS enrollment_start,
      ${sql.literal(day("st.enrollment_end"))} AS enrollment_end,
      fc.started AS assessment_started, fc.completed AS assessment_completed,
      ${sql.literal(utcDay("enc.last_encounter"))} AS last_encounter,
      CASE WHEN lcm.id IS NULL THEN NULL ELSE lcm.first_name || ' ' || lcm.last_name END AS lcm_name,
      lcm.phone AS lcm_phone, lcm.email AS lcm_email,
      coalesce(enc.in_person, 0) AS in_person, coalesce(enc.telephonic_video, 0) AS telephonic_video,
      coalesce(m.ecm_provider_name, cl.provider_name) AS provider_name,
      coalesce(m.ecm_npi, cl.provider_npi) AS provider_npi,
      (SELECT u.phone FROM providers pr JOIN users u ON u.id = pr.user_id
        WHERE pr.npi = coalesce(m.ecm_npi, cl.provider_npi) ORDER BY pr.id LIMIT 1) AS provider_phone
    FROM members m
    JOIN patients p ON p.id = m.patient_id
    LEFT JOIN statuses st ON st.patient_id = m.patient_id
    LEFT JOIN encounters enc ON enc.patient_id = m.patient_id
    LEFT JOIN case_loads cl ON cl.patient_id = m.patient_id
    LEFT JOIN users lcm ON lcm.id = coalesce(cl.ilcm_user_id, cl.olcm_user_id)
    LEFT JOIN LATERAL (
      -- What the plan's last MIF said of the member.
      SELECT e.address, e.city, e.state, e.zip, e.phone FROM ecm_eligibility_informations e
      JOIN mif_files f ON f.id = e.mif_file_id
      WHERE e.patient_id = m.patient_id AND f.health_plan_id = ${c.healthPlanId}
      ORDER BY e.id DESC LIMIT 1
    ) mif ON true
    LEFT JOIN LATERAL (
      SELECT ${sql.literal(utcDay("min(x.created_at)"))} AS started, ${sql.literal(utcDay("max(x.created_at)"))} AS completed
      FROM form_c_submissions x
      WHERE x.patient_id = m.patient_id AND x.created_at < ${dayEndIn(sql, c.endDate, "UTC")}
    ) fc ON true
    ORDER BY p.last_name, p.first_name, p.id`)

/**
 * The RTF's row count: its members. Every other join of the RTF statement keeps one row per member
 * (patients by foreign key; statuses and encounters grouped by member; one case load per member;
 * the last MIF record and Form C dates one row each).
 */
export const rtfCountStatement = (c: ExchangeCriteria) =>
  Effect.map(SqlClient.SqlClient, (sql): Statement.Statement<unknown> =>
    sql`WITH ${membersCtes(sql, c)} SELECT count(*)::int AS count FROM members`)

/** The OTF statement: one row per outreach attempt of the period on a member of the plan. */
export const otfStatement = (c: ExchangeCriteria) =>
  Effect.map(SqlClient.SqlClient, (sql): Statement.Statement<unknown> =>
    sql`WITH ${membersCtes(sql, c)}
    SELECT e.patient_id, e.cin, p.last_name, p.first_name,
      coalesce(e.ecm_provider_name, cl.provider_name) AS provider_name,
      coalesce(e.ecm_npi, cl.provider_npi) AS provider_npi,
      ${sql.literal(utcDay("e.occurred_at"))} AS outreach_day,
      e.event_type, e.status, e.duration, a.duration AS activity_duration,
      (e.event_type IN ('sms', 'email') AND EXISTS (
        SELECT 1 FROM sms_messages s WHERE s.patient_id = e.patient_id AND s.direction = 'inbound'
          AND s.created_at >= e.occurred_at AND s.created_at < e.occurred_at + make_interval(hours => ${responseWindowHours})
      )) AS responded
    FROM period_events e
    JOIN patients p ON p.id = e.patient_id
    LEFT JOIN ecm_activities a ON a.id = e.activity_id
    LEFT JOIN case_loads cl ON cl.patient_id = e.patient_id
    WHERE e.category IN (${sql.literal(quoted(outreachCategories))})
    ORDER BY p.last_name, p.first_name, p.id, e.occurred_at, e.id`)

/**
 * The OTF's row count: the period's outreach events. The OTF statement's other joins keep one row
 * per event (patients by foreign key; an activity by key; one case load per member).
 */
export const otfCountStatement = (c: ExchangeCriteria) =>
  Effect.map(SqlClient.SqlClient, (sql): Statement.Statement<unknown> =>
    sql`WITH ${membersCtes(sql, c)}
    SELECT count(*)::int AS count FROM period_events WHERE category IN (${sql.literal(quoted(outreachCategories))})`)

export class ExchangeRowsRepo extends Effect.Service<ExchangeRowsRepo>()("app/EcmExchangeRowsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const applySettings = sql`SELECT ${sql.literal(settings.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(", "))}`

    const stream = <A, I>(statement: Statement.Statement<unknown>, schema: Schema.Schema<A, I>, batchSize: number) => {
      const decode = Schema.decodeUnknown(Schema.Array(schema))
      return Stream.unwrap(Effect.gen(function*() {
        const [text, params] = statement.compile()
        yield* sql.unsafe(`DECLARE exchange_rows NO SCROLL CURSOR FOR ${text}`, params)
        const fetch = orDefect(Effect.flatMap(sql.unsafe(`FETCH ${batchSize} FROM exchange_rows`), decode)).pipe(
          Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(Option.none()) : Effect.succeed(rows)))
        )
        return Stream.repeatEffectOption(fetch)
      }).pipe(orDefect))
    }

    /**
     * Runs `use` with the file's row count (the progress total) and its records in batches, in one
     * repeatable-read transaction (count and rows see the same data); the cursor ends with it. The
     * count is its own statement, not the file's statement counted: that would run the whole file
     * (joins, subqueries, sort) twice.
     */
    const withRecords = <A, I, B, E, R>(
      statement: Effect.Effect<Statement.Statement<unknown>, never, SqlClient.SqlClient>,
      countStatement: Effect.Effect<Statement.Statement<unknown>, never, SqlClient.SqlClient>,
      schema: Schema.Schema<A, I>,
      use: (total: number, batches: Stream.Stream<ReadonlyArray<A>>) => Effect.Effect<B, E, R>,
      batchSize: number
    ) =>
      orDefect(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
        yield* applySettings
        const compiled = yield* Effect.provideService(statement, SqlClient.SqlClient, sql)
        const count = yield* Effect.provideService(countStatement, SqlClient.SqlClient, sql)
        const [counted] = yield* Effect.flatMap(count, Schema.decodeUnknown(Schema.Array(CountSchema)))
        return yield* use(counted?.count ?? 0, stream(compiled, schema, batchSize))
      })))

    return {
      /** The RTF's member records of the period, in file order. */
      withRtfRecords: <B, E, R>(
        criteria: ExchangeCriteria,
        use: (total: number, batches: Stream.Stream<ReadonlyArray<RtfRecord>>) => Effect.Effect<B, E, R>,
        batchSize = 5000
      ) => withRecords(rtfStatement(criteria), rtfCountStatement(criteria), RtfRecordSchema, use, batchSize),
      /** The OTF's outreach attempts of the period, in file order. */
      withOtfRecords: <B, E, R>(
        criteria: ExchangeCriteria,
        use: (total: number, batches: Stream.Stream<ReadonlyArray<OtfRecord>>) => Effect.Effect<B, E, R>,
        batchSize = 5000
      ) => withRecords(otfStatement(criteria), otfCountStatement(criteria), OtfRecordSchema, use, batchSize)
    } as const
  })
}) {}
