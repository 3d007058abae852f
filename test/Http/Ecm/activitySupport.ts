/** Shared by the activity and event tests: a patient, staff users, activity requests, and event counts. */
import { Effect } from "effect"
import { clientAs, request } from "../../support/app.js"
import * as fixtures from "../../support/fixtures.js"
import { insertUser } from "./users.js"

let users = 0

/** A patient (any patient may have activities), named First Last. */
export const insertPatient = (first = "Mia", last = "Member") =>
  fixtures.insertPatient({ first_name: first, last_name: last, date_of_birth: null })

export const staffUser = (role: "provider" | "supervisor" | "support" | "billing" | "admin" = "provider", first = "Casey", last = "Coordinator") =>
  insertUser({ email: `${role}${++users}@activities.test`, role, first_name: first, last_name: last })

export const activitiesUrl = (patientId: number, rest = "") => `/v1/clinic/ecm/patients/${patientId}/activities${rest}`
export const eventsUrl = (patientId: number, rest = "") => `/v1/clinic/ecm/patients/${patientId}/events${rest}`

export const createActivity = (token: string, patientId: number, activity: Record<string, unknown>) =>
  request("POST", activitiesUrl(patientId), { token, body: { activity } })

/** Creates an activity that must succeed; its id. */
export const created = (token: string, patientId: number, activity: Record<string, unknown>) =>
  Effect.flatMap(createActivity(token, patientId, activity), (r) =>
    r.status === 201 ? Effect.succeed((r.body as { activity: { id: number } }).activity.id) : Effect.dieMessage(`create: ${r.status} ${JSON.stringify(r.body)}`))

export const updateActivity = (token: string, patientId: number, id: number, activity: Record<string, unknown>) =>
  request("PUT", activitiesUrl(patientId, `/${id}`), { token, body: { activity } })

export const showActivity = (token: string, patientId: number, id: number) =>
  Effect.map(request("GET", activitiesUrl(patientId, `/${id}`), { token }), (r) => r.body as { activity: Record<string, any> })

/** The events counts endpoint through the typed client: the decoded counts of a period (UTC days, inclusive). */
export const eventCounts = (token: string, patientId: number, period: { readonly start_date: string; readonly end_date: string }) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmEvents.counts({ path: { patient_id: patientId }, urlParams: period }))
