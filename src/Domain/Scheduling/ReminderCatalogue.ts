/**
 * The texts of appointment reminders, per language: the only place their words live.
 * Placeholders in braces: {date} and {time} (the appointment in the clinic's time zone, written
 * the language's way), {zone} (the zone's short name), {provider} (the provider's name) and
 * {note} (the caller's own message, with the `note` line around it, or nothing). A language
 * without texts here falls back to English; add one by adding its block.
 */
export interface ReminderTexts {
  /** BCP 47 locale used to write the date and time. */
  readonly locale: string
  readonly sms: string
  readonly voice: string
  readonly pushTitle: string
  readonly pushBody: string
  readonly emailSubject: string
  readonly emailText: string
  /** HTML body; placeholders are HTML-escaped when filled in. */
  readonly emailHtml: string
  /** How the caller's message is introduced ({message}). */
  readonly note: string
  readonly noteHtml: string
}

export const reminderCatalogue = {
  en: {
    locale: "en-US",
    sms: "Reminder: appointment with {provider} on {date} at {time} ({zone}).{note} Reply STOP to opt out.",
    voice: "Hello. This is a reminder of your appointment with {provider} on {date} at {time}.{note} Goodbye.",
    pushTitle: "Appointment reminder",
    pushBody: "{date} at {time} ({zone}) with {provider}.{note}",
    emailSubject: "Reminder: your appointment on {date} at {time}",
    emailText: "Hello,\n\nThis is a reminder of your appointment with {provider} on {date} at {time} ({zone}).{note}\n\n" +
      "If you cannot attend, please contact the clinic.\n",
    emailHtml: "<p>Hello,</p><p>This is a reminder of your appointment with <strong>{provider}</strong> on " +
      "<strong>{date}</strong> at <strong>{time}</strong> ({zone}).</p>{note}<p>If you cannot attend, please contact the clinic.</p>",
    note: " {message}",
    noteHtml: "<p>{message}</p>"
  },
  es: {
    locale: "es-US",
    sms: "Recordatorio: cita con {provider} el {date} a las {time} ({zone}).{note} Responda STOP para no recibir más mensajes.",
    voice: "Hola. Le recordamos su cita con {provider} el {date} a las {time}.{note} Adiós.",
    pushTitle: "Recordatorio de cita",
    pushBody: "{date} a las {time} ({zone}) con {provider}.{note}",
    emailSubject: "Recordatorio: su cita del {date} a las {time}",
    emailText: "Hola:\n\nLe recordamos su cita con {provider} el {date} a las {time} ({zone}).{note}\n\n" +
      "Si no puede asistir, comuníquese con la clínica.\n",
    emailHtml: "<p>Hola:</p><p>Le recordamos su cita con <strong>{provider}</strong> el <strong>{date}</strong> a las " +
      "<strong>{time}</strong> ({zone}).</p>{note}<p>Si no puede asistir, comuníquese con la clínica.</p>",
    note: " {message}",
    noteHtml: "<p>{message}</p>"
  }
} as const satisfies Record<string, ReminderTexts>

export type CatalogueLanguage = keyof typeof reminderCatalogue
export const catalogueLanguages = Object.keys(reminderCatalogue) as ReadonlyArray<CatalogueLanguage>
