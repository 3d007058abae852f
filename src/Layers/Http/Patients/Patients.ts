/** Clinic patients and their records (general §4.2): decode, take the caller, call the services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { patientsPageSize } from "../../../Api/Patients/Patients.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ClinicPatients } from "../../../Services/Patients/ClinicPatients.js"
import { HelpRequests } from "../../../Services/Patients/HelpRequests.js"
import { PatientDocuments } from "../../../Services/Patients/PatientDocuments.js"
import { Spots } from "../../../Services/Patients/Spots.js"
import { TreatmentPlans } from "../../../Services/Patients/TreatmentPlans.js"

export const HttpClinicPatientsLive = HttpApiBuilder.group(Api, "clinicPatients", (handlers) =>
  Effect.gen(function*() {
    const patients = yield* ClinicPatients
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          patients.list(caller, { search: urlParams.search, sortBy: urlParams.sort_by, sortDir: urlParams.sort_dir }, pageRequest(urlParams, patientsPageSize))))
      .handle("filter", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          patients.list(caller, {
            search: payload.search,
            sortBy: payload.sort_by,
            sortDir: payload.sort_dir,
            providerName: payload.filters?.provider_name,
            providerId: payload.filters?.provider_id,
            status: payload.filters?.status
          }, pageRequest(payload, patientsPageSize))))
      .handle("filters", () => patients.filterOptions)
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(patients.show(caller, path.id), (patient) => ({ patient }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(patients.create(caller, payload.patient), (patient) => ({ patient }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(patients.update(caller, path.id, payload.patient), (patient) => ({ patient }))))
  }))

export const HttpHelpRequestsLive = HttpApiBuilder.group(Api, "helpRequests", (handlers) =>
  Effect.gen(function*() {
    const helpRequests = yield* HelpRequests
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => helpRequests.list(caller, urlParams.patient_id, pageRequest(urlParams, patientsPageSize))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(helpRequests.create(caller, payload.help_request), (help_request) => ({ help_request }))))
  }))

export const HttpTreatmentPlansLive = HttpApiBuilder.group(Api, "treatmentPlans", (handlers) =>
  Effect.gen(function*() {
    const plans = yield* TreatmentPlans
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => plans.list(caller, urlParams.patient_id, pageRequest(urlParams, patientsPageSize))))
      .handle("last", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(plans.last(caller, urlParams.patient_id), (treatment_plan) => ({ treatment_plan }))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(plans.show(caller, path.id), (treatment_plan) => ({ treatment_plan }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(plans.create(caller, payload.treatment_plan), (treatment_plan) => ({ treatment_plan }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(plans.update(caller, path.id, payload.treatment_plan), (treatment_plan) => ({ treatment_plan }))))
  }))

export const HttpSpotsLive = HttpApiBuilder.group(Api, "spots", (handlers) =>
  Effect.gen(function*() {
    const spots = yield* Spots
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => spots.list(caller, path.patient_id, pageRequest(urlParams, patientsPageSize))))
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(spots.create(caller, path.patient_id, payload.spot), (spot) => ({ spot }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(spots.update(caller, path.patient_id, path.id, payload.spot), (spot) => ({ spot }))))
  }))

export const HttpPatientDocumentsLive = HttpApiBuilder.group(Api, "patientDocuments", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* PatientDocuments
    return handlers
      .handle("list", ({ path, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => documents.list(caller, path.patient_id, pageRequest(urlParams, patientsPageSize))))
      .handle("upload", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(documents.upload(caller, path.patient_id, payload.document), (document) => ({ document }))))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => documents.remove(caller, path.patient_id, path.id)))
  }))

/** Every group of the Patients area. */
export const HttpPatientsAreaLive = [
  HttpClinicPatientsLive, HttpHelpRequestsLive, HttpTreatmentPlansLive, HttpSpotsLive, HttpPatientDocumentsLive
] as const
