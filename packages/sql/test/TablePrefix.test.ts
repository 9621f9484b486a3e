import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TablePrefix from "../src/TablePrefix.js"

describe("TablePrefix", () => {
  it("prefixes names", () => {
    const prefix = Either.getOrThrow(TablePrefix.make("app_"))
    expect(prefix.name("members")).toBe("app_members")
  })

  it("accepts lowercase letters, digits and underscores, not starting with a digit", () => {
    for (const valid of ["sightline_", "_", "a", "t0123456789ab_", "x".repeat(30)]) {
      expect(Either.isRight(TablePrefix.make(valid))).toBe(true)
    }
  })

  it("rejects anything else, saying why", () => {
    for (const invalid of ["", "1abc_", "Sightline_", "a-b_", "a b", "a\"; drop table x; --", "é_", "x".repeat(31)]) {
      const result = TablePrefix.make(invalid)
      expect(Either.isLeft(result) && result.left).toBeInstanceOf(Cause.IllegalArgumentException)
    }
  })

  it.effect("the layer defaults to sightline_ and fails on an invalid prefix", () =>
    Effect.gen(function*() {
      const prefix = yield* Effect.provide(TablePrefix.TablePrefix, TablePrefix.layer())
      expect(prefix.prefix).toBe("sightline_")
      const error = yield* Effect.flip(Effect.provide(TablePrefix.TablePrefix, TablePrefix.layer("Bad")))
      expect(error).toBeInstanceOf(Cause.IllegalArgumentException)
      expect(error.message).toContain("Bad")
    }))

  it.effect("layerConfig reads SIGHTLINE_TABLE_PREFIX, with the default when unset", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.provide(
          TablePrefix.TablePrefix,
          TablePrefix.layerConfig().pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
          )
        )
      expect((yield* read({ SIGHTLINE_TABLE_PREFIX: "host_sl_" })).prefix).toBe("host_sl_")
      expect((yield* read({})).prefix).toBe("sightline_")
      expect(yield* Effect.flip(read({ SIGHTLINE_TABLE_PREFIX: "9lives" }))).toBeInstanceOf(
        Cause.IllegalArgumentException
      )
    }))
})
