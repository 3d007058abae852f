/** The clinic patient (general §2.2): the clinic's view of the one `patients` table. */
import { Schema } from "effect"
import { IsoDate, IsoTimestamp } from "../Time.js"

const Text = Schema.NullOr(Schema.String)

/** The patient's primary provider, as lists and screens show it. */
export class PatientProvider extends Schema.Class<PatientProvider>("PatientProvider")({
  id: Schema.Int,
  first_name: Schema.String,
  last_name: Schema.String
}) {}

export class ClinicPatient extends Schema.Class<ClinicPatient>("ClinicPatient")({
  id: Schema.Int,
  first_name: Schema.String,
  last_name: Schema.String,
  date_of_birth: Schema.NullOr(IsoDate),
  gender: Text,
  phone: Text.annotations({ description: "E.164" }),
  email: Text,
  address: Text,
  city: Text,
  state: Text,
  zip: Text,
  language: Schema.String,
  member_id: Text.annotations({ description: "The health plan's member id (CIN of ECM members)" }),
  active: Schema.Boolean,
  user_id: Schema.NullOr(Schema.Int).annotations({ description: "The account of the patient or their guardian (a parent user)" }),
  provider_id: Schema.NullOr(Schema.Int).annotations({ description: "The primary provider (a provider profile id)" }),
  provider: Schema.NullOr(PatientProvider),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

/** Columns the clinic patient list may be sorted by: an allow-list, never SQL from the request. */
export const patientSortColumns = ["id", "first_name", "last_name", "date_of_birth", "created_at"] as const
export const PatientSortColumn = Schema.Literal(...patientSortColumns)
export type PatientSortColumn = typeof PatientSortColumn.Type

/** Values of `active` shown as statuses on the filter screen. */
export const patientStatuses = ["active", "inactive"] as const
