/**
 * X12 segments as values: `["NM1", "85", "2", "CLINIC"]`, serialised with this interchange's
 * delimiters. Trailing empty elements are dropped (X12 forbids them); a composite is a list of
 * components joined with `:`.
 */
export const delimiters = { element: "*", component: ":", repetition: "^", segment: "~" } as const

export type Segment = ReadonlyArray<string>
export type ElementValue = string | ReadonlyArray<string> | undefined | null

const composite = (value: ElementValue): string => {
  if (value === undefined || value === null) return ""
  if (typeof value === "string") return value
  const parts = [...value]
  while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop()
  return parts.join(delimiters.component)
}

/** A segment from its id and elements; trailing empty elements are dropped. */
export const segment = (id: string, ...elements: ReadonlyArray<ElementValue>): Segment => {
  const values = elements.map(composite)
  while (values.length > 0 && values[values.length - 1] === "") values.pop()
  return [id, ...values]
}

export const serializeSegment = (s: Segment): string => s.join(delimiters.element) + delimiters.segment

export const serialize = (segments: ReadonlyArray<Segment>): string => segments.map(serializeSegment).join("")
