import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { Json } from "../src/Json.js"

describe("Json", () => {
  it("accepts JSON values and rejects what JSON cannot hold", () => {
    const isJson = Schema.is(Json)
    expect(isJson({ a: [1, "b", null, { c: false }] })).toBe(true)
    expect(isJson(Number.NaN)).toBe(false)
    expect(isJson({ a: undefined })).toBe(false)
    expect(isJson({ n: BigInt(1) })).toBe(false)
  })
})
