import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { ApiError } from "../../src/Domain/Errors.ts"
import { checkPageRequest, pageOf } from "../../src/Domain/Page.ts"

const walk = (rows: ReadonlyArray<string>, limit: number, filters: Record<string, unknown>) => {
  const seen: Array<string> = []
  let cursor: string | undefined
  for (let i = 0; i <= rows.length + 1; i++) {
    const request = checkPageRequest({ limit, cursor }, filters)
    if (request instanceof ApiError) throw request
    const page = pageOf(rows, (r) => r, request)
    expect(page.count).toBe(page.data.length)
    expect(page.count).toBeLessThanOrEqual(limit)
    seen.push(...page.data)
    if (page.next_cursor === null) return seen
    cursor = page.next_cursor
  }
  throw new Error("paging did not end")
}

describe("pages", () => {
  it("visit every row exactly once, for any list and page size", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 })),
        fc.integer({ min: 1, max: 12 }),
        (raw, limit) => {
          const rows = [...raw].sort()
          expect(walk(rows, limit, { q: "x" })).toEqual(rows)
        }
      )
    )
  })

  it("skip nothing and repeat nothing when rows are appended while paging", () => {
    const rows = ["a", "b", "c", "d"]
    const first = checkPageRequest({ limit: 2 }, {})
    if (first instanceof ApiError) throw first
    const page1 = pageOf(rows, (r) => r, first)
    rows.push("e", "f")
    const second = checkPageRequest({ limit: 10, cursor: page1.next_cursor! }, {})
    if (second instanceof ApiError) throw second
    expect([...page1.data, ...pageOf(rows, (r) => r, second).data]).toEqual(["a", "b", "c", "d", "e", "f"])
  })

  it("refuse a cursor passed back with other filters, a foreign cursor and a limit out of 1..1000", () => {
    const first = checkPageRequest({ limit: 1 }, { status: "open" })
    if (first instanceof ApiError) throw first
    const cursor = pageOf(["a", "b"], (r) => r, first).next_cursor!
    const other = checkPageRequest({ limit: 1, cursor }, { status: "closed" })
    expect(other).toBeInstanceOf(ApiError)
    expect((other as ApiError).status).toBe(400)
    expect(checkPageRequest({ cursor: "nonsense" }, {})).toBeInstanceOf(ApiError)
    for (const limit of [0, 1001, 1.5]) expect(checkPageRequest({ limit }, {})).toBeInstanceOf(ApiError)
    expect(checkPageRequest({}, {})).toMatchObject({ limit: 100 })
  })
})
