/**
 * Signed asset URLs: `/v2/assets/{id}?expires=<unix seconds>&signature=<hex HMAC-SHA256 of "id.expires">`,
 * made fresh on every fetch of a chat, so a URL can be handed to a browser without a bearer token and
 * stops working when it expires. Core's chat reads take `sign` as their `SignAssetUrl`.
 *
 * @since 0.1.0
 */
import type { AssetId } from "@sightline/core/Ids"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/**
 * Signs and verifies asset URLs.
 *
 * @since 0.1.0
 * @category services
 */
export class AssetUrls extends Context.Tag("@sightline/http/AssetUrls")<AssetUrls, AssetUrls.Service>() {}

export declare namespace AssetUrls {
  /** Asset URL signing. */
  export interface Service {
    /** A URL for the asset, valid for the configured lifetime from now. */
    readonly sign: (id: AssetId) => Effect.Effect<string>
    /** Whether `signature` is ours for this asset and `expires`, and `expires` has not passed. */
    readonly verify: (id: string, expires: string, signature: string) => Effect.Effect<boolean>
  }
}

/**
 * Options of the signer.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The HMAC key; keep it stable across processes so URLs signed by one verify on another. */
  readonly secret: Redacted.Redacted<string>
  /** Prefix of the URLs (`https://sightline.example.com`); relative URLs when absent. */
  readonly baseUrl?: string | undefined
  /** How long a URL stays valid (default one hour). */
  readonly ttlSeconds?: number | undefined
}

const hex = (bytes: ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("")

/**
 * A signer over WebCrypto (available in Node, Deno, Bun and browsers).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<AssetUrls.Service> =>
  Effect.gen(function*() {
    const key = yield* Effect.promise(() =>
      crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(Redacted.value(options.secret)),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"]
      )
    )
    const mac = (text: string) =>
      Effect.promise(() => crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text))).pipe(Effect.map(hex))
    const ttl = options.ttlSeconds ?? 3600
    const base = (options.baseUrl ?? "").replace(/\/$/, "")
    return AssetUrls.of({
      sign: (id) =>
        Effect.gen(function*() {
          const expires = Math.floor((yield* Clock.currentTimeMillis) / 1000) + ttl
          const signature = yield* mac(`${id}.${expires}`)
          return `${base}/v2/assets/${id}?expires=${expires}&signature=${signature}`
        }),
      verify: (id, expires, signature) =>
        Effect.gen(function*() {
          if (!/^\d{1,12}$/.test(expires) || Number(expires) < (yield* Clock.currentTimeMillis) / 1000) return false
          const expected = yield* mac(`${id}.${expires}`)
          // Constant-time comparison: the signature must not leak through timing.
          if (expected.length !== signature.length) return false
          let diff = 0
          for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ signature.charCodeAt(i)
          return diff === 0
        })
    })
  })

/**
 * The signer layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<AssetUrls> => Layer.effect(AssetUrls, make(options))

/**
 * A signer with a random key for this process only (URLs die with it): for one-process deployments and tests.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerEphemeral: Layer.Layer<AssetUrls> = Layer.effect(
  AssetUrls,
  Effect.suspend(() => make({ secret: Redacted.make(hex(crypto.getRandomValues(new Uint8Array(32)).buffer)) }))
)
