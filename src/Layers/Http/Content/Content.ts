/** Content (general §4.11): decode, take the caller, call the content services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { contentPageSize } from "../../../Api/Content/Content.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ContentFiles } from "../../../Services/Content/ContentFiles.js"
import { ContentImport } from "../../../Services/Content/ContentImport.js"
import { ContentLibrary } from "../../../Services/Content/ContentLibrary.js"
import { Recommendations } from "../../../Services/Content/Recommendations.js"
import { UserCollections } from "../../../Services/Content/UserCollections.js"
import { UserPieces } from "../../../Services/Content/UserPieces.js"

const HttpContentLibraryLive = HttpApiBuilder.group(Api, "contentLibrary", (handlers) =>
  Effect.map(ContentLibrary, (library) =>
    handlers
      .handle("tags", ({ urlParams }) => library.tags(urlParams.category, pageRequest(urlParams, contentPageSize)))
      .handle("collections", ({ urlParams }) =>
        library.collections({ tagId: urlParams.tag_id, ageGroup: urlParams.age_group }, pageRequest(urlParams, contentPageSize)))
      .handle("pieces", ({ urlParams }) =>
        library.pieces(
          { collectionId: urlParams.collection_id, tagId: urlParams.tag_id, contentType: urlParams.content_type },
          pageRequest(urlParams, contentPageSize)
        ))
      .handle("piece", ({ path }) => library.piece(path.id))))

const HttpUserPiecesLive = HttpApiBuilder.group(Api, "userPieces", (handlers) =>
  Effect.map(UserPieces, (pieces) =>
    handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          pieces.list(caller, {
            status: urlParams.status,
            contentType: urlParams.content_type,
            patientId: urlParams.patient_id,
            userId: urlParams.user_id
          }, pageRequest(urlParams, contentPageSize))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => Effect.map(pieces.create(caller, payload.user_piece), (user_piece) => ({ user_piece }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(pieces.update(caller, path.id, payload.user_piece), (user_piece) => ({ user_piece }))))))

const HttpUserCollectionsLive = HttpApiBuilder.group(Api, "userCollections", (handlers) =>
  Effect.map(UserCollections, (collections) =>
    handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          collections.list(caller, { status: urlParams.status, patientId: urlParams.patient_id, userId: urlParams.user_id },
            pageRequest(urlParams, contentPageSize))))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(collections.create(caller, payload.user_collection), (user_collection) => ({ user_collection }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) =>
          Effect.map(collections.update(caller, path.id, payload.user_collection), (user_collection) => ({ user_collection }))))))

const HttpRecommendationsLive = HttpApiBuilder.group(Api, "recommendations", (handlers) =>
  Effect.map(Recommendations, (recommendations) =>
    handlers.handle("contentPieces", ({ urlParams }) =>
      Effect.flatMap(CurrentUser, (caller) =>
        recommendations.forPatient(caller, {
          patientId: urlParams.patient_id,
          limit: urlParams.limit,
          contentType: urlParams.content_type
        })))))

const HttpAdminContentLive = HttpApiBuilder.group(Api, "adminContent", (handlers) =>
  Effect.gen(function*() {
    const content = yield* ContentImport
    const files = yield* ContentFiles
    return handlers
      .handle("import", ({ payload, urlParams }) =>
        Effect.flatMap(CurrentUser, (caller) => content.load(payload, { dryRun: urlParams.dry_run ?? false, actorId: caller.id })))
      .handle("export", () => content.exportBundle)
      .handle("uploadFile", ({ payload }) => Effect.flatMap(CurrentUser, (caller) => files.upload(caller.id, payload.file, payload.filename)))
  }))

/** Every content group. */
export const HttpContentLive = [
  HttpContentLibraryLive, HttpUserPiecesLive, HttpUserCollectionsLive, HttpRecommendationsLive, HttpAdminContentLive
] as const
