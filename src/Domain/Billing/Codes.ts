/**
 * The codes a claim carries (general §2.6): ICD-10-CM diagnoses, CPT procedures, modifiers and
 * places of service. Pure rules, shared by the Api (request checks) and the 837P generator.
 */

/**
 * ICD-10-CM by format: a letter, a digit, a letter or digit, then optionally a dot and 1–4 more
 * letters or digits (`F32.9`, `F329`, `Z00.00`, `S72.001A`). Whether the code exists in this
 * year's code set is the clearinghouse's check: the set changes every October.
 */
const icd10Pattern = /^[A-Za-z][0-9][A-Za-z0-9](?:\.?[A-Za-z0-9]{1,4})?$/

export const isIcd10 = (code: string): boolean => icd10Pattern.test(code)

/** How a code is stored and returned: as it was sent, upper case (`f32.9` → `F32.9`, `F329` stays `F329`). */
export const storedIcd10 = (code: string): string => code.toUpperCase()

/** The code as 837P HI carries it: upper case, never the dot (`F32.9` → `F329`). Two spellings of one code share it. */
export const x12Icd10 = (code: string): string => code.replace(".", "").toUpperCase()

/** ICD-10 codes on one claim (837P HI holds 12). */
export const maxDiagnosisCodes = 12

/** The behavioural-health CPT codes the spec names (general §2.6); BILLING_CPT_CODES adds more. */
export const commonCptCodes = ["90834", "90837", "90791", "90792", "90847", "90853"] as const

/** A CPT or HCPCS Level II code by format: five digits, or four digits and a letter, or a letter and four digits. */
export const isCptFormat = (code: string): boolean => /^(?:[0-9]{4}[0-9A-Z]|[A-Z][0-9]{4})$/.test(code)

/** Two letters or digits (`95` synchronous telehealth, `HO` master's level, `GT`). */
export const isModifier = (code: string): boolean => /^[A-Z0-9]{2}$/.test(code)
export const maxModifiers = 4

/** CMS place-of-service codes a behavioural-health clinic bills: office, telehealth elsewhere, telehealth at home. */
export const placesOfService = ["11", "02", "10"] as const
export type PlaceOfService = (typeof placesOfService)[number]
