/** Clinic patients (general §4.2): list, filter, filter options, show, create, update. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { PatientIdFromText, ProviderId, UserId } from "../../Domain/Ids.js"
import { ClinicPatient, PatientSortColumn, patientStatuses } from "../../Domain/Patients/Patient.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { Forbidden, NotFound, ValidationFailed } from "../Errors.js"
import { listBodyFields, listQuery, nameFilter } from "../Lists.js"
import { maxPageSize, Pagination } from "../Pagination.js"
import { BoundedString, Email, IsoDate, Language, Name, Phone } from "../Schemas.js"
import { Authentication } from "../Security.js"

/** Default page size of the clinic patient list (general §8) and of the records under a patient. */
export const patientsPageSize = 25

export const patientMaxLengths = { gender: 32, address: 200, city: 100, state: 50, zip: 20, memberId: 50, providerName: 200 } as const

/** Who changes a patient: staff on the patients they see; a parent is refused by role on their own. */
export const staffWriteAccess = "Clinic staff (every role but `parent`); a `parent` gets 404 for a patient not theirs and " +
  "403 `Staff access required` for their own."

const optionalText = (max: number, description: string) =>
  Schema.optional(Schema.NullOr(BoundedString(max)).annotations({ description: `${description}; blank or null clears it` }))

const patientFields = {
  gender: optionalText(patientMaxLengths.gender, "Gender as the family states it"),
  phone: Schema.optional(Schema.NullOr(Phone).annotations({
    description: "Any common format; stored in E.164 (US unless a country code is given); blank or null clears it"
  })),
  email: Schema.optional(Schema.NullOr(Email)),
  address: optionalText(patientMaxLengths.address, "Street address"),
  city: optionalText(patientMaxLengths.city, "City"),
  state: optionalText(patientMaxLengths.state, "State"),
  zip: optionalText(patientMaxLengths.zip, "ZIP code"),
  language: Schema.optional(Language.annotations({ description: "ISO 639-1 code; default en" })),
  member_id: optionalText(patientMaxLengths.memberId, "The health plan's member id; unique"),
  active: Schema.optional(Schema.Boolean),
  user_id: Schema.optional(Schema.NullOr(UserId).annotations({ description: "A `parent` user: the patient's or their guardian's account" })),
  provider_id: Schema.optional(Schema.NullOr(ProviderId).annotations({ description: "The primary provider: an active provider profile" }))
}

const example = {
  first_name: "Mia", last_name: "Lopez", date_of_birth: "2015-06-01", gender: "female", phone: "(415) 555-0134",
  email: "guardian@example.org", address: "1 Main St", city: "Oakland", state: "CA", zip: "94607", language: "es",
  member_id: "91234567A", user_id: 12, provider_id: 3
}

export class CreatePatientRequest extends Schema.Class<CreatePatientRequest>("CreatePatientRequest")({
  patient: Schema.Struct({ first_name: Name, last_name: Name, date_of_birth: IsoDate, ...patientFields })
}, requestBody({ patient: example })) {}

export class UpdatePatientRequest extends Schema.Class<UpdatePatientRequest>("UpdatePatientRequest")({
  patient: Schema.Struct({
    first_name: Schema.optional(Name),
    last_name: Schema.optional(Name),
    date_of_birth: Schema.optional(IsoDate),
    ...patientFields
  }).annotations({ description: "Fields left out keep their value" })
}, requestBody({ patient: { phone: "415-555-0199", provider_id: 4, active: true } })) {}

export type PatientChanges = UpdatePatientRequest["patient"]

export class PatientResponse extends Schema.Class<PatientResponse>("PatientResponse")({ patient: ClinicPatient }) {}

export class PatientList extends Schema.Class<PatientList>("PatientList")({
  patients: Schema.Array(ClinicPatient),
  pagination: Pagination
}) {}

const searchDescription = "Matches first and last name (and the two together), member id, and the digits of the phone number"

export const PatientListQuery = listQuery({
  size: "page_size",
  sortBy: PatientSortColumn.annotations({ description: "Default: last name, then first name" }),
  search: searchDescription
})

const PatientStatus = Schema.Literal(...patientStatuses)

export class PatientFilterRequest extends Schema.Class<PatientFilterRequest>("PatientFilterRequest")({
  ...listBodyFields({
    size: "page_size",
    search: searchDescription,
    sortBy: PatientSortColumn,
    filters: Schema.Struct({
      provider_name: nameFilter({
        description: "Patients whose primary provider's name (first, last, or both) contains this text",
        maxLength: patientMaxLengths.providerName
      }),
      provider_id: Schema.optional(Schema.NullOr(ProviderId).annotations({ description: "Patients of this primary provider" })),
      status: Schema.optional(Schema.NullOr(PatientStatus).annotations({ description: "active or inactive patients" }))
    })
  })
}, requestBody({ search: "lopez", sort_by: "last_name", sort_dir: "ASC", page: 1, page_size: 25, filters: { provider_name: "Rivera", status: "active" } })) {}

export class ProviderOption extends Schema.Class<ProviderOption>("ProviderOption")({
  id: Schema.Int,
  name: Schema.String
}) {}

export class PatientFilterOptions extends Schema.Class<PatientFilterOptions>("PatientFilterOptions")({
  providers: Schema.Array(ProviderOption).annotations({ description: "Active providers, by last and first name: `filters.provider_id` / `provider_name`" }),
  sort_fields: Schema.Array(PatientSortColumn),
  sort_directions: Schema.Array(Schema.Literal("ASC", "DESC")),
  statuses: Schema.Array(PatientStatus).annotations({ description: "Values of `filters.status`" })
}) {}

const idPath = Schema.Struct({ id: PatientIdFromText })

export class ClinicPatientsApi extends HttpApiGroup.make("clinicPatients")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients")
      .setUrlParams(PatientListQuery)
      .addSuccess(PatientList)
      .annotateContext(operationDocs({
        summary: "List clinic patients",
        description: `Patients, ${patientsPageSize} a page by default (at most ${maxPageSize}), by last and first name unless ` +
          "`sort_by` (id, first_name, last_name, date_of_birth, created_at) and `sort_dir` (ASC or DESC, any case) say " +
          "otherwise. `search` matches names, member id and phone digits. ECM members imported from MIF files are patients too.",
        access: Access.signedIn,
        patients: { records: "general", refusal: "listed" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/clinic/patients/filter_patients")
      .setPayload(PatientFilterRequest)
      .addSuccess(PatientList)
      .annotateContext(operationDocs({
        summary: "Filter clinic patients",
        description: "The patient list with its parameters in a body; `filters.provider_name` narrows to patients whose " +
          "primary provider's name contains the text, `filters.provider_id` to one provider, `filters.status` to active " +
          "or inactive patients.",
        access: Access.signedIn,
        patients: { records: "general", refusal: "listed" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("filters", "/clinic/patients/filters")
      .addSuccess(PatientFilterOptions)
      .annotateContext(operationDocs({
        summary: "Patient filter options",
        description: "What a patient filter screen offers: the active providers `{id, name}`, the sort fields and " +
          "directions, and the statuses.",
        access: Access.signedIn,
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/:id")
      .setPath(idPath)
      .addSuccess(PatientResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a clinic patient",
        description: "One patient with their primary provider; 404 `Patient not found` for an unknown id or one the caller may not see.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients")
      .setPayload(CreatePatientRequest)
      .addSuccess(PatientResponse, { status: 201 })
      .addError(Forbidden.schema)
      .annotateContext(operationDocs({
        summary: "Create a clinic patient",
        description: "Creates a patient (not in the spec; the clinic needs it). first_name, last_name and date_of_birth " +
          "are required; the phone is stored in E.164; `user_id` must be a parent account and `provider_id` an active " +
          "provider (422 `must exist` otherwise); a member id already taken is 422 `has already been taken`.",
        access: Access.staff,
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/patients/:id")
      .setPath(idPath)
      .setPayload(UpdatePatientRequest)
      .addSuccess(PatientResponse)
      .addError(NotFound.schema)
      .addError(Forbidden.schema)
      .annotateContext(operationDocs({
        summary: "Update a clinic patient",
        description: "Changes the fields given, with the rules of create; fields left out keep their value.",
        access: staffWriteAccess,
        patients: { records: "general" },
        spec: "general §4.2"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Patients",
    description: "The clinic's patients: one table with the ECM members, so imported members appear here too. " +
      "Staff see and edit every patient; a parent sees the patients linked to their account."
  }))
{}
