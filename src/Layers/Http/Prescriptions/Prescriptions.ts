/** Prescriptions, medication history and the medications catalogue: decode, take the caller, call the services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Api } from "../../../Api/Api.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { historyPageSize, medicationsPageSize, prescriptionsPageSize } from "../../../Api/Prescriptions/Prescriptions.js"
import { CurrentUser } from "../../../Api/Security.js"
import type { Prescription } from "../../../Domain/Prescriptions/Prescription.js"
import { Medications } from "../../../Services/Prescriptions/Medications.js"
import { isAdmin } from "../../../Services/Access/Viewer.js"
import { Prescriptions } from "../../../Services/Prescriptions/Prescriptions.js"

export const HttpPrescriptionsLive = HttpApiBuilder.group(Api, "prescriptions", (handlers) =>
  Effect.gen(function*() {
    const prescriptions = yield* Prescriptions
    const wrap = Effect.map((prescription: Prescription) => ({ prescription }))
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          prescriptions.list(caller, {
            patientId: urlParams.patient_id,
            providerId: urlParams.provider_id,
            status: urlParams.status,
            medicationName: urlParams.medication_name
          }, pageRequest(urlParams, prescriptionsPageSize))))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => prescriptions.create(caller, payload.prescription)).pipe(wrap))
      .handle("show", ({ path }) => Effect.flatMap(CurrentUser, (caller) => prescriptions.show(caller, path.id)).pipe(wrap))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => prescriptions.update(caller, path.id, payload.prescription)).pipe(wrap))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => prescriptions.cancel(caller, path.id)))
      .handle("refill", ({ path }) => Effect.flatMap(CurrentUser, (caller) => prescriptions.refill(caller, path.id)).pipe(wrap))
  }))

export const HttpMedicationHistoryLive = HttpApiBuilder.group(Api, "medicationHistory", (handlers) =>
  Effect.gen(function*() {
    const prescriptions = yield* Prescriptions
    return handlers.handle("show", ({ path, urlParams }) =>
      Effect.flatMap(CurrentUser, (caller) => prescriptions.history(caller, path.id, pageRequest(urlParams, historyPageSize))))
  }))

export const HttpMedicationsLive = HttpApiBuilder.group(Api, "medications", (handlers) =>
  Effect.gen(function*() {
    const medications = yield* Medications
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          medications.list({ search: urlParams.search, includeInactive: isAdmin(caller) && urlParams.include_inactive === "true" },
            pageRequest(urlParams, medicationsPageSize))))
      .handle("show", ({ path }) => Effect.map(medications.show(path.id), (medication) => ({ medication })))
  }))

export const HttpAdminMedicationsLive = HttpApiBuilder.group(Api, "adminMedications", (handlers) =>
  Effect.gen(function*() {
    const medications = yield* Medications
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => medications.create(caller.id, payload.medication)).pipe(Effect.map((medication) => ({ medication }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => medications.update(caller.id, path.id, payload.medication)).pipe(
          Effect.map((medication) => ({ medication }))
        ))
  }))

/** Every handler layer of the area. */
export const HttpPrescriptionsAreaLive = Layer.mergeAll(HttpPrescriptionsLive, HttpMedicationHistoryLive, HttpMedicationsLive, HttpAdminMedicationsLive)
