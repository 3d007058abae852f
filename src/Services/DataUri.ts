/**
 * A base64 data URI read piece by piece (`data:text/csv;base64,QUJD…`): the text is never held
 * whole, and the file it carries is decoded into one buffer as the pieces arrive. The body checks
 * (src/Layers/Http/RequestBody.ts) feed it a JSON string field as the request body streams in and
 * hand the request on with a short placeholder in that field; the service reading the field looks
 * the placeholder up in `ReceivedDataUris`. The text's meaning is left to that service: this module
 * only says what the text was (`DataUri`), in the terms needed to judge it exactly as if it had the
 * whole string (`String.prototype.trim`, then a prefix, then standard padded base64).
 */
import { Context, Effect, Option } from "effect"

/** What a data URI text was, read piece by piece. */
export interface DataUri {
  /**
   * The text after leading whitespace, up to and including its first comma (the media type and
   * `;base64,`); when no comma comes before, up to the first character no data URI head of ours
   * has (`headCharacters`), or its first 5 when they are not `data:`.
   */
  readonly head: string
  /** Characters after `head`, trailing whitespace excluded. */
  readonly encodedLength: number
  /** Whitespace characters before `head` (trimmed by `String.prototype.trim`). */
  readonly leadingSpace: number
  /** Whitespace characters after the last other character (none when the text is all head). */
  readonly trailingSpace: number
  /** Characters of the whole text, counted as code points (a schema's `maxLength` counts them so). */
  readonly characters: number
  /** Whether those characters are standard base64 with padding (RFC 4648 §4), length a multiple of 4. */
  readonly base64: boolean
  /** The decoded bytes (when `base64`; empty otherwise). */
  readonly bytes: Uint8Array
  /** Nothing but whitespace (or nothing). */
  readonly blank: boolean
  /** Holds a NUL character somewhere. */
  readonly nul: boolean
}

/**
 * Characters a data URI head of ours may have before its comma: letters, digits and `.+/=;:-`.
 * The head ends at any other (the text is then no data URI of ours), so a long one is kept only
 * while it could still be a media type with parameters.
 */
const headCharacters = /[A-Za-z0-9.+/=;:-]*/y

/** The characters `String.prototype.trim` removes. */
const isTrimmed = (code: number) =>
  (code >= 0x09 && code <= 0x0d) || code === 0x20 || code === 0xa0 || code === 0x1680 ||
  (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f ||
  code === 0x3000 || code === 0xfeff

const base64Alphabet = /^[A-Za-z0-9+/]*$/

const isBase64Char = (code: number) =>
  (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2f

/**
 * A data URI decoder: `push` pieces of the text in order, then `finish`. `expectedChars` sizes
 * the buffer the bytes are decoded into (the request's Content-Length, say): past it, the buffer
 * grows by doubling.
 */
export const dataUriDecoder = (expectedChars = 0) => {
  let head = ""
  let headDone = false
  let leading = true
  let leadingSpace = 0
  let nul = false
  /** Surrogate pairs after the head: each is one character of two UTF-16 units. */
  let pairs = 0
  /** The last character after the head was a high surrogate. */
  let afterHigh = false
  // After the head:
  let total = 0
  let trailingSpace = 0
  let base64 = true
  /** '=' seen: only '=' (two at most) or whitespace may follow. */
  let padding = 0
  /** Whitespace seen after the head: only whitespace may follow. */
  let spaced = false
  /** Characters of an unfinished group of four. */
  let carry = ""
  let bytes = Buffer.allocUnsafe(0)
  let written = 0

  const decode = (chars: string) => {
    const need = written + Math.ceil(chars.length / 4) * 3
    if (need > bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, bytes.length * 2, Math.ceil(expectedChars / 4) * 3 + 3))
      bytes.copy(grown, 0, 0, written)
      bytes = grown
    }
    written += bytes.write(chars, written, "base64")
  }

  /** Decodes the whole groups of four of `carry + chars` (valid base64 so far). */
  const decodeGroups = (chars: string) => {
    const text = carry.length === 0 ? chars : carry + chars
    const whole = text.length - (text.length % 4)
    if (whole > 0) decode(whole === text.length ? text : text.slice(0, whole))
    carry = whole === text.length ? "" : text.slice(whole)
  }

  /** Characters after the head, one at a time: the slow path (padding, whitespace, anything odd). */
  const afterHeadSlowly = (piece: string) => {
    let clean = 0
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i)
      if (code === 0) nul = true
      if (afterHigh && code >= 0xdc00 && code <= 0xdfff) pairs++
      afterHigh = code >= 0xd800 && code <= 0xdbff
      if (isTrimmed(code)) {
        trailingSpace++
        spaced = true
        continue
      }
      trailingSpace = 0
      if (!base64) continue
      if (spaced) base64 = false
      else if (code === 0x3d) {
        if (++padding > 2) base64 = false
      } else if (padding > 0 || !isBase64Char(code)) base64 = false
      if (base64) clean = i + 1
    }
    return clean
  }

  const afterHead = (piece: string) => {
    total += piece.length
    if (base64 && !spaced && padding === 0 && base64Alphabet.test(piece)) {
      if (piece.length > 0) {
        trailingSpace = 0
        afterHigh = false
      }
      decodeGroups(piece)
      return
    }
    const clean = afterHeadSlowly(piece)
    if (!base64) {
      carry = ""
      return
    }
    // Still valid: what precedes `clean` is base64 (padding included), what follows whitespace.
    if (clean > 0) decodeGroups(clean === piece.length ? piece : piece.slice(0, clean))
  }

  const push = (piece: string) => {
    if (piece.length === 0) return
    if (headDone) return afterHead(piece)
    let start = 0
    if (leading) {
      while (start < piece.length && isTrimmed(piece.charCodeAt(start))) start++
      leadingSpace += start
      if (start === piece.length) return
      leading = false
    }
    headCharacters.lastIndex = start
    headCharacters.test(piece)
    let end = headCharacters.lastIndex
    const comma = end < piece.length && piece.charCodeAt(end) === 0x2c
    if (comma) end++
    head += piece.slice(start, end)
    const named = head.length < 5 || head.slice(0, 5).toLowerCase() === "data:"
    if (!named) {
      // Not `data:`: the head is its first 5 characters, and the text no data URI of ours.
      end -= head.length - 5
      head = head.slice(0, 5)
    }
    if (comma || end < piece.length || !named) {
      headDone = true
      // No media type ends the head: whatever follows is not a file to decode.
      if (!comma || !named) base64 = false
    }
    if (end < piece.length) afterHead(piece.slice(end))
  }

  const finish = (): DataUri => {
    const encodedLength = total - trailingSpace
    const valid = base64 && encodedLength % 4 === 0
    if (valid && carry.length > 0) decode(carry)
    carry = ""
    const decoded = valid ? bytes.subarray(0, written) : Buffer.alloc(0)
    bytes = Buffer.allocUnsafe(0)
    return {
      head,
      encodedLength,
      leadingSpace,
      trailingSpace,
      characters: leadingSpace + head.length + total - pairs,
      base64: valid,
      bytes: new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength),
      blank: leading,
      nul
    }
  }

  return { push, finish } as const
}

/** A data URI given whole (not streamed), read the same way. */
export const readDataUri = (text: string): DataUri => {
  const decoder = dataUriDecoder(text.length)
  for (let i = 0; i < text.length; i += 1 << 20) decoder.push(text.slice(i, i + (1 << 20)))
  return decoder.finish()
}

/**
 * The data URIs of this request's body that were read as it arrived, by the placeholder that
 * stands for each in the body the Api decodes. Provided by the body checks for an endpoint that
 * declares such a field (`DataUriField`).
 */
export class ReceivedDataUris extends Context.Tag("app/ReceivedDataUris")<ReceivedDataUris, ReadonlyMap<string, DataUri>>() {}

/**
 * The data URI a request field holds: read as the body arrived when the body checks took it out
 * (the field holds its placeholder), else the text itself (a caller other than the Api), read the
 * same way. The current span says which (`data_uri.streamed`).
 */
export const receivedDataUri = (text: string): Effect.Effect<DataUri> =>
  Effect.flatMap(Effect.serviceOption(ReceivedDataUris), (received) => {
    const streamed = Option.flatMap(received, (uris) => Option.fromNullable(uris.get(text)))
    return Effect.as(
      Effect.annotateCurrentSpan("data_uri.streamed", Option.isSome(streamed)),
      Option.getOrElse(streamed, () => readDataUri(text))
    )
  })
