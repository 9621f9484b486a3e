import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Passwords from "../src/Passwords.js"

// Cheap costs keep the test fast; the format and the checks are the same at any cost.
const cheap = { ...Passwords.defaultOptions, logN: 10 }

describe("Passwords (scrypt)", () => {
  it.effect("hashes with a fresh salt, verifies the password and nothing else", () =>
    Effect.gen(function*() {
      const hasher = yield* Passwords.make(cheap)
      const first = yield* hasher.hash("correct horse battery")
      const second = yield* hasher.hash("correct horse battery")
      expect(first).toMatch(/^scrypt\$10\$8\$1\$[\w-]{22}\$[\w-]{43}$/)
      expect(second).not.toBe(first)
      expect(yield* hasher.verify("correct horse battery", first)).toBe(true)
      expect(yield* hasher.verify("correct horse batterY", first)).toBe(false)
      expect(yield* hasher.verify("", first)).toBe(false)
    }))

  it.effect("reads the cost from the stored hash, so raising the default keeps old hashes working", () =>
    Effect.gen(function*() {
      const old = yield* (yield* Passwords.make(cheap)).hash("pw with old cost")
      const current = yield* Passwords.make({ ...cheap, logN: 11 })
      expect(yield* current.verify("pw with old cost", old)).toBe(true)
    }))

  it.effect("refuses a hash it cannot read, or one whose cost would exhaust memory", () =>
    Effect.gen(function*() {
      const hasher = yield* Passwords.make(cheap)
      const good = yield* hasher.hash("pw")
      expect(yield* hasher.verify("pw", "plain text")).toBe(false)
      expect(yield* hasher.verify("pw", good.replace("scrypt$10$", "scrypt$30$"))).toBe(false)
      expect(yield* hasher.verify("pw", good.slice(0, -2))).toBe(false)
    }))

  it.effect("the default cost is memory-hard: 64 MiB and 2^16 iterations", () =>
    Effect.gen(function*() {
      const stored = yield* (yield* Passwords.make()).hash("pw")
      expect(stored.startsWith("scrypt$16$8$1$")).toBe(true)
    }))
})
