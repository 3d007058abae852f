/** Scheduling: availability, books, appointments with their video tokens, and reminders. */
import { Layer } from "effect"
import { Appointments } from "../../../Services/Scheduling/Appointments.js"
import { Books } from "../../../Services/Scheduling/Books.js"
import { ReminderSchedule } from "../../../Services/Scheduling/ReminderSchedule.js"
import { ReminderSender } from "../../../Services/Scheduling/ReminderSender.js"
import { sendReminderTask } from "../../../Services/Scheduling/ReminderTasks.js"
import { Reminders } from "../../../Services/Scheduling/Reminders.js"
import { Slots } from "../../../Services/Scheduling/Slots.js"
import { extendSlotSeries } from "../../../Services/Scheduling/SlotTasks.js"
import { VideoTokensLive } from "../../Adapters.js"
import { defineArea } from "../../Area.js"
import { HttpAppointmentsLive, HttpClinicAppointmentsLive, HttpProviderAppointmentsLive } from "./Appointments.js"
import { HttpAvailabilityLive } from "./Availability.js"
import { HttpRemindersLive } from "./Reminders.js"

export const SchedulingArea = defineArea({
  handlers: Layer.mergeAll(
    HttpAvailabilityLive, HttpAppointmentsLive, HttpProviderAppointmentsLive, HttpClinicAppointmentsLive, HttpRemindersLive
  ),
  services: Layer.mergeAll(Slots.Default, Books.Default, Appointments.Default, Reminders.Default, ReminderSender.Default).pipe(
    Layer.provide(ReminderSchedule.Default),
    Layer.provide(VideoTokensLive)
  ),
  tasks: [extendSlotSeries, sendReminderTask],
  // Recurring availability kept 90 days ahead, nightly in the Americas.
  schedules: [{ task: extendSlotSeries, pattern: "23 10 * * *" }]
})
