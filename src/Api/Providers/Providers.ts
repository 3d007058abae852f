/** Admin providers (general §4.9): list, filter, show and update provider profiles. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ProviderIdFromText } from "../../Domain/Ids.js"
import { commonSpecialties, Provider, providerRoles } from "../../Domain/Providers/Provider.js"
import { isValidNpi } from "../../Domain/Providers/Npi.js"
import { ProviderId } from "../../Domain/Ids.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { listBodyFields, listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, Search } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"

/** Default page size of the provider and supervisor lists (as clinic patients in §8). */
export const providersPageSize = 25

export const providerMaxLengths = { specialty: 100, licenseNumber: 50, npi: 10, role: 16, department: 100 } as const

/** Columns the provider list may be sorted by: an allow-list, never SQL from the request. */
export const ProviderSortColumn = Schema.Literal(
  "id", "first_name", "last_name", "email", "specialty", "license_number", "npi", "active", "created_at", "updated_at"
)
export type ProviderSortColumn = typeof ProviderSortColumn.Type

/**
 * Roles of a profile: each from the list. Checked on the whole list, so the 422 names `roles`
 * (`{"roles":["is not included in the list"]}`) rather than an index.
 */
export const ProviderRoles = BoundedArray(BoundedString(providerMaxLengths.role), providerRoles.length).pipe(
  Schema.filter((roles) => roles.every((role) => (providerRoles as ReadonlyArray<string>).includes(role)), {
    message: () => "is not included in the list",
    jsonSchema: { items: { type: "string", enum: [...providerRoles] } }
  }),
  Schema.filter((roles) => roles.length > 0, { message: () => "can't be blank", jsonSchema: { minItems: 1 } }),
  Schema.annotations({ description: `Provider roles: ${providerRoles.join(", ")}` })
)

export const Npi = BoundedString(providerMaxLengths.npi).pipe(
  Schema.filter((s) => s === "" || isValidNpi(s), {
    message: () => "is invalid",
    jsonSchema: { pattern: "^([0-9]{10})?$" }
  }),
  Schema.annotations({ description: "National Provider Identifier: 10 digits, the last a Luhn check digit over 80840 and the first nine (CMS); blank clears it" })
)

const Specialty = BoundedString(providerMaxLengths.specialty).annotations({
  description: `Specialty; common values: ${commonSpecialties.join(", ")}; blank clears it`
})
const LicenseNumber = BoundedString(providerMaxLengths.licenseNumber).annotations({
  description: "License number; required when the provider's user is clinical; blank clears it"
})

export class ProviderList extends Schema.Class<ProviderList>("ProviderList")({
  providers: Schema.Array(Provider),
  pagination: Pagination
}) {}

export class ProviderResponse extends Schema.Class<ProviderResponse>("ProviderResponse")({ provider: Provider }) {}

export const ProviderListQuery = listQuery({
  size: "page_size",
  sortBy: ProviderSortColumn,
  search: "Matches names, email, specialty, license number and NPI"
})

export class ProviderFilterRequest extends Schema.Class<ProviderFilterRequest>("ProviderFilterRequest")({
  ...listBodyFields({
    size: "page_size",
    search: true,
    sortBy: ProviderSortColumn,
    filters: Schema.Struct({
      search: Schema.optional(Schema.NullOr(Search.annotations({ description: "Used when the top-level search is absent" })))
    }).annotations({ description: "Only the search query is honoured (general §4.9); other keys are ignored" })
  })
}, requestBody({ search: "psychiatry", sort_by: "last_name", sort_dir: "ASC", page: 1, page_size: 25 })) {}

export class UpdateProviderRequest extends Schema.Class<UpdateProviderRequest>("UpdateProviderRequest")({
  provider: Schema.Struct({
    roles: Schema.optional(ProviderRoles),
    has_supervisor: Schema.optional(Schema.Boolean.annotations({
      description: "true needs a supervisor (given here or already set); false removes the supervisor"
    })),
    supervisor_id: Schema.optional(Schema.NullOr(ProviderId).annotations({
      description: "An active provider holding the supervisor role; not the provider itself, and no supervision cycle"
    })),
    specialty: Schema.optional(Schema.NullOr(Specialty)),
    license_number: Schema.optional(Schema.NullOr(LicenseNumber)),
    npi: Schema.optional(Schema.NullOr(Npi)),
    department: Schema.optional(Schema.NullOr(BoundedString(providerMaxLengths.department).annotations({
      description: "The clinic department (`outpatient`, `child_and_family` …); the weekly metrics report filters on it; blank clears it"
    }))),
    active: Schema.optional(Schema.Boolean)
  })
}, requestBody({
  provider: {
    roles: ["provider", "trainee"],
    has_supervisor: true,
    supervisor_id: 3,
    specialty: "child_psychiatry",
    license_number: "PSY-12345",
    npi: "1234567893",
    department: "child_and_family",
    active: true
  }
})) {}

const idPath = Schema.Struct({ id: ProviderIdFromText })

/** Admin providers (general §4.9). */
export class ProvidersApi extends HttpApiGroup.make("providers")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/providers")
      .setUrlParams(ProviderListQuery)
      .addSuccess(ProviderList)
      .annotateContext(operationDocs({
        summary: "List providers",
        description: `Lists provider profiles (users who are or were providers or supervisors), ${providersPageSize} a page by default, ` +
          "by last and first name unless `sort_by`/`sort_dir` say otherwise. `search` matches names, email, specialty, " +
          "license number and NPI.",
        access: Access.admin,
        spec: "general §2.7, §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/admin/clinic/providers/filter_providers")
      .setPayload(ProviderFilterRequest)
      .addSuccess(ProviderList)
      .annotateContext(operationDocs({
        summary: "Filter providers",
        description: "The provider list with its parameters in a body. Of `filters`, only the search query is honoured " +
          "(as the spec says); a top-level `search` wins over `filters.search`.",
        access: Access.admin,
        spec: "general §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/providers/:id")
      .setPath(idPath)
      .addSuccess(ProviderResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a provider",
        description: "One provider profile; 404 `Provider not found` for an unknown id.",
        access: Access.admin,
        spec: "general §2.7, §4.9"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/providers/:id")
      .setPath(idPath)
      .setPayload(UpdateProviderRequest)
      .addSuccess(ProviderResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a provider",
        description: "Changes roles, supervisor, specialty, license number, NPI, department and active; fields left out keep their value. " +
          "The supervisor must be an active provider holding the supervisor role, not the provider itself, and must not " +
          "create a supervision cycle; a provider whose user is clinical keeps a license number.",
        access: Access.admin,
        spec: "general §2.7, §4.9"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Providers",
    description: "Provider profiles: one per user who is (or was) a provider or supervisor, with roles, specialty, " +
      "license, NPI and supervisor."
  }))
{}
