/**
 * The whole `/v1` surface. Client-safe: it is the package `care-coordination-api-client`
 * (packages/api), from which a frontend derives a typed client with `HttpApiClient.make(Api, { baseUrl })`.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { AdminUsersApi } from "./Accounts/AdminUsers.js"
import { smallBodyBytes } from "./BodyLimit.js"
import { declareAccessReason } from "./Docs.js"
import { InternalServerError, PayloadTooLarge, ServiceUnavailable } from "./Errors.js"
import { withRequestMessages } from "./RequestMessages.js"
import { UsersApi } from "./Accounts/Users.js"
import { ProviderInvitesApi } from "./Providers/Invites.js"
import { ProvidersApi } from "./Providers/Providers.js"
import { SupervisorsApi } from "./Providers/Supervisors.js"
import { EcmMifsApi } from "./Ecm/Mifs.js"
import { EcmPatientsApi } from "./Ecm/Patients.js"
// ECM activities and events.
import { EcmActivitiesApi } from "./Ecm/Activities.js"
import { EcmEventsApi } from "./Ecm/Events.js"
// ECM communications and the telephony webhooks.
import { EcmCommunicationsAdminApi, EcmCommunicationsApi, TelephonyWebhooksApi } from "./Ecm/Communications.js"
// Scheduling
import { AvailabilityApi } from "./Scheduling/Availability.js"
import { AppointmentsApi, ClinicAppointmentsApi, ProviderAppointmentsApi } from "./Scheduling/Appointments.js"
// Form C and lead care managers.
import { EcmAdminFormCApi, EcmFormCApi } from "./Ecm/FormC.js"
import { EcmLeadCareManagersApi } from "./Ecm/LeadCareManagers.js"
// Reminders and push devices
import { DevicesApi } from "./Accounts/Devices.js"
import { RemindersApi } from "./Scheduling/Reminders.js"
// PRTF reports and engagement status.
import { EcmEngagementStatusApi } from "./Ecm/EngagementStatus.js"
import { EcmPrtfReportsApi } from "./Ecm/PrtfReports.js"
// Exchange with health plans: plans, return-file fields, profiles, RTF and OTF reports.
import { EcmExchangeProfilesApi } from "./EcmExchange/ExchangeProfiles.js"
import { EcmOtfReportsApi, EcmRtfReportsApi } from "./EcmExchange/ExchangeReports.js"
import { EcmExchangeFieldsApi, EcmHealthPlansApi } from "./EcmExchange/HealthPlans.js"
// Clinic patients and their records.
import { ClinicPatientsApi } from "./Patients/Patients.js"
import { PatientDocumentsApi } from "./Patients/Documents.js"
import { HelpRequestsApi } from "./Patients/HelpRequests.js"
import { SpotsApi } from "./Patients/Spots.js"
import { TreatmentPlansApi } from "./Patients/TreatmentPlans.js"

// Billing
import { ClaimsApi } from "./Billing/Claims.js"
import { CoverageApi, InsurancePlansApi } from "./Billing/Insurance.js"
// Session notes
import { ClinicSessionNotesApi, SessionNoteReviewsApi, SessionNotesApi, SupervisorSessionNotesApi } from "./SessionNotes/SessionNotes.js"
// Prescriptions, medications and medication history
import { AdminMedicationsApi, MedicationHistoryApi, MedicationsApi, PrescriptionsApi } from "./Prescriptions/Prescriptions.js"
// Collaborators
import { CollaboratorAssessmentsApi, CollaboratorsApi } from "./Collaborators/Collaborators.js"
// Content library
import { AdminContentApi } from "./Content/AdminContent.js"
import { ContentLibraryApi, RecommendationsApi, UserCollectionsApi, UserPiecesApi } from "./Content/Content.js"

// Questionnaires
import { QuestionnaireInvitesApi } from "./Questionnaires/Invites.js"
import { QuestionnaireResponsesApi, QuestionnairesApi } from "./Questionnaires/Questionnaires.js"
import { ScreenersApi } from "./Questionnaires/Screeners.js"
// Clinic videos
import { VideosApi } from "./Videos/Videos.js"
// Admin reports
import { ReportsApi } from "./Reports/Reports.js"
// Least privilege: break-glass accesses for admins to review.
import { AccessReviewsApi } from "./Access/AccessReviews.js"

export * as Errors from "./Errors.js"
export * as Pagination from "./Pagination.js"
export * as Security from "./Security.js"

/**
 * HttpApi declares a 400 `HttpApiDecodeError` on every operation, but this service answers
 * decoding failures with 422 in the area's shape (see each group's 422 error), so the
 * document drops it.
 */
const dropDefaultDecodeError = (spec: Record<string, any>): Record<string, any> => {
  for (const path of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<Record<string, any>>(path)) {
      if (operation?.responses?.["400"]) delete operation.responses["400"]
    }
  }
  delete spec.components?.schemas?.HttpApiDecodeError
  delete spec.components?.schemas?.Issue
  delete spec.components?.schemas?.PropertyKey
  return spec
}

/**
 * Request bodies ignore unknown fields (docs/spec-decisions.md), but the generated JSON Schema of
 * every struct says `additionalProperties: false`: drop it from the schemas request bodies use, so
 * the document does not call valid requests invalid. Response schemas keep it.
 */
const allowUnknownRequestFields = (spec: Record<string, any>): Record<string, any> => {
  const components: Record<string, any> = spec.components?.schemas ?? {}
  const visited = new Set<unknown>()
  const open = (schema: unknown): void => {
    if (typeof schema !== "object" || schema === null || visited.has(schema)) return
    visited.add(schema)
    const node = schema as Record<string, any>
    if (typeof node.$ref === "string") open(components[node.$ref.replace("#/components/schemas/", "")])
    if (node.additionalProperties === false) delete node.additionalProperties
    for (const key of ["properties", "patternProperties", "$defs"]) Object.values(node[key] ?? {}).forEach(open)
    for (const key of ["items", "additionalProperties", "not"]) open(node[key])
    for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) (node[key] ?? []).forEach(open)
  }
  for (const path of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<Record<string, any>>(path)) {
      for (const media of Object.values<Record<string, any>>(operation?.requestBody?.content ?? {})) open(media.schema)
    }
  }
  return spec
}

/**
 * The platform writes only bodies for error responses (HttpApiSchema has no response headers), so
 * the `Retry-After` header that every 429 and 503 carries (src/Api/Errors.ts `RetryAfter`) is
 * declared here, once, as a shared component.
 */
const declareRetryAfter = (spec: Record<string, any>): Record<string, any> => {
  let used = false
  for (const path of Object.values<Record<string, any>>(spec.paths ?? {})) {
    for (const operation of Object.values<Record<string, any>>(path)) {
      for (const status of ["429", "503"]) {
        const response = operation?.responses?.[status]
        if (response === undefined) continue
        response.headers = { ...response.headers, "Retry-After": { $ref: "#/components/headers/RetryAfter" } }
        used = true
      }
    }
  }
  if (used) {
    spec.components = { ...spec.components }
    spec.components.headers = {
      ...spec.components.headers,
      RetryAfter: {
        description: "Seconds to wait before retrying: the time left in the limit's window, or the back-off the throttle computed.",
        required: true,
        schema: { type: "integer", minimum: 1 }
      }
    }
  }
  return spec
}

/** Every request node carries its 422 message (./RequestMessages.ts). */
export class Api extends withRequestMessages(HttpApi.make("care-coordination-api")
  .add(UsersApi)
  .add(AdminUsersApi)
  .add(ProvidersApi)
  .add(SupervisorsApi)
  .add(ProviderInvitesApi)
  .add(EcmMifsApi)
  .add(EcmPatientsApi)
  // ECM activities and events.
  .add(EcmActivitiesApi)
  .add(EcmEventsApi)
  // ECM communications and the telephony webhooks.
  .add(EcmCommunicationsApi)
  .add(EcmCommunicationsAdminApi)
  .add(TelephonyWebhooksApi)
  // Scheduling
  .add(AvailabilityApi)
  .add(AppointmentsApi)
  .add(ProviderAppointmentsApi)
  .add(ClinicAppointmentsApi)
  // Form C and lead care managers.
  .add(EcmFormCApi)
  .add(EcmAdminFormCApi)
  .add(EcmLeadCareManagersApi)
  // PRTF reports and engagement status.
  .add(EcmPrtfReportsApi)
  .add(EcmEngagementStatusApi)
  // Exchange with health plans.
  .add(EcmHealthPlansApi)
  .add(EcmExchangeFieldsApi)
  .add(EcmExchangeProfilesApi)
  .add(EcmRtfReportsApi)
  .add(EcmOtfReportsApi)
  // Clinic patients and their records.
  .add(ClinicPatientsApi)
  .add(HelpRequestsApi)
  .add(TreatmentPlansApi)
  .add(SpotsApi)
  .add(PatientDocumentsApi)
  // Billing
  .add(ClaimsApi)
  .add(InsurancePlansApi)
  .add(CoverageApi)
  // Session notes
  .add(ClinicSessionNotesApi)
  .add(SessionNotesApi)
  .add(SessionNoteReviewsApi)
  .add(SupervisorSessionNotesApi)
  // Prescriptions, medications and medication history
  .add(PrescriptionsApi)
  .add(MedicationHistoryApi)
  .add(MedicationsApi)
  .add(AdminMedicationsApi)
  // Reminders and push devices
  .add(RemindersApi)
  .add(DevicesApi)
  // Collaborators
  .add(CollaboratorsApi)
  .add(CollaboratorAssessmentsApi)
  // Questionnaires
  .add(QuestionnairesApi)
  .add(QuestionnaireResponsesApi)
  .add(QuestionnaireInvitesApi)
  .add(ScreenersApi)
  // Content library
  .add(ContentLibraryApi)
  .add(UserPiecesApi)
  .add(UserCollectionsApi)
  .add(RecommendationsApi)
  .add(AdminContentApi)
  // Clinic videos
  .add(VideosApi)
  // Admin reports
  .add(ReportsApi)
  .add(AccessReviewsApi)
  .addError(PayloadTooLarge.schema)
  .addError(InternalServerError.schema)
  // General-area body; ECM groups declare EcmServiceUnavailable themselves.
  .addError(ServiceUnavailable.schema)
  .prefix("/v1")
  .annotateContext(OpenApi.annotations({
    title: "Care Coordination API",
    version: "1",
    description: "ECM care coordination and clinic back office. Authenticate with the X-User-Token header " +
      "that `POST /v1/users/sign_in` returns. Errors are JSON `{\"errors\": …}` bodies in the shape of each area's " +
      `spec; request bodies are JSON of at most ${smallBodyBytes / 1024} KiB unless an operation says otherwise.`,
    // Relative: the document describes the server that serves it, wherever that is deployed.
    servers: [{ url: "/", description: "This server" }],
    transform: (spec) => declareAccessReason(declareRetryAfter(allowUnknownRequestFields(dropDefaultDecodeError(spec))))
  })))
{}
