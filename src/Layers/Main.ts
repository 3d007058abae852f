/**
 * How the parts fit: config → logging/tracing → database (migrated) → adapters and services →
 * HTTP. The HTTP server layer is built last, so it listens only once migrations are done and the
 * app is attached: no request can arrive at a half-built service.
 */
import { Headers, HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Function, Layer } from "effect"
import { createServer } from "node:http"
import { Api } from "../Api/Api.js"
import { Accounts } from "../Services/Accounts/Accounts.js"
import { AdminUsers } from "../Services/Accounts/AdminUsers.js"
import { AuditLog } from "../Services/AuditLog.js"
import { Auth } from "../Services/Auth.js"
import { UserLifecycle } from "../Services/Accounts/UserLifecycle.js"
import { ensureBootstrapAdmin, ensureSystemAccount } from "../Services/Accounts/Bootstrap.js"
import { UsersRepo } from "../Services/Accounts/UsersRepo.js"
import { Sessions } from "../Services/Accounts/Sessions.js"
import { sweepExpiredSessions } from "../Services/Accounts/SessionTasks.js"
import { ProviderInvites } from "../Services/Providers/Invites.js"
import { Providers } from "../Services/Providers/Providers.js"
import { AdaptersLive, ObjectDownloadLive } from "./Adapters.js"
import { AppConfig } from "../Services/AppConfig.js"
import { AppConfigLive } from "./Config.js"
import { DatabaseLive } from "./Database.js"
import { InstanceLive } from "./Instance.js"
import { type JobSchedule, JobWorkerLive, PgJobsLive } from "./Jobs.js"
import type { AnyJobTask } from "../Services/Jobs.js"
import { HttpAdminUsersLive } from "./Http/Accounts/AdminUsers.js"
import { HttpEcmMifsLive } from "./Http/Ecm/Mifs.js"
import { HttpEcmPatientsLive } from "./Http/Ecm/Patients.js"
import { EcmPatients } from "../Services/Ecm/EcmPatients.js"
import { MifFiles } from "../Services/Ecm/MifFiles.js"
import { MifImport } from "../Services/Ecm/MifImport.js"
// Issue 11: ECM activities and events.
import { HttpEcmActivitiesLive } from "./Http/Ecm/Activities.js"
import { HttpEcmEventsLive } from "./Http/Ecm/Events.js"
import { Activities } from "../Services/Ecm/Activities.js"
import { Events } from "../Services/Ecm/Events.js"
// Issue 14: ECM communications and the telephony webhooks.
import {
  HttpEcmCommunicationsAdminLive,
  HttpEcmCommunicationsLive,
  HttpTelephonyWebhooksLive,
  TwilioSignatureLive
} from "./Http/Ecm/Communications.js"
import { Communications } from "../Services/Ecm/Communications.js"
import { TelephonyWebhooks } from "../Services/Ecm/TelephonyWebhooks.js"
// Issue 12: Form C and lead care managers.
import { HttpEcmAdminFormCLive, HttpEcmFormCLive } from "./Http/Ecm/FormC.js"
import { HttpEcmLeadCareManagersLive } from "./Http/Ecm/LeadCareManagers.js"
import { FormCSubmissions } from "../Services/Ecm/FormCSubmissions.js"
import { LeadCareManagers } from "../Services/Ecm/LeadCareManagers.js"
// Issue 16: PRTF reports and engagement status.
import { HttpEcmEngagementStatusLive } from "./Http/Ecm/EngagementStatus.js"
import { HttpEcmPrtfReportsLive } from "./Http/Ecm/PrtfReports.js"
import { EngagementStatuses } from "../Services/Ecm/EngagementStatuses.js"
import { PrtfReports } from "../Services/Ecm/PrtfReports.js"
import { ErrorHandlingLive } from "./Http/Errors.js"
import { observeRequests, withoutPlatformTracer } from "./Http/Observability.js"
import { corsFor, withResponseHeaders } from "./Http/ResponseHeaders.js"
import { currentTracker, GracefulDrainLive, NodeServer, ShutdownReportLive } from "./Http/Shutdown.js"
import { BodyLimitLive, DocsLive, HealthLive } from "./Http/Routes.js"
import { SecurityLive } from "./Http/Security.js"
import { HttpUsersLive } from "./Http/Accounts/Users.js"
import { HttpProviderInvitesLive } from "./Http/Providers/Invites.js"
import { HttpProvidersLive } from "./Http/Providers/Providers.js"
import { HttpSupervisorsLive } from "./Http/Providers/Supervisors.js"
import { LoggingLive } from "./Logging.js"
// Scheduling (issue 15)
import { Appointments } from "../Services/Scheduling/Appointments.js"
import { Books } from "../Services/Scheduling/Books.js"
import { extendSlotSeries } from "../Services/Scheduling/SlotTasks.js"
import { Slots } from "../Services/Scheduling/Slots.js"
import { VideoTokensLive } from "./Adapters.js"
import { HttpAppointmentsLive, HttpClinicAppointmentsLive, HttpProviderAppointmentsLive } from "./Http/Scheduling/Appointments.js"
import { HttpAvailabilityLive } from "./Http/Scheduling/Availability.js"
// Reminders and push devices (issue 17)
import { Devices } from "../Services/Accounts/Devices.js"
import { ReminderSchedule } from "../Services/Scheduling/ReminderSchedule.js"
import { Reminders } from "../Services/Scheduling/Reminders.js"
import { ReminderSender } from "../Services/Scheduling/ReminderSender.js"
import { sendReminderTask } from "../Services/Scheduling/ReminderTasks.js"
import { HttpDevicesLive } from "./Http/Accounts/Devices.js"
import { HttpRemindersLive } from "./Http/Scheduling/Reminders.js"
// Clinic patients and their records (issue 13).
import { HttpPatientsAreaLive } from "./Http/Patients/Patients.js"
import { ClinicPatients } from "../Services/Patients/ClinicPatients.js"
import { HelpRequests } from "../Services/Patients/HelpRequests.js"
import { Access } from "../Services/Access/Access.js"
import { PatientDocuments } from "../Services/Patients/PatientDocuments.js"
import { Spots } from "../Services/Patients/Spots.js"
import { TreatmentPlans } from "../Services/Patients/TreatmentPlans.js"
// Billing (issue 19)
import { ClaimDocuments } from "../Services/Billing/ClaimDocuments.js"
import { Claims } from "../Services/Billing/Claims.js"
import { EdiBatches } from "../Services/Billing/EdiBatches.js"
import { Insurance } from "../Services/Billing/Insurance.js"
import { HttpClaimsLive } from "./Http/Billing/Claims.js"
import { HttpCoverageLive, HttpInsurancePlansLive } from "./Http/Billing/Insurance.js"
// Session notes (issue 18)
import { NotePdfs } from "../Services/SessionNotes/NotePdf.js"
import { SessionNoteReviews } from "../Services/SessionNotes/Reviews.js"
import { SessionNotes } from "../Services/SessionNotes/SessionNotes.js"
import { SupervisedAppointments } from "../Services/SessionNotes/Supervision.js"
import { HttpSessionNotesAreaLive } from "./Http/SessionNotes/SessionNotes.js"
// Prescriptions (issue 20)
import { Medications } from "../Services/Prescriptions/Medications.js"
import { Prescriptions } from "../Services/Prescriptions/Prescriptions.js"
import { expirePrescriptions } from "../Services/Prescriptions/PrescriptionTasks.js"
import { HttpPrescriptionsAreaLive } from "./Http/Prescriptions/Prescriptions.js"
// Collaborators (issue 22)
import { AssessmentJobs } from "../Services/Collaborators/AssessmentJobs.js"
import { Assessments } from "../Services/Collaborators/Assessments.js"
import { expireAssessmentsTask, incidentAlertTask, sendAssessmentLinkTask } from "../Services/Collaborators/AssessmentTasks.js"
import { Collaborators } from "../Services/Collaborators/Collaborators.js"
import { LinkSealKey } from "../Services/Collaborators/LinkSeal.js"
import { HttpCollaboratorsAreaLive } from "./Http/Collaborators/Collaborators.js"
import { SigningSecret, SigningSecretLive } from "./SigningSecret.js"
// Admin reports (issue 25)
import { ReportGenerator } from "../Services/Reports/ReportGenerator.js"
import { Reports } from "../Services/Reports/Reports.js"
import { expireReportsTask, generateReportTask } from "../Services/Reports/ReportTasks.js"
import { WeeklyMetricsReport } from "../Services/Reports/WeeklyMetrics.js"
import { HttpReportsLive } from "./Http/Reports/Reports.js"
import { TracingLive } from "./Tracing.js"
// Questionnaires (issue 21)
import { HttpQuestionnairesAreaLive } from "./Http/Questionnaires/Questionnaires.js"
import { QuestionnaireAlerts } from "../Services/Questionnaires/Alerts.js"
import { Catalogue } from "../Services/Questionnaires/Catalogue.js"
import { QuestionnaireInvites } from "../Services/Questionnaires/Invites.js"
import { QuestionnaireMail } from "../Services/Questionnaires/Mail.js"
import { QuestionnaireResponses } from "../Services/Questionnaires/Responses.js"
import { Screeners } from "../Services/Questionnaires/Screeners.js"
import { purgeScreenersTask, questionnaireTasks } from "../Services/Questionnaires/Tasks.js"
// Content library (issue 23)
import { Assignees } from "../Services/Content/Assignees.js"
import { ContentFiles } from "../Services/Content/ContentFiles.js"
import { ContentImport } from "../Services/Content/ContentImport.js"
import { loadDemoContent } from "../Services/Content/DemoContent.js"
import { ContentLibrary } from "../Services/Content/Library.js"
import { Recommendations, refreshContentStats } from "../Services/Content/Recommendations.js"
import { UserCollections } from "../Services/Content/UserCollections.js"
import { UserPieces } from "../Services/Content/UserPieces.js"
import { HttpContentLive } from "./Http/Content/Content.js"
// Clinic videos (issue 24)
import { VideoProcessing } from "../Services/Videos/VideoProcessing.js"
import { deleteVideoObjectsTask, processVideoTask, sweepVideoUploadsTask } from "../Services/Videos/VideoTaskDefs.js"
import { Videos } from "../Services/Videos/Videos.js"
import { VideoUploads } from "../Services/Videos/VideoUploads.js"
import { FfmpegVideoProcessorLive } from "./FfmpegVideoProcessor.js"
import { HttpVideosLive } from "./Http/Videos/Videos.js"

export const ServicesLive = Layer.mergeAll(Auth.Default, UsersRepo.Default, Accounts.Default, AuditLog.Default, UserLifecycle.Default, AdminUsers.Default,
  Providers.Default, ProviderInvites.Default)

/** ECM: patients and member information file imports. */
const EcmServicesLive = Layer.mergeAll(MifImport.Default, MifFiles.Default, EcmPatients.Default,
  // Issue 12: Form C and lead care managers.
  FormCSubmissions.Default, LeadCareManagers.Default).pipe(
  Layer.provide(AuditLog.Default)
)

/** PRTF reports and engagement status (issue 16). */
const EcmPrtfServicesLive = Layer.mergeAll(PrtfReports.Default, EngagementStatuses.Default).pipe(
  Layer.provide(AuditLog.Default)
)

/** ECM activities, comments and events (issue 11). */
const EcmActivitiesServicesLive = Layer.mergeAll(Activities.Default, Events.Default).pipe(
  Layer.provide(AuditLog.Default)
)

/** ECM communications and the telephony webhooks (issue 14). */
const EcmCommunicationsServicesLive = TelephonyWebhooks.Default.pipe(
  Layer.provideMerge(Communications.Default),
  Layer.provide(AuditLog.Default)
)

/** Clinic patients and their records (issue 13). */
const PatientServicesLive = Layer.mergeAll(
  Access.Default, ClinicPatients.Default, HelpRequests.Default, TreatmentPlans.Default, Spots.Default, PatientDocuments.Default
)

/** Scheduling (issue 15): availability, books, appointments and their video tokens. */
const SchedulingServicesLive = Layer.mergeAll(Slots.Default, Books.Default, Appointments.Default, Reminders.Default).pipe(
  Layer.provide(ReminderSchedule.Default),
  Layer.provide(AuditLog.Default),
  Layer.provide(Access.Default),
  Layer.provide(VideoTokensLive)
)

/** Billing (issue 19): claims, documents, 837P batches, insurance plans and coverage. */
const BillingServicesLive = Layer.mergeAll(Claims.Default, ClaimDocuments.Default, EdiBatches.Default, Insurance.Default).pipe(
  Layer.provide(AuditLog.Default)
)

/** Session notes, addenda, sign-offs and supervision (issue 18). */
const SessionNoteServicesLive = Layer.mergeAll(SessionNotes.Default, SessionNoteReviews.Default, NotePdfs.Default, SupervisedAppointments.Default)

/** Prescriptions, the medications catalogue and medication history (issue 20). */
const PrescriptionServicesLive = Layer.mergeAll(Prescriptions.Default, Medications.Default).pipe(
  Layer.provide(AuditLog.Default),
  Layer.provide(Access.Default)
)
/** Admin reports (issue 25): weekly metrics and report files. */
const ReportServicesLive = Layer.mergeAll(Reports.Default, WeeklyMetricsReport.Default).pipe(Layer.provide(AuditLog.Default))

/** Questionnaires (issue 21): the catalogue (seeded at start-up), responses, invites and public screeners. */
const QuestionnaireServicesLive = Layer.mergeAll(
  Catalogue.Default, QuestionnaireResponses.Default, QuestionnaireInvites.Default, Screeners.Default, QuestionnaireAlerts.Default
).pipe(Layer.provide(AuditLog.Default), Layer.provide(Access.Default))

/** Instruments from seeds/questionnaires: a changed file becomes the next version before any request is served. */
const QuestionnaireSeedLive = Layer.effectDiscard(Effect.flatMap(Catalogue, (catalogue) => catalogue.seed())).pipe(
  Layer.provide(Catalogue.Default)
)

/** Content library (issue 23): library, import/export and files, assignments, recommendations. */
const ContentServicesLive = Layer.mergeAll(
  ContentLibrary.Default, ContentImport.Default, ContentFiles.Default, UserPieces.Default, UserCollections.Default, Recommendations.Default
).pipe(
  Layer.provide(Assignees.Default),
  Layer.provide(AuditLog.Default),
  Layer.provide(Access.Default)
)

/** Collaborators (issue 22): the key that seals assessment links in their mail job's payload. */
export const LinkSealKeyLive = LinkSealKey.fromSecret(SigningSecret).pipe(Layer.provide(SigningSecretLive))
/** Collaborators and their assessments (issue 22). */
const CollaboratorServicesLive = Assessments.Default.pipe(
  Layer.provideMerge(Collaborators.Default),
  Layer.provide(LinkSealKeyLive)
)

/** The demo library, loaded at start-up into an empty library unless CONTENT_DEMO=false (issue 23). */
const DemoContentLive = Layer.effectDiscard(loadDemoContent).pipe(Layer.provide(ContentImport.Default), Layer.provide(AuditLog.Default))

/** Clinic videos (issue 24): records, uploads and the processing of the job worker. */
const VideoServicesLive = VideoUploads.Default.pipe(
  Layer.provideMerge(Videos.Default),
  Layer.provideMerge(VideoProcessing.Default),
  Layer.provide(FfmpegVideoProcessorLive),
  Layer.provide(Access.Default),
  Layer.provide(AuditLog.Default)
)

/** Push devices of user accounts (issue 17). */
const DeviceServicesLive = Devices.Default.pipe(Layer.provide(AuditLog.Default))

const BootstrapLive = Layer.effectDiscard(
  Effect.flatMap(AppConfig, (config) => ensureBootstrapAdmin(config.bootstrapAdminEmail, config.bootstrapAdminPassword)).pipe(
    Effect.zipRight(ensureSystemAccount)
  )
).pipe(Layer.provide(UsersRepo.Default))

export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([HttpUsersLive, HttpAdminUsersLive, HttpProvidersLive, HttpSupervisorsLive, HttpProviderInvitesLive,
    HttpEcmMifsLive, HttpEcmPatientsLive,
    // Issue 12: Form C and lead care managers.
    HttpEcmFormCLive, HttpEcmAdminFormCLive, HttpEcmLeadCareManagersLive]),
  // Issue 11: ECM activities and events.
  Layer.provide([HttpEcmActivitiesLive, HttpEcmEventsLive]),
  // Issue 14: ECM communications and the telephony webhooks.
  Layer.provide([HttpEcmCommunicationsLive, HttpEcmCommunicationsAdminLive, HttpTelephonyWebhooksLive]),
  Layer.provide(TwilioSignatureLive),
  // Issue 16: PRTF reports and engagement status.
  Layer.provide([HttpEcmPrtfReportsLive, HttpEcmEngagementStatusLive]),
  // Scheduling (issue 15)
  Layer.provide([HttpAvailabilityLive, HttpAppointmentsLive, HttpProviderAppointmentsLive, HttpClinicAppointmentsLive]),
  Layer.provide(HttpPatientsAreaLive),
  // Billing (issue 19)
  Layer.provide([HttpClaimsLive, HttpInsurancePlansLive, HttpCoverageLive]),
  // Reminders and push devices (issue 17)
  Layer.provide([HttpRemindersLive, HttpDevicesLive]),
  // Session notes (issue 18)
  Layer.provide(HttpSessionNotesAreaLive),
  // Prescriptions (issue 20)
  Layer.provide(HttpPrescriptionsAreaLive),
  // Collaborators (issue 22)
  Layer.provide(HttpCollaboratorsAreaLive),
  // Questionnaires (issue 21)
  Layer.provide(HttpQuestionnairesAreaLive),
  // Content library (issue 23)
  Layer.provide(HttpContentLive),
  // Clinic videos (issue 24)
  Layer.provide(HttpVideosLive),
  // Admin reports (issue 25)
  Layer.provide(HttpReportsLive),
  Layer.provide(SecurityLive)
)

/**
 * Around every request, outermost first: span, access log and in-flight count; CORS (whose
 * preflight answers before any route). The headers every response carries are added as it is sent.
 */
const serveLive = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  const tracker = yield* currentTracker
  const https = config.publicBaseUrl.startsWith("https:")
  return HttpApiBuilder.serve(Function.flow(
    corsFor(config),
    observeRequests({ trustedProxies: config.trustedProxies, tracker })
  )).pipe(withResponseHeaders({ https, draining: () => tracker.draining }))
}))

/** The HTTP app on the given server layer (the real one, or `NodeHttpServer.layerTest`). */
export const httpLayer = <ROut, E, RIn>(server: Layer.Layer<ROut, E, RIn>) =>
  serveLive.pipe(
    Layer.provide(DocsLive),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/v1/openapi.json" })),
    Layer.provide(HealthLive),
    Layer.provide(ObjectDownloadLive),
    Layer.provide(ErrorHandlingLive),
    Layer.provide(BodyLimitLive),
    Layer.provide(ApiLive),
    withoutPlatformTracer,
    // Should any platform tracer or logger print headers, the token is redacted like Authorization.
    (layer) => Layer.locallyWith(layer, Headers.currentRedactedNames, (names) => [...names, "x-user-token"]),
    Layer.provideMerge(server)
  )

/** What the job tasks need, one line per area (the worker provides each below). */
type JobTaskNeeds =
  | Sessions
  | Slots
  | ReminderSender
  | Prescriptions
  | AssessmentJobs
  | QuestionnaireMail
  | Recommendations
  | VideoProcessing
  | ReportGenerator

/**
 * Every task the job worker runs, and the recurring ones (crontab times, UTC; each at its own
 * minute, so housekeeping never piles onto one moment of the pool).
 */
export const jobTasks: ReadonlyArray<AnyJobTask<JobTaskNeeds>> = [
  sweepExpiredSessions,
  extendSlotSeries,
  sendReminderTask,
  // Prescriptions (issue 20)
  expirePrescriptions,
  // Collaborators (issue 22)
  sendAssessmentLinkTask,
  incidentAlertTask,
  expireAssessmentsTask,
  // Questionnaires (issue 21)
  ...questionnaireTasks,
  // Content library (issue 23)
  refreshContentStats,
  // Clinic videos (issue 24)
  processVideoTask,
  deleteVideoObjectsTask,
  sweepVideoUploadsTask,
  // Admin reports (issue 25)
  generateReportTask,
  expireReportsTask,
]
const jobSchedules: ReadonlyArray<JobSchedule> = [
  { task: sweepExpiredSessions, pattern: "17 * * * *" },
  // Scheduling (issue 15): recurring availability kept 90 days ahead, nightly in the Americas.
  { task: extendSlotSeries, pattern: "23 10 * * *" },
  // Prescriptions (issue 20): past their end date, expired daily after midnight in the Americas (09:05 UTC).
  { task: expirePrescriptions, pattern: "5 9 * * *" },
  // Collaborators (issue 22): assessments whose link ran out, hourly.
  { task: expireAssessmentsTask, pattern: "11 * * * *" },
  // Questionnaires (issue 21): public screeners older than 180 days, nightly.
  { task: purgeScreenersTask, pattern: "35 9 * * *" },
  // Content library (issue 23): popularity figures for recommendations, nightly in the Americas.
  { task: refreshContentStats, pattern: "47 9 * * *" },
  // Clinic videos (issue 24): uploads idle 24 h are failed and aborted.
  { task: sweepVideoUploadsTask, pattern: "29 * * * *" },
  // Admin reports (issue 25): files past their 30 days deleted daily.
  { task: expireReportsTask, pattern: "41 9 * * *" },
]

/** This instance's job worker (off with `JOBS_ENABLED=false`) with what its tasks need. */
const JobWorkerWithTasksLive = JobWorkerLive(jobTasks, jobSchedules).pipe(
  Layer.provide(Sessions.Default),
  Layer.provide(Slots.Default.pipe(Layer.provide(AuditLog.Default))),
  Layer.provide(ReminderSender.Default),
  Layer.provide(PrescriptionServicesLive),
  // Collaborators (issue 22)
  Layer.provide(AssessmentJobs.Default.pipe(Layer.provide(LinkSealKeyLive))),
  Layer.provide(QuestionnaireMail.Default),
  Layer.provide(Recommendations.Default.pipe(
    Layer.provide(Assignees.Default), Layer.provide(Access.Default)
  )),
  Layer.provide(VideoServicesLive),
  Layer.provide(ReportGenerator.Default),
)

/**
 * Everything but config, adapters and the HTTP server: what the app needs to serve requests, and
 * the job worker. `Jobs` adds jobs through the app's own database connection.
 */
export const backendLayer = Layer.mergeAll(
  ServicesLive,
  EcmServicesLive,
  EcmActivitiesServicesLive,
  EcmCommunicationsServicesLive,
  EcmPrtfServicesLive,
  PatientServicesLive,
  BootstrapLive,
  SchedulingServicesLive,
  BillingServicesLive,
  DeviceServicesLive,
  SessionNoteServicesLive,
  PrescriptionServicesLive,
  CollaboratorServicesLive,
  QuestionnaireServicesLive,
  QuestionnaireSeedLive,
  ContentServicesLive,
  DemoContentLive,
  VideoServicesLive,
  ReportServicesLive,
  JobWorkerWithTasksLive
).pipe(
  Layer.provideMerge(Layer.provideMerge(Layer.merge(PgJobsLive, InstanceLive), DatabaseLive))
)

/** The Node server, also as `NodeServer` so shutdown can stop it accepting connections. */
export const nodeServer = Layer.unwrapEffect(Effect.map(AppConfig, (config) => {
  const server = createServer()
  return Layer.merge(
    NodeHttpServer.layer(() => server, { port: config.port, host: config.host }),
    Layer.succeed(NodeServer, server)
  )
}))

const announceDocs = Layer.effectDiscard(Effect.flatMap(AppConfig, (config) =>
  Effect.logInfo(`API docs at ${config.publicBaseUrl}/docs (OpenAPI: ${config.publicBaseUrl}/v1/openapi.json)`)))

/**
 * Shutdown runs this in reverse: drain the requests in flight (GracefulDrainLive), close the
 * server, the database pool and the embedded PostgreSQL, then log the report (ShutdownReportLive).
 */
export const MainLive = GracefulDrainLive.pipe(
  Layer.provideMerge(httpLayer(nodeServer)),
  HttpServer.withLogAddress,
  Layer.provide(announceDocs),
  Layer.provide(backendLayer),
  Layer.provide(AdaptersLive),
  Layer.provide(ShutdownReportLive),
  Layer.provide(TracingLive),
  Layer.provide(LoggingLive),
  Layer.provide(AppConfigLive)
)
