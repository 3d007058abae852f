/**
 * The BOLA check's patients: each new family's parent gets an ECM member linked to their account
 * (`patients.user_id`), with an eligibility record from a MIF file of its own, so every endpoint
 * that shows a patient has something of family B's to leak. Names, member ids and phone numbers
 * are drawn from the harness's generators, so the leak and telemetry scans know them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { FamilySeeder } from "./bola.js"
import type { Pii } from "./pii.js"
import { sampler } from "./world.js"

let seededPatients = 0

export const ecmPatientFamilies = (pii: Pii, seed: number): FamilySeeder<SqlClient.SqlClient> => {
  const draw = sampler(seed)
  return {
    description: "one ECM member per family, linked to the parent's account, with an eligibility record",
    patientsOf: (parent) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const n = ++seededPatients
        const firstName = draw(pii.name)
        const lastName = draw(pii.name)
        const memberId = `HB${seed & 0xffff}X${n}`
        const [file] = yield* sql<{ id: number }>`INSERT INTO mif_files (filename, file_type, source_type, status, records_imported)
          VALUES (${`MIF_harness_${n}.csv`}, 'csv', 'base64', 'completed', 1) RETURNING id`
        const [patient] = yield* sql<{ id: number }>`INSERT INTO patients (member_id, first_name, last_name, date_of_birth, user_id)
          VALUES (${memberId}, ${firstName}, ${lastName}, '2015-06-01', ${parent.id}) RETURNING id`
        const [record] = yield* sql<{ id: number }>`INSERT INTO ecm_eligibility_informations
          (patient_id, mif_file_id, line, member_id, first_name, last_name, date_of_birth, member_record_status)
          VALUES (${patient!.id}, ${file!.id}, 2, ${memberId}, ${firstName}, ${lastName}, '2015-06-01', 'new_member') RETURNING id`
        yield* sql`UPDATE patients SET ecm_eligibility_information_id = ${record!.id} WHERE id = ${patient!.id}`
        return [patient!.id]
      }).pipe(Effect.orDie, Effect.withTracerEnabled(false)),
    snapshot: (patientId) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT p.*, (SELECT json_agg(e ORDER BY e.id) FROM ecm_eligibility_informations e WHERE e.patient_id = p.id) AS records,
            -- Issue 12: Form C submissions and the case load (lead care managers).
            (SELECT json_agg(f ORDER BY f.id) FROM form_c_submissions f WHERE f.patient_id = p.id) AS form_c_submissions,
            (SELECT row_to_json(c) FROM case_loads c WHERE c.patient_id = p.id) AS case_load,
            -- Issue 16: the engagement status history.
            (SELECT json_agg(h ORDER BY h.id) FROM ecm_status_histories h WHERE h.patient_id = p.id) AS status_histories
          FROM patients p WHERE p.id = ${patientId}`).pipe(
        Effect.map((rows) => JSON.stringify(rows)),
        Effect.orDie,
        Effect.withTracerEnabled(false)
      )
  }
}
