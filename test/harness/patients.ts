/**
 * The BOLA check's patients: each new family's parent gets an ECM member linked to their account
 * (`patients.user_id`), with an eligibility record from a MIF file of its own, so every endpoint
 * that shows a patient has something of family B's to leak. The member is a clinic patient too
 * (one table), and gets a record of every kind the clinic keeps under a patient (issue 13): a help
 * request, a treatment plan, a waitlist spot (offered, so a parent's answer is a real move) and a
 * document. Names, titles, notes, member ids and phone numbers are drawn from the harness's
 * generators, so the leak and telemetry scans know them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { hashToken } from "../../src/Services/Tokens.js"
import type { FamilySeeder } from "./bola.js"
import type { Pii } from "./pii.js"
import type { CareTeamSeeder } from "./staff.js"
import { type Principal, sampler } from "./world.js"

let seededPatients = 0

/** Each seeded patient's records, by kind (`OwnedParameter.record`). */
const recordsByPatient = new Map<number, Readonly<Record<string, number>>>()

/** Each seeded patient's provider, signed in: the care relationship the staff-vs-staff check needs. */
const providerByPatient = new Map<number, Principal>()

export const ecmPatientFamilies = (pii: Pii, seed: number): FamilySeeder<SqlClient.SqlClient> & CareTeamSeeder<SqlClient.SqlClient> => {
  const draw = sampler(seed)
  return {
    description: "one ECM member per family, linked to the parent's account, with an eligibility record and one clinic " +
      "record of each kind (help request, treatment plan, offered spot, document), a signed-in provider of its own (its " +
      "primary provider) with an appointment and a reminder of it, and a prescription",
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
        const [help] = yield* sql<{ id: number }>`INSERT INTO help_requests (patient_id, user_id, subject, message)
          VALUES (${patient!.id}, ${parent.id}, ${draw(pii.name)}, ${draw(pii.name)}) RETURNING id`
        const [plan] = yield* sql<{ id: number }>`INSERT INTO treatment_plans (patient_id, title, diagnosis_codes, status)
          VALUES (${patient!.id}, ${draw(pii.name)}, ARRAY['F41.1'], 'active') RETURNING id`
        const [spot] = yield* sql<{ id: number }>`INSERT INTO spots (patient_id, program, notes, status, offered_at)
          VALUES (${patient!.id}, ${`program-${n}`}, ${draw(pii.name)}, 'offered', now()) RETURNING id`
        const [document] = yield* sql<{ id: number }>`INSERT INTO patient_documents (patient_id, name, content_type, size, object_key)
          VALUES (${patient!.id}, ${draw(pii.name)}, 'text/plain', 0, ${`harness/${seed & 0xffff}/${n}`}) RETURNING id`
        // Issue 17: an appointment with a provider of the family's own, and a reminder of it. The
        // provider is the patient's primary provider too, and signed in: the staff-vs-staff check's
        // caller with a care relationship (and, for another family's patient, without one).
        const providerEmail = `harness-provider-${seed & 0xffff}-${n}@bola.test`
        const [providerUser] = yield* sql<{ id: number }>`INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed)
          VALUES (${providerEmail}, 'x', ${draw(pii.name)}, ${draw(pii.name)}, 'provider', 'active', true) RETURNING id`
        const [provider] = yield* sql<{ id: number }>`INSERT INTO providers (user_id, roles, license_number)
          VALUES (${providerUser!.id}, '{provider}', ${`LIC-H${n}`}) RETURNING id`
        yield* sql`UPDATE patients SET provider_id = ${provider!.id} WHERE id = ${patient!.id}`
        const providerToken = draw(pii.token)
        yield* sql`INSERT INTO user_tokens (token_hash, user_id) VALUES (${hashToken(providerToken)}, ${providerUser!.id})`
        providerByPatient.set(patient!.id, { role: "staff", id: providerUser!.id, email: providerEmail, phone: "", token: providerToken })
        const [appointment] = yield* sql<{ id: number }>`INSERT INTO appointments (patient_id, provider_id, scheduled_at, duration_minutes)
          VALUES (${patient!.id}, ${provider!.id}, now() + interval '30 days', 50) RETURNING id`
        const [reminder] = yield* sql<{ id: number }>`INSERT INTO appointment_reminders (appointment_id, reminder_type, send_at, lead_seconds, message)
          VALUES (${appointment!.id}, 'email', now() + interval '29 days', 86400, ${draw(pii.name)}) RETURNING id`
        // Issue 20: a prescription written by that provider.
        const [prescription] = yield* sql<{ id: number }>`INSERT INTO prescriptions (patient_id, provider_id, medication_id, dosage, frequency,
            quantity, refills, refills_remaining, instructions, prescription_date)
          VALUES (${patient!.id}, ${provider!.id}, (SELECT min(id) FROM medications WHERE active), '50 mg', 'once daily', 30, 2, 2,
            ${draw(pii.name)}, current_date) RETURNING id`
        // Issue 21: a questionnaire response in progress (GAD-7, one answer).
        const [response] = yield* sql<{ id: number }>`INSERT INTO questionnaire_responses (questionnaire_id, questionnaire_version, patient_id, status, answers)
          SELECT q.id, q.version, ${patient!.id}, 'in_progress', jsonb_build_object(min(qq.id)::text, 'Several days')
          FROM questionnaires q JOIN questionnaire_questions qq ON qq.questionnaire_id = q.id
          WHERE q.slug = 'gad7' AND q.active GROUP BY q.id RETURNING id`
        // Records the provider added: a collaborator linked to the patient and a video of the patient
        // (what a provider names by id beside a patient: the staff-vs-staff check's own records).
        const [collaborator] = yield* sql<{ id: number }>`INSERT INTO collaborators (owner_id, first_name, last_name, email, organization, type)
          VALUES (${providerUser!.id}, ${draw(pii.name)}, ${draw(pii.name)}, ${`harness-collaborator-${seed & 0xffff}-${n}@bola.test`},
            'Harness School', 'school') RETURNING id`
        yield* sql`INSERT INTO collaborator_patients (collaborator_id, patient_id, added_by) VALUES (${collaborator!.id}, ${patient!.id}, ${providerUser!.id})`
        const [video] = yield* sql<{ id: number }>`INSERT INTO videos (title, category, patient_id, provider_id, created_by_id)
          VALUES (${draw(pii.name)}, 'therapy_session', ${patient!.id}, ${provider!.id}, ${providerUser!.id}) RETURNING id`
        const [medication] = yield* sql<{ id: number }>`SELECT min(id) AS id FROM medications WHERE active`
        recordsByPatient.set(patient!.id, {
          help_request: help!.id, treatment_plan: plan!.id, spot: spot!.id, document: document!.id,
          appointment: appointment!.id, appointment_reminder: reminder!.id, prescription: prescription!.id,
          provider: provider!.id, collaborator: collaborator!.id, video: video!.id,
          ...(medication?.id == null ? {} : { medication: medication.id }),
          ...(response === undefined ? {} : { questionnaire_response: response.id })
        })
        return [patient!.id]
      }).pipe(Effect.orDie, Effect.withTracerEnabled(false)),
    snapshot: (patientId) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT p.*, (SELECT json_agg(e ORDER BY e.id) FROM ecm_eligibility_informations e WHERE e.patient_id = p.id) AS records,
            -- Issue 12: Form C submissions and the case load (lead care managers).
            (SELECT json_agg(f ORDER BY f.id) FROM form_c_submissions f WHERE f.patient_id = p.id) AS form_c_submissions,
            (SELECT row_to_json(c) FROM case_loads c WHERE c.patient_id = p.id) AS case_load,
            -- Issue 13: the clinic's records of the patient.
            (SELECT json_agg(h ORDER BY h.id) FROM help_requests h WHERE h.patient_id = p.id) AS help_requests,
            (SELECT json_agg(t ORDER BY t.id) FROM treatment_plans t WHERE t.patient_id = p.id) AS treatment_plans,
            (SELECT json_agg(s ORDER BY s.id) FROM spots s WHERE s.patient_id = p.id) AS spots,
            (SELECT json_agg(d ORDER BY d.id) FROM patient_documents d WHERE d.patient_id = p.id) AS documents,
            -- Issue 19: insurance coverage.
            (SELECT row_to_json(pc) FROM patient_coverages pc WHERE pc.patient_id = p.id) AS coverage,
            -- Issue 17: the patient's appointment reminders.
            (SELECT json_agg(r ORDER BY r.id) FROM appointment_reminders r JOIN appointments a ON a.id = r.appointment_id
              WHERE a.patient_id = p.id) AS appointment_reminders,
            -- Issue 20: prescriptions and their history.
            (SELECT json_agg(rx ORDER BY rx.id) FROM prescriptions rx WHERE rx.patient_id = p.id) AS prescriptions,
            (SELECT json_agg(ph ORDER BY ph.id) FROM prescription_history ph WHERE ph.patient_id = p.id) AS prescription_history,
            -- Issue 21: questionnaire responses and invites.
            (SELECT json_agg(qr ORDER BY qr.id) FROM questionnaire_responses qr WHERE qr.patient_id = p.id) AS questionnaire_responses,
            (SELECT json_agg(qi ORDER BY qi.id) FROM questionnaire_invites qi WHERE qi.patient_id = p.id) AS questionnaire_invites,
            -- Issue 16: the engagement status history.
            (SELECT json_agg(h ORDER BY h.id) FROM ecm_status_histories h WHERE h.patient_id = p.id) AS status_histories,
            (SELECT json_agg(w ORDER BY w.id) FROM ecm_status_history_withdrawals w WHERE w.patient_id = p.id) AS status_history_withdrawals,
            -- Records linked to the patient by staff: collaborators, their assessments, videos, session notes.
            (SELECT json_agg(cp ORDER BY cp.collaborator_id) FROM collaborator_patients cp WHERE cp.patient_id = p.id) AS collaborator_links,
            (SELECT json_agg(ca ORDER BY ca.id) FROM collaborator_assessments ca WHERE ca.patient_id = p.id) AS collaborator_assessments,
            (SELECT json_agg(v ORDER BY v.id) FROM videos v WHERE v.patient_id = p.id) AS videos,
            (SELECT json_agg(sn ORDER BY sn.id) FROM session_notes sn WHERE sn.patient_id = p.id) AS session_notes
          FROM patients p WHERE p.id = ${patientId}`).pipe(
        Effect.map((rows) => JSON.stringify(rows)),
        Effect.orDie,
        Effect.withTracerEnabled(false)
      ),
    recordOf: (patientId, record) => recordsByPatient.get(patientId)?.[record],
    providerOf: (patientId) => providerByPatient.get(patientId),
    breakGlassRecorded: (userId, patientId) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events
          WHERE action = 'patient.break_glass' AND actor_id = ${userId} AND target_type = 'patient' AND target_id = ${patientId}`).pipe(
        Effect.map(([row]) => (row?.n ?? 0) > 0),
        Effect.orDie,
        Effect.withTracerEnabled(false)
      )
  }
}
