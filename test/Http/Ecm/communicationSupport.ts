/** Shared by the communications tests: Twilio settings, signed webhook requests, patients with phones, outbound SMS and calls. */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Option, Redacted } from "effect"
import twilio from "twilio"
import type { TwilioSettings } from "../../../src/Services/AppConfig.js"
import { clientAs } from "../../support/app.js"
import { insertCaseLoad, insertPatient } from "../../support/fixtures.js"
import { query } from "./support.js"

export const authToken = "test-twilio-auth-token"
export const publicBaseUrl = "http://localhost"

export const twilioSettings = (overrides: Partial<TwilioSettings> = {}): TwilioSettings => ({
  accountSid: "AC00000000000000000000000000000000",
  authToken: Redacted.make(authToken),
  fromNumber: "+15550001111",
  apiBaseUrl: Option.none(),
  messagingServiceSid: Option.none(),
  smsAutoReply: Option.none(),
  ...overrides
})

export const hookPath = (name: "sms" | "voice" | "sms_status" | "voice_status" | "outbound_call" | "recording") =>
  `/v1/clinic/webhooks/telephony/${name}`

export interface HookResponse {
  readonly status: number
  readonly text: string
  readonly contentType: string | undefined
}

/**
 * Posts `params` form-encoded to `path` (with its query), signed as Twilio signs: the URL
 * PUBLIC_BASE_URL + path + query and the parameters, keyed by the auth token.
 * `signature`: "valid" (default), "none", a token to sign with instead, or `{ header }` as is.
 */
export const postHook = (
  path: string,
  params: Record<string, string>,
  options: { readonly signature?: "valid" | "none" | { readonly token: string } | { readonly header: string }; readonly headers?: Record<string, string>; readonly signedUrl?: string } = {}
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const signature = options.signature ?? "valid"
    const url = options.signedUrl ?? `${publicBaseUrl}${path}`
    const header = signature === "none"
      ? undefined
      : signature === "valid"
      ? twilio.getExpectedTwilioSignature(authToken, url, params)
      : "token" in signature
      ? twilio.getExpectedTwilioSignature(signature.token, url, params)
      : signature.header
    let req = HttpClientRequest.post(path).pipe(
      HttpClientRequest.setHeaders(options.headers ?? {}),
      HttpClientRequest.bodyText(new URLSearchParams(params).toString(), "application/x-www-form-urlencoded")
    )
    if (header !== undefined) req = HttpClientRequest.setHeader(req, "x-twilio-signature", header)
    const response = yield* http.execute(req)
    return { status: response.status, text: yield* response.text, contentType: response.headers["content-type"] } satisfies HookResponse
  }).pipe(Effect.locally(HttpClient.currentTracerDisabledWhen, () => true), Effect.orDie)

let sids = 0
export const sid = (prefix: "SM" | "CA") => `${prefix}${String(++sids).padStart(8, "0")}${"0".repeat(24)}`

/** A patient with a phone (E.164), named First Last. */
export const insertPatientWithPhone = (phone: string, first = "Mia", last = "Member") =>
  insertPatient({ first_name: first, last_name: last, phone, date_of_birth: null })

export const assignLeadCareManagers = (patientId: number, lcm: { olcm?: number; ilcm?: number }) =>
  insertCaseLoad({ patientId, olcmUserId: lcm.olcm ?? null, ilcmUserId: lcm.ilcm ?? null })

export const systemUserId = Effect.map(
  query<{ id: number }>(`SELECT id FROM users WHERE system`),
  (rows) => rows[0]!.id
)

export const smsUrl = (patientId: number) => `/v1/clinic/ecm/communications/patients/${patientId}/sms`
export const callUrl = (patientId: number) => `/v1/clinic/ecm/communications/patients/${patientId}/call`

/** An SMS sent through the typed client (a 201): the decoded sms record and activity. */
export const sendSms = (token: string, patientId: number, sms: { readonly phone_number: string; readonly body: string }) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmCommunications.sendSms({ path: { patient_id: patientId }, payload: { sms } }))

/** A call placed through the typed client (a 201): the decoded call record and activity. */
export const placeCall = (token: string, patientId: number, phoneNumber: string) =>
  Effect.flatMap(clientAs(token), (client) => client.ecmCommunications.placeCall({ path: { patient_id: patientId }, payload: { call: { phone_number: phoneNumber } } }))
