/** Billing: claims and their documents, 837P batches, insurance plans and coverage. */
import { Layer } from "effect"
import { ClaimDocuments } from "../../../Services/Billing/ClaimDocuments.js"
import { Claims } from "../../../Services/Billing/Claims.js"
import { EdiBatches } from "../../../Services/Billing/EdiBatches.js"
import { Insurance } from "../../../Services/Billing/Insurance.js"
import { defineArea } from "../../Area.js"
import { HttpClaimsLive } from "./Claims.js"
import { HttpCoverageLive, HttpInsurancePlansLive } from "./Insurance.js"

export const BillingArea = defineArea({
  handlers: Layer.mergeAll(HttpClaimsLive, HttpInsurancePlansLive, HttpCoverageLive),
  services: Layer.mergeAll(Claims.Default, ClaimDocuments.Default, EdiBatches.Default, Insurance.Default)
})
