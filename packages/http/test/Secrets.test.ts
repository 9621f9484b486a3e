import { describe, expect, it } from "@effect/vitest"
import * as Secret from "@sightline/core/Secret"
import * as Effect from "effect/Effect"
import * as Secrets from "../src/Secrets.js"

describe("Secrets (node:crypto)", () => {
  it.effect("hashes exactly as core's Web Crypto hasher, so either finds the keys the other stored", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      const secret = yield* hasher.generate
      for (const text of [secret, "", "ünïcödé ✓", "x".repeat(1000)]) {
        expect(yield* hasher.hash(text)).toBe(yield* Secret.sha256Hex(text))
      }
      // The digest of the empty string, as published for SHA-256.
      expect(yield* hasher.hash("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }).pipe(Effect.provide(Secrets.layer)))

  it.effect("makes well-formed secrets that differ", () =>
    Effect.gen(function*() {
      const hasher = yield* Secret.SecretHasher
      const secrets = yield* Effect.all(Array.from({ length: 50 }, () => hasher.generate))
      for (const secret of secrets) expect(Secret.isWellFormed(secret)).toBe(true)
      expect(new Set(secrets).size).toBe(secrets.length)
    }).pipe(Effect.provide(Secrets.layer)))
})
