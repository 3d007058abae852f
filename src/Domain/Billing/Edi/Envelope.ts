/**
 * The interchange envelope: ISA/IEA, GS/GE and ST/SE, with their control numbers and counts.
 * ISA is fixed width (106 characters with the terminator): ISA02/04 ten spaces, ISA06/08 padded
 * to 15, ISA13 nine digits.
 */
import { segment, type Segment } from "./Segments.js"

export interface EnvelopeParties {
  /** ISA06 / GS02: our submitter id at the clearinghouse. */
  readonly senderId: string
  /** ISA08 / GS03: the clearinghouse. */
  readonly receiverId: string
  /** ISA15: `T` test or `P` production. */
  readonly usage: "T" | "P"
}

export const implementationGuide = "005010X222A1"
export const maxControlNumber = 999_999_999

const pad = (text: string, width: number) => {
  if (text.length > width) throw new Error(`ISA value longer than ${width} characters`)
  return text.padEnd(width, " ")
}

/** A control number as ISA13 writes it: nine digits. */
export const controlNumberText = (n: number): string => {
  if (!Number.isInteger(n) || n < 1 || n > maxControlNumber) throw new Error("interchange control number out of range")
  return String(n).padStart(9, "0")
}

/** `YYMMDD` and `HHMM` of a UTC instant (ISA09/10), `CCYYMMDD` (GS04, BHT04). */
export const dateParts = (at: Date) => {
  const iso = at.toISOString()
  const ccyymmdd = iso.slice(0, 10).replace(/-/g, "")
  return { yymmdd: ccyymmdd.slice(2), ccyymmdd, hhmm: iso.slice(11, 16).replace(":", "") }
}

/** One transaction set: ST, the body, SE with the count of ST through SE. */
export const transactionSet = (controlNumber: string, body: ReadonlyArray<Segment>): Array<Segment> => [
  segment("ST", "837", controlNumber, implementationGuide),
  ...body,
  segment("SE", String(body.length + 2), controlNumber)
]

/** ISA … IEA around one functional group (GS … GE) of `transactions`. */
export const interchange = (
  parties: EnvelopeParties,
  controlNumber: number,
  at: Date,
  transactions: ReadonlyArray<ReadonlyArray<Segment>>
): Array<Segment> => {
  const control = controlNumberText(controlNumber)
  const { ccyymmdd, hhmm, yymmdd } = dateParts(at)
  const isa = segment(
    "ISA", "00", pad("", 10), "00", pad("", 10),
    "ZZ", pad(parties.senderId, 15), "ZZ", pad(parties.receiverId, 15),
    yymmdd, hhmm, "^", "00501", control, "0", parties.usage, ":"
  )
  return [
    isa,
    segment("GS", "HC", parties.senderId, parties.receiverId, ccyymmdd, hhmm, String(controlNumber), "X", implementationGuide),
    ...transactions.flat(),
    segment("GE", String(transactions.length), String(controlNumber)),
    segment("IEA", "1", control)
  ]
}
