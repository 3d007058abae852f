/**
 * How large a request body an endpoint accepts. A JSON body of this API is a few hundred bytes,
 * so every endpoint takes at most `smallBodyBytes` unless it declares otherwise: an endpoint that
 * carries files (the ECM MIF import …) opts into MAX_BODY_BYTES with
 * `.annotateContext(carriesFiles)`, and one with long free text may name its own limit with
 * `.annotate(BodyLimit, 64 * 1024)`. The body-limit middleware (src/Layers/Http/RequestBody.ts)
 * reads these annotations from the Api; a body over the limit gets 413 before it is parsed.
 */
import { Context } from "effect"

/** Bytes, or "files" for the deployment's MAX_BODY_BYTES. */
export type BodyLimitValue = number | "files"

export class BodyLimit extends Context.Tag("app/BodyLimit")<BodyLimit, BodyLimitValue>() {}

/**
 * The default: the largest valid body of today's endpoints, with every field at its maximum and
 * every character sent as a JSON `\u` escape, is under 8 KiB (docs/spec-decisions.md).
 */
export const smallBodyBytes = 16 * 1024

/** For an endpoint that carries files: bodies up to MAX_BODY_BYTES. */
export const carriesFiles: Context.Context<BodyLimit> = Context.make(BodyLimit, "files")

/**
 * A JSON string field of an endpoint's body (its path of object keys) that carries a whole file as
 * a base64 data URI: the body checks decode it as the body arrives, never holding it as text, and
 * hand the endpoint a placeholder in its place (src/Layers/Http/StreamedJson.ts). The service
 * reads the field with `receivedDataUri` (src/Services/DataUri.ts).
 */
export class DataUriField extends Context.Tag("app/DataUriField")<DataUriField, ReadonlyArray<string>>() {}
