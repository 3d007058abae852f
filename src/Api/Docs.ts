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

/**
 * Who sees which patient (docs/spec-decisions.md "Who sees which patient"), in the words of the
 * operations scoped to one: `general` for demographics, scheduling, billing and the other
 * non-clinical records, `clinical` for clinical content.
 */
export const PatientAccess = {
  general: "Admins, front desk (`support`) and `billing` for any patient; providers and supervisors for the patients of " +
    "their care relationships (primary provider, an appointment in the past or the next 90 days, a case-load role — ECM " +
    "provider, oLCM, iLCM — or supervision of the patient's provider), and for any other patient with a break-glass " +
    "`X-Access-Reason` header (1–500 characters; allowed, audited and listed to admins); a `parent` for the patients " +
    "linked to their account. Any other patient is 404 `Patient not found`.",
  clinical: "Clinical content: admins for any patient; providers and supervisors for the patients of their care " +
    "relationships (primary provider, an appointment in the past or the next 90 days, a case-load role — ECM provider, " +
    "oLCM, iLCM — or supervision of the patient's provider), and for any other patient with a break-glass " +
    "`X-Access-Reason` header (1–500 characters; allowed, audited and listed to admins); a `parent` for the patients " +
    "linked to their account. Front desk (`support`) and `billing` never, reason or not. Any other patient is 404 " +
    "`Patient not found`."
} as const

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
}

/** Section headings the description carries, so a reader always finds them in the same place. */
export const accessHeading = "**Who may call:**"
export const specHeading = "**Spec:**"

/** Summary and description of an endpoint: `.annotateContext(operationDocs({...}))`. */
export const operationDocs = (docs: OperationDocs): Context.Context<never> =>
  OpenApi.annotations({
    summary: docs.summary,
    description: [docs.description, `${accessHeading} ${docs.access}`, `${specHeading} ${docs.spec}`].join("\n\n"),
    override: {
      ...(docs.singleUse === undefined ? {} : { "x-single-use": docs.singleUse }),
      // Staff-only operations say so in the document, so test/harness expects a parent's 403.
      ...(docs.access === Access.staff ? { "x-access": "staff" } : {}),
      ...docs.extensions
    }
  })

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
