import { describe, expect, it } from "@effect/vitest"
import * as LibraryContext from "../src/LibraryContext.js"

describe("LibraryContext.bindNamedParams", () => {
  it("binds each :name once as $n, leaves ::casts alone and reports missing values", () => {
    const bound = LibraryContext.bindNamedParams(
      "select :region::text, x from t where r = :region and d > :since and y = 'a'::int",
      { region: "EU", since: "2025-01-01" }
    )
    expect(bound.text).toBe("select $1::text, x from t where r = $1 and d > $2 and y = 'a'::int")
    expect(bound.params).toEqual(["EU", "2025-01-01"])
    expect(bound.missing).toEqual([])
    expect(LibraryContext.bindNamedParams("select :a, :b", { a: 1 }).missing).toEqual(["b"])
    // A value never becomes SQL text.
    const injected = LibraryContext.bindNamedParams("select * from t where r = :r", { r: "EU' or '1'='1" })
    expect(injected.text).toBe("select * from t where r = $1")
    expect(injected.params).toEqual(["EU' or '1'='1"])
  })
})
