/**
 * The contract every `AssetStore` satisfies: bytes come back exactly (binary included), a put
 * replaces, a missing key is `None`, and a prefix delete removes only that prefix (wildcards in it
 * are literal).
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AssetStore, fromText, text } from "../AssetStore.js"
import { uuid } from "./Fixtures.js"

/**
 * Registers the suite for an adapter.
 *
 * @since 0.1.0
 * @category utils
 */
export const assetStoreContract = (name: string, layer: Layer.Layer<AssetStore, unknown>): void => {
  describe(`AssetStore contract: ${name}`, () => {
    it.effect("returns the bytes and content type it was given, binary included; a put replaces", () =>
      Effect.gen(function*() {
        const store = yield* AssetStore
        const key = `${uuid()}/chats/${uuid()}/assets/${uuid()}`
        const bytes = new Uint8Array([0, 255, 1, 128, 10, 13, 0])
        yield* store.put(key, { bytes, mimeType: "application/octet-stream" })
        const got = Option.getOrThrow(yield* store.get(key))
        expect([...got.bytes]).toEqual([...bytes])
        expect(got.mimeType).toBe("application/octet-stream")
        yield* store.put(key, fromText("a,b\r\n1,2\r\n", "text/csv"))
        const replaced = Option.getOrThrow(yield* store.get(key))
        expect(text(replaced)).toBe("a,b\r\n1,2\r\n")
        expect(replaced.mimeType).toBe("text/csv")
        expect(Option.isNone(yield* store.get(`${key}-missing`))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("deletes by prefix only what starts with it, taking % and _ literally", () =>
      Effect.gen(function*() {
        const store = yield* AssetStore
        const org = uuid()
        const keys = [`${org}/chats/a_1/x`, `${org}/chats/a_1/y`, `${org}/chats/ab1/z`, `${org}/chats/a%1/w`]
        for (const key of keys) yield* store.put(key, fromText(key, "text/plain"))
        yield* store.deletePrefix(`${org}/chats/a_1/`)
        const left = yield* Effect.forEach(keys, (key) => Effect.map(store.get(key), Option.isSome))
        expect(left).toEqual([false, false, true, true])
      }).pipe(Effect.provide(layer)))
  })
}
