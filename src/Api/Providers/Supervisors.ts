/** Admin supervisors (general §4.15, first line): supervisors and their supervisees. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Supervisor } from "../../Domain/Providers/Provider.js"
import { Access, groupDocs, operationDocs } from "../Docs.js"
import { ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BooleanFromQuery, BoundedString } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"
import { providerMaxLengths, providersPageSize } from "./Providers.js"

export class SupervisorList extends Schema.Class<SupervisorList>("SupervisorList")({
  supervisors: Schema.Array(Supervisor),
  pagination: Pagination
}) {}

export const SupervisorListQuery = listQuery({
  size: "page_size",
  fields: {
    active: Schema.optional(BooleanFromQuery.annotations({ description: "true: active profiles only; false: inactive only" })),
    specialty: Schema.optional(BoundedString(providerMaxLengths.specialty).annotations({ description: "Exact specialty, e.g. child_psychiatry" }))
  }
})

/** Admin supervisors (general §4.15). */
export class SupervisorsApi extends HttpApiGroup.make("supervisors")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/supervisors")
      .setUrlParams(SupervisorListQuery)
      .addSuccess(SupervisorList)
      .annotateContext(operationDocs({
        summary: "List supervisors",
        description: `Lists the providers holding the supervisor role, ${providersPageSize} a page by default, by last and first ` +
          "name, each with their supervisees. A supervisor's id is their provider id.",
        access: Access.admin,
        spec: "general §2.7, §4.15"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Supervisors",
    description: "Providers holding the supervisor role and the providers they supervise."
  }))
{}
