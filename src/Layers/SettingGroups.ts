/**
 * Settings that only work together. A half-set group would start quietly and half-work (Twilio
 * credentials without a sender put SMS into the local outbox while every webhook answers 403), so
 * start-up stops instead, naming what is missing. Unsetting a whole group selects its local default.
 */

/** One group's refusal: the variables missing, and the sentence that explains them. */
export interface IncompleteGroup {
  readonly missing: ReadonlyArray<string>
  readonly message: string
}

const twilioMessaging = ["TWILIO_AUTH_TOKEN", "TWILIO_FROM_NUMBER", "TWILIO_MESSAGING_SERVICE_SID", "TWILIO_SMS_AUTO_REPLY", "TWILIO_API_BASE_URL"]
const twilioVideo = ["TWILIO_API_KEY_SID", "TWILIO_API_KEY_SECRET"]
const s3 = ["S3_BUCKET", "S3_REGION", "S3_ENDPOINT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_FORCE_PATH_STYLE"]

/** Every variable `incompleteGroups` looks at (set-but-blank counts as unset, as everywhere). */
export const groupedSettings: ReadonlyArray<string> = ["TWILIO_ACCOUNT_SID", ...twilioMessaging, ...twilioVideo, ...s3, "SMTP_URL"]

const missingOf = (isSet: (name: string) => boolean, names: ReadonlyArray<string>) => names.filter((name) => !isSet(name))

/**
 * The groups that are partly set. `isSet` tells whether a variable has a non-blank value;
 * `smtpUrl` is SMTP_URL's value, when set (read here, never echoed: it may hold a password).
 */
export const incompleteGroups = (isSet: (name: string) => boolean, smtpUrl?: string): ReadonlyArray<IncompleteGroup> => {
  const groups: Array<IncompleteGroup> = []
  const anySet = (names: ReadonlyArray<string>) => names.some(isSet)

  // SMS and calls: the account, its token (which also checks webhook signatures) and a sender
  // number. A messaging service only changes the sender of SMS: calls always need the number.
  // The account SID alone, without a video key either, is a messaging set-up missing the rest.
  if (anySet(twilioMessaging) || (isSet("TWILIO_ACCOUNT_SID") && !anySet(twilioVideo))) {
    const missing = missingOf(isSet, ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM_NUMBER"])
    if (missing.length > 0) {
      groups.push({
        missing,
        message: `Twilio SMS and calls need TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM_NUMBER (outbound calls ` +
          `need the number even with TWILIO_MESSAGING_SERVICE_SID); missing: ${missing.join(", ")}. ` +
          `Unset every TWILIO_* setting for the local outbox`
      })
    }
  }

  if (anySet(twilioVideo)) {
    const missing = missingOf(isSet, ["TWILIO_ACCOUNT_SID", ...twilioVideo])
    if (missing.length > 0) {
      groups.push({
        missing,
        message: `Twilio Video needs TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET; missing: ${missing.join(", ")}`
      })
    }
  }

  // A bucket with both keys, or with neither (the AWS SDK's own chain: role, profile, environment).
  if (anySet(s3)) {
    const keys = ["S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"]
    const missing = [
      ...missingOf(isSet, ["S3_BUCKET"]),
      ...(anySet(keys) ? missingOf(isSet, keys) : [])
    ]
    if (missing.length > 0) {
      groups.push({
        missing,
        message: `S3 needs S3_BUCKET, and S3_ACCESS_KEY_ID with S3_SECRET_ACCESS_KEY or neither (the AWS SDK's credential chain); ` +
          `missing: ${missing.join(", ")}. Unset every S3_* setting for the local disk store`
      })
    }
  }

  if (smtpUrl !== undefined) {
    const problem = smtpUrlProblem(smtpUrl)
    if (problem !== undefined) groups.push({ missing: ["SMTP_URL"], message: `SMTP_URL ${problem}` })
  }
  return groups
}

/** What is wrong with an SMTP URL, in words that never repeat it; undefined when it is usable. */
const smtpUrlProblem = (text: string): string | undefined => {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return "is not a URL such as smtps://user:password@smtp.example.org"
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return "must start with smtp:// or smtps://"
  if (url.hostname === "") return "has no host"
  if (url.username !== "" && url.password === "") return "has a user but no password"
  if (url.username === "" && url.password !== "") return "has a password but no user"
  return undefined
}
