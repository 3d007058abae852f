/**
 * The SQL both floors of `npm run bench` send (bench/floors/bare-server.ts, bench/floors/effect-server.ts):
 * the least a server must ask PostgreSQL to answer the three benched operations as the app does.
 * Same texts as the app's (Sessions.lookup, the clinic patient load, the patient insert, the audit
 * insert); the floors send them unnamed, as `pg` does by default.
 *
 * - `GET /health`: `SELECT 1`;
 * - `GET /v1/clinic/patients/{id}`: the token lookup, then the patient loaded by id (the caller is
 *   staff: the visibility condition is TRUE);
 * - `POST /v1/clinic/patients`: the token lookup, the insert, the audit entry, the load.
 */

/** The token lookup of Sessions.lookup: $1 hash, $2 idle cutoff, $3 age cutoff, $4 touch cutoff, $5 now. */
export const tokenLookup = `WITH token AS (
            SELECT user_id, (last_used_at <= $2 OR created_at <= $3) AS expired
            FROM user_tokens WHERE token_hash = $1
          ), expired AS (
            DELETE FROM user_tokens WHERE token_hash = $1 AND (last_used_at <= $2 OR created_at <= $3)
          ), touched AS (
            UPDATE user_tokens SET last_used_at = $5 WHERE token_hash = $1
              AND last_used_at < $4 AND last_used_at > $2 AND created_at > $3
          )
          SELECT u.id, u.role FROM token t JOIN users u ON u.id = t.user_id
          WHERE NOT t.expired AND u.status = 'active' AND u.deleted_at IS NULL`

/** The lookup's time parameters at the default limits (30 minutes idle, 12 hours, touch each minute). */
export const sessionTimes = (now = Date.now()): [Date, Date, Date, Date] =>
  [new Date(now - 30 * 60_000), new Date(now - 12 * 3_600_000), new Date(now - 60_000), new Date(now)]

export const patientColumns = `p.id, p.first_name, p.last_name, to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth, p.gender,
      p.phone, p.email, p.address, p.city, p.state, p.zip, p.language, p.member_id, p.active, p.user_id, p.provider_id,
      pu.first_name AS provider_first_name, pu.last_name AS provider_last_name, p.created_at, p.updated_at`

/** One patient by id ($1), with its provider's name. */
export const patientLoad = `SELECT ${patientColumns}
      FROM patients p LEFT JOIN providers pr ON pr.id = p.provider_id LEFT JOIN users pu ON pu.id = pr.user_id
      WHERE p.id = $1`

/** A patient from first name, last name, date of birth. */
export const patientInsert = `INSERT INTO patients ("first_name","last_name","date_of_birth") VALUES ($1,$2,$3) RETURNING id`

/** An audit entry: actor, action, target type, target id, trace id, time. */
export const auditInsert = `INSERT INTO audit_events (actor_id, action, target_type, target_id, trace_id, created_at)
          VALUES ($1, $2, $3, $4, $5, $6)`

export interface PatientRow {
  readonly id: number
  readonly first_name: string
  readonly last_name: string
  readonly date_of_birth: string | null
  readonly gender: string | null
  readonly phone: string | null
  readonly email: string | null
  readonly address: string | null
  readonly city: string | null
  readonly state: string | null
  readonly zip: string | null
  readonly language: string
  readonly member_id: string | null
  readonly active: boolean
  readonly user_id: number | null
  readonly provider_id: number | null
  readonly provider_first_name: string | null
  readonly provider_last_name: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** The roles that are not clinic staff. */
export const isStaffRole = (role: string) => role !== "parent"
