/**
 * Every email, phone number, name, password and token the harness makes, remembered so that the
 * telemetry scan (and the response scan, for passwords and other users' tokens) can look for them.
 * Lookup is by an index of 8-character prefixes, so scanning megabytes of telemetry against
 * tens of thousands of values stays linear in the text.
 */
export type SecretKind = "email" | "phone" | "name" | "password" | "token"

export interface SecretHit {
  readonly kind: SecretKind
  readonly value: string
  /** Where it was found (span name, log message …). */
  readonly where: string
  /** The text around it. */
  readonly excerpt: string
}

/** Shorter values cannot be told apart from ordinary text; generators never make them. */
export const minimumSecretLength = 8
const keyLength = minimumSecretLength

export class Secrets {
  private readonly byPrefix = new Map<string, Map<string, SecretKind>>()
  private count = 0

  get size(): number {
    return this.count
  }

  /** Remembers a value (case-insensitively); returns it, so generators can `map` through it. */
  add(kind: SecretKind, value: string): string {
    const needle = value.toLowerCase()
    if (needle.length < minimumSecretLength) throw new Error(`secret too short to scan for: ${kind}`)
    const key = needle.slice(0, keyLength)
    let bucket = this.byPrefix.get(key)
    if (bucket === undefined) this.byPrefix.set(key, (bucket = new Map()))
    if (!bucket.has(needle)) this.count++
    bucket.set(needle, kind)
    return value
  }

  /** Every remembered value occurring in `text`. */
  find(text: string, where: string): Array<SecretHit> {
    const hits: Array<SecretHit> = []
    const haystack = text.toLowerCase()
    for (let i = 0; i + keyLength <= haystack.length; i++) {
      const bucket = this.byPrefix.get(haystack.slice(i, i + keyLength))
      if (bucket === undefined) continue
      for (const [needle, kind] of bucket) {
        if (haystack.startsWith(needle, i)) {
          hits.push({ kind, value: needle, where, excerpt: text.slice(Math.max(0, i - 80), i + needle.length + 80) })
        }
      }
    }
    return hits
  }

  /** True when any value of the given kinds occurs in `text`. */
  has(text: string, kinds: ReadonlyArray<SecretKind>): boolean {
    return this.find(text, "").some((hit) => kinds.includes(hit.kind))
  }
}
