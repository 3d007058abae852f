/**
 * Content (general §2.10, §4.11): the library (tags, collections, pieces), assignments to an
 * account (user pieces, user collections) and recommendations. Any signed-in user; record-level
 * rules (a parent's own account and patients) live in the services.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import {
  AgeGroup, ContentCollection, ContentPiece, ContentTag, ContentType, RecommendedPiece, UserCollection, UserCollectionStatus,
  UserPiece, UserPieceStatus
} from "../../Domain/Content/Content.js"
import {
  ContentCollectionId, ContentCollectionIdFromText, ContentPieceId, ContentPieceIdFromText, ContentTagIdFromText, PatientId,
  PatientIdFromText, UserCollectionIdFromText, UserId, UserIdFromText, UserPieceIdFromText
} from "../../Domain/Ids.js"
import { IsoTimestampInput } from "../../Domain/Time.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, reportAllErrors, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BoundedString, IsoDate } from "../Schemas.js"
import { Authentication } from "../Security.js"

export const contentPageSize = 25
/** Signed links to stored pieces and thumbnails live this long. */
export const contentUrlMinutes = 30
export const maxNotesLength = 2000
export const defaultRecommendations = 10
export const maxRecommendations = 50

export const contentMessages = {
  pieceNotFound: "Content piece not found",
  userPieceNotFound: "User piece not found",
  userCollectionNotFound: "User collection not found",
  rating: "must be between 1 and 5",
  ratingBeforeCompletion: "can only be given once completed",
  noAccount: "has no account",
  future: "must be in the future"
} as const

const Notes = BoundedString(maxNotesLength)

/** Anything but an integer 1–5 (a fraction, a string, 0) is the one message the spec gives. */
const Rating = Schema.declare(
  (u: unknown): u is number => typeof u === "number" && Number.isInteger(u) && u >= 1 && u <= 5,
  {
    identifier: "Rating",
    message: () => contentMessages.rating,
    description: "An integer 1 to 5, once completed",
    jsonSchema: { type: "integer", minimum: 1, maximum: 5 }
  }
)

const Category = BoundedString(100)

const access = "Any signed-in user. A `parent` sees and changes only the pieces of their own account (another account's " +
  "piece is 404); staff those of the patients they may see and of those patients' accounts, and the ones they assigned or hold."

const TagListQuery = listQuery({
  size: "page_size",
  fields: {
    category: Schema.optional(Category)
  }
})

const CollectionListQuery = listQuery({
  size: "page_size",
  fields: {
    tag_id: Schema.optional(ContentTagIdFromText),
    age_group: Schema.optional(AgeGroup.annotations({ description: "That group's collections and those for `all`" }))
  }
})

const PieceListQuery = listQuery({
  size: "page_size",
  fields: {
    collection_id: Schema.optional(ContentCollectionIdFromText.annotations({ description: "The collection's pieces in its order" })),
    tag_id: Schema.optional(ContentTagIdFromText),
    content_type: Schema.optional(ContentType)
  }
})

export class TagList extends Schema.Class<TagList>("ContentTagList")({ tags: Schema.Array(ContentTag), pagination: Pagination }) {}
export class CollectionList extends Schema.Class<CollectionList>("ContentCollectionList")({
  collections: Schema.Array(ContentCollection),
  pagination: Pagination
}) {}
export class PieceList extends Schema.Class<PieceList>("ContentPieceList")({ pieces: Schema.Array(ContentPiece), pagination: Pagination }) {}
export class PieceResponse extends Schema.Class<PieceResponse>("ContentPieceResponse")({ piece: ContentPiece }) {}

/** Library reads (general §4.11). */
export class ContentLibraryApi extends HttpApiGroup.make("contentLibrary")
  .add(
    HttpApiEndpoint.get("tags", "/content/tags")
      .setUrlParams(TagListQuery)
      .addSuccess(TagList)
      .annotateContext(operationDocs({
        summary: "List content tags",
        description: `Tags by name, ${contentPageSize} a page by default; \`category\` filters exactly.`,
        access: Access.signedIn,
        spec: "general §2.10, §4.11"
      }))
  )
  .add(
    HttpApiEndpoint.get("collections", "/content/collections")
      .setUrlParams(CollectionListQuery)
      .addSuccess(CollectionList)
      .annotateContext(operationDocs({
        summary: "List content collections",
        description: `Published collections, newest first, ${contentPageSize} a page; \`tag_id\` and \`age_group\` (that ` +
          "group or `all`) filter. `piece_count` counts published pieces.",
        access: Access.signedIn,
        spec: "general §2.10, §4.11"
      }))
  )
  .add(
    HttpApiEndpoint.get("pieces", "/content/pieces")
      .setUrlParams(PieceListQuery)
      .addSuccess(PieceList)
      .annotateContext(operationDocs({
        summary: "List content pieces",
        description: `Published pieces, ${contentPageSize} a page: in the collection's order with \`collection_id\`, else ` +
          `newest first; \`tag_id\` and \`content_type\` filter. \`url\` is the external link or a signed link valid ${contentUrlMinutes} minutes.`,
        access: Access.signedIn,
        spec: "general §2.10, §4.11"
      }))
  )
  .add(
    HttpApiEndpoint.get("piece", "/content/pieces/:id")
      .setPath(Schema.Struct({ id: ContentPieceIdFromText }))
      .addSuccess(PieceResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Show a content piece",
        description: `One published piece; unknown or unpublished → 404 \`${contentMessages.pieceNotFound}\`.`,
        access: Access.signedIn,
        spec: "general §2.10, §4.11"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Content · Library",
    description: "Educational content: tags, then collections, then pieces (videos, articles, audio, interactive pieces, worksheets, quizzes)."
  }))
{}

const UserPieceListQuery = listQuery({
  size: "page_size",
  fields: {
    status: Schema.optional(UserPieceStatus),
    content_type: Schema.optional(ContentType),
    patient_id: Schema.optional(PatientIdFromText),
    user_id: Schema.optional(UserIdFromText.annotations({ description: "Staff only: one account's pieces" }))
  }
})

export class CreateUserPieceRequest extends Schema.Class<CreateUserPieceRequest>("CreateUserPieceRequest")({
  user_piece: Schema.Struct({
    content_piece_id: ContentPieceId,
    assigned_by: Schema.optional(Schema.NullOr(UserId).annotations({ description: "Default: the caller. Only staff may name another staff user" })),
    due_date: Schema.optional(Schema.NullOr(IsoDate.annotations({ description: "Today or later (clinic time zone)" }))),
    notes: Schema.optional(Schema.NullOr(Notes)),
    patient_id: Schema.optional(Schema.NullOr(PatientId.annotations({ description: "Assign for this patient, to the patient's account" }))),
    user_id: Schema.optional(Schema.NullOr(UserId.annotations({ description: "Staff only: the account (default: the patient's, else the caller's)" })))
  })
}, requestBody(
  { user_piece: { content_piece_id: 7, due_date: "2026-12-31", notes: "Watch together before the next session" } },
  { user_piece: { content_piece_id: 7, patient_id: 12 } }
)) {}

export class UpdateUserPieceRequest extends Schema.Class<UpdateUserPieceRequest>("UpdateUserPieceRequest")({
  user_piece: Schema.Struct({
    status: Schema.optional(UserPieceStatus),
    completed_at: Schema.optional(Schema.NullOr(IsoTimestampInput)),
    rating: Schema.optional(Schema.NullOr(Rating)),
    feedback: Schema.optional(Schema.NullOr(Notes))
  })
}, requestBody(
  { user_piece: { status: "completed", rating: 5, feedback: "Helpful" } },
  { user_piece: { status: "started" } }
)) {}

export class UserPieceResponse extends Schema.Class<UserPieceResponse>("UserPieceResponse")({ user_piece: UserPiece }) {}
export class UserPieceList extends Schema.Class<UserPieceList>("UserPieceList")({ user_pieces: Schema.Array(UserPiece), pagination: Pagination }) {}

const statusMachine = "Status: assigned → started → in_progress → completed, forward jumps allowed; skipped from any open " +
  "state; skipped → assigned (reopen); completed is final (rating and feedback may still change). Other moves are 422 " +
  "`{\"errors\":{\"status\":[\"cannot change from completed to in_progress\"]}}`."

/** A user's content pieces (general §4.11). */
export class UserPiecesApi extends HttpApiGroup.make("userPieces")
  .add(
    HttpApiEndpoint.get("list", "/content/user_pieces")
      .setUrlParams(UserPieceListQuery)
      .addSuccess(UserPieceList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List user pieces",
        description: `Assignments, newest first, ${contentPageSize} a page; \`status\`, \`content_type\`, \`patient_id\` and (staff) ` +
          "`user_id` filter. A parent sees their own account's.",
        access,
        patients: { records: "general" },
        spec: "general §2.10, §4.11"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/content/user_pieces")
      .setPayload(CreateUserPieceRequest)
      .addSuccess(UserPieceResponse, { status: 201 })
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Assign a content piece",
        description: "Assigns a published piece to an account: staff to a patient's account (`patient_id`; none → 422 " +
          "`has no account`) or a `user_id`; a parent to themself or for their own patient. 422, nothing saved: unknown or " +
          "unpublished piece → `content_piece_id` `must exist`; the same piece already open for that account and patient → " +
          "`has already been taken`; a past `due_date` → `must be in the future`; notes ≤ 2,000 characters.",
        access,
        patients: { records: "general" },
        spec: "general §2.10, §4.11"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/content/user_pieces/:id")
      .setPath(Schema.Struct({ id: UserPieceIdFromText }))
      .setPayload(UpdateUserPieceRequest)
      .addSuccess(UserPieceResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a user piece",
        description: `${statusMachine} \`completed_at\` is set on completion (now, or the given time: not in the future nor ` +
          "before `assigned_at`, else `is invalid`). `rating` must be an integer 1–5 (`must be between 1 and 5`) and only " +
          `once completed (\`can only be given once completed\`). Unknown or another account's → 404 \`${contentMessages.userPieceNotFound}\`.`,
        access,
        patients: { records: "general" },
        spec: "general §2.10, §4.11"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Content · User pieces",
    description: "Content pieces assigned to an account, optionally for one of its patients, with their progress, rating and feedback."
  }))
{}

const UserCollectionListQuery = listQuery({
  size: "page_size",
  fields: {
    status: Schema.optional(UserCollectionStatus),
    patient_id: Schema.optional(PatientIdFromText),
    user_id: Schema.optional(UserIdFromText.annotations({ description: "Staff only: one account's collections" }))
  }
})

export class CreateUserCollectionRequest extends Schema.Class<CreateUserCollectionRequest>("CreateUserCollectionRequest")({
  user_collection: Schema.Struct({
    content_collection_id: ContentCollectionId,
    patient_id: Schema.optional(Schema.NullOr(PatientId)),
    user_id: Schema.optional(Schema.NullOr(UserId.annotations({ description: "Staff only" }))),
    due_date: Schema.optional(Schema.NullOr(IsoDate)),
    notes: Schema.optional(Schema.NullOr(Notes))
  })
}, requestBody({ user_collection: { content_collection_id: 2, patient_id: 12, due_date: "2026-12-31" } })) {}

export class UpdateUserCollectionRequest extends Schema.Class<UpdateUserCollectionRequest>("UpdateUserCollectionRequest")({
  user_collection: Schema.Struct({
    due_date: Schema.optional(Schema.NullOr(IsoDate.annotations({ description: "Moves to every open piece" }))),
    notes: Schema.optional(Schema.NullOr(Notes)),
    status: Schema.optional(Schema.Literal("skipped").annotations({
      message: () => "is not included in the list",
      description: "Skips every open piece"
    }))
  })
}, requestBody({ user_collection: { due_date: "2027-01-15" } }, { user_collection: { status: "skipped" } })) {}

export class UserCollectionResponse extends Schema.Class<UserCollectionResponse>("UserCollectionResponse")({ user_collection: UserCollection }) {}
export class UserCollectionList extends Schema.Class<UserCollectionList>("UserCollectionList")({
  user_collections: Schema.Array(UserCollection),
  pagination: Pagination
}) {}

/** Collections assigned to an account (ours: the spec shows neither bodies nor responses). */
export class UserCollectionsApi extends HttpApiGroup.make("userCollections")
  .add(
    HttpApiEndpoint.get("list", "/content/user_collections")
      .setUrlParams(UserCollectionListQuery)
      .addSuccess(UserCollectionList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List user collections",
        description: `Assigned collections, newest first, ${contentPageSize} a page, with progress; \`status\` (derived from ` +
          "the pieces: assigned, in_progress, completed, skipped), `patient_id` and (staff) `user_id` filter.",
        access,
        patients: { records: "general" },
        spec: "general §4.11 (bodies and responses are ours)"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/content/user_collections")
      .setPayload(CreateUserCollectionRequest)
      .addSuccess(UserCollectionResponse, { status: 201 })
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Assign a content collection",
        description: "One transaction assigns each published piece of the collection (reusing an open assignment of the " +
          "same piece for that account and patient), with the user piece rules. Pieces added to the collection later are " +
          "not pushed. Unknown, unpublished or empty collection → 422 `content_collection_id`.",
        access,
        patients: { records: "general" },
        spec: "general §4.11 (bodies and responses are ours)"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/content/user_collections/:id")
      .setPath(Schema.Struct({ id: UserCollectionIdFromText }))
      .setPayload(UpdateUserCollectionRequest)
      .addSuccess(UserCollectionResponse)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a user collection",
        description: "`due_date` moves to every open piece; `status: skipped` skips them; `notes`. Unknown or another " +
          `account's → 404 \`${contentMessages.userCollectionNotFound}\`.`,
        access,
        patients: { records: "general" },
        spec: "general §4.11 (bodies and responses are ours)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Content · User collections",
    description: "A whole collection assigned at once; its status and progress follow its pieces."
  }))
{}

const Limit = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be an integer" }),
  Schema.greaterThan(0, { message: () => "must be greater than 0" })
).annotations({ description: `How many (default ${defaultRecommendations}); above ${maxRecommendations} is clamped` })

const RecommendationQuery = Schema.Struct({
  patient_id: Schema.optional(PatientIdFromText.annotations({ description: "A parent with one patient may omit it" })),
  limit: Schema.optional(Limit),
  content_type: Schema.optional(ContentType)
}).annotations(reportAllErrors)

export class RecommendationList extends Schema.Class<RecommendationList>("ContentRecommendationList")({
  content_pieces: Schema.Array(RecommendedPiece)
}) {}

/** Recommendations (general §4.11; the algorithm is docs/content.md). */
export class RecommendationsApi extends HttpApiGroup.make("recommendations")
  .add(
    HttpApiEndpoint.get("contentPieces", "/recommendations/content_pieces")
      .setUrlParams(RecommendationQuery)
      .addSuccess(RecommendationList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Recommend content pieces",
        description: "Published pieces for the patient's age group (or `all`) the patient has never been assigned, best " +
          "first: 3 × the tag weights the patient's history and recent questionnaire results give the piece's tags, plus " +
          "popularity (completions in 90 days), plus 0.5 when the level fits; ties newest, then lowest id. Each carries its " +
          "`score` and `reasons`. `patient_id`: a patient the caller may see; a parent with " +
          "one patient may omit it, anyone else 422 `can't be blank`.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.11 (algorithm: docs/content.md)"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Content · Recommendations",
    description: "Deterministic, explainable content suggestions for a patient."
  }))
{}
