import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { maxPageSize, pageRequest, paginationOf, PageSizeQuery, PerPageQuery } from "../../src/Api/Pagination.js"

describe("pagination", () => {
  it("defaults to page 1 and the endpoint's default size", () => {
    expect(pageRequest({}, 25)).toEqual({ page: 1, perPage: 25, offset: 0 })
    expect(pageRequest({}, 50)).toEqual({ page: 1, perPage: 50, offset: 0 })
  })

  it("honours page_size or per_page and computes the offset", () => {
    expect(pageRequest({ page: 3, page_size: 10 }, 25)).toEqual({ page: 3, perPage: 10, offset: 20 })
    expect(pageRequest({ page: 2, per_page: 7 }, 25)).toEqual({ page: 2, perPage: 7, offset: 7 })
  })

  it(`clamps sizes above ${maxPageSize}`, () => {
    expect(pageRequest({ page_size: 1000 }, 25).perPage).toBe(maxPageSize)
    expect(pageRequest({ per_page: 101 }, 25).perPage).toBe(maxPageSize)
  })

  it("clamps to an endpoint's own maximum when it documents one", () => {
    expect(pageRequest({ per_page: 5000 }, 1000, 1000)).toEqual({ page: 1, perPage: 1000, offset: 0 })
    expect(pageRequest({ page: 3, per_page: 250 }, 1000, 1000)).toEqual({ page: 3, perPage: 250, offset: 500 })
    expect(pageRequest({ page: 2 }, 1000, 1000)).toEqual({ page: 2, perPage: 1000, offset: 1000 })
  })

  it("builds the pagination object, including the empty and partial last pages", () => {
    expect(paginationOf(pageRequest({}, 25), 0)).toEqual({ current_page: 1, total_pages: 0, total_count: 0, per_page: 25 })
    expect(paginationOf(pageRequest({ page: 2 }, 25), 26)).toEqual({ current_page: 2, total_pages: 2, total_count: 26, per_page: 25 })
    expect(paginationOf(pageRequest({ page: 9 }, 25), 50)).toEqual({ current_page: 9, total_pages: 2, total_count: 50, per_page: 25 })
  })

  it("decodes query strings and rejects zero, negatives, fractions and words", () => {
    const decode = Schema.decodeUnknownEither(Schema.Struct(PageSizeQuery))
    expect(decode({ page: "2", page_size: "30" })).toMatchObject({ _tag: "Right", right: { page: 2, page_size: 30 } })
    expect(decode({})._tag).toBe("Right")
    for (const bad of ["0", "-1", "1.5", "abc", ""]) expect(decode({ page: bad })._tag, bad).toBe("Left")
    expect(Schema.decodeUnknownEither(Schema.Struct(PerPageQuery))({ per_page: "5" })).toMatchObject({ _tag: "Right", right: { per_page: 5 } })
  })
})
