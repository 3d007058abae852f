/**
 * Webhook requests as their provider sends them (operations with `x-webhook-signature`): a form
 * body, signed. The harness app's Twilio settings (`app.ts`) hold the auth token used here, and
 * its PUBLIC_BASE_URL is the origin Twilio would sign.
 */
import twilio from "twilio"

export const harnessTwilioAuthToken = "harness-twilio-auth-token"
export const harnessPublicBaseUrl = "http://localhost"

/** The header a signature travels in, lower-cased. */
export const signatureHeader = "x-twilio-signature"

/**
 * The string pairs a JSON-like draft body is sent as in a form: strings as they are, numbers and
 * booleans as text, objects and lists as JSON, null and absent values left out. A body that is
 * not an object sends no pairs. The contract judges this, exactly what goes on the wire.
 */
export const formParamsOf = (value: unknown): Record<string, string> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {}
  const params: Record<string, string> = {}
  for (const [key, field] of Object.entries(value)) {
    if (field === null || field === undefined) continue
    params[key] = typeof field === "string" ? field : typeof field === "object" ? JSON.stringify(field) : String(field)
  }
  return params
}

/** Twilio's signature of a request to `pathAndQuery` with these parameters. */
export const twilioSignature = (pathAndQuery: string, params: Record<string, string>, authToken = harnessTwilioAuthToken): string =>
  twilio.getExpectedTwilioSignature(authToken, `${harnessPublicBaseUrl}${pathAndQuery}`, params)
