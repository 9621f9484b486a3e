import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Pagination from "../src/Pagination.js"

describe("Pagination", () => {
  it.effect("a cursor round-trips its keyset", () =>
    Effect.gen(function*() {
      const keyset = { at: "2026-11-22T10:00:00.000Z", id: "00000000-0000-4000-8000-000000000001" }
      expect(yield* Pagination.decodeCursor(Pagination.encodeCursor(keyset))).toEqual(keyset)
    }))

  it.effect("a foreign cursor is invalid_request", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Pagination.decodeCursor("not a cursor!"))
      expect(error._tag).toBe("InvalidRequest")
      const json = yield* Effect.flip(Pagination.decodeCursor(btoa(JSON.stringify({ at: 1 }))))
      expect(json.code).toBe("invalid_request")
    }))

  it("pageFromRows returns a cursor only when another page exists", () => {
    const rows = [1, 2, 3].map((n) => ({ at: `2026-01-0${n}T00:00:00.000Z`, id: String(n) }))
    expect(Pagination.pageFromRows(rows, 3, (r) => r).nextCursor).toBeUndefined()
    const page = Pagination.pageFromRows(rows, 2, (r) => r)
    expect(page.items).toHaveLength(2)
    expect(page.nextCursor).toBe(Pagination.encodeCursor(rows[1]))
  })

  it("compareDesc orders newest first, then by id descending", () => {
    const sorted = [
      { at: "2026-01-01", id: "a" },
      { at: "2026-01-02", id: "a" },
      { at: "2026-01-02", id: "b" }
    ].sort(Pagination.compareDesc)
    expect(sorted).toEqual([{ at: "2026-01-02", id: "b" }, { at: "2026-01-02", id: "a" }, {
      at: "2026-01-01",
      id: "a"
    }])
  })
})

describe("Pagination.decodeCursor refuses forged positions", () => {
  const forge = (value: unknown) => btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_")

  it.effect("a position whose time is not an RFC 3339 UTC instant", () =>
    Effect.gen(function*() {
      for (const at of ["yesterday", "2026-13-45T99:99:99Z", "2026-11-22 10:00:00", "2026-11-22T10:00:00+01:00"]) {
        const error = yield* Effect.flip(Pagination.decodeCursor(forge({ at, id: "x" })))
        expect(error.message).toBe("invalid cursor")
      }
    }))

  it.effect("an id that does not fit the listing's ids", () =>
    Effect.gen(function*() {
      const cursor = forge({ at: "2026-11-22T10:00:00.000Z", id: "not-a-uuid" })
      expect(yield* Pagination.decodeCursor(cursor)).toEqual({ at: "2026-11-22T10:00:00.000Z", id: "not-a-uuid" })
      const error = yield* Effect.flip(Pagination.decodeCursor(cursor, Schema.UUID))
      expect(error._tag).toBe("InvalidRequest")
      expect(yield* Effect.flip(Pagination.decodeCursor(forge({ at: "2026-11-22T10:00:00.000Z", id: "" }))))
        .toMatchObject({ message: "invalid cursor" })
    }))
})
