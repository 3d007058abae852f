/**
 * Loading content (admin; the spec has no write endpoints for the library): the bundle
 * import and export, and file uploads a bundle's `file_key` names.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { carriesFiles, DataUriField } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { reportAllErrors, ValidationFailed } from "../Errors.js"
import { BooleanFromQuery, RequiredString } from "../Schemas.js"
import { AdminAuthentication } from "../Security.js"
import { ContentBundle } from "./Bundle.js"

/** Largest uploaded content file: a long video in a compressed format. */
export const maxContentFileBytes = 50 * 1024 * 1024
/** Longest `file`: the data URI of a file of `maxContentFileBytes` (base64 is 4/3 of it) with its prefix. */
export const maxContentDataUriLength = Math.ceil(maxContentFileBytes / 3) * 4 + 100

const bundleExample = {
  tags: [{ slug: "anxiety", name: "anxiety", display_name: "Anxiety", category: "condition", color: "#4A90D9" }],
  collections: [{ slug: "calm-kids", title: "Calm kids", age_group: "child", estimated_duration: 40, tags: ["anxiety"] }],
  pieces: [{
    slug: "belly-breathing",
    title: "Belly breathing",
    content_type: "video",
    duration_minutes: 5,
    url: "https://videos.example.org/belly-breathing",
    age_group: "child",
    difficulty_level: "beginner",
    tags: ["anxiety"],
    collections: ["calm-kids"]
  }]
}

export class ImportContentRequest extends Schema.Class<ImportContentRequest>("ImportContentRequest")(
  ContentBundle.fields,
  requestBody(bundleExample)
) {}

const Counts = Schema.Struct({ tags: Schema.Int, collections: Schema.Int, pieces: Schema.Int })

export class ImportContentResult extends Schema.Class<ImportContentResult>("ImportContentResult")({
  created: Counts,
  updated: Counts,
  unchanged: Counts,
  deleted: Counts.annotations({ description: "Items missing from the bundle that were removed (assigned pieces and collections are unpublished instead: counted under `updated`)" }),
  dry_run: Schema.Boolean
}) {}

export class ContentExport extends Schema.Class<ContentExport>("ContentExport")(ContentBundle.fields) {}

const ImportQuery = Schema.Struct({
  dry_run: Schema.optional(BooleanFromQuery.annotations({ description: "`true`: validate and count only, change nothing" }))
}).annotations(reportAllErrors)

export class UploadContentFileRequest extends Schema.Class<UploadContentFileRequest>("UploadContentFileRequest")({
  file: RequiredString(maxContentDataUriLength).annotations({
    description: "The file as a base64 data URI (`data:<type>;base64,…`); its type is read from the bytes: PDF, MP3, MP4, PNG or JPEG, at most 50 MB"
  }),
  filename: RequiredString(255)
}, requestBody({ file: "data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9GCg==", filename: "worry-worksheet.pdf" })) {}

export class UploadedContentFile extends Schema.Class<UploadedContentFile>("UploadedContentFile")({
  object_key: Schema.String.annotations({ description: "What a bundle piece's `file_key` or `thumbnail_file_key` names" })
}) {}

/** Admin content loading. */
export class AdminContentApi extends HttpApiGroup.make("adminContent")
  .add(
    HttpApiEndpoint.post("import", "/admin/content/import")
      .setUrlParams(ImportQuery)
      .setPayload(ImportContentRequest)
      .addSuccess(ImportContentResult)
      .annotateContext(carriesFiles)
      .annotateContext(operationDocs({
        summary: "Import the content library",
        description: "The whole library as a bundle `{tags, collections, pieces}` keyed by `slug`: items are created or " +
          "updated (unchanged ones are counted as such), and items missing from the bundle are removed — a piece or " +
          "collection someone was assigned is unpublished instead, never deleted. One transaction: any error and nothing " +
          "changes; errors are listed by path (`{\"errors\":{\"pieces[3].tags[1]\":[\"must exist\"],\"pieces[0].url\":[\"invalid format\"]}}`). " +
          "A piece is an external https `url` or a stored `file_key`; its thumbnail likewise. `?dry_run=true` validates and counts only.",
        access: Access.admin,
        spec: "general §2.10 (loading content is ours)"
      }))
  )
  .add(
    HttpApiEndpoint.get("export", "/admin/content/export")
      .addSuccess(ContentExport)
      .annotateContext(operationDocs({
        summary: "Export the content library",
        description: "The library in the import format (published or not): importing it back changes nothing.",
        access: Access.admin,
        spec: "general §2.10 (loading content is ours)"
      }))
  )
  .add(
    HttpApiEndpoint.post("uploadFile", "/admin/content/files")
      .setPayload(UploadContentFileRequest)
      .addSuccess(UploadedContentFile, { status: 201 })
      .annotateContext(carriesFiles)
      .annotate(DataUriField, ["file"])
      .annotateContext(operationDocs({
        summary: "Upload a content file",
        description: "Stores a PDF, MP3, MP4, PNG or JPEG (at most 50 MB; the type is sniffed from the bytes, not taken " +
          "from the data URI) and answers the `object_key` a bundle's `file_key` names.",
        access: Access.admin,
        spec: "general §2.10 (loading content is ours)"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Content",
    description: "Loading the content library: bundle import and export, and the files pieces are stored as."
  }))
{}
