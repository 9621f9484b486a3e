/**
 * The asset store port: the bytes of stored assets (a CSV download, a rendered image), kept under
 * `Asset.storageKey` and served through signed URLs. Keys are scoped by organization and chat, so a
 * chat's files share a prefix.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Utf8 from "./internal/utf8.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stored bytes with their content type.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredObject {
  readonly bytes: Uint8Array
  readonly mimeType: string
}

/**
 * Keeps asset bytes.
 *
 * @since 0.1.0
 * @category services
 */
export class AssetStore extends Context.Tag("@sightline/core/AssetStore")<AssetStore, AssetStore.Service>() {}

export declare namespace AssetStore {
  /** Put and get by key; a put to an existing key replaces it. */
  export interface Service {
    readonly put: (key: string, object: StoredObject) => Effect.Effect<void>
    readonly get: (key: string) => Effect.Effect<Option.Option<StoredObject>>
    /** Removes every object whose key starts with `prefix` (a chat's files when the chat is purged). */
    readonly deletePrefix: (prefix: string) => Effect.Effect<void>
  }
}

/**
 * Asset bytes in memory (tests): rolled back with memory transactions.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<AssetStore, never, MemoryState> = Layer.effect(
  AssetStore,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const objects = yield* state.table(HashMap.empty<string, StoredObject>())
    return AssetStore.of({
      put: (key, object) =>
        state.run(
          Ref.update(
            objects,
            HashMap.set(key, { mimeType: object.mimeType, bytes: object.bytes.slice() } as StoredObject)
          )
        ),
      get: (key) => state.run(Effect.map(Ref.get(objects), HashMap.get(key))),
      deletePrefix: (prefix) =>
        state.run(Ref.update(objects, HashMap.filter((_, key: string) => !key.startsWith(prefix))))
    })
  })
)

/**
 * Decodes stored bytes as UTF-8 text (CSV, JSON).
 *
 * @since 0.1.0
 * @category utils
 */
export const text = (object: StoredObject): string => Utf8.decodeText(object.bytes)

/**
 * Encodes text as stored bytes.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromText = (content: string, mimeType: string): StoredObject => ({
  bytes: Utf8.encodeText(content),
  mimeType
})
