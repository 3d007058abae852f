/**
 * Broken object-level authorisation: a parent must never read or change a record of a family that
 * is not theirs. Two families are seeded per operation; family A's parent calls every operation
 * scoped to a kind of owned record with family B's records, and must be refused (not 2xx, not a
 * word of B's data in the body) and leave them unchanged; the same call on A's own record is the
 * control that the refusal was about ownership.
 *
 * Kinds of owned record are pluggable: `users` (a parent owns their own account, /v1/users/{id})
 * and `patients`, which takes a `FamilySeeder` that links patients to each family:
 * `ecmPatientFamilies` (patients.ts) for the app, `withoutPatients` for a synthetic API that has none.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import fc from "fast-check"
import type { Case } from "./cases.js"
import { caseSeed, generationContext } from "./campaign.js"
import { type OpenApiDocument, type Operation, pathParameterNames, resolve } from "./document.js"
import { exchange } from "./exchange.js"
import { type Draft, encodeSegment, validDraft } from "./generate.js"
import type { Harness } from "./harness.js"
import type { Principal } from "./world.js"

/** Where an operation names the owned record. */
export interface OwnedParameter {
  readonly in: "path" | "query" | "body"
  readonly name: string
  /** A body field one level down: `{"help_request":{"patient_id":…}}` has `within: "help_request"`. */
  readonly within?: string
  /**
   * The parameter names a record *of* the owned one (a patient's treatment plan, by its own id):
   * the request carries the family's record of that kind, found with `OwnedKind.recordOf`.
   */
  readonly record?: string
  /** Other path parameters naming records of the owned one (`/{patient_id}/spot/{id}`: the patient's spot). */
  readonly companions?: ReadonlyArray<{ readonly name: string; readonly record: string }>
  /** The body field is a list of ids (`{"collaborator":{"patient_ids":[…]}}`): the record goes in as a one-item list. */
  readonly many?: boolean
}

export interface OwnedKind<R> {
  readonly name: string
  readonly parameterOf: (operation: Operation, document?: OpenApiDocument) => OwnedParameter | undefined
  /** The id of the owned record's record of a kind (`OwnedParameter.record`), if it has one. */
  readonly recordOf?: (id: number, record: string) => number | undefined
  /** The records of this kind a new family with this parent owns. */
  readonly recordsOf: (parent: Principal) => Effect.Effect<ReadonlyArray<number>, never, R>
  /** What a record holds, to tell whether a request changed it. */
  readonly snapshot: (id: number) => Effect.Effect<unknown, never, R>
}

/** A path parameter right after a segment: `/patients/{id}` -> `id`. */
const parameterAfter = (path: string, segment: string): string | undefined =>
  new RegExp(`/${segment}/\\{([^}]+)\\}`).exec(path)?.[1]

/**
 * Records of a clinic patient reached by their own id under a path without the patient's
 * (`/clinic/patients/treatment_plans/{id}`), and by a second path parameter beside the patient's
 * (`/clinic/patients/{patient_id}/spot/{id}`).
 */
const patientRecordPaths: ReadonlyArray<readonly [RegExp, string]> = [
  [/\/treatment_plans\/\{id\}$/, "treatment_plan"],
  [/\/spot\/\{id\}$/, "spot"],
  [/\/documents\/\{id\}$/, "document"],
  // A reminder of the patient's appointment.
  [/\/appointment_reminders\/\{id\}$/, "appointment_reminder"],
  // A prescription of the patient (show, update, cancel, refill).
  [/\/prescriptions\/\{id\}(\/refill)?$/, "prescription"],
  // A questionnaire response, shown under the clinic's path and updated under its own.
  [/\/clinic\/patients\/questionnaires\/\{id\}$/, "questionnaire_response"],
  [/\/questionnaire_responses\/\{id\}$/, "questionnaire_response"]
]

/**
 * Operations naming the patient's appointment by `appointment_id` (query or body, a level down):
 * the appointment reminders (general §5.4 answers another family's with 403).
 */
const appointmentScoped = /\/appointment_reminders$/

/**
 * Patient-scoped operations: a `{patient_id}` path parameter, a path under `/patients/{…}`, a
 * `patient_id` query parameter, a top-level body field (ECM Form C takes it that way) or one a
 * level down (`{"help_request":{"patient_id":…}}`, given the document to follow `$ref`s), or a
 * path naming a patient's record by its own id (treatment plans).
 */
export const patientParameter = (operation: Operation, document?: OpenApiDocument): OwnedParameter | undefined => {
  const record = patientRecordPaths.find(([pattern]) => pattern.test(operation.path))?.[1]
  const inPath = pathParameterNames(operation.path).find((n) => n === "patient_id") ?? parameterAfter(operation.path, "patients")
  if (inPath !== undefined) {
    return record === undefined ? { in: "path", name: inPath } : { in: "path", name: inPath, companions: [{ name: "id", record }] }
  }
  if (record !== undefined) return { in: "path", name: "id", record }
  if (operation.parameters.some((p) => p.in === "query" && p.name === "patient_id")) return { in: "query", name: "patient_id" }
  if (appointmentScoped.test(operation.path)) {
    if (operation.parameters.some((p) => p.in === "query" && p.name === "appointment_id")) return { in: "query", name: "appointment_id", record: "appointment" }
    const body = operation.body === undefined || document === undefined ? undefined : resolve(document, operation.body)
    for (const [key, schema] of Object.entries((body?.properties ?? {}) as Record<string, unknown>)) {
      const inner = resolve(document!, schema as Record<string, unknown>)
      if ("appointment_id" in ((inner.properties ?? {}) as Record<string, unknown>)) {
        return { in: "body", name: "appointment_id", within: key, record: "appointment" }
      }
    }
  }
  const body = operation.body === undefined ? undefined : document === undefined ? operation.body : resolve(document, operation.body)
  const bodyProperties = (body?.properties ?? {}) as Record<string, unknown>
  if ("patient_id" in bodyProperties) return { in: "body", name: "patient_id" }
  if (document !== undefined) {
    for (const [key, schema] of Object.entries(bodyProperties)) {
      const inner = resolve(document, schema as Record<string, unknown>)
      if ("patient_id" in ((inner.properties ?? {}) as Record<string, unknown>)) return { in: "body", name: "patient_id", within: key }
    }
  }
  return undefined
}

/** Links patients (and their records) to each family's parent. */
export interface FamilySeeder<R> {
  readonly description: string
  readonly patientsOf: (parent: Principal) => Effect.Effect<ReadonlyArray<number>, never, R>
  readonly snapshot: (patientId: number) => Effect.Effect<unknown, never, R>
  /** The patient's seeded record of a kind (`treatment_plan`, `spot`, `document` …). */
  readonly recordOf?: (patientId: number, record: string) => number | undefined
}

/** For a synthetic API without patients: families get none, so nothing is sent for them. */
export const withoutPatients: FamilySeeder<never> = {
  description: "none: the API has no patients",
  patientsOf: () => Effect.succeed([]),
  snapshot: () => Effect.succeed(null)
}

export const patients = <R>(seeder: FamilySeeder<R>): OwnedKind<R> => ({
  name: "patient",
  parameterOf: patientParameter,
  recordsOf: seeder.patientsOf,
  snapshot: seeder.snapshot,
  ...(seeder.recordOf === undefined ? {} : { recordOf: seeder.recordOf })
})

/** A parent owns their own account: `/v1/users/{id}` outside the admin area. */
export const users: OwnedKind<SqlClient.SqlClient> = {
  name: "user",
  parameterOf: (operation) => {
    const name = operation.path.startsWith("/v1/admin/") ? undefined : parameterAfter(operation.path, "users")
    return name === undefined ? undefined : { in: "path", name }
  },
  recordsOf: (parent) => Effect.succeed([parent.id]),
  snapshot: (id) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM users WHERE id = ${id}`).pipe(
      Effect.map((rows) => JSON.stringify(rows)),
      Effect.orDie,
      Effect.withTracerEnabled(false)
    )
}

/**
 * The draft naming record `id` where the parameter says, with the path's companion records (a
 * spot beside its patient) set to `companions`' ids.
 */
export const placeRecord = (draft: Draft, parameter: OwnedParameter, id: number, companions: Readonly<Record<string, number>> = {}): Draft => {
  const companionSegments = Object.fromEntries(Object.entries(companions).map(([name, value]) => [name, encodeSegment(String(value))]))
  const value = parameter.many === true ? [id] : id
  switch (parameter.in) {
    case "path":
      return { ...draft, pathParams: { ...draft.pathParams, ...companionSegments, [parameter.name]: encodeSegment(String(id)) } }
    case "query":
      return { ...draft, query: [...draft.query.filter(([k]) => k !== parameter.name), [parameter.name, String(id)]] }
    case "body": {
      const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
      const body = draft.body.kind === "json" && isObject(draft.body.value) ? draft.body.value : {}
      if (parameter.within === undefined) return { ...draft, body: { kind: "json", value: { ...body, [parameter.name]: value } } }
      const inner = isObject(body[parameter.within]) ? body[parameter.within] as Record<string, unknown> : {}
      return { ...draft, body: { kind: "json", value: { ...body, [parameter.within]: { ...inner, [parameter.name]: value } } } }
    }
  }
}

/** The ids an owned record brings to a request: its record of the parameter's kind, and its companions. */
export const recordIds = <R>(parameter: OwnedParameter, owned: number, kind: Pick<OwnedKind<R>, "recordOf">) => ({
  id: parameter.record === undefined ? owned : kind.recordOf?.(owned, parameter.record) ?? owned,
  companions: Object.fromEntries((parameter.companions ?? []).flatMap(({ name, record }) => {
    const value = kind.recordOf?.(owned, record)
    return value === undefined ? [] : [[name, value] as const]
  }))
})

export const withRecord = <R>(draft: Draft, parameter: OwnedParameter, owned: number, kind: OwnedKind<R>): Draft => {
  const { companions, id } = recordIds(parameter, owned, kind)
  return placeRecord(draft, parameter, id, companions)
}

/** A parent refused for their role on a staff-only operation (ECM: a list, general: a string). */
const staffRequired = "Staff access required"
const isStaffRefusal = (received: { readonly status: number; readonly text: string }) =>
  received.status === 403 &&
  [JSON.stringify({ errors: [staffRequired] }), JSON.stringify({ errors: staffRequired })].includes(received.text)

export interface BolaFailure {
  readonly operation: string
  readonly kind: string
  readonly message: string
  readonly request: string
  readonly response: string
}

export interface BolaReport {
  /** Operations scoped to each kind of owned record. */
  readonly scoped: ReadonlyMap<string, ReadonlyArray<string>>
  readonly requests: number
  readonly failures: ReadonlyArray<BolaFailure>
}

export interface BolaOptions<R> {
  readonly harness: Harness
  readonly kinds: ReadonlyArray<OwnedKind<R>>
  /** A new signed-in parent. */
  readonly newParent: Effect.Effect<Principal, never, R>
  readonly seed: number
}

const isSuccess = (status: number) => status >= 200 && status < 300

export const runBola = <R>(options: BolaOptions<R>): Effect.Effect<BolaReport, never, R> =>
  Effect.gen(function*() {
    const { harness, seed } = options
    const scoped = new Map<string, Array<string>>()
    const failures: Array<BolaFailure> = []
    let requests = 0
    for (const kind of options.kinds) {
      const operations = harness.operations.filter((o) => kind.parameterOf(o, harness.document) !== undefined)
      scoped.set(kind.name, operations.map((o) => o.id))
      for (const [index, operation] of operations.entries()) {
        const parameter = kind.parameterOf(operation, harness.document)!
        const parentA = yield* options.newParent
        const parentB = yield* options.newParent
        const ownA = yield* kind.recordsOf(parentA)
        const ownB = yield* kind.recordsOf(parentB)
        // Plausible values: the control below needs a request refused only for whose record it names.
        const context = { ...generationContext(harness, []), ids: fc.constantFrom(parentA.id, parentB.id), plausible: true }
        // A minimal request (only what the document requires), whose only reason to be refused is
        // whose record it names; and a full one, which may change more.
        const drafts = [true, false].map((minimal) =>
          fc.sample(validDraft(operation, { ...context, minimal }, harness.tokenHeaders), { seed: caseSeed(seed, index), numRuns: 1 })[0]!)
        const send = (draft: Draft, id: number) => {
          const testCase: Case = { operation, caller: "parent", badToken: "", variant: "valid", draft: withRecord(draft, parameter, id, kind), refusedByConstruction: false }
          requests++
          return exchange(harness, testCase, () => parentA.token)
        }
        const fail = (message: string, outcome: { readonly request: string; readonly response: string }) =>
          failures.push({ operation: operation.id, kind: kind.name, message, request: outcome.request, response: outcome.response })
        let foreignOutcome: { readonly status: number; readonly text: string } | undefined
        for (const [foreign, draft] of ownB.flatMap((id) => drafts.map((d) => [id, d] as const))) {
          const before = yield* kind.snapshot(foreign)
          const outcome = yield* send(draft, foreign)
          const status = outcome.received?.status ?? 0
          foreignOutcome ??= { status, text: outcome.received?.text ?? "" }
          if (isSuccess(status)) fail(`family A's parent got ${status} on family B's ${kind.name} ${foreign}`, outcome)
          // (An operation whose session is optional answers a link token in the body with 401 when the token is no good.)
          if (status === 401 && operation.tokenHeader !== undefined) fail(`family A's parent was not signed in (401): the check did not run`, outcome)
          if (outcome.received !== undefined && harness.secrets.find(outcome.received.text, "response").some((hit) => JSON.stringify(before).toLowerCase().includes(hit.value))) {
            fail(`the response holds family B's data`, outcome)
          }
          if (JSON.stringify(yield* kind.snapshot(foreign)) !== JSON.stringify(before)) fail(`family B's ${kind.name} ${foreign} changed`, outcome)
          for (const v of outcome.violations) fail(`${v.check}: ${v.message}`, outcome)
        }
        // The control: on A's own record the same request is not refused the same way, so the
        // refusal above was about whose record it is. (Admin-only operations refuse parents anyway,
        // and so do staff-only ones: the clinic Form C answers a parent 403 "Staff access required".)
        const refusal = foreignOutcome
        const own = ownA[0]
        // (Admin- and staff-only operations (x-access: staff) refuse every parent, their own record or not.)
        if (!operation.adminOnly && !operation.staffOnly && refusal !== undefined && !isStaffRefusal(refusal) && own !== undefined) {
          const outcome = yield* send(drafts[0]!, own)
          const status = outcome.received?.status ?? 0
          if (status === 401 || (status === refusal.status && outcome.received?.text === refusal.text)) {
            fail(`control: family A's parent was refused on their own ${kind.name} as on B's (${status})`, outcome)
          }
        }
      }
    }
    return { scoped, requests, failures }
  })

export const formatBolaFailures = (failures: ReadonlyArray<BolaFailure>): string =>
  failures.map((f) => `✗ ${f.operation} (${f.kind}): ${f.message}\n${f.request.replace(/^/gm, "  ")}\n  → ${f.response}`).join("\n\n")
