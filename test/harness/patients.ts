/**
 * The BOLA check's patients: each new family's parent gets an ECM member linked to their account
 * (`patients.user_id`), with an eligibility record from a MIF file of its own, so every endpoint
 * that shows a patient has something of family B's to leak. The member is a clinic patient too
 * (one table), and gets a record of every kind the clinic keeps under a patient: a help
 * request, a treatment plan, a waitlist spot (offered, so a parent's answer is a real move) and a
 * document. Names, titles, notes, member ids and phone numbers are drawn from the harness's
 * generators, so the leak and telemetry scans know them.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { insertEligibility, insertMifFile, insertPatient, insertUser } from "../support/fixtures.js"
import { insertClinicRecords, insertLicensedProvider, insertSession } from "../support/fixtures/Harness.js"
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
        const n = ++seededPatients
        const firstName = draw(pii.name)
        const lastName = draw(pii.name)
        const memberId = `HB${seed & 0xffff}X${n}`
        // A provider of the family's own (an appointment with them and a reminder of it
        // below), the patient's primary provider too, and signed in: the staff-vs-staff check's
        // caller with a care relationship (and, for another family's patient, without one).
        const providerEmail = `harness-provider-${seed & 0xffff}-${n}@bola.test`
        const providerUserId = yield* insertUser({
          email: providerEmail, password_hash: "x", first_name: draw(pii.name), last_name: draw(pii.name), role: "provider"
        })
        const providerId = yield* insertLicensedProvider(providerUserId, `LIC-H${n}`)
        const providerToken = draw(pii.token)
        yield* insertSession(providerUserId, providerToken)
        const fileId = yield* insertMifFile(1, `MIF_harness_${n}.csv`)
        const patientId = yield* insertPatient({
          member_id: memberId, first_name: firstName, last_name: lastName, date_of_birth: "2015-06-01", user_id: parent.id, provider_id: providerId
        })
        yield* insertEligibility(patientId, fileId, { member_id: memberId, first_name: firstName, last_name: lastName, date_of_birth: "2015-06-01" })
        providerByPatient.set(patientId, { role: "staff", id: providerUserId, email: providerEmail, phone: "", token: providerToken })
        // A record of every kind the clinic keeps under a patient (clinic records, reminders, prescriptions, questionnaires), and the
        // records the provider added: a collaborator linked to the patient and a video of the patient
        // (what a provider names by id beside a patient: the staff-vs-staff check's own records).
        recordsByPatient.set(patientId, yield* insertClinicRecords({
          patientId, parentId: parent.id, providerId, providerUserId, tag: `${seed & 0xffff}-${n}`, text: () => draw(pii.name)
        }))
        return [patientId]
      }).pipe(Effect.orDie, Effect.withTracerEnabled(false)),
    snapshot: (patientId) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT p.*, (SELECT json_agg(e ORDER BY e.id) FROM ecm_eligibility_informations e WHERE e.patient_id = p.id) AS records,
            -- Form C submissions and the case load (lead care managers).
            (SELECT json_agg(f ORDER BY f.id) FROM form_c_submissions f WHERE f.patient_id = p.id) AS form_c_submissions,
            (SELECT row_to_json(c) FROM case_loads c WHERE c.patient_id = p.id) AS case_load,
            -- The clinic's records of the patient.
            (SELECT json_agg(h ORDER BY h.id) FROM help_requests h WHERE h.patient_id = p.id) AS help_requests,
            (SELECT json_agg(t ORDER BY t.id) FROM treatment_plans t WHERE t.patient_id = p.id) AS treatment_plans,
            (SELECT json_agg(s ORDER BY s.id) FROM spots s WHERE s.patient_id = p.id) AS spots,
            (SELECT json_agg(d ORDER BY d.id) FROM patient_documents d WHERE d.patient_id = p.id) AS documents,
            -- Insurance coverage.
            (SELECT row_to_json(pc) FROM patient_coverages pc WHERE pc.patient_id = p.id) AS coverage,
            -- The patient's appointment reminders.
            (SELECT json_agg(r ORDER BY r.id) FROM appointment_reminders r JOIN appointments a ON a.id = r.appointment_id
              WHERE a.patient_id = p.id) AS appointment_reminders,
            -- Prescriptions and their history.
            (SELECT json_agg(rx ORDER BY rx.id) FROM prescriptions rx WHERE rx.patient_id = p.id) AS prescriptions,
            (SELECT json_agg(ph ORDER BY ph.id) FROM prescription_history ph WHERE ph.patient_id = p.id) AS prescription_history,
            -- Questionnaire responses and invites.
            (SELECT json_agg(qr ORDER BY qr.id) FROM questionnaire_responses qr WHERE qr.patient_id = p.id) AS questionnaire_responses,
            (SELECT json_agg(qi ORDER BY qi.id) FROM questionnaire_invites qi WHERE qi.patient_id = p.id) AS questionnaire_invites,
            -- The engagement status history.
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
