/**
 * Content library (general §2.10): tags, collections, pieces, user pieces and user collections,
 * and the user piece status machine (the moves are ours: docs/spec-decisions.md).
 */
import { Schema } from "effect"
import {
  ContentCollectionId, ContentPieceId, ContentTagId, PatientId, UserCollectionId, UserId, UserPieceId
} from "../Ids.js"
import { IsoTimestamp } from "../Time.js"

const inList = { message: () => "is not included in the list" }

export const ContentType = Schema.Literal("video", "article", "audio", "interactive", "worksheet", "quiz").annotations(inList)
export type ContentType = typeof ContentType.Type

export const AgeGroup = Schema.Literal("child", "teen", "adult", "all").annotations(inList)
export type AgeGroup = typeof AgeGroup.Type

export const DifficultyLevel = Schema.Literal("beginner", "intermediate", "advanced").annotations(inList)
export type DifficultyLevel = typeof DifficultyLevel.Type

export const UserPieceStatus = Schema.Literal("assigned", "started", "in_progress", "completed", "skipped").annotations(inList)
export type UserPieceStatus = typeof UserPieceStatus.Type

export const UserCollectionStatus = Schema.Literal("assigned", "in_progress", "completed", "skipped").annotations(inList)
export type UserCollectionStatus = typeof UserCollectionStatus.Type

/** States in which an assignment is still open (one open assignment per piece, account and patient). */
export const openStatuses: ReadonlyArray<UserPieceStatus> = ["assigned", "started", "in_progress"]
export const isOpen = (status: UserPieceStatus): boolean => openStatuses.includes(status)

const rank: Readonly<Record<UserPieceStatus, number>> = { assigned: 0, started: 1, in_progress: 2, completed: 3, skipped: -1 }

/**
 * assigned → started → in_progress → completed, forward jumps allowed; skipped from any open
 * state; skipped → assigned (reopen); completed is final. Staying put is always allowed.
 */
export const canMove = (from: UserPieceStatus, to: UserPieceStatus): boolean => {
  if (from === to) return true
  if (from === "completed") return false
  if (from === "skipped") return to === "assigned"
  if (to === "skipped") return true
  return rank[to] > rank[from]
}

export const moveMessage = (from: UserPieceStatus, to: UserPieceStatus) => `cannot change from ${from} to ${to}`

/** The age group of a patient of `age` whole years (clinic zone): under 13 child, 13–17 teen, 18+ adult. */
export const ageGroupOf = (age: number): Exclude<AgeGroup, "all"> => (age < 13 ? "child" : age < 18 ? "teen" : "adult")

export const difficultyRank: Readonly<Record<DifficultyLevel, number>> = { beginner: 1, intermediate: 2, advanced: 3 }

export class TagRef extends Schema.Class<TagRef>("ContentTagRef")({ id: ContentTagId, name: Schema.String }) {}

export class ContentTag extends Schema.Class<ContentTag>("ContentTag")({
  id: ContentTagId,
  name: Schema.String,
  display_name: Schema.String,
  category: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  color: Schema.NullOr(Schema.String).annotations({ description: "`#RRGGBB`" }),
  created_at: IsoTimestamp
}) {}

export class ContentCollection extends Schema.Class<ContentCollection>("ContentCollection")({
  id: ContentCollectionId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  age_group: AgeGroup,
  estimated_duration: Schema.NullOr(Schema.Int).annotations({ description: "Minutes" }),
  piece_count: Schema.Int.annotations({ description: "Published pieces in the collection" }),
  tags: Schema.Array(TagRef),
  created_at: IsoTimestamp
}) {}

const pieceFields = {
  id: ContentPieceId,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  content_type: ContentType,
  duration_minutes: Schema.NullOr(Schema.Int),
  url: Schema.String.annotations({ description: "The external https link, or a signed link to the stored file valid 30 minutes" }),
  thumbnail_url: Schema.NullOr(Schema.String),
  age_group: AgeGroup,
  difficulty_level: DifficultyLevel,
  tags: Schema.Array(TagRef),
  created_at: IsoTimestamp
}

export class ContentPiece extends Schema.Class<ContentPiece>("ContentPiece")(pieceFields) {}

export class RecommendedPiece extends Schema.Class<RecommendedPiece>("RecommendedContentPiece")({
  ...pieceFields,
  score: Schema.Number.annotations({ description: "3 × tag affinity + popularity + 0.5 × difficulty fit (docs/content.md)" }),
  reasons: Schema.Array(Schema.String)
}) {}

export class PieceRef extends Schema.Class<PieceRef>("ContentPieceRef")({
  id: ContentPieceId,
  title: Schema.String,
  content_type: ContentType
}) {}

export class UserPiece extends Schema.Class<UserPiece>("UserPiece")({
  id: UserPieceId,
  content_piece_id: ContentPieceId,
  user_id: UserId,
  patient_id: Schema.NullOr(PatientId),
  status: UserPieceStatus,
  assigned_by: Schema.NullOr(UserId),
  assigned_at: IsoTimestamp,
  due_date: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(IsoTimestamp),
  rating: Schema.NullOr(Schema.Int),
  feedback: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  content_piece: PieceRef
}) {}

export class UserCollection extends Schema.Class<UserCollection>("UserCollection")({
  id: UserCollectionId,
  content_collection_id: ContentCollectionId,
  user_id: UserId,
  patient_id: Schema.NullOr(PatientId),
  status: UserCollectionStatus,
  assigned_by: Schema.NullOr(UserId),
  assigned_at: IsoTimestamp,
  due_date: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(IsoTimestamp),
  notes: Schema.NullOr(Schema.String),
  progress: Schema.Struct({ completed: Schema.Int, skipped: Schema.Int, total: Schema.Int }),
  content_collection: Schema.Struct({ id: ContentCollectionId, title: Schema.String, piece_count: Schema.Int }),
  user_pieces: Schema.Array(Schema.Struct({ id: UserPieceId, content_piece_id: ContentPieceId, status: UserPieceStatus }))
}) {}

/**
 * A user collection's status from its pieces': open pieces left → in_progress once any piece
 * moved or finished, else assigned; nothing open → completed with ≥ 1 completed, else skipped.
 */
export const collectionStatusOf = (statuses: ReadonlyArray<UserPieceStatus>): UserCollectionStatus => {
  const open = statuses.filter(isOpen)
  const completed = statuses.filter((s) => s === "completed").length
  if (open.length > 0) return open.every((s) => s === "assigned") && completed === 0 ? "assigned" : "in_progress"
  return completed > 0 ? "completed" : "skipped"
}
