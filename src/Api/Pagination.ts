/**
 * Pagination shared by every list: `page` (default 1) with `page_size` or `per_page` as the spec
 * names them per endpoint. Sizes above `maxPageSize` are clamped, not rejected (docs/spec-decisions.md).
 */
import { Schema } from "effect"

export const maxPageSize = 100

const positiveIntFromString = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be an integer" }),
  Schema.greaterThan(0, { message: () => "must be greater than 0" })
)

export const PageNumber = positiveIntFromString.annotations({ description: "Page number, from 1" })
export const PageSize = positiveIntFromString.annotations({
  description: `Items per page; values above ${maxPageSize} are clamped to ${maxPageSize}`
})

/** Query fields of an endpoint that names its size `page_size`. */
export const PageSizeQuery = { page: Schema.optional(PageNumber), page_size: Schema.optional(PageSize) }
const BodyPage = Schema.Int.pipe(Schema.greaterThan(0, { message: () => "must be greater than 0" }))
/** `page` in a JSON body (the `filter_…` operations): an integer from 1. */
export const BodyPageNumber = BodyPage.annotations({ description: "Page number, from 1" })
/** The page size in a JSON body: an integer from 1; values above `maxPageSize` are clamped. */
export const BodyPageSize = BodyPage.annotations({ description: `Items per page; values above ${maxPageSize} are clamped to ${maxPageSize}` })
/** page and page_size in a JSON body. */
export const PageSizeBody = { page: Schema.optional(BodyPageNumber), page_size: Schema.optional(BodyPageSize) }

/** Query fields of an endpoint that names its size `per_page`. */
export const PerPageQuery = { page: Schema.optional(PageNumber), per_page: Schema.optional(PageSize) }

export class Pagination extends Schema.Class<Pagination>("Pagination")({
  current_page: Schema.Int,
  total_pages: Schema.Int,
  total_count: Schema.Int,
  per_page: Schema.Int
}) {}

export interface PageRequest {
  readonly page: number
  readonly perPage: number
  readonly offset: number
}

/**
 * Resolves the requested page against an endpoint's default size (spec §8 limits); a size above
 * `maxSize` (`maxPageSize` unless the endpoint documents another) is clamped to it.
 */
export const pageRequest = (
  query: { readonly page?: number | undefined; readonly page_size?: number | undefined; readonly per_page?: number | undefined },
  defaultSize: number,
  maxSize: number = maxPageSize
): PageRequest => {
  const page = query.page ?? 1
  const perPage = Math.min(query.page_size ?? query.per_page ?? defaultSize, maxSize)
  return { page, perPage, offset: (page - 1) * perPage }
}

export const paginationOf = (request: PageRequest, totalCount: number): Pagination =>
  new Pagination({
    current_page: request.page,
    per_page: request.perPage,
    total_count: totalCount,
    total_pages: Math.ceil(totalCount / request.perPage)
  })
