/**
 * Phone numbers are stored and dialled in E.164. National, dashed and parenthesised forms are
 * accepted (ECM §4.3) and read as US numbers unless they carry a country code.
 */
import { parsePhoneNumberFromString } from "libphonenumber-js/max"
import { Option } from "effect"

export const normalizePhone = (input: string): Option.Option<string> => {
  const parsed = parsePhoneNumberFromString(input.trim(), "US")
  return parsed !== undefined && parsed.isValid() ? Option.some(parsed.number) : Option.none()
}
