/** Session notes (general §4.2, §4.3, §4.15): decode, take the caller, call the services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Api } from "../../../Api/Api.js"
import { visitCriteriaOf } from "../../../Api/Lists.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { sessionNotesPageSize } from "../../../Api/SessionNotes/SessionNotes.js"
import type { SessionNoteStatus } from "../../../Domain/SessionNotes/SessionNote.js"
import { NotePdfs } from "../../../Services/SessionNotes/NotePdfs.js"
import { SessionNoteReviews } from "../../../Services/SessionNotes/SessionNoteReviews.js"
import { SessionNotes } from "../../../Services/SessionNotes/SessionNotes.js"
import { SupervisedAppointments } from "../../../Services/SessionNotes/SupervisedAppointments.js"

const statusList = (status: SessionNoteStatus | ReadonlyArray<SessionNoteStatus> | null | undefined) =>
  status === null || status === undefined ? undefined : typeof status === "string" ? [status] : status

export const HttpClinicSessionNotesLive = HttpApiBuilder.group(Api, "clinicSessionNotes", (handlers) =>
  Effect.gen(function*() {
    const notes = yield* SessionNotes
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => notes.clinicList(caller, urlParams.patient_id, urlParams.status, pageRequest(urlParams, sessionNotesPageSize))))
      .handle("last", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.last(caller, urlParams.patient_id), (session_note) => ({ session_note }))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.show(caller, path.id), (session_note) => ({ session_note }))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.create(caller, payload.session_note), (session_note) => ({ session_note }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.update(caller, path.id, payload.session_note), (session_note) => ({ session_note }))))
  }))

export const HttpSessionNotesLive = HttpApiBuilder.group(Api, "sessionNotes", (handlers) =>
  Effect.gen(function*() {
    const notes = yield* SessionNotes
    const pdfs = yield* NotePdfs
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          notes.adminList(caller, {
            search: urlParams.search,
            providerId: urlParams.provider_id,
            patientId: urlParams.patient_id,
            statuses: statusList(urlParams.status),
            sortBy: urlParams.sort_by,
            sortDir: urlParams.sort_dir
          }, pageRequest(urlParams, sessionNotesPageSize))))
      .handle("filter", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          notes.adminList(caller, { ...visitCriteriaOf(payload), statuses: statusList(payload.filters?.status) },
            pageRequest(payload, sessionNotesPageSize))))
      .handle("filters", () => notes.filters)
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.show(caller, path.id), (session_note) => ({ session_note }))))
      .handle("pdf", ({ path }) => Effect.flatMap(CurrentUser, (caller) => pdfs.pdf(caller, path.id)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => notes.remove(caller, path.id)))
  }))

export const HttpSessionNoteReviewsLive = HttpApiBuilder.group(Api, "sessionNoteReviews", (handlers) =>
  Effect.gen(function*() {
    const reviews = yield* SessionNoteReviews
    return handlers
      .handle("createAddendum", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reviews.createAddendum(caller, payload), (addendum) => ({ addendum }))))
      .handle("updateAddendum", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reviews.updateAddendum(caller, path.id, payload), (addendum) => ({ addendum }))))
      .handle("createSignOff", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reviews.createSignOff(caller, payload), (sign_off) => ({ sign_off }))))
      .handle("updateSignOff", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(reviews.updateSignOff(caller, path.id, payload), (sign_off) => ({ sign_off }))))
      .handle("deleteSignOff", ({ path }) => Effect.flatMap(CurrentUser, (caller) => reviews.deleteSignOff(caller, path.id)))
  }))

export const HttpSupervisorSessionNotesLive = HttpApiBuilder.group(Api, "supervisorSessionNotes", (handlers) =>
  Effect.gen(function*() {
    const notes = yield* SessionNotes
    const appointments = yield* SupervisedAppointments
    return handlers
      .handle("listNotes", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          notes.supervisorList(caller, {
            supervisorId: urlParams.supervisor_id,
            providerId: urlParams.provider_id,
            statuses: statusList(urlParams.status)
          }, pageRequest(urlParams, sessionNotesPageSize))))
      .handle("showNote", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(notes.supervisorShow(caller, path.id), (session_note) => ({ session_note }))))
      .handle("listAppointments", ({ urlParams }) =>
        appointments.list({
          supervisorId: urlParams.supervisor_id,
          providerId: urlParams.provider_id,
          status: urlParams.status,
          supervisionStatus: urlParams.supervision_status
        }, pageRequest(urlParams, sessionNotesPageSize)))
      .handle("showAppointment", ({ path }) => Effect.map(appointments.show(path.id), (appointment) => ({ appointment })))
  }))

/** Every session note group. */
export const HttpSessionNotesAreaLive = Layer.mergeAll(
  HttpClinicSessionNotesLive, HttpSessionNotesLive, HttpSessionNoteReviewsLive, HttpSupervisorSessionNotesLive
)
