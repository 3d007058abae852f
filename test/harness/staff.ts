/**
 * Staff against staff: least privilege for health data (docs/spec-decisions.md "Who sees which
 * patient"). A provider sees the patients of their care relationships only, front desk and billing
 * see no clinical content, and a patient a caller may not see answers exactly as an unknown id.
 *
 * Per patient-scoped operation of the general area, two families are seeded, each patient with a
 * signed-in provider of its own (its primary provider, with an appointment). Family B's provider
 * calls with A's patient and then with an id that does not exist, minimal and full requests: the
 * answers must be the same 404, A's records unchanged, not a word of them in the body. On clinical
 * operations a front desk and a billing user are held to the same (or to the same refusal for
 * their role, which says nothing about the patient). The control: A's own provider with the same request
 * is not refused, so the refusals were about the relationship and the check cannot pass by a
 * request that fails anyway. Then one break-glass sample per kind of operation: another outsider
 * provider with `X-Access-Reason` on a fresh patient is let in, and the audit trail holds a
 * `patient.break_glass` entry for it.
 *
 * The ECM area is not in the matrix (its operations are for all clinic staff, spec-decisions
 * "Who: clinic staff"), and admin-only operations refuse every non-admin whatever the patient:
 * both are counted, not called.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { type BolaFailure, type FamilySeeder, type OwnedParameter, patientParameter, placeRecord, recordIds } from "./bola.js"
import type { Case } from "./cases.js"
import { caseSeed, generationContext } from "./campaign.js"
import { type OpenApiDocument, type Operation, resolve } from "./document.js"
import { exchange, type Outcome } from "./exchange.js"
import { type Draft, validDraft } from "./generate.js"
import type { Harness } from "./harness.js"
import type { Principal } from "./world.js"

/** A family seeder whose patients each have a signed-in provider of their own. */
export interface CareTeamSeeder<R> extends FamilySeeder<R> {
  /** The patient's provider: a care relationship (primary provider, an appointment). */
  readonly providerOf: (patientId: number) => Principal | undefined
  /** Whether the audit trail holds a `patient.break_glass` entry by the user on the patient. */
  readonly breakGlassRecorded: (userId: number, patientId: number) => Effect.Effect<boolean, never, R>
}

/** Who is held to the rule: a provider without a relationship, and the front office on clinical content. */
export type StaffCaller = "outsider provider" | "front desk" | "billing"
export const staffCallers: ReadonlyArray<StaffCaller> = ["outsider provider", "front desk", "billing"]

/**
 * Clinical content (the matrix's right-hand column): session notes, questionnaire responses,
 * medication history and prescriptions, treatment plans, collaborator assessments, and a document
 * named by id (the seeded one is clinical). Front desk and billing get none of it.
 */
const clinicalPaths: ReadonlyArray<RegExp> = [
  /\/session_notes(\/|$)/,
  /\/clinic\/patients\/questionnaires(\/|$)/,
  /\/questionnaire_responses(\/|$)/,
  /\/prescriptions(\/|$)/,
  /\/medication_history$/,
  /\/treatment_plans(\/|$)/,
  /\/collaborator_assessments(\/|$)/,
  /\/documents\/\{id\}$/
]

export const isClinical = (operation: Operation): boolean => clinicalPaths.some((pattern) => pattern.test(operation.path))

/** A body list of patient ids, at the top or one level down (`{"collaborator":{"patient_ids":[…]}}`). */
const patientIdsParameter = (operation: Operation, document: OpenApiDocument): OwnedParameter | undefined => {
  if (operation.body === undefined) return undefined
  const properties = (resolve(document, operation.body).properties ?? {}) as Record<string, unknown>
  if ("patient_ids" in properties) return { in: "body", name: "patient_ids", many: true }
  for (const [key, schema] of Object.entries(properties)) {
    const inner = resolve(document, schema as Record<string, unknown>)
    if ("patient_ids" in ((inner.properties ?? {}) as Record<string, unknown>)) return { in: "body", name: "patient_ids", within: key, many: true }
  }
  return undefined
}

/**
 * Where a staff request names a patient: as for families (`patientParameter`), or in a list of
 * patient ids a record is linked to (a collaborator's `patient_ids`, on create and on update of a
 * collaborator of the caller's own).
 */
export const staffPatientParameter = (operation: Operation, document: OpenApiDocument): OwnedParameter | undefined =>
  patientParameter(operation, document) ?? patientIdsParameter(operation, document)

/**
 * Other ids a request carries, by field name: records of the caller's own (their provider profile, a
 * collaborator they added: linking another provider's patient to one's own record is the attack)
 * and records of the patient's (its appointment) or shared ones (a medication); dates that may not
 * be in the future are yesterday. Set only where the generated request has the field, so minimal
 * requests stay minimal.
 */
const callerRecordFields: Readonly<Record<string, string>> = { provider_id: "provider", collaborator_id: "collaborator" }
const patientRecordFields: Readonly<Record<string, string>> = { appointment_id: "appointment", medication_id: "medication" }
/** Dates the server refuses in the future (a prescription is written on or before today): yesterday. */
const pastDateFields: ReadonlySet<string> = new Set(["prescription_date"])
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

/** A record of the caller's own named by the path's `{id}` (a video or collaborator they added). */
const callerRecordPaths: ReadonlyArray<readonly [RegExp, string]> = [[/\/videos\/\{id\}$/, "video"], [/\/collaborators\/\{id\}$/, "collaborator"]]

const withRecordsOf = (
  operation: Operation,
  draft: Draft,
  recordOf: (kind: string) => number | undefined,
  patientRecordOf: (kind: string) => number | undefined
): Draft => {
  const idFor = (field: string) => {
    const caller = callerRecordFields[field]
    const patient = patientRecordFields[field]
    return caller !== undefined ? recordOf(caller) : patient !== undefined ? patientRecordOf(patient) : undefined
  }
  const fill = (value: unknown, depth: number): unknown => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return value
    return Object.fromEntries(Object.entries(value).map(([key, v]) =>
      [key, idFor(key) ?? (pastDateFields.has(key) ? yesterday() : depth < 1 ? fill(v, depth + 1) : v)]))
  }
  const pathRecord = callerRecordPaths.find(([pattern]) => pattern.test(operation.path))?.[1]
  const pathId = pathRecord === undefined ? undefined : recordOf(pathRecord)
  return {
    ...draft,
    pathParams: pathId === undefined ? draft.pathParams : { ...draft.pathParams, id: String(pathId) },
    query: draft.query.map(([key, value]) => [key, String(idFor(key) ?? value)] as const),
    body: draft.body.kind === "json" ? { kind: "json", value: fill(draft.body.value, 0) } : draft.body
  }
}

/** How an operation names the patient, and whether it reads or writes: one break-glass sample each. */
export const operationKind = (operation: Operation, parameter: OwnedParameter): string => {
  const named = parameter.record !== undefined ? `${parameter.record} id in the ${parameter.in}`
    : parameter.many === true ? "patient id list in the body"
    : parameter.companions !== undefined ? "patient and record in the path"
    : parameter.within !== undefined ? "patient id inside the body"
    : `patient id in the ${parameter.in}`
  return `${named}, ${operation.method === "GET" ? "read" : "write"}`
}

/** An id no patient or record has. */
export const unknownId = 2_000_000_000

export const accessReasonHeader = "X-Access-Reason"

export interface StaffBolaOptions<R> {
  readonly harness: Harness
  readonly seeder: CareTeamSeeder<R>
  /** A new signed-in parent (the seeder links a family's patient to one). */
  readonly newParent: Effect.Effect<Principal, never, R>
  /** A new signed-in front desk (`support`) or billing user. */
  readonly frontOffice: (role: "support" | "billing") => Effect.Effect<Principal, never, R>
  readonly seed: number
  /** Clinical operations (default: `isClinical`). */
  readonly clinical?: (operation: Operation) => boolean
}

export interface StaffBolaReport {
  /** Operations checked, per caller held to the rule. */
  readonly matrix: ReadonlyMap<StaffCaller, ReadonlyArray<string>>
  /** Patient-scoped operations not in the matrix, and why. */
  readonly outOfScope: ReadonlyMap<string, ReadonlyArray<string>>
  /** Operations whose own-provider control ran. */
  readonly controls: number
  /** The controls' answers by status, and the operations whose control answered other than 2xx. */
  readonly controlStatuses: ReadonlyMap<number, ReadonlyArray<string>>
  /** The break-glass sample of each kind of operation (undefined: no operation of that kind could be sampled). */
  readonly breakGlass: ReadonlyMap<string, string | undefined>
  readonly requests: number
  readonly failures: ReadonlyArray<BolaFailure>
}

const sameAnswer = (a: Outcome, b: Outcome) => a.received?.status === b.received?.status && a.received?.text === b.received?.text
const statusOf = (outcome: Outcome) => outcome.received?.status ?? 0

export const runStaffBola = <R>(options: StaffBolaOptions<R>): Effect.Effect<StaffBolaReport, never, R> =>
  Effect.gen(function*() {
    const { harness, seed, seeder } = options
    const clinical = options.clinical ?? isClinical
    const matrix = new Map<StaffCaller, Array<string>>(staffCallers.map((c) => [c, []]))
    const outOfScope = new Map<string, Array<string>>()
    const samples = new Map<string, { operation: Operation; parameter: OwnedParameter; draft: Draft } | undefined>()
    const failures: Array<BolaFailure> = []
    let requests = 0
    let controls = 0
    const controlStatuses = new Map<number, Array<string>>()

    const family = Effect.gen(function*() {
      const [patient] = yield* seeder.patientsOf(yield* options.newParent)
      const provider = patient === undefined ? undefined : seeder.providerOf(patient)
      return patient === undefined || provider === undefined ? undefined : { patient, provider }
    })
    const send = (operation: Operation, caller: Principal, draft: Draft) => {
      const testCase: Case = { operation, caller: "staff", badToken: "", variant: "valid", draft, refusedByConstruction: false }
      requests++
      return exchange(harness, testCase, () => caller.token)
    }

    for (const [index, operation] of harness.operations.entries()) {
      const parameter = staffPatientParameter(operation, harness.document)
      if (parameter === undefined) continue
      const skip = operation.area !== "general" ? "ECM area: every clinic staff member"
        : operation.adminOnly ? "admin-only: every non-admin refused"
        : operation.tokenHeader === undefined ? "public: a link token decides, not the caller"
        : undefined
      if (skip !== undefined) {
        outOfScope.set(skip, [...(outOfScope.get(skip) ?? []), operation.id])
        continue
      }
      const a = yield* family
      const b = yield* family
      if (a === undefined || b === undefined) continue
      const fail = (message: string, outcome: Outcome) =>
        failures.push({ operation: operation.id, kind: "patient", message, request: outcome.request, response: outcome.response })
      const context = { ...generationContext(harness, []), ids: fc.constantFrom(a.provider.id, b.provider.id), plausible: true }
      const drafts = [true, false].map((minimal) =>
        fc.sample(validDraft(operation, { ...context, minimal }, harness.tokenHeaders), { seed: caseSeed(seed, index), numRuns: 1 })[0]!)
      const own = recordIds(parameter, a.patient, seeder)
      // The request as `caller` sends it: their own records (of their family's patient: the caller's
      // provider profile, collaborator, video), the patient's records, then the patient (or unknown ids).
      const asCaller = (draft: Draft, callerPatient: number) =>
        withRecordsOf(operation, draft, (kind) => seeder.recordOf?.(callerPatient, kind), (kind) => seeder.recordOf?.(a.patient, kind))
      const onPatient = (draft: Draft) => placeRecord(draft, parameter, own.id, own.companions)
      // Unknown ids: the patient (or its record), and each record beside it in the path.
      const unknowns = (draft: Draft) => [
        placeRecord(draft, parameter, unknownId, own.companions),
        ...(Object.keys(own.companions).length === 0
          ? []
          : [placeRecord(draft, parameter, own.id, Object.fromEntries(Object.keys(own.companions).map((name) => [name, unknownId])))])
      ]

      const callers: Array<readonly [StaffCaller, Principal, number]> = [["outsider provider", b.provider, b.patient]]
      if (clinical(operation)) {
        callers.push(["front desk", yield* options.frontOffice("support"), a.patient], ["billing", yield* options.frontOffice("billing"), a.patient])
      }
      let outsiderPassed = true
      for (const [who, caller, callerPatient] of callers) {
        matrix.get(who)!.push(operation.id)
        for (const generated of drafts) {
          const draft = asCaller(generated, callerPatient)
          const unknown = yield* Effect.forEach(unknowns(draft), (d) => send(operation, caller, d))
          const before = yield* seeder.snapshot(a.patient)
          const outcome = yield* send(operation, caller, onPatient(draft))
          const status = statusOf(outcome)
          // Exactly the answer an unknown id gets (docs/spec-decisions.md "Who sees which patient"): a
          // 404 for a path, `must exist` (422) for a patient named in a body, an empty page for a list
          // filter; the front office may instead get the same refusal for its role. What changed
          // and what the body holds are checked below.
          const refusal = status === 404 || status === 422 || status === 200 || (status === 403 && who !== "outsider provider")
          const passed = unknown.some((u) => sameAnswer(u, outcome)) && refusal
          if (!passed) {
            fail(`${who}: ${status} on another provider's patient ${a.patient}; an unknown id answers ${unknown.map((u) => u.response.slice(0, 160)).join(" | ")}`, outcome)
          }
          if (who === "outsider provider") outsiderPassed &&= passed
          if (outcome.received !== undefined && harness.secrets.find(outcome.received.text, "response").some((hit) => JSON.stringify(before).toLowerCase().includes(hit.value))) {
            fail(`${who}: the response holds the other provider's patient's data`, outcome)
          }
          if (JSON.stringify(yield* seeder.snapshot(a.patient)) !== JSON.stringify(before)) fail(`${who}: the other provider's patient ${a.patient} changed`, outcome)
          for (const v of outcome.violations) fail(`${who}: ${v.check}: ${v.message}`, outcome)
        }
      }

      // The control: the patient's own provider is let in with the same (minimal) request: not
      // refused, and not answered as for an unknown id.
      controls++
      const controlDraft = asCaller(drafts[0]!, a.patient)
      const [controlUnknown] = yield* Effect.forEach(unknowns(controlDraft).slice(0, 1), (d) => send(operation, a.provider, d))
      const control = yield* send(operation, a.provider, onPatient(controlDraft))
      controlStatuses.set(statusOf(control), [...(controlStatuses.get(statusOf(control)) ?? []), operation.id])
      const controlled = ![401, 403].includes(statusOf(control)) && !(controlUnknown !== undefined && sameAnswer(controlUnknown, control))
      if (!controlled) fail(`control: the patient's own provider was refused (${statusOf(control)}) as for an unknown id: the refusals above prove nothing`, control)
      for (const v of control.violations) fail(`control: ${v.check}: ${v.message}`, control)

      const kind = operationKind(operation, parameter)
      if (!samples.has(kind)) samples.set(kind, undefined)
      if (samples.get(kind) === undefined && outsiderPassed && controlled) samples.set(kind, { operation, parameter, draft: drafts[0]! })
    }

    // Break-glass: an outsider provider who gives a reason is let in, and it is on the record.
    const breakGlass = new Map<string, string | undefined>()
    for (const [kind, sample] of samples) {
      breakGlass.set(kind, sample?.operation.id)
      if (sample === undefined) continue
      const c = yield* family
      const d = yield* family
      if (c === undefined || d === undefined) continue
      const ids = recordIds(sample.parameter, c.patient, seeder)
      const own = withRecordsOf(sample.operation, sample.draft, (kind) => seeder.recordOf?.(d.patient, kind), (kind) => seeder.recordOf?.(c.patient, kind))
      const draft = placeRecord(own, sample.parameter, ids.id, ids.companions)
      const outcome = yield* send(sample.operation, d.provider, { ...draft, headers: { ...draft.headers, [accessReasonHeader]: "Covering for a colleague (harness)" } })
      const fail = (message: string) =>
        failures.push({ operation: sample.operation.id, kind: "patient", message, request: outcome.request, response: outcome.response })
      // The glass opens whose records, not what a record's own rules allow: a 403 from those rules
      // (only a prescriber changes a prescription) is past the access check, which never answers
      // 403; the audit entry below shows the patient was opened.
      if ([401, 404].includes(statusOf(outcome))) fail(`break-glass (${kind}): the outsider provider with a reason was refused (${statusOf(outcome)})`)
      if (!(yield* seeder.breakGlassRecorded(d.provider.id, c.patient))) fail(`break-glass (${kind}): no patient.break_glass audit entry for the outsider on patient ${c.patient}`)
      for (const v of outcome.violations) fail(`break-glass (${kind}): ${v.check}: ${v.message}`)
    }

    return { matrix, outOfScope, controls, controlStatuses, breakGlass, requests, failures }
  })

/** The figures line, like the family check's. */
export const formatStaffBolaFigures = (report: StaffBolaReport): string => {
  const callers = [...report.matrix].map(([who, ops]) => `${who} ${ops.length}`).join(", ")
  const sampled = [...report.breakGlass.values()].filter((id) => id !== undefined).length
  const skipped = [...report.outOfScope].map(([why, ops]) => `${ops.length} ${why}`).join("; ")
  const controls = [...report.controlStatuses].sort(([a], [b]) => a - b).map(([status, ops]) => `${status} ×${ops.length}`).join(", ")
  return `BOLA staff-vs-staff: operations × callers ${callers}; own-provider controls ${report.controls} (${controls}); ` +
    `break-glass samples ${sampled} of ${report.breakGlass.size} kinds; ${report.requests} requests, ${report.failures.length} failures` +
    (skipped === "" ? "" : ` (not in the matrix: ${skipped})`)
}

/** Which operation stood for each kind of operation in the break-glass samples, and the controls that did not succeed. */
export const formatBreakGlassSamples = (report: StaffBolaReport): string =>
  [
    ...[...report.breakGlass].map(([kind, id]) => `  break-glass ${kind}: ${id ?? "no operation passed the matrix and its control"}`),
    ...[...report.controlStatuses].filter(([status]) => status >= 300).map(([status, ops]) => `  control answered ${status}: ${ops.join(", ")}`)
  ].join("\n")
