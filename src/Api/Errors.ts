/**
 * Every error body the API sends, in the two shapes the spec uses:
 * - general area: `{"errors":"…"}`, or for 422 `{"errors":{"field":["…"]}}`;
 * - ECM area: `{"errors":["…"]}` (401 keeps the string form in both areas).
 * Handlers and middleware build bodies only through these classes and helpers.
 */
import { type HttpApiEndpoint, type HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Data, Duration, Schema } from "effect"

const StringErrors = Schema.String
const ListErrors = Schema.Array(Schema.String)
const FieldErrors = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })

/**
 * The wire schema of an error class: exactly `{"errors": …}`. The type side checks the class
 * with `instanceof`, so errors of identical shape (401, 403, 404 …) are told apart when the
 * builder picks the status to send.
 */
const errorSchema = <Self extends { readonly errors: A }, A, I>(
  self: new(args: { readonly errors: A }) => Self,
  errors: Schema.Schema<A, I>,
  status: number,
  identifier: string,
  description?: string
): Schema.Schema<Self, { readonly errors: I }> =>
  Schema.transform(
    Schema.Struct({ errors: errors }),
    Schema.declare((u): u is Self => u instanceof self, { identifier }),
    { strict: true, decode: (body) => new self(body), encode: (error) => ({ errors: error.errors }) }
  ).annotations({ identifier, ...HttpApiSchema.annotations({ status, ...(description ? { description } : {}) }) })

export class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly errors: string }> {
  static readonly schema = errorSchema(Unauthorized, StringErrors, 401, "Unauthorized", "Missing, invalid or revoked X-User-Token, or bad credentials")
}

export class Forbidden extends Data.TaggedError("Forbidden")<{ readonly errors: string }> {
  static readonly schema = errorSchema(Forbidden, StringErrors, 403, "Forbidden")
}

export class NotFound extends Data.TaggedError("NotFound")<{ readonly errors: string }> {
  static readonly schema = errorSchema(NotFound, StringErrors, 404, "NotFound")
}

export class Conflict extends Data.TaggedError("Conflict")<{ readonly errors: string }> {
  static readonly schema = errorSchema(Conflict, StringErrors, 409, "Conflict")
}

export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly errors: { readonly [field: string]: ReadonlyArray<string> }
}> {
  static readonly schema = errorSchema(ValidationFailed, FieldErrors, 422, "ValidationFailed", "Validation failed: field name to messages")
}

/**
 * How long a client should wait before trying again, in whole seconds. Not part of the body: the
 * server sends it as the `Retry-After` header of the response (src/Layers/Http/Errors.ts
 * `errorResponse`), so every throttle that builds its error with `tooManyRequests` gets the header.
 * A client decoding a response finds it unset here (read the header instead).
 */
export interface RetryAfter {
  readonly retryAfterSeconds?: number | undefined
}

export class TooManyRequests extends Data.TaggedError("TooManyRequests")<{ readonly errors: string } & RetryAfter> {
  static readonly schema = errorSchema(TooManyRequests, StringErrors, 429, "TooManyRequests", "Too many requests; retry after the Retry-After seconds")
}

export class EcmForbidden extends Data.TaggedError("EcmForbidden")<{ readonly errors: ReadonlyArray<string> }> {
  static readonly schema = errorSchema(EcmForbidden, ListErrors, 403, "EcmForbidden")
}

export class EcmNotFound extends Data.TaggedError("EcmNotFound")<{ readonly errors: ReadonlyArray<string> }> {
  static readonly schema = errorSchema(EcmNotFound, ListErrors, 404, "EcmNotFound")
}

export class EcmValidationFailed extends Data.TaggedError("EcmValidationFailed")<{ readonly errors: ReadonlyArray<string> }> {
  static readonly schema = errorSchema(EcmValidationFailed, ListErrors, 422, "EcmValidationFailed", "Validation failed: list of messages")
}

/** Body too large for its endpoint's limit, in the area's shape. */
export class PayloadTooLarge extends Data.TaggedError("PayloadTooLarge")<{ readonly errors: string }> {
  static readonly schema = errorSchema(PayloadTooLarge, StringErrors, 413, "PayloadTooLarge")
}

export class EcmPayloadTooLarge extends Data.TaggedError("EcmPayloadTooLarge")<{ readonly errors: ReadonlyArray<string> }> {
  static readonly schema = errorSchema(EcmPayloadTooLarge, ListErrors, 413, "EcmPayloadTooLarge")
}

export class InternalServerError extends Data.TaggedError("InternalServerError")<{ readonly errors: ReadonlyArray<string> }> {
  static readonly schema = errorSchema(InternalServerError, ListErrors, 500, "InternalServerError")
}

/** A dependency (PostgreSQL, the object store) is unreachable: sent with `Retry-After`. */
export class ServiceUnavailable extends Data.TaggedError("ServiceUnavailable")<{ readonly errors: string } & RetryAfter> {
  static readonly schema = errorSchema(ServiceUnavailable, StringErrors, 503, "ServiceUnavailable", "Temporarily unavailable (database or file store unreachable); retry after the Retry-After seconds")
}

export class EcmServiceUnavailable extends Data.TaggedError("EcmServiceUnavailable")<{ readonly errors: ReadonlyArray<string> } & RetryAfter> {
  static readonly schema = errorSchema(EcmServiceUnavailable, ListErrors, 503, "EcmServiceUnavailable", "Temporarily unavailable (database or file store unreachable); retry after the Retry-After seconds")
}

/** Every error class above: what a handler may fail with and the builder will encode. */
export const apiErrorClasses = [
  Unauthorized, Forbidden, NotFound, Conflict, ValidationFailed, TooManyRequests,
  EcmForbidden, EcmNotFound, EcmValidationFailed, PayloadTooLarge, EcmPayloadTooLarge, InternalServerError,
  ServiceUnavailable, EcmServiceUnavailable
] as const
export type ApiError = InstanceType<(typeof apiErrorClasses)[number]>
export const isApiError = (u: unknown): u is ApiError => apiErrorClasses.some((c) => u instanceof c)

/** The `Retry-After` seconds an error carries, if any. */
export const retryAfterOf = (error: ApiError): number | undefined =>
  "retryAfterSeconds" in error && typeof error.retryAfterSeconds === "number" ? error.retryAfterSeconds : undefined

/** A wait as `Retry-After` seconds: rounded up (retrying early is refused again), at least 1. */
export const retryAfterSeconds = (wait: Duration.DurationInput): number =>
  Math.max(1, Math.ceil(Duration.toMillis(Duration.decode(wait)) / 1000))

/** Seconds a client should wait before retrying a 503: a restarting database is back in seconds. */
export const unavailableRetryAfterSeconds = 5

export const messages = {
  unauthorized: "You are not authorized to perform this action.",
  invalidCredentials: "Invalid email or password",
  adminRequired: "Admin access required",
  staffRequired: "Staff access required",
  internal: "Internal server error",
  payloadTooLarge: "Request body is too large",
  unavailable: "Service temporarily unavailable",
  fileStoreUnavailable: "File store temporarily unavailable"
} as const

/** Which spec document governs an endpoint, and so which error shapes it uses. */
export type Area = "general" | "ecm"

export type FieldMessages = Readonly<Record<string, ReadonlyArray<string>>>

export const unauthorized = (message: string = messages.unauthorized) => new Unauthorized({ errors: message })
export const forbidden = (message: string) => new Forbidden({ errors: message })
export const notFound = (thing: string) => new NotFound({ errors: `${thing} not found` })
export const conflict = (message: string) => new Conflict({ errors: message })
export const invalid = (fields: FieldMessages) => new ValidationFailed({ errors: fields })
export const invalidField = (field: string, message: string) => invalid({ [field]: [message] })
/** 429 with the wait the throttle computed: the response carries it as `Retry-After`. */
export const tooManyRequests = (message: string, wait: Duration.DurationInput) =>
  new TooManyRequests({ errors: message, retryAfterSeconds: retryAfterSeconds(wait) })
export const ecmForbidden = (message: string) => new EcmForbidden({ errors: [message] })
export const ecmNotFound = (thing: string) => new EcmNotFound({ errors: [`${thing} not found`] })
export const ecmInvalid = (list: ReadonlyArray<string>) => new EcmValidationFailed({ errors: list })
export const internalServerError = () => new InternalServerError({ errors: [messages.internal] })
export const serviceUnavailable = (area: Area, message: string = messages.unavailable): ServiceUnavailable | EcmServiceUnavailable => {
  const retryAfterSeconds = unavailableRetryAfterSeconds
  return area === "ecm"
    ? new EcmServiceUnavailable({ errors: [message], retryAfterSeconds })
    : new ServiceUnavailable({ errors: message, retryAfterSeconds })
}
export const payloadTooLarge = (area: Area): PayloadTooLarge | EcmPayloadTooLarge =>
  area === "ecm"
    ? new EcmPayloadTooLarge({ errors: [messages.payloadTooLarge] })
    : new PayloadTooLarge({ errors: messages.payloadTooLarge })

/** "first_name" -> "First name", "user.email" -> "Email": the ECM area's field labels. */
export const fieldLabel = (field: string): string => {
  const last = field.split(".").pop() ?? field
  const words = last.replace(/\[\d+\]/g, "").replace(/_id$/, "").replace(/_/g, " ").trim()
  return words.length === 0 ? "Value" : words.charAt(0).toUpperCase() + words.slice(1)
}

/** The ECM area lists full sentences: `{"title":["can't be blank"]}` -> `["Title can't be blank"]`. */
export const toSentences = (fields: FieldMessages): Array<string> =>
  Object.entries(fields).flatMap(([field, list]) => list.map((m) => `${fieldLabel(field)} ${m}`))

/** A validation failure in the shape of the given area. */
export const validationFailure = (area: Area, fields: FieldMessages): ValidationFailed | EcmValidationFailed =>
  area === "ecm" ? ecmInvalid(toSentences(fields)) : invalid(fields)

/**
 * A request body or query: decoding reports every invalid field at once (Rails style), and
 * unknown extra fields are ignored.
 */
export const reportAllErrors = { parseOptions: { errors: "all", onExcessProperty: "ignore" } } as const

/** `reportAllErrors` for a `Schema.Class` body: the options must sit on its encoded struct. */
export const reportAllErrorsInClass = [undefined, undefined, reportAllErrors] as const

/**
 * The errors every ECM group declares, in the ECM shape: 422, 503 and 413 (the Api declares the
 * general area's 503 and 413 once for all groups):
 * `.middleware(EcmStaffAuthentication).pipe(withEcmGroupErrors)`.
 */
export const withEcmGroupErrors = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R, TopLevel extends boolean>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R, TopLevel>
) => group.addError(EcmValidationFailed.schema).addError(EcmServiceUnavailable.schema).addError(EcmPayloadTooLarge.schema)
