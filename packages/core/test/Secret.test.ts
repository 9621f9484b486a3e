import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Schema from "effect/Schema"
import * as Secret from "../src/Secret.js"

const bytes = (fill: (i: number) => number) => Uint8Array.from({ length: 32 }, (_, i) => fill(i))
const wellFormed = Encoding.encodeBase64(bytes((i) => i * 7))

describe("Secret.isWellFormed", () => {
  it("accepts the canonical base64 of 32 bytes (44 characters, one '=')", () => {
    expect(wellFormed).toHaveLength(44)
    expect(wellFormed.endsWith("=") && !wellFormed.endsWith("==")).toBe(true)
    expect(Secret.isWellFormed(wellFormed)).toBe(true)
  })

  it.prop("accepts every 32-byte value", [FastCheck.uint8Array({ minLength: 32, maxLength: 32 })], ([value]) => {
    expect(Secret.isWellFormed(Encoding.encodeBase64(value))).toBe(true)
  })

  it.prop(
    "rejects the base64 of any other length",
    [FastCheck.uint8Array({ maxLength: 64 }).filter((value) => value.length !== 32)],
    ([value]) => {
      expect(Secret.isWellFormed(Encoding.encodeBase64(value))).toBe(false)
    }
  )

  it("rejects other alphabets, missing padding, line breaks and non-canonical trailing bits", () => {
    const urlSafe = Encoding.encodeBase64(bytes(() => 0xfb))
    expect(urlSafe).toContain("+")
    expect(Secret.isWellFormed(urlSafe)).toBe(true)
    expect(Secret.isWellFormed(urlSafe.replaceAll("+", "-").replaceAll("/", "_"))).toBe(false)
    expect(Secret.isWellFormed(wellFormed.slice(0, 43))).toBe(false)
    expect(Secret.isWellFormed(`${wellFormed.slice(0, 20)}\n${wellFormed.slice(20)}`)).toBe(false)
    expect(Secret.isWellFormed(` ${wellFormed}`)).toBe(false)
    // The 43rd character carries two padding bits; "AAA...AB=" decodes to the same bytes as "...AA=".
    expect(Secret.isWellFormed(`${"A".repeat(42)}B=`)).toBe(false)
    expect(Secret.isWellFormed(`${"A".repeat(42)}A=`)).toBe(true)
    expect(Secret.isWellFormed("")).toBe(false)
    expect(Secret.isWellFormed(`${"!".repeat(43)}=`)).toBe(false)
  })

  it("the ApiKeySecret schema names the rule", () => {
    const result = Schema.decodeUnknownEither(Secret.ApiKeySecret)("not a key")
    expect(Either.isLeft(result) ? result.left.message : "decoded").toContain("invalid API key format")
  })
})

describe("Secret.constantTimeEquals", () => {
  const hash = "a".repeat(64)
  it("is true only for identical strings", () => {
    expect(Secret.constantTimeEquals(hash, "a".repeat(64))).toBe(true)
    expect(Secret.constantTimeEquals(hash, `b${"a".repeat(63)}`)).toBe(false)
    expect(Secret.constantTimeEquals(hash, `${"a".repeat(63)}b`)).toBe(false)
    expect(Secret.constantTimeEquals(hash, "a".repeat(63))).toBe(false)
    expect(Secret.constantTimeEquals("", "")).toBe(true)
  })

  it.prop("agrees with ===", [FastCheck.string(), FastCheck.string()], ([a, b]) => {
    expect(Secret.constantTimeEquals(a, b)).toBe(a === b)
    expect(Secret.constantTimeEquals(a, a)).toBe(true)
  })
})

describe("SecretHasher.layer", () => {
  it.effect("generates distinct well-formed secrets", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      const secrets = yield* Effect.all(Array.from({ length: 20 }, () => hasher.generate))
      for (const secret of secrets) expect(Secret.isWellFormed(secret)).toBe(true)
      expect(new Set(secrets).size).toBe(20)
    }).pipe(Effect.provide(Secret.layer)))

  it.effect("hashes with SHA-256 as lowercase hex (FIPS 180-2 vectors)", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      expect(yield* hasher.hash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
      expect(yield* hasher.hash("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
      expect(yield* hasher.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      )
    }).pipe(Effect.provide(Secret.layer)))

  it.effect("hashes the secret's text: equal secrets match, different ones do not", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      const secret = yield* hasher.generate
      const hash = yield* hasher.hash(secret)
      expect(Schema.is(Secret.SecretHash)(hash)).toBe(true)
      expect(hasher.equals(hash, yield* hasher.hash(secret))).toBe(true)
      expect(hasher.equals(hash, yield* hasher.hash(yield* hasher.generate))).toBe(false)
    }).pipe(Effect.provide(Secret.layer)))
})

describe("SecretHasher.layerTest", () => {
  it.effect("generates a known sequence of well-formed secrets, hashed like production", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      const first = yield* hasher.generate
      const second = yield* hasher.generate
      expect(first).toBe(`${"A".repeat(40)}AAE=`)
      expect(second).toBe(`${"A".repeat(40)}AAI=`)
      expect(Secret.isWellFormed(first) && Secret.isWellFormed(second)).toBe(true)
      const production = yield* Secret.SecretHasher.pipe(
        Effect.flatMap((real) => real.hash(first)),
        Effect.provide(Secret.layer)
      )
      expect(yield* hasher.hash(first)).toBe(production)
    }).pipe(Effect.provide(Secret.layerTest)))
})
