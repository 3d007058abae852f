/**
 * The list kit, Api side (ARCHITECTURE "Lists"): one factory for the query string of a list
 * (`listQuery`) and one for the fields of a `filter_…` body (`listBodyFields`), with the pieces
 * their filters repeat (`dateRange`, `nameFilter`). The repository side is `src/Services/Lists.ts`.
 *
 * Field order is part of the contract: the OpenAPI document lists parameters and properties in
 * declaration order, so the factories always write them in the order every area already used —
 *   query: page, page_size | per_page, sort_by, sort_dir, search, then the area's own fields;
 *   body:  search, sort_by, sort_dir, page, page_size | per_page, filters.
 *
 * How an area adopts the kit (one commit per area; dump the OpenAPI document before and after and
 * diff — it must be byte-identical):
 *  1. Api: replace `Schema.Struct({ ...PageSizeQuery, sort_by, sort_dir, search, … }).annotations(reportAllErrors)`
 *     with `listQuery({ size: "page_size", sortBy: XSortColumn, search: "description", fields: { … } })`,
 *     and the first fields of a `FilterXRequest` class with `...listBodyFields({ size, sortBy, search, filters })`.
 *     `size` is the name the area's spec uses (`per_page` in the ECM area, `page_size` elsewhere).
 *     A body whose fields are in another order (AdminUsers' `UserFilterRequest`: filters before
 *     page) keeps its declaration and takes `BodyPageNumber`/`BodyPageSize` from here.
 *  2. Handler: `pageRequest(urlParams, xPageSize)` (or `pageRequest(…, size, max)` when the
 *     endpoint allows more than `maxPageSize`) — never an offset computed by hand.
 *  3. Repository: one `list` method built with `makeListPage` (src/Services/Lists.ts) taking the
 *     criteria and the `PageRequest`, returning `{ rows, pagination }`; the service maps rows.
 */
import { Schema } from "effect"
import { reportAllErrors } from "./Errors.js"
import { BodyPageNumber, BodyPageSize, PageNumber, PageSize } from "./Pagination.js"
import type { AppointmentType } from "../Domain/Scheduling/Scheduling.js"
import { BoundedString, IsoDate, maxLengths, Search, SortDir } from "./Schemas.js"

/** The page-size field's name, as the area's spec says: `per_page` (ECM area) or `page_size` (general area). */
export type SizeName = "page_size" | "per_page"

export { BodyPageNumber, BodyPageSize }

type Optional<S extends Schema.Schema.Any> = Schema.optional<S>

type PageQueryFields<Size extends SizeName> =
  & { readonly page: Optional<typeof PageNumber> }
  & { readonly [K in Size]: Optional<typeof PageSize> }

type PageBodyFields<Size extends SizeName> =
  & { readonly page: Optional<typeof BodyPageNumber> }
  & { readonly [K in Size]: Optional<typeof BodyPageSize> }

type SortFields<Sort extends Schema.Schema.Any | undefined> = Sort extends Schema.Schema.Any
  ? { readonly sort_by: Optional<Sort>; readonly sort_dir: Optional<typeof SortDir> }
  : {}

type SearchText = typeof Search
type QuerySearchFields<S> = S extends string | true ? { readonly search: Optional<SearchText> } : {}
type BodySearchFields<S> = S extends string | true ? { readonly search: Optional<Schema.NullOr<SearchText>> } : {}

type BodyFiltersFields<F extends Schema.Schema.Any | undefined> = F extends Schema.Schema.Any ? { readonly filters: Optional<F> } : {}

interface CommonOptions<Size extends SizeName, Sort extends Schema.Schema.Any | undefined, S extends string | true | undefined> {
  /** `page_size` or `per_page`, as the area's spec names it. */
  readonly size: Size
  /** The sortable columns (a `Schema.Literal`, annotated as the endpoint documents it): adds `sort_by` and `sort_dir`. */
  readonly sortBy?: Sort
  /** Adds `search` (bounded free text); a string is its description. */
  readonly search?: S
}

const searchText = (search: string | true): SearchText => search === true ? Search : Search.annotations({ description: search })

/**
 * The query string of a list: page and size (`size` names it), then `sort_by`/`sort_dir` when
 * `sortBy` lists columns, `search` when asked, then the area's own `fields`. Every invalid field
 * is reported at once and unknown parameters are ignored (`reportAllErrors`).
 */
export const listQuery = <
  const Size extends SizeName,
  Fields extends Schema.Struct.Fields = {},
  Sort extends Schema.Schema.Any | undefined = undefined,
  S extends string | true | undefined = undefined
>(options: CommonOptions<Size, Sort, S> & {
  /** Describes the size field instead of the default text (an endpoint with its own default and maximum). */
  readonly sizeDescription?: string
  readonly fields?: Fields
}): Schema.Struct<PageQueryFields<Size> & SortFields<Sort> & QuerySearchFields<S> & Fields> =>
  Schema.Struct({
    page: Schema.optional(PageNumber),
    [options.size]: Schema.optional(options.sizeDescription === undefined ? PageSize : PageSize.annotations({ description: options.sizeDescription })),
    ...(options.sortBy === undefined ? {} : { sort_by: Schema.optional(options.sortBy), sort_dir: Schema.optional(SortDir) }),
    ...(options.search === undefined ? {} : { search: Schema.optional(searchText(options.search)) }),
    ...options.fields
  } as unknown as PageQueryFields<Size> & SortFields<Sort> & QuerySearchFields<S> & Fields).annotations(reportAllErrors)

/**
 * The fields of a `filter_…` body, to spread into its `Schema.Class`: `search` (nullable) when
 * asked, `sort_by`/`sort_dir` when `sortBy` lists columns, page and size, then `filters` (a struct
 * whose fields are all optional; annotate it to document it).
 */
export const listBodyFields = <
  const Size extends SizeName,
  Sort extends Schema.Schema.Any | undefined = undefined,
  S extends string | true | undefined = undefined,
  F extends Schema.Schema.Any | undefined = undefined
>(options: CommonOptions<Size, Sort, S> & { readonly filters?: F }): BodySearchFields<S> & SortFields<Sort> & PageBodyFields<Size> & BodyFiltersFields<F> =>
  ({
    ...(options.search === undefined ? {} : { search: Schema.optional(Schema.NullOr(searchText(options.search))) }),
    ...(options.sortBy === undefined ? {} : { sort_by: Schema.optional(options.sortBy), sort_dir: Schema.optional(SortDir) }),
    page: Schema.optional(BodyPageNumber),
    [options.size]: Schema.optional(BodyPageSize),
    ...(options.filters === undefined ? {} : { filters: Schema.optional(options.filters) })
  }) as unknown as BodySearchFields<S> & SortFields<Sort> & PageBodyFields<Size> & BodyFiltersFields<F>

/** A date range filter: `{ start_date?, end_date? }`, each `YYYY-MM-DD` or null; `description` says which dates and whether inclusive. */
export const dateRange = (description?: string) => {
  const range = Schema.Struct({
    start_date: Schema.optional(Schema.NullOr(IsoDate)),
    end_date: Schema.optional(Schema.NullOr(IsoDate))
  })
  return Schema.optional(description === undefined ? range : range.annotations({ description }))
}

/** A name filter (first, last or both contain the text): nullable bounded text, `maxLength` characters at most. */
export const nameFilter = (options: { readonly description?: string; readonly maxLength?: number } = {}) => {
  const text = BoundedString(options.maxLength ?? maxLengths.search)
  return Schema.optional(Schema.NullOr(options.description === undefined ? text : text.annotations({ description: options.description })))
}

/** What the filter bodies of the visit lists (claims, appointments, session notes) share. */
export interface VisitFilterBody<Sort> {
  readonly search?: string | null | undefined
  readonly sort_by?: Sort | undefined
  readonly sort_dir?: typeof SortDir.Type | undefined
  readonly filters?: {
    readonly date?: { readonly start_date?: string | null | undefined; readonly end_date?: string | null | undefined } | undefined
    readonly appointment_type?: AppointmentType | null | undefined
    readonly patient_name?: string | null | undefined
    readonly provider_name?: string | null | undefined
  } | undefined
}

/** A visit list's criteria from the shared part of its filter body; each list adds its own filters. */
export const visitCriteriaOf = <Sort>(body: VisitFilterBody<Sort>) => ({
  search: body.search,
  sortBy: body.sort_by,
  sortDir: body.sort_dir,
  startDate: body.filters?.date?.start_date,
  endDate: body.filters?.date?.end_date,
  appointmentType: body.filters?.appointment_type,
  patientName: body.filters?.patient_name,
  providerName: body.filters?.provider_name
})
