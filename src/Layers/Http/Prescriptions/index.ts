/** Prescriptions, the medications catalogue and medication history. */
import { Layer } from "effect"
import { Medications } from "../../../Services/Prescriptions/Medications.js"
import { Prescriptions } from "../../../Services/Prescriptions/Prescriptions.js"
import { expirePrescriptions } from "../../../Services/Prescriptions/PrescriptionTasks.js"
import { defineArea } from "../../Area.js"
import { HttpPrescriptionsAreaLive } from "./Prescriptions.js"

export const PrescriptionsArea = defineArea({
  handlers: HttpPrescriptionsAreaLive,
  services: Layer.mergeAll(Prescriptions.Default, Medications.Default),
  tasks: [expirePrescriptions],
  // Past their end date, expired daily after midnight in the Americas (09:05 UTC).
  schedules: [{ task: expirePrescriptions, pattern: "5 9 * * *" }]
})
