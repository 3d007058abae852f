import { Schema } from "effect"

/** Ids are PostgreSQL `integer`s: 1 … 2^31−1. */
export const maxId = 2_147_483_647

/** Identifiers are positive integers (ECM §conventions); branded so they cannot be mixed up. */
const positiveId = <const B extends string>(brand: B) =>
  Schema.Int.pipe(
    Schema.positive(),
    Schema.lessThanOrEqualTo(maxId),
    Schema.brand(brand),
    Schema.annotations({ message: () => "is invalid", identifier: brand })
  )

export const UserId = positiveId("UserId")
export type UserId = typeof UserId.Type

/**
 * An id as text (a path segment or a query value): decimal digits only, no sign, leading zero,
 * spaces, fraction or exponent. `Number()` reads "1e0", "1.0", "01", " 1" and "0x10" as ids, so
 * without this check each of them would name a record its caller never wrote.
 */
export const decimalIdPattern = "^[1-9][0-9]{0,9}$"
const decimalId = new RegExp(decimalIdPattern)

export const IdText = Schema.String.pipe(
  Schema.filter((s) => decimalId.test(s), {
    message: () => "is invalid",
    jsonSchema: { pattern: decimalIdPattern, maxLength: 10 }
  }),
  Schema.annotations({ description: "A positive integer id, in decimal digits" })
)

/**
 * Strict text → id, for path and query parameters: every endpoint declares its ids with this
 * (`idFromText(PatientId)`), so none of them reads "1e0" as 1.
 */
export const idFromText = <A, R>(id: Schema.Schema<A, number, R>): Schema.Schema<A, string, R> =>
  Schema.compose(Schema.compose(IdText, Schema.NumberFromString), id)

export const UserIdFromText = idFromText(UserId)

export const ProviderId = positiveId("ProviderId")
export type ProviderId = typeof ProviderId.Type
export const ProviderIdFromText = idFromText(ProviderId)

export const ProviderInviteId = positiveId("ProviderInviteId")
export type ProviderInviteId = typeof ProviderInviteId.Type

/** A patient (ECM member or clinic patient: the one `patients` table). */
export const PatientId = positiveId("PatientId")
export type PatientId = typeof PatientId.Type
export const PatientIdFromText = idFromText(PatientId)

// Scheduling (issue 15)
export const AvailableSlotId = positiveId("AvailableSlotId")
export type AvailableSlotId = typeof AvailableSlotId.Type
export const AvailableSlotIdFromText = idFromText(AvailableSlotId)

export const BookId = positiveId("BookId")
export type BookId = typeof BookId.Type

export const AppointmentId = positiveId("AppointmentId")
export type AppointmentId = typeof AppointmentId.Type
export const AppointmentIdFromText = idFromText(AppointmentId)

// Billing (issue 19)
export const ClaimId = positiveId("ClaimId")
export type ClaimId = typeof ClaimId.Type
export const ClaimIdFromText = idFromText(ClaimId)

export const ClaimDocumentId = positiveId("ClaimDocumentId")
export type ClaimDocumentId = typeof ClaimDocumentId.Type
export const ClaimDocumentIdFromText = idFromText(ClaimDocumentId)

export const InsurancePlanId = positiveId("InsurancePlanId")
export type InsurancePlanId = typeof InsurancePlanId.Type
export const InsurancePlanIdFromText = idFromText(InsurancePlanId)

// Reminders and push devices (issue 17)
export const AppointmentReminderId = positiveId("AppointmentReminderId")
export type AppointmentReminderId = typeof AppointmentReminderId.Type
export const AppointmentReminderIdFromText = idFromText(AppointmentReminderId)

export const DeviceId = positiveId("DeviceId")
export type DeviceId = typeof DeviceId.Type
export const DeviceIdFromText = idFromText(DeviceId)

// Prescriptions (issue 20)
export const MedicationId = positiveId("MedicationId")
export type MedicationId = typeof MedicationId.Type
export const MedicationIdFromText = idFromText(MedicationId)

export const PrescriptionId = positiveId("PrescriptionId")
export type PrescriptionId = typeof PrescriptionId.Type
export const PrescriptionIdFromText = idFromText(PrescriptionId)
