/**
 * National Provider Identifier check (needed by claims and the ECM reports). CMS defines the
 * tenth digit as a Luhn check digit computed over the nine identifier digits prefixed with the
 * card issuer prefix 80840 ("Requirements for Constructing the NPI Check Digit", CMS 2005): so an
 * NPI is valid when `80840` + its ten digits pass the Luhn check.
 */

/** The Luhn check over a string of digits (the last one being the check digit). */
export const luhnValid = (digits: string): boolean => {
  if (!/^\d+$/.test(digits)) return false
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

export const npiPrefix = "80840"

/** Whether `npi` is ten digits whose last is the CMS check digit. */
export const isValidNpi = (npi: string): boolean => /^\d{10}$/.test(npi) && luhnValid(npiPrefix + npi)

/** The check digit CMS appends to nine identifier digits. */
export const npiCheckDigit = (nineDigits: string): number => {
  for (let digit = 0; digit <= 9; digit++) {
    if (luhnValid(npiPrefix + nineDigits + digit)) return digit
  }
  throw new Error("unreachable: one of ten digits always completes a Luhn sum")
}
