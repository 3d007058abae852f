/**
 * Values as an 837P carries them. X12 text is the basic character set: upper case, no delimiters
 * (`*` element, `:` component, `^` repetition, `~` segment). Free text (names, addresses) keeps
 * what a payer matches on: accents are stripped (`Núñez` → `NUNEZ`), letters without a Unicode
 * decomposition are transliterated (`Łukasz` → `LUKASZ`, `Søren` → `SOREN`), a delimiter inside a
 * value separates words (`Unit~B` → `UNIT B`), and anything else outside printable ASCII becomes
 * a space. Amounts are decimal text without trailing zeros, from whole cents.
 */

/** Characters X12 reserves in our envelope (ISA16 `:`, ISA11 `^`, `*`, `~`). */
export const reservedCharacters = ["*", "~", ":", "^"] as const

/**
 * Letters NFKD leaves whole, in their usual Latin transliteration, and the punctuation names are
 * typed with (`O’Brien`, Catalan `l·l`). `ß` and dotless `ı` need no entry: upper-casing gives `SS` and `I`.
 */
export const transliterations: Readonly<Record<string, string>> = {
  "Æ": "AE", "æ": "ae", "Ð": "D", "ð": "d", "Ø": "O", "ø": "o", "Þ": "TH", "þ": "th", "ẞ": "SS",
  "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h", "ĸ": "K", "Ł": "L", "ł": "l", "Ŋ": "N", "ŋ": "n",
  "Œ": "OE", "œ": "oe", "Ŧ": "T", "ŧ": "t", "Ɨ": "I", "ɨ": "i", "Ƶ": "Z", "ƶ": "z", "Ɖ": "D", "ɖ": "d",
  "Ǝ": "E", "ǝ": "e", "Ə": "E", "ə": "e", "Ɛ": "E", "ɛ": "e", "Ɔ": "O", "ɔ": "o", "Ɓ": "B", "ɓ": "b",
  "Ƙ": "K", "ƙ": "k", "Ƴ": "Y", "ƴ": "y", "Ɲ": "N", "ɲ": "n", "Ʒ": "ZH", "ʒ": "zh", "Ȝ": "Y", "ȝ": "y",
  "ʼ": "'", "‘": "'", "’": "'", "‚": "'", "‛": "'", "“": "\"", "”": "\"", "„": "\"",
  "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "·": ""
}

const untransliterated = new RegExp(`[${Object.keys(transliterations).join("")}]`, "g")

/** Free text for an element: upper case, printable ASCII only, delimiters as spaces, single spaces, at most `max` characters. */
export const ediText = (text: string, max = 60): string =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(untransliterated, (letter) => transliterations[letter]!)
    .toUpperCase()
    .replace(/[^\x20-\x7e]/g, " ")
    .replace(/[*~:^]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, max)
    .trim()

/** An identifier (member id, group number, claim number): as `ediText`, without spaces. */
export const ediId = (text: string, max = 50): string => ediText(text, max * 2).replace(/ /g, "").slice(0, max)

/** Whole cents as an X12 decimal (R): `15000` → `150`, `15050` → `150.5`, `15025` → `150.25`. */
export const ediAmount = (cents: number): string => {
  if (!Number.isInteger(cents)) throw new Error("amounts are whole cents")
  const sign = cents < 0 ? "-" : ""
  const abs = Math.abs(cents)
  const whole = Math.floor(abs / 100)
  const fraction = abs % 100
  if (fraction === 0) return `${sign}${whole}`
  return `${sign}${whole}.${String(fraction).padStart(2, "0").replace(/0$/, "")}`
}

/** `YYYY-MM-DD` → `CCYYMMDD` (D8). */
export const ediDate = (isoDate: string): string => isoDate.slice(0, 10).replace(/-/g, "")

/** A US ZIP for N403: 5 or 9 digits (ZIP+4 without the dash); anything else is dropped. */
export const ediZip = (zip: string): string => {
  const digits = zip.replace(/[^0-9]/g, "")
  return digits.length === 9 || digits.length === 5 ? digits : digits.slice(0, 5)
}

/** DMG03: F, M or U. */
export const ediGender = (gender: string | null | undefined): "F" | "M" | "U" => {
  const g = (gender ?? "").trim().toLowerCase()
  if (g === "f" || g === "female") return "F"
  if (g === "m" || g === "male") return "M"
  return "U"
}
