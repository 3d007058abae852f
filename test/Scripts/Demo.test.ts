/**
 * The demo clinic (`npm run demo`) loaded into an empty install through the typed client, then
 * one record of every area it fills read back the way a newcomer would see it.
 */
import { expect, layer } from "@effect/vitest"
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../src/Api/Api.js"
import { DemoAlreadyLoaded, demoDomain, demoPassword, loadDemo } from "../../scripts/demo/loadDemo.js"
import { admin, signIn, TestApp } from "../support/app.js"

const asAdmin = Effect.flatMap(signIn(), (token) =>
  HttpApiClient.make(Api, { transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-user-token", token)) }))

layer(TestApp(), { timeout: 120_000 })("npm run demo", (it) => {
  it.effect("fills an empty install with a small clinic, every area readable, and refuses a second run", () =>
    Effect.gen(function*() {
      const demo = yield* loadDemo({ admin, now: new Date() })
      const api = yield* asAdmin

      // Accounts and providers: the supervisor supervises both providers, who sign in.
      const providers = yield* Effect.forEach(demo.providerIds, (id) => api.providers.show({ path: { id } }))
      expect(providers.map((p) => p.provider.supervisor_id)).toEqual([demo.supervisorProviderId, demo.supervisorProviderId])
      const staffToken = yield* signIn(`sam.okafor@${demoDomain}`, demoPassword)
      expect(staffToken.length).toBeGreaterThan(20)

      // Families: the guardian's account links her children.
      const mia = yield* api.clinicPatients.show({ path: { id: demo.clinicPatientIds[0]! } })
      expect(mia.patient.user_id).toBe(demo.parentUserIds[0])
      expect(mia.patient.first_name).toBe("Mia")

      // ECM: the sample MIF's four members, a lead care manager, outreach events and a PRTF file.
      expect(demo.ecmPatientIds).toHaveLength(4)
      const events = yield* api.ecmEvents.list({ path: { patient_id: demo.outreachMemberId }, urlParams: {} })
      expect(events.events.length).toBeGreaterThanOrEqual(3)
      const prtf = yield* api.ecmPrtfReports.show({ path: { id: demo.prtfReportId } })
      expect(prtf.prtf_report.id).toBe(demo.prtfReportId)

      // Scheduling: four booked appointments in the coming week.
      const appointment = yield* api.appointments.show({ path: { id: demo.appointmentIds[0]! } })
      expect(new Date(appointment.appointment.scheduled_at).getTime()).toBeGreaterThan(Date.now())
      expect(demo.appointmentIds).toHaveLength(4)

      // Session notes, billing, collaborators, content, questionnaires.
      const note = yield* api.clinicSessionNotes.show({ path: { id: demo.sessionNoteId } })
      expect(note.session_note.appointment_id).toBe(demo.heldAppointmentId)
      const claim = yield* api.claims.show({ path: { id: demo.claimId } })
      expect(claim.claim.cpt_code).toBe("90837")
      const collaborator = yield* api.collaborators.show({ path: { id: demo.collaboratorId } })
      expect(collaborator.collaborator.last_name).toBe("Park")
      const pieces = yield* api.userPieces.list({ urlParams: { user_id: demo.parentUserIds[0]! } })
      expect(pieces.user_pieces.map((p) => p.id)).toContain(demo.userPieceId)
      const response = yield* api.questionnaireResponses.show({ path: { id: demo.questionnaireResponseId } })
      expect(response.questionnaire_response.patient_id).toBe(demo.clinicPatientIds[2])

      // A second run changes nothing and says why.
      const again = yield* Effect.flip(loadDemo({ admin, now: new Date() }))
      expect(again).toBeInstanceOf(DemoAlreadyLoaded)
    }))
})
