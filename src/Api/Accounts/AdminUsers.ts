import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Role, User, UserStatus } from "../../Domain/Accounts/User.js"
import { UserIdFromText } from "../../Domain/Ids.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, ValidationFailed } from "../Errors.js"
import { BodyPageNumber, BodyPageSize, dateRange, listQuery, nameFilter } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, Email, IsoDate, Name, Phone, Search, SortDir } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"

/**
 * The admin view of a user adds `last_login` and `patient` (general §2.1) and the status. `patient`
 * is the patient linked to the account (`patients.user_id`), the first by id when several are.
 */
export class AdminUser extends User.extend<AdminUser>("AdminUser")({
  status: UserStatus,
  last_login: Schema.NullOr(IsoTimestamp),
  patient: Schema.NullOr(Schema.Struct({ id: Schema.Int, active: Schema.Boolean }))
}) {}

/** Columns a list may be sorted by: an allow-list, never SQL from the request. */
export const UserSortColumn = Schema.Literal(
  "id", "email", "first_name", "last_name", "role", "status", "created_at", "updated_at", "last_login"
)
export type UserSortColumn = typeof UserSortColumn.Type

export class AdminUserList extends Schema.Class<AdminUserList>("AdminUserList")({
  users: Schema.Array(AdminUser),
  pagination: Pagination
}) {}

export const AdminUserListQuery = listQuery({ size: "page_size", sortBy: UserSortColumn, search: true })

// Declared by hand: its filters come before the page fields, an order listBodyFields does not write.
export class UserFilterRequest extends Schema.Class<UserFilterRequest>("UserFilterRequest")({
  search: Schema.optional(Schema.NullOr(Search)),
  sort_by: Schema.optional(UserSortColumn),
  sort_dir: Schema.optional(SortDir),
  filters: Schema.optional(Schema.Struct({
    active: Schema.optional(Schema.NullOr(Schema.Boolean)),
    roles: Schema.optional(BoundedArray(Role, Role.literals.length)),
    date: dateRange(),
    patient_name: nameFilter()
  })),
  page: Schema.optional(BodyPageNumber.annotations({ title: "Page" })),
  page_size: Schema.optional(BodyPageSize.annotations({ title: "Page size" }))
}, requestBody({
  search: "doe",
  sort_by: "last_name",
  sort_dir: "ASC",
  filters: { active: true, roles: ["provider", "supervisor"], date: { start_date: "2026-01-01", end_date: "2026-03-31" } },
  page: 1,
  page_size: 25
})) {}

export class AdminUpdateUserRequest extends Schema.Class<AdminUpdateUserRequest>("AdminUpdateUserRequest")({
  user: Schema.Struct({
    first_name: Schema.optional(Name),
    last_name: Schema.optional(Name),
    email: Schema.optional(Email),
    phone: Schema.optional(Schema.NullOr(Phone)),
    role: Schema.optional(Role),
    active: Schema.optional(Schema.Boolean),
    clinical: Schema.optional(Schema.Boolean)
  })
}, requestBody({ user: { role: "supervisor", active: true, clinical: true } })) {}

export class AdminUserResponse extends Schema.Class<AdminUserResponse>("AdminUserResponse")({ user: AdminUser }) {}

export class Dashboard extends Schema.Class<Dashboard>("Dashboard")({
  total_users: Schema.Int,
  active_users: Schema.Int,
  new_users_this_month: Schema.Int,
  clinical_users: Schema.Int,
  provider_users: Schema.Int,
  recent_activity: Schema.Array(Schema.Struct({
    user_id: Schema.NullOr(Schema.Int),
    action: Schema.String,
    timestamp: IsoTimestamp
  }))
}) {}

export class UserFilterOptions extends Schema.Class<UserFilterOptions>("UserFilterOptions")({
  roles: Schema.Array(Role),
  statuses: Schema.Array(UserStatus),
  sort_by: Schema.Array(UserSortColumn),
  date: Schema.Struct({ min: Schema.NullOr(IsoDate), max: Schema.NullOr(IsoDate) })
}) {}

const idPath = Schema.Struct({ id: UserIdFromText })

/** Admin users (general §4.7). */
export class AdminUsersApi extends HttpApiGroup.make("adminUsers")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/users")
      .setUrlParams(AdminUserListQuery)
      .addSuccess(AdminUserList)
      .annotateContext(operationDocs({
        summary: "List users",
        description: "Lists the users that are not archived, with the admin view of each (status, last login, " +
          "linked patient), newest first unless `sort_by`/`sort_dir` say otherwise. `search` matches names and emails.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/admin/clinic/users/filter_users")
      .setPayload(UserFilterRequest)
      .addSuccess(AdminUserList)
      .annotateContext(operationDocs({
        summary: "Filter users",
        description: "Lists users matching the filters: active or not, roles, a creation date range and the name " +
          "of a linked patient, with search, sorting and pages like the list.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.get("archived", "/admin/clinic/users/archived")
      .setUrlParams(listQuery({ size: "page_size" }))
      .addSuccess(AdminUserList)
      .annotateContext(operationDocs({
        summary: "List archived users",
        description: "Lists the archived users, newest first.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.get("filters", "/admin/clinic/users/filters")
      .addSuccess(UserFilterOptions)
      .annotateContext(operationDocs({
        summary: "Filter options",
        description: "The values the user filters accept: roles, statuses, sortable columns and the range of creation dates.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/users/:id")
      .setPath(idPath)
      .addSuccess(AdminUserResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a user",
        description: "The admin view of one user, archived or not.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/users/:id")
      .setPath(idPath)
      .setPayload(AdminUpdateUserRequest)
      .addSuccess(AdminUserResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a user",
        description: "Changes names, email, phone, role, active and clinical of a user; fields left out keep their " +
          "value. An admin cannot change their own role or deactivate themself.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/admin/clinic/users/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete a user",
        description: "Erases the user's personal data and credentials, as `DELETE /v1/users/{id}` does.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.post("archive", "/admin/clinic/users/:id/archive")
      .setPath(idPath)
      .addSuccess(AdminUserResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Archive a user",
        description: "Archives a user (a reversible soft delete): they cannot sign in and leave the user lists until " +
          "unarchived. Archiving an archived user changes nothing; an admin cannot archive themself.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.post("unarchive", "/admin/clinic/users/:id/unarchive")
      .setPath(idPath)
      .addSuccess(AdminUserResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Unarchive a user",
        description: "Restores an archived user to the status they had before archiving.",
        access: Access.admin,
        spec: "general §4.7"
      }))
  )
  .add(
    HttpApiEndpoint.get("dashboard", "/admin/users/dashboard")
      .addSuccess(Dashboard)
      .annotateContext(operationDocs({
        summary: "User dashboard",
        description: "Counts of users (total, active, new this month, clinical, providers) and the latest account activity.",
        access: Access.admin,
        spec: "general §2.1, §4.7"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Users",
    description: "The clinic's user administration: lists, filters, archive, roles and the dashboard."
  }))
{}
