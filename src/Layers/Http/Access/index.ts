/** Record access: the admins' review of break-glass accesses. */
import { AccessReviews } from "../../../Services/Access/AccessReviews.js"
import { defineArea } from "../../Area.js"
import { HttpAccessReviewsLive } from "./AccessReviews.js"

export const AccessArea = defineArea({
  handlers: HttpAccessReviewsLive,
  services: AccessReviews.Default
})
