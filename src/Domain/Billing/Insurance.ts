/** Insurance plans and patient coverage (needed by 837P loops 2000B, 2010BA and 2010BB). */
import { Schema } from "effect"
import { InsurancePlanId, PatientId } from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

/** 837P SBR09: how the claim is filed (CI commercial, MC Medicaid, MB Medicare Part B, BL Blue Cross/Shield, HM HMO …). */
export const ClaimFilingIndicator = Schema.Literal(
  "11", "12", "13", "14", "15", "16", "17", "AM", "BL", "CH", "CI", "DS", "FI", "HM", "LM", "MA", "MB", "MC", "OF", "TV", "VA", "WC", "ZZ"
).annotations({ message: () => "is not included in the list" })
export type ClaimFilingIndicator = typeof ClaimFilingIndicator.Type

/** The patient's relationship to the subscriber: self (no 2000C), or a dependant (PAT01 19 child, 01 spouse, G8 other). */
export const Relationship = Schema.Literal("self", "child", "spouse", "other").annotations({ message: () => "is not included in the list" })

export const Gender = Schema.Literal("F", "M", "U").annotations({ message: () => "is not included in the list" })

export class InsurancePlan extends Schema.Class<InsurancePlan>("InsurancePlan")({
  id: InsurancePlanId,
  name: Schema.String,
  payer_id: Schema.String,
  claim_filing_indicator: ClaimFilingIndicator,
  active: Schema.Boolean,
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}

export class Subscriber extends Schema.Class<Subscriber>("Subscriber")({
  first_name: Schema.String,
  last_name: Schema.String,
  date_of_birth: Schema.NullOr(Schema.String),
  gender: Schema.NullOr(Gender),
  address: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.String),
  state: Schema.NullOr(Schema.String),
  zip: Schema.NullOr(Schema.String)
}) {}

export class Coverage extends Schema.Class<Coverage>("Coverage")({
  patient_id: PatientId,
  insurance_plan: InsurancePlan,
  member_id: Schema.String,
  group_number: Schema.NullOr(Schema.String),
  relationship: Relationship,
  subscriber: Subscriber.annotations({ description: "Who holds the policy: the patient for `self`, else the named guardian or spouse" }),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp
}) {}
