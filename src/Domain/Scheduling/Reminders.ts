/**
 * Appointment reminders (general §2.14, §4.16): the representation, the default schedule and the
 * rendering of a reminder's texts from the catalogue (`ReminderCatalogue.ts`). Pure.
 */
import { Schema } from "effect"
import { AppointmentId, AppointmentReminderId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"
import { type CatalogueLanguage, reminderCatalogue, type ReminderTexts } from "./ReminderCatalogue.js"

const inList = { message: () => "is not included in the list" }

export const ReminderType = Schema.Literal("sms", "email", "push", "voice", "all").annotations(inList)
export type ReminderType = typeof ReminderType.Type
/** A channel a single reminder goes through (`all` becomes one reminder per channel). */
export type ReminderChannel = Exclude<ReminderType, "all">
export const reminderChannels: ReadonlyArray<ReminderChannel> = ["sms", "email", "push", "voice"]
/** What `all` and a booking expand to, in this order: voice calls are made only when asked for. */
export const everyDayChannels: ReadonlyArray<ReminderChannel> = ["email", "sms", "push"]
/** Appointments in these statuses still get reminders. */
export const remindableStatuses: ReadonlyArray<string> = ["scheduled", "confirmed", "rescheduled"]

export const ReminderStatus = Schema.Literal("scheduled", "sent", "delivered", "failed", "cancelled").annotations(inList)
export type ReminderStatus = typeof ReminderStatus.Type
export const DeliveryStatus = Schema.Literal("pending", "sending", "delivered", "failed", "bounced", "unsubscribed").annotations(inList)
export type DeliveryStatus = typeof DeliveryStatus.Type

/**
 * The default schedule (§4.16): email 24 hours before the appointment, SMS 2 hours, push 30
 * minutes; voice (not in the spec) 2 hours, as SMS.
 */
export const defaultLeadMinutes: Readonly<Record<ReminderChannel, number>> = {
  email: 24 * 60,
  sms: 2 * 60,
  push: 30,
  voice: 2 * 60
}

/**
 * When a reminder of this lead goes out for an appointment at `scheduledAt`: the lead before it,
 * or right away (`now`) when that moment has passed — a booking made an hour ahead still gets its
 * SMS and email.
 */
export const sendTimeFor = (scheduledAt: Date, leadSeconds: number, now: Date): Date =>
  new Date(Math.max(scheduledAt.getTime() - leadSeconds * 1000, now.getTime()))

/** §2.14 appointment reminder, plus `status_reason` (why it failed or was cancelled). */
export class AppointmentReminder extends Schema.Class<AppointmentReminder>("AppointmentReminder")({
  id: AppointmentReminderId,
  appointment_id: AppointmentId,
  reminder_type: ReminderType,
  status: ReminderStatus,
  send_at: IsoTimestamp,
  sent_at: Schema.NullOr(IsoTimestamp),
  message: Schema.NullOr(Schema.String),
  language: Schema.String,
  delivery_status: DeliveryStatus,
  status_reason: Schema.NullOr(Schema.String).annotations({
    description: "Why the reminder failed or was cancelled (e.g. `patient opted out of SMS`); null otherwise"
  }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

/** The catalogue's texts of a language, English for one it has none of. */
export const textsFor = (language: string): ReminderTexts =>
  language in reminderCatalogue ? reminderCatalogue[language as CatalogueLanguage] : reminderCatalogue.en

export interface ReminderContext {
  readonly scheduledAt: Date
  /** IANA zone of the clinic. */
  readonly timeZone: string
  readonly providerName: string
  /** The caller's own message, if any. */
  readonly message: string | null
  readonly language: string
}

export interface RenderedReminder {
  readonly sms: string
  readonly voice: string
  readonly pushTitle: string
  readonly pushBody: string
  readonly emailSubject: string
  readonly emailText: string
  readonly emailHtml: string
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const fill = (template: string, values: Readonly<Record<string, string>>) =>
  template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole)

/** Building an `Intl.DateTimeFormat` costs far more than using one: one set per locale and zone. */
const formats = new Map<string, { date: Intl.DateTimeFormat; time: Intl.DateTimeFormat; zone: Intl.DateTimeFormat }>()
const formatsFor = (locale: string, timeZone: string) => {
  const key = `${locale} ${timeZone}`
  let found = formats.get(key)
  if (found === undefined) {
    found = {
      date: new Intl.DateTimeFormat(locale, { timeZone, weekday: "long", year: "numeric", month: "long", day: "numeric" }),
      time: new Intl.DateTimeFormat(locale, { timeZone, hour: "numeric", minute: "2-digit" }),
      zone: new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: "short" })
    }
    formats.set(key, found)
  }
  return found
}

/** Every text of a reminder, in its language, with the appointment's time in the clinic's zone. */
export const renderReminder = (context: ReminderContext): RenderedReminder => {
  const texts = textsFor(context.language)
  const { date: dateFormat, time: timeFormat, zone: zoneFormat } = formatsFor(texts.locale, context.timeZone)
  const date = dateFormat.format(context.scheduledAt)
  const time = timeFormat.format(context.scheduledAt)
  const zone = zoneFormat.formatToParts(context.scheduledAt).find((part) => part.type === "timeZoneName")?.value ?? context.timeZone
  const message = context.message?.trim() ?? ""
  const plain = { date, time, zone, provider: context.providerName, note: message === "" ? "" : fill(texts.note, { message }) }
  const html = {
    date: escapeHtml(date),
    time: escapeHtml(time),
    zone: escapeHtml(zone),
    provider: escapeHtml(context.providerName),
    note: message === "" ? "" : fill(texts.noteHtml, { message: escapeHtml(message) })
  }
  return {
    sms: fill(texts.sms, plain),
    voice: fill(texts.voice, plain),
    pushTitle: fill(texts.pushTitle, plain),
    pushBody: fill(texts.pushBody, plain),
    emailSubject: fill(texts.emailSubject, plain),
    emailText: fill(texts.emailText, plain),
    emailHtml: fill(texts.emailHtml, html)
  }
}

/** A provider's final word on a reminder sent as an SMS or a call, as the reminder records it. */
export interface DeliveryReport {
  readonly delivery: Exclude<DeliveryStatus, "pending" | "sending">
  /** Why it did not arrive (the provider's status and error code); null when delivered. */
  readonly reason: string | null
}

/** Twilio's error of a message to a number that answered STOP. */
const unsubscribedRecipient = "21610"

const failure = (delivery: DeliveryReport["delivery"], status: string, errorCode: string | undefined): DeliveryReport => ({
  delivery,
  reason: `provider reported ${status}${errorCode === undefined ? "" : ` (error ${errorCode})`}`
})

/**
 * A Twilio message status as a reminder's delivery; undefined while the message is still on its
 * way (queued, sending, sent …). `undelivered` (the carrier or handset refused it) is `bounced`;
 * `failed` and `canceled` (never left Twilio) are `failed`; a number that opted out is `unsubscribed`.
 */
export const smsDeliveryReport = (status: string, errorCode?: string): DeliveryReport | undefined => {
  if (errorCode === unsubscribedRecipient && (status === "failed" || status === "undelivered")) return failure("unsubscribed", status, errorCode)
  switch (status) {
    case "delivered":
    case "read":
      return { delivery: "delivered", reason: null }
    case "undelivered":
      return failure("bounced", status, errorCode)
    case "failed":
    case "canceled":
      return failure("failed", status, errorCode)
    default:
      return undefined
  }
}

/**
 * A Twilio call status as a reminder's delivery: `completed` (answered, by a person or a
 * voicemail, and the reminder said) is delivered; busy, no-answer, failed and canceled are failed.
 */
export const callDeliveryReport = (status: string, errorCode?: string): DeliveryReport | undefined => {
  switch (status) {
    case "completed":
      return { delivery: "delivered", reason: null }
    case "busy":
    case "no-answer":
    case "failed":
    case "canceled":
      return failure("failed", status, errorCode)
    default:
      return undefined
  }
}
