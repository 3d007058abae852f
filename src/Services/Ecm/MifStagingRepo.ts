/**
 * The MIF import's statements (ARCHITECTURE "Persistence"), run inside its transaction
 * (./MifImport.ts): the import lock, the temporary staging tables (dropped at commit or rollback)
 * this repository alone creates and reads, and the set-based writes from them to `patients`,
 * `ecm_eligibility_informations`, `ecm_status_histories` and `case_loads`. Everything after
 * staging is a fixed number of statements whatever the file's size; the staged records are never
 * read back row by row, so only the few rows that come back (ambiguous matches) are decoded. SQL
 * errors are defects here, except a unique violation while writing (`MemberIdTaken`).
 *
 * Matching (docs/spec-decisions.md, "ECM patients and MIF"):
 * - a record with a MEMBER_ID matches the patient with that member id; failing that, the one
 *   patient without a member id who has the same first name, last name and date of birth (any
 *   case), who then takes the member id;
 * - a record without a MEMBER_ID matches the one patient with the same first name, last name and
 *   date of birth;
 * - two or more such patients: the record fails (never guess between namesakes); no match: a new
 *   patient. Records of one file with the same member id (or, without one, the same name and date
 *   of birth) are one patient; the last line wins for its fields.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect, Schema } from "effect"
import type { MemberRecord } from "../../Domain/Ecm/Mif.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"
import { copyIn } from "./PgCopyIn.js"

/** Arbitrary constant: the advisory lock that serialises imports across instances. */
const importLockKey = 7_340_914

/** work_mem of an import's transaction: its sorts and hashes of the staged rows fit in memory. */
const importWorkMem = "64MB"

/** Most matching problems of each kind one statement reports. */
const maxMatchProblems = 100

/**
 * A unique violation while writing: a patient with one of the file's member ids was created
 * meanwhile (outside imports, which the lock serialises).
 */
export class MemberIdTaken extends Data.TaggedError("MemberIdTaken") {}

/** A staged record that matches several patients. */
export const AmbiguousMatch = Schema.Struct({ line: Schema.Int, matches: Schema.Int })
export type AmbiguousMatch = typeof AmbiguousMatch.Type

/** A staged record that claims by name a patient that records with another member id also claim. */
export const ContestedMatch = Schema.Struct({ line: Schema.Int })
export type ContestedMatch = typeof ContestedMatch.Type

export interface WriteContext {
  readonly mifFileId: number
  readonly actorId: number
  readonly now: Date
  /** The import day (UTC): the effective date of `new_member` status entries. */
  readonly today: string
}

/** The key records of one patient share within a file. */
export const identityOf = (r: MemberRecord): string =>
  r.member_id !== null
    ? `m:${r.member_id}`
    : `n:${r.first_name.toLowerCase()}\u001f${r.last_name.toLowerCase()}\u001f${r.date_of_birth}`

/** The staging table's columns in the order of a staging line. */
const stagingColumns = [
  "line", "ident", "member_id", "cin", "first_name", "last_name", "date_of_birth", "gender", "address", "city", "state",
  "zip", "phone", "phone_e164", "ecm_service_auth_id", "ecm_provider_name", "ecm_npi", "ecm_benefit_auth_eff_date",
  "ecm_benefit_auth_end_date", "acuity_level", "member_record_status"
] as const

const copySpecial = /[\\\t\n\r]/
const copySpecials = /[\\\t\n\r]/g
const copyEscapes: Readonly<Record<string, string>> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" }

/** A value in COPY's text format: `\N` for null; backslash, tab and line ends escaped. */
const copyValue = (value: string | null): string =>
  value === null ? "\\N" : copySpecial.test(value) ? value.replace(copySpecials, (c) => copyEscapes[c]!) : value

/**
 * A record as one line of COPY text for the staging table (`stagingColumns`). Records become
 * lines as soon as they are checked: a batch is then one buffer, not thousands of objects that
 * live long enough to be promoted to the old generation.
 */
export const stagingLine = (r: MemberRecord): string =>
  `${r.line}\t${copyValue(identityOf(r))}\t${copyValue(r.member_id)}\t${copyValue(r.cin)}\t${copyValue(r.first_name)}\t` +
  `${copyValue(r.last_name)}\t${r.date_of_birth}\t${copyValue(r.gender)}\t${copyValue(r.address)}\t${copyValue(r.city)}\t` +
  `${copyValue(r.state)}\t${copyValue(r.zip)}\t${copyValue(r.phone)}\t${copyValue(r.phone_e164)}\t` +
  `${copyValue(r.ecm_service_auth_id)}\t${copyValue(r.ecm_provider_name)}\t${copyValue(r.ecm_npi)}\t` +
  `${copyValue(r.ecm_benefit_auth_eff_date)}\t${copyValue(r.ecm_benefit_auth_end_date)}\t${copyValue(r.acuity_level)}\t` +
  `${copyValue(r.member_record_status)}\n`

export class MifStagingRepo extends Effect.Service<MifStagingRepo>()("app/MifStagingRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Takes the import lock (imports are serialised: matching reads patients and then writes them),
     * tunes the transaction and creates the empty staging table.
     */
    const begin = Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${importLockKey})`
      // For this transaction only: the planner's estimates for the matching statement cross the
      // JIT threshold, and compiling it cost ~300 ms (more than it runs); sorts and hashes over
      // 100,000 staged rows spilled to disk at the default 4 MB.
      yield* sql`SELECT set_config('jit', 'off', true), set_config('work_mem', ${importWorkMem}, true)`
      yield* sql`CREATE TEMP TABLE mif_staging (
        line integer NOT NULL,
        ident text NOT NULL,
        member_id text, cin text, first_name text NOT NULL, last_name text NOT NULL, date_of_birth date NOT NULL,
        gender text, address text, city text, state text, zip text, phone text, phone_e164 text,
        ecm_service_auth_id text, ecm_provider_name text, ecm_npi text,
        ecm_benefit_auth_eff_date date, ecm_benefit_auth_end_date date, acuity_level text, member_record_status text
      ) ON COMMIT DROP`
    }).pipe(orDefect)

    /**
     * One `COPY … FROM STDIN` per batch of staging lines (`stagingLine`): PostgreSQL's cheapest way
     * in. It replaced one `json_populate_recordset` insert per 2,000 records, whose JSON text cost
     * as much to build in JS as to read back in PostgreSQL (bench:mif: staging 1.4 → 0.8 s).
     */
    const stage = Effect.fn("MifImport.stageBatch")(function*(lines: Buffer, records: number) {
      yield* Effect.annotateCurrentSpan({ "mif.batch_records": records })
      return yield* copyIn(`COPY mif_staging (${stagingColumns.join(", ")}) FROM STDIN`, lines)
    })

    const ambiguousMatches = SqlSchema.findAll({
      Request: Schema.Int,
      Result: AmbiguousMatch,
      execute: (limit) =>
        sql`SELECT line, count(*)::int AS matches FROM mif_match GROUP BY line HAVING count(*) > 1 ORDER BY line LIMIT ${limit}`
    })

    const contestedMatches = SqlSchema.findAll({
      Request: Schema.Int,
      Result: ContestedMatch,
      execute: (limit) =>
        sql`SELECT m.line FROM mif_match m
          JOIN (SELECT patient_id FROM mif_match WHERE by_name AND member_id IS NOT NULL
                GROUP BY patient_id HAVING count(DISTINCT member_id) > 1) x ON x.patient_id = m.patient_id
          WHERE m.by_name AND m.member_id IS NOT NULL ORDER BY m.line LIMIT ${limit}`
    })

    /**
     * Finds the patient of every staged record that matches one (`mif_match`: line → patient);
     * returns the records that match several, and those that claim by name a patient that records
     * with another member id also claim (each at most 100, in line order). Nothing is written to
     * patients here.
     */
    const matchPatients = Effect.gen(function*() {
      // Statistics for the columns the joins and groupings read (all 21 columns took twice as long).
      yield* sql`ANALYZE mif_staging (line, ident, member_id, first_name, last_name, date_of_birth)`
      yield* sql`CREATE TEMP TABLE mif_match ON COMMIT DROP AS
        SELECT s.line, s.member_id, p.id AS patient_id, false AS by_name
        FROM mif_staging s JOIN patients p ON p.member_id = s.member_id
        UNION ALL
        SELECT s.line, s.member_id, p.id, true
        FROM mif_staging s
        JOIN patients p ON lower(p.last_name) = lower(s.last_name) AND lower(p.first_name) = lower(s.first_name)
          AND p.date_of_birth = s.date_of_birth
        WHERE (s.member_id IS NULL OR (p.member_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM patients taken WHERE taken.member_id = s.member_id)))`
      const ambiguous = yield* ambiguousMatches(maxMatchProblems)
      const contested = yield* contestedMatches(maxMatchProblems)
      return { ambiguous, contested }
    }).pipe(orDefect, Effect.withSpan("MifImport.match"))

    /**
     * Creates and updates patients, then writes eligibility, status history and case loads. Ids of
     * new patients and of the eligibility records are drawn up front, so each row is written once:
     * a patient already points at its latest record when it is inserted or updated. A unique
     * violation fails with `MemberIdTaken` (the transaction then rolls back).
     */
    const writeAll = Effect.fn("MifImport.write")(
      function*(context: WriteContext) {
        const { actorId, mifFileId, now, today } = context
        // Sequences are looked up once (a subquery): nextval(text) of pg_get_serial_sequence resolved
        // the name through the catalogs for every row, ~2 µs each. Ids are drawn in line order (the
        // sorted subqueries), so rows reach the tables in the order of their indexes: btree inserts
        // at the right edge cost ~25% less than at random places.
        yield* sql`CREATE TEMP TABLE mif_new ON COMMIT DROP AS
          SELECT ident, nextval((SELECT pg_get_serial_sequence('patients', 'id'))::regclass)::int AS patient_id
          FROM (SELECT s.ident FROM mif_staging s
                WHERE NOT EXISTS (SELECT 1 FROM mif_match m WHERE m.line = s.line)
                GROUP BY s.ident ORDER BY min(s.line)) d`
        yield* sql`CREATE TEMP TABLE mif_rows ON COMMIT DROP AS
          SELECT r.*, nextval((SELECT pg_get_serial_sequence('ecm_eligibility_informations', 'id'))::regclass)::int AS eligibility_id
          FROM (SELECT s.*, COALESCE(m.patient_id, n.patient_id) AS patient_id, n.patient_id IS NOT NULL AS created
                FROM mif_staging s
                LEFT JOIN mif_match m ON m.line = s.line
                LEFT JOIN mif_new n ON m.line IS NULL AND n.ident = s.ident
                ORDER BY s.line) r`
        // The last line of each patient, with the member id any of its lines carries.
        yield* sql`CREATE TEMP TABLE mif_latest ON COMMIT DROP AS
          SELECT DISTINCT ON (patient_id) r.*, max(member_id) OVER (PARTITION BY patient_id) AS any_member_id
          FROM mif_rows r ORDER BY patient_id, line DESC`
        // The ECM provider: the file names it by NPI and name; the provider record is the active one
        // with that NPI, else the one active provider with that name (none, or several namesakes:
        // no provider, NPI and name are kept on the case load). Resolved once per distinct provider
        // of the file, not per row, before patients are written: it is also their primary provider.
        yield* sql`CREATE TEMP TABLE mif_providers ON COMMIT DROP AS
          SELECT k.ecm_npi, k.ecm_provider_name, COALESCE(
            (SELECT p.id FROM providers p WHERE p.npi = k.ecm_npi AND p.active),
            (SELECT min(p.id) FROM providers p JOIN users u ON u.id = p.user_id
              WHERE p.active AND lower(u.first_name || ' ' || u.last_name) = lower(k.ecm_provider_name)
              HAVING count(*) = 1)) AS provider_id
          FROM (SELECT DISTINCT ecm_npi, ecm_provider_name FROM mif_latest
                WHERE ecm_npi IS NOT NULL OR ecm_provider_name IS NOT NULL) k`
        // Its true size (a few rows) makes the joins below hash it and keep mif_latest's order (a
        // merge join would sort 100,000 rows first, and patients would reach their indexes out of order).
        yield* sql`ANALYZE mif_providers`
        // Blank cells are null, never '', so coalescing to '' keeps keys apart and lets the join hash
        // (IS NOT DISTINCT FROM cannot: a nested loop over every row and provider).
        const sameProvider = sql`coalesce(m.ecm_npi, '') = coalesce(l.ecm_npi, '')
            AND coalesce(m.ecm_provider_name, '') = coalesce(l.ecm_provider_name, '')`
        const providerOf = sql`LEFT JOIN mif_providers m ON ${sameProvider}`
        yield* sql`INSERT INTO patients (id, member_id, cin, first_name, last_name, date_of_birth, gender, address, city,
            state, zip, phone, provider_id, ecm_eligibility_information_id, created_at, updated_at)
          OVERRIDING SYSTEM VALUE
          SELECT l.patient_id, l.any_member_id, l.cin, l.first_name, l.last_name, l.date_of_birth, l.gender, l.address, l.city,
            l.state, l.zip, l.phone_e164, m.provider_id, l.eligibility_id, ${now}, ${now}
          FROM mif_latest l ${providerOf} WHERE l.created`
        // A blank cell never erases what a patient has, and a primary provider already chosen (by the
        // clinic, or by an earlier file) is kept: the file's provider only fills an empty one.
        yield* sql`UPDATE patients p SET
            member_id = COALESCE(p.member_id, l.any_member_id),
            cin = COALESCE(l.cin, p.cin),
            first_name = l.first_name,
            last_name = l.last_name,
            date_of_birth = l.date_of_birth,
            gender = COALESCE(l.gender, p.gender),
            address = COALESCE(l.address, p.address),
            city = COALESCE(l.city, p.city),
            state = COALESCE(l.state, p.state),
            zip = COALESCE(l.zip, p.zip),
            phone = COALESCE(l.phone_e164, p.phone),
            provider_id = COALESCE(p.provider_id, m.provider_id),
            ecm_eligibility_information_id = l.eligibility_id,
            updated_at = ${now}
          FROM mif_latest l ${providerOf} WHERE NOT l.created AND p.id = l.patient_id`
        yield* sql`INSERT INTO ecm_eligibility_informations (id, patient_id, mif_file_id, line, member_id, cin, first_name,
            last_name, date_of_birth, gender, address, city, state, zip, phone, ecm_service_auth_id, ecm_provider_name,
            ecm_npi, ecm_benefit_auth_eff_date, ecm_benefit_auth_end_date, acuity_level, member_record_status,
            created_at, updated_at)
          OVERRIDING SYSTEM VALUE
          SELECT eligibility_id, patient_id, ${mifFileId}, line, member_id, cin, first_name, last_name, date_of_birth,
            gender, address, city, state, zip, phone, ecm_service_auth_id, ecm_provider_name, ecm_npi,
            ecm_benefit_auth_eff_date, ecm_benefit_auth_end_date, acuity_level,
            COALESCE(member_record_status, CASE WHEN created THEN 'new_member' ELSE 'existing_member' END),
            ${now}, ${now}
          FROM mif_rows`
        // A new member is new from the day the file says the ECM authorization took effect (outreach
        // made before the file arrived then counts), never after the import day (docs/prtf.md).
        yield* sql`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source, reason, actor_id,
            created_at, updated_at)
          SELECT patient_id, 'new_member', least(coalesce(ecm_benefit_auth_eff_date, ${today}::date), ${today}::date), 'mif',
            'Created by MIF import', ${actorId}, ${now}, ${now}
          FROM mif_latest WHERE created`
        const caseLoads = (created: boolean) => sql`INSERT INTO case_loads (patient_id, provider_id, provider_npi, provider_name,
            provider_assigned_at, created_at, updated_at)
          SELECT l.patient_id, m.provider_id, l.ecm_npi, l.ecm_provider_name, ${now}, ${now}, ${now}
          FROM mif_latest l JOIN mif_providers m ON ${sameProvider}
          WHERE l.created = ${created}`
        // New patients have no case load yet: a plain insert (an upsert's speculative insertion cost
        // ~0.2 s per 100,000 rows). Known patients' case loads follow the file.
        yield* caseLoads(true)
        yield* sql`${caseLoads(false)}
          ON CONFLICT (patient_id) DO UPDATE SET
            provider_id = EXCLUDED.provider_id,
            provider_npi = EXCLUDED.provider_npi,
            provider_name = EXCLUDED.provider_name,
            provider_assigned_at = EXCLUDED.provider_assigned_at,
            updated_at = EXCLUDED.updated_at
          WHERE case_loads.provider_id IS DISTINCT FROM EXCLUDED.provider_id
             OR case_loads.provider_npi IS DISTINCT FROM EXCLUDED.provider_npi
             OR case_loads.provider_name IS DISTINCT FROM EXCLUDED.provider_name`
      },
      Effect.catchIf(isUniqueViolation, () => Effect.fail(new MemberIdTaken())),
      orDefect
    )

    return { begin, stage, matchPatients, writeAll } as const
  })
}) {}
