/**
 * ECM: members and their information file imports, activities and events, communications and the
 * telephony webhooks, Form C and lead care managers, engagement status and PRTF reports.
 */
import { Layer } from "effect"
import { Activities } from "../../../Services/Ecm/Activities.js"
import { Communications } from "../../../Services/Ecm/Communications.js"
import { EcmPatients } from "../../../Services/Ecm/EcmPatients.js"
import { EngagementStatuses } from "../../../Services/Ecm/EngagementStatuses.js"
import { Events } from "../../../Services/Ecm/Events.js"
import { FormCSubmissions } from "../../../Services/Ecm/FormCSubmissions.js"
import { LeadCareManagers } from "../../../Services/Ecm/LeadCareManagers.js"
import { MifFiles } from "../../../Services/Ecm/MifFiles.js"
import { MifImport } from "../../../Services/Ecm/MifImport.js"
import { PrtfReports } from "../../../Services/Ecm/PrtfReports.js"
import { TelephonyWebhooks } from "../../../Services/Ecm/TelephonyWebhooks.js"
import { defineArea } from "../../Area.js"
import { HttpEcmActivitiesLive } from "./Activities.js"
import {
  HttpEcmCommunicationsAdminLive,
  HttpEcmCommunicationsLive,
  HttpTelephonyWebhooksLive,
  TwilioSignatureLive
} from "./Communications.js"
import { HttpEcmEngagementStatusLive } from "./EngagementStatus.js"
import { HttpEcmEventsLive } from "./Events.js"
import { HttpEcmAdminFormCLive, HttpEcmFormCLive } from "./FormC.js"
import { HttpEcmLeadCareManagersLive } from "./LeadCareManagers.js"
import { HttpEcmMifsLive } from "./Mifs.js"
import { HttpEcmPatientsLive } from "./Patients.js"
import { HttpEcmPrtfReportsLive } from "./PrtfReports.js"

export const EcmArea = defineArea({
  handlers: Layer.mergeAll(
    HttpEcmMifsLive, HttpEcmPatientsLive, HttpEcmFormCLive, HttpEcmAdminFormCLive, HttpEcmLeadCareManagersLive,
    HttpEcmActivitiesLive, HttpEcmEventsLive,
    HttpEcmCommunicationsLive, HttpEcmCommunicationsAdminLive, HttpTelephonyWebhooksLive,
    HttpEcmPrtfReportsLive, HttpEcmEngagementStatusLive
  ).pipe(Layer.provide(TwilioSignatureLive)),
  services: Layer.mergeAll(
    MifImport.Default, MifFiles.Default, EcmPatients.Default, FormCSubmissions.Default, LeadCareManagers.Default,
    PrtfReports.Default, EngagementStatuses.Default, Activities.Default, Events.Default,
    TelephonyWebhooks.Default.pipe(Layer.provideMerge(Communications.Default))
  )
})
