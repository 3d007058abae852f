/**
 * Appointments (general §2.13): the admin list and record (§4.14), a provider's appointments
 * (§4.9), and the clinic's view for patients' families and providers (§4.2).
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { AppointmentId, AppointmentIdFromText, PatientId, PatientIdFromText, ProviderId, ProviderIdFromText } from "../../Domain/Ids.js"
import { Appointment, AppointmentStatus, AppointmentType, PersonName } from "../../Domain/Scheduling/Scheduling.js"
import { IsoDate, IsoTimestamp, IsoTimestampInput } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { Conflict } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BoundedString } from "../Schemas.js"
import { AdminAuthentication, Authentication } from "../Security.js"
import { maxDurationMinutes, maxNotesLength } from "./Availability.js"
import { dateRange, listBodyFields, listQuery, nameFilter } from "../Lists.js"

export const appointmentsPageSize = 25
/** Video access tokens live this long (Twilio allows up to 24 hours). */
export const videoTokenTtlSeconds = 4 * 60 * 60
/** The on-call token is handed out from this long before the appointment to its end. */
export const onCallLeadMinutes = 15

export const appointmentMessages = {
  notFound: "Appointment not found",
  conflict: "Appointment conflicts with another appointment of the provider",
  videoNotConfigured: "is not configured (set TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)"
} as const

export const AppointmentSortColumn = Schema.Literal(
  "id", "scheduled_at", "status", "appointment_type", "duration_minutes", "patient_id", "provider_id", "created_at", "updated_at"
)
export type AppointmentSortColumn = typeof AppointmentSortColumn.Type

export class AppointmentList extends Schema.Class<AppointmentList>("AppointmentList")({
  appointments: Schema.Array(Appointment),
  pagination: Pagination
}) {}

export class AppointmentResponse extends Schema.Class<AppointmentResponse>("AppointmentResponse")({ appointment: Appointment }) {}

const AppointmentListQuery = listQuery({
  size: "page_size",
  sortBy: AppointmentSortColumn,
  search: "Matches patient and provider names and notes",
  fields: {
    provider_id: Schema.optional(ProviderIdFromText),
    patient_id: Schema.optional(PatientIdFromText),
    status: Schema.optional(AppointmentStatus)
  }
})

export class FilterAppointmentsRequest extends Schema.Class<FilterAppointmentsRequest>("FilterAppointmentsRequest")({
  ...listBodyFields({
    size: "page_size",
    sortBy: AppointmentSortColumn,
    search: true,
    filters: Schema.Struct({
      date: dateRange("Days of `scheduled_at` in the clinic's time zone, both inclusive"),
      status: Schema.optional(Schema.NullOr(AppointmentStatus)),
      appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
      patient_name: nameFilter(),
      provider_name: nameFilter()
    })
  })
}, requestBody({
  sort_by: "scheduled_at",
  sort_dir: "ASC",
  page_size: 25,
  filters: { date: { start_date: "2030-03-01", end_date: "2030-03-31" }, status: "scheduled", appointment_type: "therapy", provider_name: "Lee" }
})) {}

export class UpdateAppointmentRequest extends Schema.Class<UpdateAppointmentRequest>("UpdateAppointmentRequest")({
  appointment: Schema.Struct({
    scheduled_at: Schema.optional(IsoTimestampInput),
    provider_id: Schema.optional(ProviderId),
    patient_id: Schema.optional(PatientId),
    status: Schema.optional(AppointmentStatus),
    notes: Schema.optional(Schema.NullOr(BoundedString(maxNotesLength))),
    duration_minutes: Schema.optional(Schema.Int.pipe(
      Schema.greaterThan(0, { message: () => "must be greater than 0" }),
      Schema.lessThanOrEqualTo(maxDurationMinutes, { message: () => `must be less than or equal to ${maxDurationMinutes}` })
    ))
  })
}, requestBody(
  { appointment: { status: "confirmed", notes: "Parent confirmed by phone" } },
  { appointment: { scheduled_at: new Date("2030-03-05T10:00:00-08:00"), provider_id: 3, duration_minutes: 50 } }
)) {}

const NoShowQuery = listQuery({
  size: "page_size",
  fields: {
    date_range: Schema.optional(Schema.String.pipe(
      Schema.filter((s) => {
        const match = /^(\d{4}-\d{2}-\d{2})(?:\.\.|,)(\d{4}-\d{2}-\d{2})$/.exec(s)
        return match !== null && Schema.is(IsoDate)(match[1]) && Schema.is(IsoDate)(match[2])
      }, {
        message: () => "is invalid",
        jsonSchema: { pattern: "^\\d{4}-\\d{2}-\\d{2}(\\.\\.|,)\\d{4}-\\d{2}-\\d{2}$", maxLength: 22 }
      }),
      Schema.annotations({ description: "`YYYY-MM-DD..YYYY-MM-DD` (or with a comma): days of `scheduled_at`, clinic time zone, inclusive" })
    ))
  }
})

export class AppointmentFilters extends Schema.Class<AppointmentFilters>("AppointmentFilters")({
  statuses: Schema.Array(AppointmentStatus),
  appointment_types: Schema.Array(AppointmentType),
  providers: Schema.Array(PersonName)
}) {}

export class VideoTokens extends Schema.Class<VideoTokens>("VideoTokens")({
  provider: Schema.String,
  patient: Schema.String
}) {}

export class TelephonyTokens extends Schema.Class<TelephonyTokens>("TelephonyTokens")({
  appointment_id: AppointmentId,
  room_name: Schema.String,
  tokens: VideoTokens,
  expires_at: IsoTimestamp
}) {}

export class OnCallAppointment extends Schema.Class<OnCallAppointment>("OnCallAppointment")({
  appointment: Appointment,
  room_name: Schema.String,
  token: Schema.String.annotations({ description: "Twilio Video access token of the caller" }),
  identity: Schema.String.annotations({ description: "The caller's identity in the room: ids only" }),
  expires_at: IsoTimestamp
}) {}

const idPath = Schema.Struct({ id: AppointmentIdFromText })

/** Admin appointments (general §4.14). */
export class AppointmentsApi extends HttpApiGroup.make("appointments")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/appointments")
      .setUrlParams(AppointmentListQuery)
      .addSuccess(AppointmentList)
      .annotateContext(operationDocs({
        summary: "List appointments",
        description: `Appointments, by \`scheduled_at\` unless \`sort_by\`/\`sort_dir\` say otherwise, ${appointmentsPageSize} a ` +
          "page by default; filters by provider, patient and status; `search` matches patient and provider names and notes.",
        access: Access.admin,
        spec: "general §2.13, §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/admin/clinic/appointments/filter_appointments")
      .setPayload(FilterAppointmentsRequest)
      .addSuccess(AppointmentList)
      .annotateContext(operationDocs({
        summary: "Filter appointments",
        description: "The appointment list with the §4.14 filters: days of `scheduled_at` (clinic time zone), status, " +
          "appointment type, patient name and provider name (parts of first or last name).",
        access: Access.admin,
        spec: "general §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.get("noShows", "/admin/clinic/appointments/no_shows")
      .setUrlParams(NoShowQuery)
      .addSuccess(AppointmentList)
      .annotateContext(operationDocs({
        summary: "List no-shows",
        description: "Appointments recorded as no-shows, newest first, within `date_range` when given.",
        access: Access.admin,
        spec: "general §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.get("filters", "/admin/clinic/appointments/filters")
      .addSuccess(AppointmentFilters)
      .annotateContext(operationDocs({
        summary: "Appointment filter options",
        description: "The statuses, appointment types and providers (active, by name) the filters accept.",
        access: Access.admin,
        spec: "general §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/appointments/:id")
      .setPath(idPath)
      .addSuccess(AppointmentResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an appointment",
        description: `One appointment; 404 \`${appointmentMessages.notFound}\` for an unknown id.`,
        access: Access.admin,
        spec: "general §2.13, §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/appointments/:id")
      .setPath(idPath)
      .setPayload(UpdateAppointmentRequest)
      .addSuccess(AppointmentResponse)
      .addError(NotFound.schema)
      .addError(Conflict.schema)
      .annotateContext(operationDocs({
        summary: "Update an appointment",
        description: "Status moves follow the machine: scheduled → confirmed → in_progress → completed; scheduled, " +
          "confirmed or rescheduled → cancelled, no_show or rescheduled; rescheduled → confirmed. completed, cancelled and " +
          "no_show are final (422). Changing `scheduled_at`, `provider_id` or `duration_minutes` reschedules it (status " +
          "`rescheduled` unless one is given; its slot is freed): the new time must be free for the provider, else 409 " +
          `\`${appointmentMessages.conflict}\`. An admin may move an appointment into the past (a walk-in, a late booking) ` +
          "to record it; the move is audited. Cancelling frees the slot.",
        access: Access.admin,
        spec: "general §2.13, §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.del("cancel", "/admin/clinic/appointments/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Cancel an appointment",
        description: "Cancels the appointment (the record stays, status cancelled) and frees its slot; an appointment " +
          "in progress, completed or recorded as a no-show cannot be cancelled (422); cancelling twice is harmless.",
        access: Access.admin,
        spec: "general §4.14"
      }))
  )
  .add(
    HttpApiEndpoint.post("refreshTelephonyTokens", "/admin/clinic/appointments/:id/refresh_telephony_tokens")
      .setPath(idPath)
      .addSuccess(TelephonyTokens)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Renew the video tokens",
        description: "Twilio Video access tokens for the provider and the patient's side, for the appointment's room " +
          `(stored as \`telephony_room_sid\`), valid ${videoTokenTtlSeconds / 3600} hours; identities carry ids, no names. ` +
          "Signed locally. Without the Twilio video settings: 422 `{\"errors\":{\"video\":[\"is not configured …\"]}}`.",
        access: Access.admin,
        spec: "general §4.14"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Appointments",
    description: "Appointments between patients and providers, their status machine, rescheduling and video tokens."
  }))
{}

const ProviderAppointmentsQuery = listQuery({
  size: "page_size",
  fields: {
    status: Schema.optional(AppointmentStatus)
  }
})

/** A provider's appointments (general §4.9). */
export class ProviderAppointmentsApi extends HttpApiGroup.make("providerAppointments")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/providers/:provider_id/appointments")
      .setPath(Schema.Struct({ provider_id: ProviderIdFromText }))
      .setUrlParams(ProviderAppointmentsQuery)
      .addSuccess(AppointmentList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a provider's appointments",
        description: `The provider's appointments by \`scheduled_at\`, ${appointmentsPageSize} a page by default; ` +
          "404 `Provider not found` for an unknown provider.",
        access: Access.admin,
        spec: "general §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/providers/:provider_id/appointments/:id")
      .setPath(Schema.Struct({ provider_id: ProviderIdFromText, id: AppointmentIdFromText }))
      .addSuccess(AppointmentResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a provider's appointment",
        description: `One appointment of the provider; another provider's is 404 \`${appointmentMessages.notFound}\`.`,
        access: Access.admin,
        spec: "general §4.9"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Provider appointments",
    description: "The appointments of one provider."
  }))
{}

const ClinicAppointmentsQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText.annotations({
      description: "Required for staff and for a parent with several patients; a parent with one patient may leave it out"
    }))
  }
})

const patientAccess = "Any signed-in user (`X-User-Token`); an appointment of a patient the caller may not see is 404 like an unknown one."

/** Clinic patients' appointments (general §4.2). */
export class ClinicAppointmentsApi extends HttpApiGroup.make("clinicAppointments")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/appointments")
      .setUrlParams(ClinicAppointmentsQuery)
      .addSuccess(AppointmentList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List a patient's appointments",
        description: `The patient's appointments, next first, ${appointmentsPageSize} a page by default. An unknown or ` +
          "invisible patient is 404 `Patient not found`.",
        access: patientAccess,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/appointments/:id")
      .setPath(idPath)
      .addSuccess(AppointmentResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a patient's appointment",
        description: `One appointment; 404 \`${appointmentMessages.notFound}\` when unknown or of a patient the caller may not see.`,
        access: patientAccess,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("onCall", "/clinic/patients/on_call/appointments/:id")
      .setPath(idPath)
      .addSuccess(OnCallAppointment)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Join an appointment's video call",
        description: "The appointment and a Twilio Video access token for the caller, from " +
          `${onCallLeadMinutes} minutes before the appointment to its end (else 422 saying when it opens or that it has ended); ` +
          "only for an active appointment (scheduled, confirmed, rescheduled, in progress).",
        access: "The patient's parent (the account linked to the patient) or the appointment's provider; anyone else gets 404.",
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Appointments",
    description: "Appointments as patients' families and providers see them, and joining the video call."
  }))
{}

