/**
 * Where an import's file comes from (ECM §4.6): a base64 data URI in the body, a URL fetched
 * under the SSRF policy (./SafeFetch.ts), or a path inside MIF_IMPORT_DIR. Each failure is a 422
 * message; nothing outside the import directory is ever opened.
 */
import { Effect, Either, Option } from "effect"
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { ecmInvalid, type EcmValidationFailed } from "../../Api/Errors.js"
import {
  dataUriPrefixes,
  fileTypeOfName,
  type MifFileType,
  type MifSourceType,
  sniffFileType
} from "../../Domain/Ecm/Mif.js"
import { AppConfig, type MifSettings } from "../AppConfig.js"
import { type DataUri, receivedDataUri } from "../DataUri.js"
import { FetchRefused, type FetchRefusal, safeFetch } from "./SafeFetch.js"

export interface MifInput {
  readonly file?: string | undefined
  readonly url?: string | undefined
  readonly path?: string | undefined
  readonly file_type?: MifFileType | undefined
  /** The plan that sent the file (checked by the import). */
  readonly health_plan_id?: number | null | undefined
}

export interface MifSource {
  readonly bytes: Uint8Array
  readonly sourceType: MifSourceType
  readonly fileType: MifFileType
}

const megabytes = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`

export const sourceMessages = {
  none: "Mif must include a file, url or path",
  several: "Mif must include only one of file, url or path",
  dataUri: `File must be a data URI starting with ${Object.values(dataUriPrefixes).join(", ")}`,
  base64: "File is not valid base64",
  empty: "File is empty",
  tooLarge: (max: number) => `File is too large (maximum is ${megabytes(max)})`,
  unknownType: "File type could not be detected; send file_type (csv, xml or xlsx)",
  scheme: "Url must be an http or https address",
  address: "Url must point to a public internet address",
  redirects: "Url redirected too many times",
  timeout: (ms: number) => `Url did not answer in time (${Math.round(ms / 1000)} seconds)`,
  status: (status: number) => `Url could not be fetched (HTTP ${status})`,
  unreachable: "Url could not be fetched (the server could not be reached)",
  pathDisabled: "Path imports are not enabled on this server (MIF_IMPORT_DIR is not set)",
  pathOutside: "Path must name a file inside the import directory",
  pathMissing: "Path does not name a readable file in the import directory"
} as const

const fail = (message: string): Effect.Effect<never, EcmValidationFailed> => Effect.fail(ecmInvalid([message]))

/**
 * The file of a data URI read as the body arrived (src/Services/DataUri.ts), judged as the whole
 * text would have been: trimmed, one of the prefixes (any case), standard base64 with padding. The
 * refusal's message, or the file and its type.
 */
export const dataUriFile = (uri: DataUri, maxFileBytes: number): Either.Either<{ readonly bytes: Uint8Array; readonly fileType: MifFileType }, string> => {
  const entry = (Object.entries(dataUriPrefixes) as Array<[MifFileType, string]>)
    .find(([, prefix]) => uri.head.length === prefix.length && uri.head.toLowerCase() === prefix)
  if (entry === undefined) return Either.left(sourceMessages.dataUri)
  if (uri.encodedLength === 0) return Either.left(sourceMessages.empty)
  // As the text is read, before its size is known exactly.
  if (Math.floor((uri.encodedLength * 3) / 4) - 2 > maxFileBytes) return Either.left(sourceMessages.tooLarge(maxFileBytes))
  if (!uri.base64) return Either.left(sourceMessages.base64)
  return Either.right({ bytes: uri.bytes, fileType: entry[0] })
}

const fromDataUri = (uri: DataUri, settings: MifSettings) =>
  Either.match(dataUriFile(uri, settings.maxFileBytes), {
    onLeft: fail,
    onRight: ({ bytes, fileType }) => Effect.succeed({ bytes, fileType: Option.some(fileType), name: Option.none<string>() })
  })

const refusalMessage = (refusal: FetchRefusal, settings: MifSettings): string => {
  switch (refusal._tag) {
    case "Scheme":
      return sourceMessages.scheme
    case "Address":
      return sourceMessages.address
    case "TooManyRedirects":
      return sourceMessages.redirects
    case "Timeout":
      return sourceMessages.timeout(settings.urlTimeoutMs)
    case "TooLarge":
      return sourceMessages.tooLarge(settings.maxFileBytes)
    case "Status":
      return sourceMessages.status(refusal.status)
    case "Unreachable":
      return sourceMessages.unreachable
  }
}

const contentTypeOf = (contentType: string | undefined): Option.Option<MifFileType> => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase()
  if (type === "text/csv") return Option.some("csv")
  if (type === "text/xml" || type === "application/xml") return Option.some("xml")
  if (type === dataUriPrefixes.xlsx.slice(5, -8)) return Option.some("xlsx")
  return Option.none()
}

const fromUrl = Effect.fn("MifSources.url")((url: string, settings: MifSettings) =>
  Effect.tryPromise({
    try: (signal) =>
      safeFetch(url, {
        timeoutMs: settings.urlTimeoutMs,
        maxBytes: settings.maxFileBytes,
        maxRedirects: 5,
        allowedNetworks: settings.urlAllowedNetworks
      }, signal),
    catch: (error) => ecmInvalid([error instanceof FetchRefused ? refusalMessage(error.refusal, settings) : sourceMessages.unreachable])
  }).pipe(
    Effect.map((fetched) => ({
      bytes: new Uint8Array(fetched.body.buffer, fetched.body.byteOffset, fetched.body.byteLength),
      fileType: Option.orElse(Option.fromNullable(fileTypeOfName(fetched.finalUrl.pathname)), () => contentTypeOf(fetched.contentType)),
      name: Option.none<string>()
    }))
  )
)

const isInside = (root: string, target: string) => {
  const relative = path.relative(root, target)
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
}

/**
 * Reads a file inside the import directory. The requested path is checked twice: as written
 * (after resolving `..`), before anything touches the file system, and after resolving every
 * symlink; the final open refuses a symlink swapped in meanwhile (O_NOFOLLOW) and anything but a
 * regular file (O_NONBLOCK keeps a FIFO from hanging the open).
 */
const fromPath = Effect.fn("MifSources.path")(function*(requested: string, settings: MifSettings) {
  if (Option.isNone(settings.importDir)) return yield* fail(sourceMessages.pathDisabled)
  const root = settings.importDir.value
  if (requested.includes("\u0000")) return yield* fail(sourceMessages.pathOutside)
  const lexical = path.resolve(root, requested)
  if (!isInside(root, lexical)) return yield* fail(sourceMessages.pathOutside)
  const read = yield* Effect.tryPromise({
    try: async () => {
      const realRoot = await fs.realpath(root)
      let real: string
      try {
        real = await fs.realpath(lexical)
      } catch {
        return { _tag: "Missing" } as const
      }
      if (!isInside(realRoot, real)) return { _tag: "Outside" } as const
      const handle = await fs.open(real, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK)
      try {
        const stat = await handle.stat()
        if (!stat.isFile()) return { _tag: "Missing" } as const
        if (stat.size > settings.maxFileBytes) return { _tag: "TooLarge" } as const
        return { _tag: "Read", bytes: await handle.readFile(), name: real } as const
      } finally {
        await handle.close()
      }
    },
    catch: () => ecmInvalid([sourceMessages.pathMissing])
  })
  switch (read._tag) {
    case "Missing":
      return yield* fail(sourceMessages.pathMissing)
    case "Outside":
      return yield* fail(sourceMessages.pathOutside)
    case "TooLarge":
      return yield* fail(sourceMessages.tooLarge(settings.maxFileBytes))
    case "Read":
      return {
        bytes: new Uint8Array(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength),
        fileType: Option.fromNullable(fileTypeOfName(read.name)),
        name: Option.some(read.name)
      }
  }
})

/**
 * The import's file: exactly one source; its type from `file_type`, else the data URI prefix, the
 * URL's or path's extension (or the response's content type), else the content itself.
 */
export const obtainMifFile: (input: MifInput) => Effect.Effect<MifSource, EcmValidationFailed, AppConfig> =
  Effect.fn("MifSources.obtain")(function*(input: MifInput) {
    const settings = (yield* AppConfig).mif
    const given = [input.file, input.url, input.path].filter((s) => s !== undefined && s.trim() !== "")
    if (given.length === 0) return yield* fail(sourceMessages.none)
    if (given.length > 1) return yield* fail(sourceMessages.several)
    const [sourceType, read] = input.file !== undefined && input.file.trim() !== ""
      ? ["base64" as const, Effect.flatMap(receivedDataUri(input.file), (uri) => fromDataUri(uri, settings))]
      : input.url !== undefined && input.url.trim() !== ""
      ? ["url" as const, fromUrl(input.url.trim(), settings)]
      : ["path" as const, fromPath(input.path!.trim(), settings)]
    const file = yield* read
    if (file.bytes.byteLength === 0) return yield* fail(sourceMessages.empty)
    if (file.bytes.byteLength > settings.maxFileBytes) return yield* fail(sourceMessages.tooLarge(settings.maxFileBytes))
    const fileType = input.file_type ?? Option.getOrUndefined(file.fileType) ?? sniffFileType(file.bytes)
    if (fileType === undefined) return yield* fail(sourceMessages.unknownType)
    yield* Effect.annotateCurrentSpan({ "mif.source_type": sourceType, "mif.file_type": fileType, "mif.bytes": file.bytes.byteLength })
    return { bytes: file.bytes, sourceType, fileType }
  })
