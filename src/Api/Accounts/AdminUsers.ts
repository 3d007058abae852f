import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Role, User, UserStatus } from "../../Domain/Accounts/User.js"
import { NotFound, reportAllErrors, reportAllErrorsInClass, ValidationFailed } from "../Errors.js"
import { maxPageSize, PageSizeQuery, Pagination } from "../Pagination.js"
import { Email, IdParam, IsoDate, Name, ShortText, SortDir } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"

/** The admin view of a user adds `last_login` and `patient` (general §2.1) and the status. */
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

const Search = ShortText(200)

export class AdminUserList extends Schema.Class<AdminUserList>("AdminUserList")({
  users: Schema.Array(AdminUser),
  pagination: Pagination
}) {}

export const AdminUserListQuery = Schema.Struct({
  ...PageSizeQuery,
  sort_by: Schema.optional(UserSortColumn),
  sort_dir: Schema.optional(SortDir),
  search: Schema.optional(Search)
}).annotations(reportAllErrors)

const PageNumber = Schema.Int.pipe(Schema.greaterThan(0, { message: () => "must be greater than 0" }))

export class UserFilterRequest extends Schema.Class<UserFilterRequest>("UserFilterRequest")({
  search: Schema.optional(Schema.NullOr(Search)),
  sort_by: Schema.optional(UserSortColumn),
  sort_dir: Schema.optional(SortDir),
  filters: Schema.optional(Schema.Struct({
    active: Schema.optional(Schema.NullOr(Schema.Boolean)),
    roles: Schema.optional(Schema.Array(Role)),
    date: Schema.optional(Schema.Struct({
      start_date: Schema.optional(Schema.NullOr(IsoDate)),
      end_date: Schema.optional(Schema.NullOr(IsoDate))
    })),
    patient_name: Schema.optional(Schema.NullOr(Search))
  })),
  page: Schema.optional(PageNumber),
  page_size: Schema.optional(PageNumber.annotations({ description: `Clamped to ${maxPageSize}` }))
}, reportAllErrorsInClass) {}

export class AdminUpdateUserRequest extends Schema.Class<AdminUpdateUserRequest>("AdminUpdateUserRequest")({
  user: Schema.Struct({
    first_name: Schema.optional(Name),
    last_name: Schema.optional(Name),
    email: Schema.optional(Email),
    phone: Schema.optional(Schema.NullOr(ShortText(32))),
    role: Schema.optional(Role),
    active: Schema.optional(Schema.Boolean),
    clinical: Schema.optional(Schema.Boolean)
  })
}, reportAllErrorsInClass) {}

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

const idPath = Schema.Struct({ id: IdParam })

/** Admin users (general §4.7). */
export class AdminUsersApi extends HttpApiGroup.make("adminUsers")
  .add(HttpApiEndpoint.get("list", "/admin/clinic/users").setUrlParams(AdminUserListQuery).addSuccess(AdminUserList))
  .add(HttpApiEndpoint.post("filter", "/admin/clinic/users/filter_users").setPayload(UserFilterRequest).addSuccess(AdminUserList))
  .add(
    HttpApiEndpoint.get("archived", "/admin/clinic/users/archived")
      .setUrlParams(Schema.Struct(PageSizeQuery).annotations(reportAllErrors))
      .addSuccess(AdminUserList)
  )
  .add(HttpApiEndpoint.get("filters", "/admin/clinic/users/filters").addSuccess(UserFilterOptions))
  .add(HttpApiEndpoint.get("show", "/admin/clinic/users/:id").setPath(idPath).addSuccess(AdminUserResponse).addError(NotFound.schema))
  .add(
    HttpApiEndpoint.put("update", "/admin/clinic/users/:id")
      .setPath(idPath)
      .setPayload(AdminUpdateUserRequest)
      .addSuccess(AdminUserResponse)
      .addError(NotFound.schema)
  )
  .add(
    HttpApiEndpoint.del("delete", "/admin/clinic/users/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound.schema)
  )
  .add(HttpApiEndpoint.post("archive", "/admin/clinic/users/:id/archive").setPath(idPath).addSuccess(AdminUserResponse).addError(NotFound.schema))
  .add(HttpApiEndpoint.post("unarchive", "/admin/clinic/users/:id/unarchive").setPath(idPath).addSuccess(AdminUserResponse).addError(NotFound.schema))
  .add(HttpApiEndpoint.get("dashboard", "/admin/users/dashboard").addSuccess(Dashboard))
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
{}
