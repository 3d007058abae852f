/** The job that sends one appointment reminder at its `send_at`. */
import { Effect, Schema } from "effect"
import { defineTask } from "../Jobs.js"
import { ReminderSender } from "./ReminderSender.js"

/** Runs, first included, before a reminder whose provider keeps failing is marked failed. */
export const reminderMaxAttempts = 5

export const sendReminderTask = defineTask({
  name: "reminders.send",
  payload: Schema.Struct({ reminder_id: Schema.Int }),
  run: (payload, job) => Effect.flatMap(ReminderSender, (sender) => sender.send(payload.reminder_id, job))
})
