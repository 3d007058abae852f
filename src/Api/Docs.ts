/**
 * How the API reads on the docs page (`/docs`) and in the OpenAPI document. Every group and every
 * endpoint declares its documentation with these helpers; test/Api/Docs.test.ts fails when one
 * does not, and runs `redocly lint` on the document.
 *
 * ```ts
 * export class ActivitiesApi extends HttpApiGroup.make("ecmActivities")
 *   .add(
 *     HttpApiEndpoint.post("create", "/clinic/ecm/patients/:patient_id/activities")
 *       .setPayload(CreateActivityRequest)          // a Schema.Class with `requestBody(example)`
 *       .addSuccess(ActivityResponse, { status: 201 })
 *       .annotateContext(operationDocs({
 *         summary: "Record an activity",
 *         description: "Records … and generates the events of ECM §3.2.",
 *         access: Access.staff,
 *         spec: "ECM §4.5"
 *       }))
 *   )
 *   .annotateContext(groupDocs({ tag: "ECM · Activities", description: "…" }))
 * {}
 * ```
 */
import { OpenApi } from "@effect/platform"
import type { Context, Schema } from "effect"
import { reportAllErrors } from "./Errors.js"

/** Who may call an operation: the sentences the docs page uses for the common cases. */
export const Access = {
  public: "Anyone: no token needed.",
  signedIn: "Any signed-in user (`X-User-Token`).",
  staff: "Clinic staff (`X-User-Token`): every role but `parent`.",
  admin: "Admins only (`X-User-Token` of a user with the `admin` role)."
} as const

const careRelationships = "providers and supervisors for the patients of their care relationships (primary provider, an " +
  "appointment in the past or the next 90 days, a case-load role — ECM provider, oLCM, iLCM — or supervision of the patient's " +
  "provider), and for any other patient with a break-glass `X-Access-Reason` header (1–500 characters; allowed, audited and " +
  "listed to admins)"
const parentsOwn = "; a `parent` for the patients linked to their account"
const patientNotFound = "Any other patient is 404 `Patient not found`."
const generalRule = (parents: string) => `Admins, front desk (\`support\`) and \`billing\` for any patient; ${careRelationships}${parents}.`
const clinicalRule = (parents: string) =>
  `Clinical content: admins for any patient; ${careRelationships}${parents}. Front desk (\`support\`) and \`billing\` never, reason or not.`

/**
 * Who sees which patient (docs/spec-decisions.md "Who sees which patient"), in the words of the
 * operations scoped to one: `general` for demographics, scheduling, billing and the other
 * non-clinical records, `clinical` for clinical content. Operations say it with
 * `operationDocs({ patients })`, which picks the form that fits.
 */
export const PatientAccess = {
  general: `${generalRule(parentsOwn)} ${patientNotFound}`,
  clinical: `${clinicalRule(parentsOwn)} ${patientNotFound}`
} as const

/** How an operation scoped to a patient applies the matrix (`OperationDocs.patients`). */
export interface PatientRule {
  /** The kind of record: `general` (non-clinical) or `clinical`. */
  readonly records: "general" | "clinical"
  /**
   * What a patient outside the caller's view answers: `notFound` (404 `Patient not found`, the
   * default), `mustExist` (a body field naming it is 422 `must exist`, as an unknown id), `listed`
   * for lists that simply leave such patients out, or a sentence of the operation's own.
   */
  readonly refusal?: "notFound" | "mustExist" | "listed" | { readonly sentence: string }
  /** Parents are refused by role (403) whatever the patient: the sentence leaves them out. Implied by `Access.staff`. */
  readonly staffOnly?: boolean
}

/** The access matrix sentence of a patient-scoped operation; staff-only operations leave parents out (refused by role). */
const patientSentence = (rule: PatientRule, staffOnly: boolean): string => {
  const parents = staffOnly ? "" : parentsOwn
  const who = rule.records === "clinical" ? clinicalRule(parents) : generalRule(parents)
  const refusal = rule.refusal ?? "notFound"
  if (typeof refusal === "object") return `${who} ${refusal.sentence}`
  switch (refusal) {
    case "notFound":
      return `${who} ${patientNotFound}`
    case "mustExist":
      return `${who} Naming any other patient is 422 \`must exist\`, as an unknown id.`
    case "listed":
      return `${who} Other patients are left out.`
  }
}

/** The break-glass header as a security scheme an operation may add to its token (`X-Access-Reason`). */
export const accessReasonScheme = "accessReason"

/**
 * Adds the break-glass header beside the token on an operation: its security becomes "the token"
 * or "the token and `X-Access-Reason`" (the scheme is declared by `declareAccessReason` in the Api).
 */
const withAccessReason = (operation: Record<string, any>): Record<string, any> => {
  const security: Array<Record<string, Array<string>>> = operation.security ?? []
  return { ...operation, security: [...security, ...security.map((requirement) => ({ ...requirement, [accessReasonScheme]: [] }))] }
}

/** Declares the `accessReason` security scheme when an operation uses it (an Api-level OpenApi transform). */
export const declareAccessReason = (spec: Record<string, any>): Record<string, any> => {
  const used = Object.values<Record<string, any>>(spec.paths ?? {}).some((path) =>
    Object.values<Record<string, any>>(path).some((operation) =>
      (operation?.security ?? []).some((requirement: Record<string, unknown>) => accessReasonScheme in requirement)))
  if (!used) return spec
  spec.components = { ...spec.components }
  spec.components.securitySchemes = {
    ...spec.components.securitySchemes,
    [accessReasonScheme]: {
      type: "apiKey",
      in: "header",
      name: "X-Access-Reason",
      description: "Break-glass (optional, with `X-User-Token`): a provider or supervisor opens a patient outside their care " +
        "relationships for this request by giving the reason, 1–500 characters without control characters (trimmed; anything " +
        "else is no reason). The access is allowed, written to the audit trail with the reason and listed to admins " +
        "(`GET /v1/admin/clinic/access_reviews`). It never opens clinical content to front desk or billing, nor anything to a parent."
    }
  }
  return spec
}

export interface OperationDocs {
  /** A short imperative line for the menu: "Sign in", "List users". */
  readonly summary: string
  /** What it does and what it answers, in Markdown. */
  readonly description: string
  /** Who may call it: one of `Access`, or a sentence of its own for record-level rules. */
  readonly access: string
  /** The spec section it implements: "general §4.1", "ECM §4.5". */
  readonly spec: string
  /**
   * A uniqueness or single-use rule ("a reset token resets once"): the same request sent many
   * times at once succeeds exactly once. Published as `x-single-use`; the harness's race mode holds
   * the operation to it.
   */
  readonly singleUse?: string
  /** More `x-…` extensions of the operation (`x-webhook-signature` on the telephony webhooks). */
  readonly extensions?: Readonly<Record<`x-${string}`, unknown>>
  /**
   * Scoped to a patient: the access matrix sentence is added after `access` (without the parents'
   * clause when `access` is `Access.staff`), and, unless the operation only lists, the break-glass
   * `X-Access-Reason` header is declared beside the token.
   */
  readonly patients?: PatientRule
}

/** Section headings the description carries, so a reader always finds them in the same place. */
export const accessHeading = "**Who may call:**"
export const specHeading = "**Spec:**"

/** Summary and description of an endpoint: `.annotateContext(operationDocs({...}))`. */
export const operationDocs = (docs: OperationDocs): Context.Context<never> => {
  const access = docs.patients === undefined
    ? docs.access
    : `${docs.access} ${patientSentence(docs.patients, docs.patients.staffOnly === true || docs.access === Access.staff)}`
  const opensPatient = docs.patients !== undefined && docs.patients.refusal !== "listed"
  return OpenApi.annotations({
    summary: docs.summary,
    description: [docs.description, `${accessHeading} ${access}`, `${specHeading} ${docs.spec}`].join("\n\n"),
    override: {
      ...(docs.singleUse === undefined ? {} : { "x-single-use": docs.singleUse }),
      // Staff-only operations say so in the document, so test/harness expects a parent's 403.
      ...(docs.access === Access.staff ? { "x-access": "staff" } : {}),
      ...docs.extensions
    },
    ...(opensPatient ? { transform: withAccessReason } : {})
  })
}

export interface GroupDocs {
  /**
   * The tag the docs page groups the operations under, in words: `Users`, `Admin · Users`,
   * `ECM · Activities` (area, then section, joined by " · ").
   */
  readonly tag: string
  /** What the section is about, in Markdown. */
  readonly description: string
}

/** Tag name and description of a group: `.annotateContext(groupDocs({...}))`. */
export const groupDocs = (docs: GroupDocs): Context.Context<never> =>
  OpenApi.annotations({ title: docs.tag, description: docs.description })

/**
 * Annotations of a request body `Schema.Class`: decoding reports every invalid field and ignores
 * unknown ones (`reportAllErrors`), and the examples appear in the document (JSON Schema
 * `examples`, shown by the docs page; test/Api/Docs.test.ts checks them against the schema).
 *
 * `class SignInRequest extends Schema.Class<SignInRequest>("SignInRequest")({...}, requestBody({...})) {}`
 *
 * Examples are values of the decoded type (`sort_dir: "ASC"`, not "asc"): the document shows them
 * encoded, and drops one that does not encode. They are typed loosely (a precise type would make
 * the class refer to itself): test/Api/Docs.test.ts fails for a body without an example, and
 * redocly checks each against the schema.
 */
export const requestBody = (
  example: Readonly<Record<string, unknown>>,
  ...more: ReadonlyArray<Readonly<Record<string, unknown>>>
): readonly [undefined, undefined, Schema.Annotations.Schema<any>] =>
  [undefined, undefined, { ...reportAllErrors, examples: [example, ...more] }]
