import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { UserId } from "../Domain/Ids.js"
import { IsoTimestamp } from "../Domain/Time.js"
import { User } from "../Domain/User.js"
import { NotFound, ValidationFailed } from "./Errors.js"
import { AdminAuthentication } from "./Security.js"

const IdFromPath = Schema.NumberFromString.pipe(Schema.compose(UserId)).annotations({ message: () => "is invalid" })

/** The admin view of a user adds `last_login` and `patient` (general §2.1). */
export class AdminUser extends User.extend<AdminUser>("AdminUser")({
  last_login: Schema.NullOr(IsoTimestamp),
  patient: Schema.NullOr(Schema.Struct({ id: Schema.Int, active: Schema.Boolean }))
}) {}

/** Admin users (general §4.7). */
export class AdminUsersApi extends HttpApiGroup.make("adminUsers")
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/users/:id")
      .setPath(Schema.Struct({ id: IdFromPath }))
      .addSuccess(Schema.Struct({ user: AdminUser }))
      .addError(NotFound.schema)
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
{}
