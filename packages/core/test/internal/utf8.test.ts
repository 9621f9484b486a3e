import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as utf8 from "../../src/internal/utf8.js"

// Tests may use the platform's encoder as the reference that `byteLength` must agree with.
const encoder = new (globalThis as unknown as { TextEncoder: new() => { encode(s: string): Uint8Array } })
  .TextEncoder()
const encodedLength = (s: string) => encoder.encode(s).length

describe("utf8.byteLength", () => {
  it("counts UTF-8 bytes per code point", () => {
    expect(utf8.byteLength("a")).toBe(1)
    expect(utf8.byteLength("é")).toBe(2)
    expect(utf8.byteLength("€")).toBe(3)
    expect(utf8.byteLength("😀")).toBe(4)
    expect(utf8.byteLength("\uD800")).toBe(3)
  })

  it.prop("agrees with TextEncoder on any string", [FastCheck.string({ unit: "binary", maxLength: 200 })], ([s]) => {
    expect(utf8.byteLength(s)).toBe(encodedLength(s))
  })
})
