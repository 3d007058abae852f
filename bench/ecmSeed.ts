/**
 * The ECM seed the PRTF and return-file benches share, set-based (generate_series): `members` ECM
 * members (eligibility records over 5 providers, case loads with lead care managers, engagement
 * histories, a Form C for every third) and `events` activities with their events over one year.
 */
import type pg from "pg"

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`

export const seedEcm = async (client: pg.Client, adminId: number, members: number, events: number) => {
  const started = performance.now()
  const step = (what: string) => console.log(`  seeding: ${what} (${secs(performance.now() - started)})`)
  // Lead care managers and 5 provider NPIs.
  await client.query(`INSERT INTO users (email, password_hash, first_name, last_name, role, confirmed)
    SELECT 'lcm' || i || '@bench.test', 'x', 'Lead', 'Manager ' || i, 'provider', true FROM generate_series(1, 20) i`)
  await client.query(`INSERT INTO mif_files (filename, file_type, source_type, status, records_imported)
    VALUES ('MIF_bench.csv', 'csv', 'base64', 'completed', $1)`, [members])
  await client.query(`INSERT INTO patients (member_id, cin, first_name, last_name, date_of_birth, gender, address, city, state, zip, phone)
    SELECT 'BM' || i, 'CIN' || i, 'First' || i, 'Last' || (i % 5000), date '1950-01-01' + (i % 20000), (ARRAY['F','M','X'])[1 + i % 3],
      i || ' Main St', 'Oakland', 'CA', '946' || lpad((i % 100)::text, 2, '0'), '+1510555' || lpad((i % 10000)::text, 4, '0')
    FROM generate_series(1, $1) i`, [members])
  await client.query(`INSERT INTO ecm_eligibility_informations (patient_id, mif_file_id, line, member_id, cin, first_name, last_name,
      date_of_birth, gender, address, city, state, zip, phone, ecm_service_auth_id, ecm_provider_name, ecm_npi,
      ecm_benefit_auth_eff_date, ecm_benefit_auth_end_date, acuity_level, member_record_status)
    SELECT p.id, (SELECT min(id) FROM mif_files), row_number() OVER (ORDER BY p.id) + 1, p.member_id, p.cin, p.first_name, p.last_name,
      p.date_of_birth, p.gender, p.address, p.city, p.state, p.zip, p.phone, 'AUTH' || p.id, 'Provider ' || (p.id % 5),
      '100000000' || (p.id % 5), date '2025-07-01' + (p.id % 60), CASE WHEN p.id % 10 = 0 THEN date '2025-12-15' ELSE date '2026-12-31' END,
      (ARRAY['High','Medium','Low'])[1 + p.id % 3], 'new_member'
    FROM patients p`)
  await client.query(`UPDATE patients p SET ecm_eligibility_information_id = e.id FROM ecm_eligibility_informations e WHERE e.patient_id = p.id`)
  await client.query(`INSERT INTO case_loads (patient_id, provider_npi, provider_name, olcm_user_id, ilcm_user_id)
    SELECT p.id, '100000000' || (p.id % 5), 'Provider ' || (p.id % 5),
      (SELECT min(id) FROM users WHERE email LIKE 'lcm%') + p.id % 10, (SELECT min(id) FROM users WHERE email LIKE 'lcm%') + 10 + p.id % 10
    FROM patients p`)
  step("members, eligibility, case loads")
  // Histories: MIF entry before the quarter for all; 90% start outreach in the quarter, 60% enrol, 5% disenrol.
  await client.query(`INSERT INTO ecm_status_histories (patient_id, status, effective_date, source, reason)
    SELECT id, 'new_member', date '2025-10-01', 'mif', 'Created by MIF import' FROM patients
    UNION ALL SELECT id, 'outreach_in_progress', date '2026-01-02' + id % 20, 'system', NULL FROM patients WHERE id % 10 <> 9
    UNION ALL SELECT id, 'enrolled', date '2026-02-01' + id % 20, 'user', NULL FROM patients WHERE id % 10 < 6
    UNION ALL SELECT id, 'disenrolled', date '2026-03-10' + id % 10, 'user', 'Moved out of county' FROM patients WHERE id % 20 = 0`)
  await client.query(`INSERT INTO form_c_submissions (patient_id, user_id, form_data, created_at)
    SELECT id, $1, '{}', timestamptz '2026-01-15' + (id % 60) * interval '1 day' FROM patients WHERE id % 3 = 0`, [adminId])
  step("histories, Form C")
  // One activity per event over a year (2025-07-01 .. 2026-06-30); types cycle task, sms, call, email, appointment.
  await client.query(`INSERT INTO ecm_activities (patient_id, activity_type, status, message, occurred_at, duration, performed_by_id, assigned_to_id)
    SELECT (SELECT min(id) FROM patients) + i % $2, (ARRAY['task','sms','call','email','in_person_appointment'])[1 + i % 5],
      (ARRAY['created','complete','complete','cancelled'])[1 + (i / 5) % 4], 'Bench ' || i,
      timestamptz '2025-07-01' + ((i::bigint * 7919) % $1) * (365.0 / $1) * interval '1 day',
      CASE WHEN i % 5 IN (2, 4) THEN (i / 7) % 40 END, $3, $3
    FROM generate_series(0, $1 - 1) i`, [events, members, adminId])
  step("activities")
  await client.query(`INSERT INTO ecm_events (patient_id, activity_id, event_type, status, occurred_at, duration)
    SELECT patient_id, id, CASE activity_type WHEN 'in_person_appointment' THEN 'appointment' ELSE activity_type END,
      CASE WHEN status <> 'created' THEN status WHEN activity_type IN ('task', 'in_person_appointment') THEN 'scheduled' ELSE 'attempted' END,
      occurred_at, CASE WHEN activity_type IN ('call', 'in_person_appointment') THEN duration END
    FROM ecm_activities`)
  step("events")
  await client.query(`VACUUM ANALYZE`)
  const { rows: [inQuarter] } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ecm_events
    WHERE occurred_at >= '2026-01-01' AND occurred_at < '2026-04-01'`)
  console.log(`seeded ${members} members and ${events} events (${inQuarter!.n} in the quarter) in ${secs(performance.now() - started)}`)
}

