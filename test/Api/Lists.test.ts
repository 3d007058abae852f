/** The list kit's schema factory: decoding, encoding, and the JSON Schema the OpenAPI document serves. */
import { describe, expect, it } from "@effect/vitest"
import { Either, JSONSchema, Schema } from "effect"
import { reportAllErrors } from "../../src/Api/Errors.js"
import { BodyPageNumber, BodyPageSize, dateRange, listBodyFields, listQuery, nameFilter } from "../../src/Api/Lists.js"
import { PageNumber, PageSize, PageSizeBody, PageSizeQuery, PerPageQuery } from "../../src/Api/Pagination.js"
import { IsoDate, Search, SortDir } from "../../src/Api/Schemas.js"

const Column = Schema.Literal("id", "name", "created_at")
const Status = Schema.Literal("open", "closed")

const query = listQuery({ size: "page_size", sortBy: Column, search: "Name or email", fields: { status: Schema.optional(Status) } })

/** What every area wrote by hand before the kit: the kit must produce exactly this. */
const handWrittenQuery = Schema.Struct({
  ...PageSizeQuery,
  sort_by: Schema.optional(Column),
  sort_dir: Schema.optional(SortDir),
  search: Schema.optional(Search.annotations({ description: "Name or email" })),
  status: Schema.optional(Status)
}).annotations(reportAllErrors)

const bodyFilters = Schema.Struct({ date: dateRange("Days, both inclusive"), status: Schema.optional(Schema.NullOr(Status)), patient_name: nameFilter() })
class Body extends Schema.Class<Body>("Body")({
  ...listBodyFields({ size: "page_size", search: "Name", sortBy: Column, filters: bodyFilters })
}) {}
class HandWrittenBody extends Schema.Class<HandWrittenBody>("Body")({
  search: Schema.optional(Schema.NullOr(Search.annotations({ description: "Name" }))),
  sort_by: Schema.optional(Column),
  sort_dir: Schema.optional(SortDir),
  ...PageSizeBody,
  filters: Schema.optional(Schema.Struct({
    date: Schema.optional(Schema.Struct({
      start_date: Schema.optional(Schema.NullOr(IsoDate)),
      end_date: Schema.optional(Schema.NullOr(IsoDate))
    }).annotations({ description: "Days, both inclusive" })),
    status: Schema.optional(Schema.NullOr(Status)),
    patient_name: Schema.optional(Schema.NullOr(Search))
  }))
}) {}

describe("listQuery", () => {
  it("decodes page, size, sort and the area's fields from a query string; sort_dir in any case", () => {
    expect(Schema.decodeUnknownSync(query)({ page: "2", page_size: "10", sort_by: "name", sort_dir: "desc", search: "ann", status: "open" }))
      .toEqual({ page: 2, page_size: 10, sort_by: "name", sort_dir: "DESC", search: "ann", status: "open" })
    expect(Schema.decodeUnknownSync(query)({})).toEqual({})
  })

  it("reports every invalid field at once and ignores unknown parameters", () => {
    const result = Schema.decodeUnknownEither(query)({ page: "0", sort_by: "password", sort_dir: "up", other: "x" })
    expect(Either.isLeft(result)).toBe(true)
    const message = Either.isLeft(result) ? result.left.message : ""
    for (const field of ["page", "sort_by", "sort_dir"]) expect(message).toContain(`["${field}"]`)
    expect(Schema.decodeUnknownSync(query)({ other: "x" })).toEqual({})
  })

  it("encodes back to query text", () => {
    expect(Schema.encodeSync(query)({ page: 3, page_size: 5, sort_dir: "ASC" })).toEqual({ page: "3", page_size: "5", sort_dir: "ASC" })
  })

  it("names the size per_page when the area's spec does, and nothing else", () => {
    const ecm = listQuery({ size: "per_page" })
    expect(Schema.decodeUnknownSync(ecm)({ per_page: "7", page_size: "9" })).toEqual({ per_page: 7 })
    expect(JSONSchema.make(ecm)).toEqual(JSONSchema.make(Schema.Struct(PerPageQuery).annotations(reportAllErrors)))
  })

  it("has the JSON Schema of the hand-written query, fields in the same order", () => {
    const made = JSONSchema.make(query) as { properties: Record<string, unknown> }
    expect(made).toEqual(JSONSchema.make(handWrittenQuery))
    expect(Object.keys(made.properties)).toEqual(["page", "page_size", "sort_by", "sort_dir", "search", "status"])
    expect(JSON.stringify(made)).toBe(JSON.stringify(JSONSchema.make(handWrittenQuery)))
  })

  it("describes the size field of an endpoint with its own maximum", () => {
    const detail = listQuery({ size: "per_page", sizeDescription: "Records per page (most: 1000)" })
    const handWritten = Schema.Struct({
      page: Schema.optional(PageNumber),
      per_page: Schema.optional(PageSize.annotations({ description: "Records per page (most: 1000)" }))
    }).annotations(reportAllErrors)
    expect(JSON.stringify(JSONSchema.make(Schema.typeSchema(detail)))).toBe(JSON.stringify(JSONSchema.make(Schema.typeSchema(handWritten))))
    expect(JSON.stringify(JSONSchema.make(Schema.typeSchema(detail)))).toContain("Records per page (most: 1000)")
  })
})

describe("listBodyFields", () => {
  it("decodes a filter body: nullable search and filters, integer page fields", () => {
    const decoded = Schema.decodeUnknownSync(Body)({
      search: null, sort_by: "created_at", sort_dir: "asc", page: 2, page_size: 30,
      filters: { date: { start_date: "2026-01-01", end_date: null }, status: null, patient_name: "Lee" }
    })
    expect(decoded.sort_dir).toBe("ASC")
    expect(decoded.filters?.date).toEqual({ start_date: "2026-01-01", end_date: null })
    expect(decoded.filters?.patient_name).toBe("Lee")
    for (const bad of [{ page: 0 }, { page_size: 1.5 }, { page: "2" }, { filters: { patient_name: "x".repeat(201) } }, { filters: { date: { start_date: "2026-13-01" } } }]) {
      expect(Either.isLeft(Schema.decodeUnknownEither(Body)(bad)), JSON.stringify(bad)).toBe(true)
    }
  })

  it("encodes what it decodes", () => {
    const input = { search: "a", sort_by: "id", sort_dir: "DESC", page: 1, page_size: 5, filters: { status: "closed" } }
    expect(Schema.encodeSync(Body)(Schema.decodeUnknownSync(Body)(input))).toEqual(input)
  })

  it("has the JSON Schema of the hand-written body, fields in the same order", () => {
    const made = JSONSchema.make(Body) as unknown as { $defs: { Body: { properties: Record<string, unknown> } } }
    expect(JSON.stringify(made)).toBe(JSON.stringify(JSONSchema.make(HandWrittenBody)))
    expect(Object.keys(made.$defs.Body.properties)).toEqual(["search", "sort_by", "sort_dir", "page", "page_size", "filters"])
  })

  it("without search, sort or filters has only the page fields, those of PageSizeBody", () => {
    expect(Object.keys(listBodyFields({ size: "page_size" }))).toEqual(["page", "page_size"])
    expect(JSONSchema.make(Schema.Struct(listBodyFields({ size: "page_size" })))).toEqual(JSONSchema.make(Schema.Struct(PageSizeBody)))
    const page = JSONSchema.make(BodyPageNumber) as { description?: string }
    expect(page.description).toBe("Page number, from 1")
    expect(Schema.decodeUnknownSync(BodyPageSize)(500)).toBe(500)
  })
})
