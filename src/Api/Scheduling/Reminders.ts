/**
 * Appointment reminders (general §2.14, §4.16): schedule one (or one per channel with `all`), and —
 * beyond the spec, so a reminder can be followed — list, show and cancel them.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { isIso6391 } from "../../Domain/Languages.js"
import { AppointmentId, AppointmentIdFromText, AppointmentReminderIdFromText } from "../../Domain/Ids.js"
import { AppointmentReminder, defaultLeadMinutes, ReminderType } from "../../Domain/Scheduling/Reminders.js"
import { IsoTimestampInput } from "../../Domain/Time.js"
import { groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BoundedString } from "../Schemas.js"
import { Authentication } from "../Security.js"
import { listQuery } from "../Lists.js"

export const remindersPageSize = 25
/** A reminder's own text: an SMS of a few segments, a short spoken message. */
export const maxReminderMessageLength = 500

export const reminderMessages = {
  notFound: "Appointment reminder not found",
  inFuture: "must be in the future",
  beforeAppointment: "must be before the appointment",
  noChannel: "has no available channel: the patient has no email address, phone number or registered device",
  noPhone: "is not available: the patient has no phone number",
  noEmail: "is not available: the patient has no email address",
  noDevice: "is not available: the patient's account has no registered device",
  notScheduled: "is not scheduled: only a scheduled reminder that is not being sent can be cancelled"
} as const

/** ISO 639-1 code (`en`, `es` …), checked against the code list. */
export const ReminderLanguage = Schema.String.pipe(
  Schema.filter((s) => /^[a-z]{2}$/.test(s) && isIso6391(s), {
    message: () => "is invalid",
    jsonSchema: { pattern: "^[a-z]{2}$", maxLength: 2 }
  }),
  Schema.annotations({ description: "ISO 639-1 language code; texts exist in English and Spanish, other languages get English" })
)

export class CreateReminderRequest extends Schema.Class<CreateReminderRequest>("CreateReminderRequest")({
  appointment_reminder: Schema.Struct({
    appointment_id: AppointmentId,
    reminder_type: ReminderType,
    send_at: Schema.optional(IsoTimestampInput),
    message: Schema.optional(Schema.NullOr(BoundedString(maxReminderMessageLength))),
    language: Schema.optional(Schema.NullOr(ReminderLanguage))
  })
}, requestBody(
  { appointment_reminder: { appointment_id: 12, reminder_type: "sms", send_at: new Date("2030-03-05T08:00:00-08:00"), language: "es" } },
  { appointment_reminder: { appointment_id: 12, reminder_type: "all", message: "Please bring your insurance card." } }
)) {}

export class ReminderResponse extends Schema.Class<ReminderResponse>("ReminderResponse")({
  appointment_reminder: AppointmentReminder
}) {}

export class CreatedReminders extends Schema.Class<CreatedReminders>("CreatedReminders")({
  appointment_reminder: AppointmentReminder.annotations({ description: "The first reminder created (for `all`, the earliest channel)" }),
  reminders: Schema.Array(AppointmentReminder).annotations({
    description: "Every reminder created: one, or one per available channel for `all`"
  })
}) {}

export class ReminderList extends Schema.Class<ReminderList>("ReminderList")({
  appointment_reminders: Schema.Array(AppointmentReminder),
  pagination: Pagination
}) {}

const ReminderListQuery = listQuery({
  size: "page_size",
  fields: {
    appointment_id: Schema.optional(AppointmentIdFromText)
  }
})

const idPath = Schema.Struct({ id: AppointmentReminderIdFromText })

const access = "Any signed-in user (`X-User-Token`), for the appointments of the patients they may see."
/** Reminders follow their appointment's patient; a parent is refused with 403 (general §5.4), staff as for an unknown record. */
const patients = {
  records: "general",
  refusal: {
    sentence: "A parent gets 403 `You are not authorized to perform this action.` for another patient's appointment or " +
      "reminder (general §5.4); staff get 404, as for an unknown one."
  }
} as const

const schedule = `Without \`send_at\` the default schedule applies: email ${defaultLeadMinutes.email / 60} hours before the ` +
  `appointment, SMS ${defaultLeadMinutes.sms / 60} hours, push ${defaultLeadMinutes.push} minutes (only when the patient's ` +
  `account has a registered device), voice ${defaultLeadMinutes.voice / 60} hours; a default time already past sends right away.`

export class RemindersApi extends HttpApiGroup.make("reminders")
  .add(
    HttpApiEndpoint.post("create", "/clinic/notifications/appointment_reminders")
      .setPayload(CreateReminderRequest)
      .addSuccess(CreatedReminders, { status: 201 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Schedule an appointment reminder",
        description: "Schedules a reminder (status `scheduled`, delivery `pending`), sent at `send_at` through its channel " +
          "in `language` (default: the patient's) with the time in the clinic's zone; `message` is added to the " +
          `catalogue's text. ${schedule} \`all\` makes one reminder per available channel (email, SMS, push): ` +
          "`appointment_reminder` is the first, `reminders` all of them. A patient who opted out of SMS gets an SMS " +
          "reminder already `cancelled` with its reason. 404 `Appointment not found`; 422 for a cancelled or finished " +
          `appointment, a \`send_at\` in the past (\`${reminderMessages.inFuture}\`) or not before the appointment ` +
          `(\`${reminderMessages.beforeAppointment}\`), or a channel the patient cannot be reached on.`,
        access,
        patients,
        spec: "general §2.14, §4.16"
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/clinic/notifications/appointment_reminders")
      .setUrlParams(ReminderListQuery)
      .addSuccess(ReminderList)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List appointment reminders",
        description: `Reminders by \`send_at\`, ${remindersPageSize} a page by default: of one appointment with ` +
          "`appointment_id`, else every reminder the caller may see. Not in the spec: so a reminder can be followed.",
        access,
        patients,
        spec: "general §2.14 (beyond §4.16)"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/notifications/appointment_reminders/:id")
      .setPath(idPath)
      .addSuccess(ReminderResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show an appointment reminder",
        description: `One reminder with its status, delivery status and \`status_reason\`; 404 \`${reminderMessages.notFound}\`.`,
        access,
        patients,
        spec: "general §2.14 (beyond §4.16)"
      }))
  )
  .add(
    HttpApiEndpoint.del("cancel", "/clinic/notifications/appointment_reminders/:id")
      .setPath(idPath)
      .addSuccess(ReminderResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Cancel an appointment reminder",
        description: "Cancels a reminder that is still scheduled and not being sent (status `cancelled`), and answers it; " +
          "cancelling a cancelled one again is harmless; one already sent or failed is 422.",
        access,
        patients,
        spec: "general §2.14 (beyond §4.16)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Appointment reminders",
    description: "Reminders of appointments by SMS, email, push and voice, sent at their time by the job queue."
  }))
{}
