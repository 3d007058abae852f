/** Appointments (general §4.14, §4.9, §4.2): decode, take the caller, call `Appointments`. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { visitCriteriaOf } from "../../../Api/Lists.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { appointmentsPageSize } from "../../../Api/Scheduling/Appointments.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Appointments } from "../../../Services/Scheduling/Appointments.js"

export const HttpAppointmentsLive = HttpApiBuilder.group(Api, "appointments", (handlers) =>
  Effect.gen(function*() {
    const appointments = yield* Appointments
    return handlers
      .handle("list", ({ urlParams }) =>
        appointments.list({
          search: urlParams.search,
          providerId: urlParams.provider_id,
          patientId: urlParams.patient_id,
          status: urlParams.status,
          sortBy: urlParams.sort_by,
          sortDir: urlParams.sort_dir
        }, pageRequest(urlParams, appointmentsPageSize)))
      .handle("filter", ({ payload }) =>
        appointments.list({ ...visitCriteriaOf(payload), status: payload.filters?.status }, pageRequest(payload, appointmentsPageSize)))
      .handle("noShows", ({ urlParams }) => {
        const [startDate, endDate] = urlParams.date_range?.split(/\.\.|,/) ?? []
        return appointments.list({ noShows: true, startDate, endDate }, pageRequest(urlParams, appointmentsPageSize))
      })
      .handle("filters", () => appointments.filters)
      .handle("show", ({ path }) => Effect.map(appointments.show(path.id), (appointment) => ({ appointment })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => appointments.update(caller.id, path.id, payload.appointment)).pipe(
          Effect.map((appointment) => ({ appointment }))
        ))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentUser, (caller) => appointments.cancel(caller.id, path.id)))
      .handle("refreshTelephonyTokens", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => appointments.refreshTokens(caller.id, path.id)))
  }))

export const HttpProviderAppointmentsLive = HttpApiBuilder.group(Api, "providerAppointments", (handlers) =>
  Effect.gen(function*() {
    const appointments = yield* Appointments
    return handlers
      .handle("list", ({ path, urlParams }) =>
        appointments.providerList(path.provider_id, urlParams.status, pageRequest(urlParams, appointmentsPageSize)))
      .handle("show", ({ path }) =>
        Effect.map(appointments.providerShow(path.provider_id, path.id), (appointment) => ({ appointment })))
  }))

export const HttpClinicAppointmentsLive = HttpApiBuilder.group(Api, "clinicAppointments", (handlers) =>
  Effect.gen(function*() {
    const appointments = yield* Appointments
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          appointments.clinicList(caller, urlParams.patient_id, pageRequest(urlParams, appointmentsPageSize))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => appointments.clinicShow(caller, path.id)).pipe(
          Effect.map((appointment) => ({ appointment }))
        ))
      .handle("onCall", ({ path }) => Effect.flatMap(CurrentUser, (caller) => appointments.onCall(caller, path.id)))
  }))
