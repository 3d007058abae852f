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

// Scheduling
export const AvailableSlotId = positiveId("AvailableSlotId")
export type AvailableSlotId = typeof AvailableSlotId.Type
export const AvailableSlotIdFromText = idFromText(AvailableSlotId)

export const BookId = positiveId("BookId")
export type BookId = typeof BookId.Type

export const AppointmentId = positiveId("AppointmentId")
export type AppointmentId = typeof AppointmentId.Type
export const AppointmentIdFromText = idFromText(AppointmentId)

// Billing
export const ClaimId = positiveId("ClaimId")
export type ClaimId = typeof ClaimId.Type
export const ClaimIdFromText = idFromText(ClaimId)

export const ClaimDocumentId = positiveId("ClaimDocumentId")
export type ClaimDocumentId = typeof ClaimDocumentId.Type
export const ClaimDocumentIdFromText = idFromText(ClaimDocumentId)

export const InsurancePlanId = positiveId("InsurancePlanId")
export type InsurancePlanId = typeof InsurancePlanId.Type
export const InsurancePlanIdFromText = idFromText(InsurancePlanId)

// Reminders and push devices
export const AppointmentReminderId = positiveId("AppointmentReminderId")
export type AppointmentReminderId = typeof AppointmentReminderId.Type
export const AppointmentReminderIdFromText = idFromText(AppointmentReminderId)

export const DeviceId = positiveId("DeviceId")
export type DeviceId = typeof DeviceId.Type
export const DeviceIdFromText = idFromText(DeviceId)

// Prescriptions
export const MedicationId = positiveId("MedicationId")
export type MedicationId = typeof MedicationId.Type
export const MedicationIdFromText = idFromText(MedicationId)

export const PrescriptionId = positiveId("PrescriptionId")
export type PrescriptionId = typeof PrescriptionId.Type
export const PrescriptionIdFromText = idFromText(PrescriptionId)
// Collaborators
export const CollaboratorId = positiveId("CollaboratorId")
export type CollaboratorId = typeof CollaboratorId.Type
export const CollaboratorIdFromText = idFromText(CollaboratorId)
export const CollaboratorAssessmentId = positiveId("CollaboratorAssessmentId")
export type CollaboratorAssessmentId = typeof CollaboratorAssessmentId.Type
export const CollaboratorAssessmentIdFromText = idFromText(CollaboratorAssessmentId)
// Questionnaires
export const QuestionnaireId = positiveId("QuestionnaireId")
export type QuestionnaireId = typeof QuestionnaireId.Type
export const QuestionnaireIdFromText = idFromText(QuestionnaireId)
export const QuestionId = positiveId("QuestionId")
export type QuestionId = typeof QuestionId.Type
export const QuestionnaireResponseId = positiveId("QuestionnaireResponseId")
export type QuestionnaireResponseId = typeof QuestionnaireResponseId.Type
export const QuestionnaireResponseIdFromText = idFromText(QuestionnaireResponseId)
// Content library
export const ContentTagId = positiveId("ContentTagId")
export type ContentTagId = typeof ContentTagId.Type
export const ContentTagIdFromText = idFromText(ContentTagId)

export const ContentCollectionId = positiveId("ContentCollectionId")
export type ContentCollectionId = typeof ContentCollectionId.Type
export const ContentCollectionIdFromText = idFromText(ContentCollectionId)

export const ContentPieceId = positiveId("ContentPieceId")
export type ContentPieceId = typeof ContentPieceId.Type
export const ContentPieceIdFromText = idFromText(ContentPieceId)

export const UserPieceId = positiveId("UserPieceId")
export type UserPieceId = typeof UserPieceId.Type
export const UserPieceIdFromText = idFromText(UserPieceId)

export const UserCollectionId = positiveId("UserCollectionId")
export type UserCollectionId = typeof UserCollectionId.Type
export const UserCollectionIdFromText = idFromText(UserCollectionId)
// Clinic videos
export const VideoId = positiveId("VideoId")
export type VideoId = typeof VideoId.Type
export const VideoIdFromText = idFromText(VideoId)
