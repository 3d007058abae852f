/** Clinic patients and their records: help requests, treatment plans, spots and documents. */
import { Layer } from "effect"
import { ClinicPatients } from "../../../Services/Patients/ClinicPatients.js"
import { HelpRequests } from "../../../Services/Patients/HelpRequests.js"
import { PatientDocuments } from "../../../Services/Patients/PatientDocuments.js"
import { Spots } from "../../../Services/Patients/Spots.js"
import { TreatmentPlans } from "../../../Services/Patients/TreatmentPlans.js"
import { defineArea } from "../../Area.js"
import { HttpPatientsAreaLive } from "./Patients.js"

export const PatientsArea = defineArea({
  handlers: Layer.mergeAll(...HttpPatientsAreaLive),
  services: Layer.mergeAll(ClinicPatients.Default, HelpRequests.Default, TreatmentPlans.Default, Spots.Default, PatientDocuments.Default)
})
