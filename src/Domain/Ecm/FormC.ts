/**
 * Form C assessment documents (ECM §2.5): the 23 named sections and the rules a submitted
 * `form_data` must meet. Pure: the service runs `formDataProblems` before storing anything.
 */

/** The keys `form_data` may have, in the order of the spec. */
export const formCSections = [
  "background_information",
  "engagement_purpose",
  "culture",
  "health_literacy",
  "ed_visits",
  "preventive_care",
  "physical_health",
  "medications",
  "palliative_care",
  "behavioral_health",
  "substance_use",
  "cognitive_function",
  "safety",
  "activities_of_daily_living",
  "housing_environment",
  "fall_risk",
  "medical_equipment",
  "social_determinants",
  "isolation",
  "legal_involvement",
  "eol_planning",
  "community_ltss_services",
  "priorities"
] as const
export type FormCSection = (typeof formCSections)[number]

const sectionNames: ReadonlySet<string> = new Set(formCSections)
export const isFormCSection = (key: string): key is FormCSection => sectionNames.has(key)

/**
 * Largest `form_data` accepted, as compact JSON in UTF-8 bytes. A filled-in Form C is a few
 * kilobytes of answers; 256 KiB leaves room for long free-text notes in every section while
 * keeping one row far from what makes jsonb slow to read back.
 */
export const maxFormDataBytes = 256 * 1024

/** Request bodies carrying a Form C: the largest document, escaped, plus the envelope. */
export const formCBodyBytes = 2 * maxFormDataBytes

/** Unknown section names are echoed in messages, cut to this many characters. */
const maxEchoedKey = 64

const echo = (key: string): string =>
  JSON.stringify(key.length > maxEchoedKey ? `${key.slice(0, maxEchoedKey)}…` : key)

/**
 * A field holds a date when its name says so: `date`, `dob`, `date_of_birth`, or ending in `_date`
 * or `_dob` (`assessment_date`, `last_visit_date`), but not `up_to_date` (a yes/no answer). The
 * spec fixes no field list, only that dates are `YYYY-MM-DD`; names are the one signal a
 * schema-less section gives.
 */
export const isDateField = (key: string): boolean =>
  key === "date" || key === "dob" || key === "date_of_birth" ||
  (/_(date|dob)$/.test(key) && !/(^|_)up_to_date$/.test(key))

const isoDatePattern = /^\d{4}-\d{2}-\d{2}$/

/** `YYYY-MM-DD` naming a real calendar day (no year 0000: PostgreSQL has none). */
export const isIsoDate = (value: string): boolean => {
  if (!isoDatePattern.test(value) || value.startsWith("0000")) return false
  const day = new Date(`${value}T00:00:00.000Z`)
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === value
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Byte length of the document as stored (compact JSON, UTF-8). */
const utf8 = new TextEncoder()
const jsonBytes = (value: unknown): number => utf8.encode(JSON.stringify(value)).length

/**
 * Date fields anywhere inside one section (nested objects and arrays of objects included): a
 * string that is not `YYYY-MM-DD` is refused; `null` (not answered) is allowed; any other JSON
 * type is refused too, since no coercion is done. Paths read `medications.list[0].start_date`.
 */
const dateProblems = (value: unknown, path: string, out: Array<string>): void => {
  if (Array.isArray(value)) {
    value.forEach((item, i) => dateProblems(item, `${path}[${i}]`, out))
    return
  }
  if (!isPlainObject(value)) return
  for (const [key, inner] of Object.entries(value)) {
    const at = `${path}.${key.length > maxEchoedKey ? `${key.slice(0, maxEchoedKey)}…` : key}`
    if (isDateField(key) && inner !== null) {
      if (typeof inner !== "string" || !isIsoDate(inner)) out.push(`Form data ${at} must be a date in YYYY-MM-DD format`)
      continue
    }
    dateProblems(inner, at, out)
  }
}

/** Messages are capped: a hostile document with thousands of bad dates gets a readable answer. */
const maxMessages = 20

/**
 * Every problem of a submitted `form_data`, as ECM §7 messages; empty when it is acceptable.
 * `undefined`, `null` and `{}` are blank (Rails' presence check: an empty hash is blank).
 */
export const formDataProblems = (formData: unknown): ReadonlyArray<string> => {
  if (formData === undefined || formData === null) return ["Form data can't be blank"]
  if (!isPlainObject(formData)) return ["Form data must be an object keyed by section name"]
  const keys = Object.keys(formData)
  if (keys.length === 0) return ["Form data can't be blank"]
  if (jsonBytes(formData) > maxFormDataBytes) {
    return [`Form data is too large (maximum is ${maxFormDataBytes} bytes)`]
  }
  const problems: Array<string> = []
  for (const key of keys) {
    if (!isFormCSection(key)) {
      problems.push(`Form data section ${echo(key)} is not a Form C section`)
      continue
    }
    const section = formData[key]
    if (!isPlainObject(section)) {
      problems.push(`Form data section ${key} must be an object`)
      continue
    }
    dateProblems(section, key, problems)
  }
  return problems.length > maxMessages
    ? [...problems.slice(0, maxMessages), `Form data has ${problems.length - maxMessages} more problems`]
    : problems
}

/**
 * The member id the document names, if any: `background_information.member_id` as given. A
 * document naming another member than the patient's would attach the assessment to the wrong
 * person, so the service compares it with the patient's.
 */
export const memberIdOf = (formData: Record<string, unknown>): unknown => {
  const background = formData.background_information
  return isPlainObject(background) ? background.member_id : undefined
}

/**
 * The problem with the document's member id for a patient whose member id is `patientMemberId`;
 * undefined when it is absent, blank or the same (surrounding spaces ignored, case kept: member
 * ids are identifiers).
 */
export const memberIdProblem = (formData: Record<string, unknown>, patientMemberId: string | null): string | undefined => {
  const given = memberIdOf(formData)
  if (given === undefined || given === null) return undefined
  if (typeof given !== "string") return "Form data background_information.member_id must be text"
  if (given.trim() === "") return undefined
  if (patientMemberId === null || given.trim() !== patientMemberId.trim()) {
    return "Form data background_information.member_id does not match the patient's member id"
  }
  return undefined
}
