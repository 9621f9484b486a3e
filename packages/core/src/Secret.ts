/**
 * API key secrets: how they are made, recognised and hashed.
 *
 * A secret is 32 random bytes in standard base64 (44 characters with one `=` of padding). It is
 * shown to its owner once; only its SHA-256 hash (lowercase hex) is stored, so a database leak does
 * not leak credentials and a lost secret cannot be reissued.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

/**
 * Number of random bytes in a secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const SECRET_BYTES = 32

/**
 * Is `value` exactly the shape Sightline issues: the canonical standard base64 encoding of 32 bytes?
 * Anything else (URL-safe alphabet, missing padding, embedded newlines) is `invalid API key format`
 * before any lookup is attempted.
 *
 * @since 0.1.0
 * @category guards
 */
export const isWellFormed = (value: string): boolean =>
  Either.match(Encoding.decodeBase64(value), {
    onLeft: () => false,
    // Effect's decoder tolerates line breaks and non-zero trailing bits; re-encoding rejects both.
    onRight: (bytes) => bytes.length === SECRET_BYTES && Encoding.encodeBase64(bytes) === value
  })

/**
 * A secret as issued (see `isWellFormed`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeySecret = Schema.String.pipe(
  Schema.filter(isWellFormed, { message: () => "invalid API key format" }),
  Schema.brand("ApiKeySecret")
)
export type ApiKeySecret = typeof ApiKeySecret.Type

/**
 * The stored form of a secret: its SHA-256 digest as 64 lowercase hex characters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SecretHash = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{64}$/, { message: () => "a secret hash is 64 lowercase hex characters" }),
  Schema.brand("SecretHash")
)
export type SecretHash = typeof SecretHash.Type

/**
 * Compares two hashes in time that depends only on their length, so a caller timing the comparison
 * learns nothing about how much of a guessed hash matched.
 *
 * @since 0.1.0
 * @category utils
 */
export const constantTimeEquals = (a: string, b: string): boolean => {
  // Hash lengths are public (always 64), so leaving early on a length mismatch reveals nothing.
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Makes secrets and hashes them.
 *
 * @since 0.1.0
 * @category services
 */
export class SecretHasher extends Context.Tag("@sightline/core/Secret/SecretHasher")<
  SecretHasher,
  SecretHasher.Service
>() {}

export declare namespace SecretHasher {
  /** Generation and hashing of API key secrets. */
  export interface Service {
    /** A new secret (see `isWellFormed`). */
    readonly generate: Effect.Effect<ApiKeySecret>
    /** The SHA-256 hash of a secret's UTF-8 text, as stored. */
    readonly hash: (secret: string) => Effect.Effect<SecretHash>
    /** Whether two hashes are equal, in constant time. */
    readonly equals: (a: string, b: string) => boolean
  }
}

// Core is compiled without DOM or Node typings (it must not reach for I/O), so the Web Crypto and
// TextEncoder members it needs are declared here. Node 20+, browsers, Deno and Bun all have them.
interface WebPlatform {
  readonly crypto: {
    getRandomValues<T extends Uint8Array>(array: T): T
    readonly subtle: { digest(algorithm: "SHA-256", data: Uint8Array): Promise<ArrayBuffer> }
  }
  readonly TextEncoder: new() => { encode(input: string): Uint8Array }
}
const platform = globalThis as unknown as WebPlatform

/**
 * The SHA-256 hash of `secret` (hex), with the platform's Web Crypto.
 *
 * @since 0.1.0
 * @category utils
 */
export const sha256Hex = (secret: string): Effect.Effect<SecretHash> =>
  Effect.map(
    Effect.promise(() => platform.crypto.subtle.digest("SHA-256", new platform.TextEncoder().encode(secret))),
    (digest) => SecretHash.make(Encoding.encodeHex(new Uint8Array(digest)))
  )

/**
 * The SHA-256 hash of `text` in unpadded base64url (PKCE's S256 code challenge, RFC 7636).
 *
 * @since 0.1.0
 * @category utils
 */
export const sha256Base64Url = (text: string): Effect.Effect<string> =>
  Effect.map(
    Effect.promise(() => platform.crypto.subtle.digest("SHA-256", new platform.TextEncoder().encode(text))),
    (digest) => Encoding.encodeBase64Url(new Uint8Array(digest))
  )

/**
 * Secrets from the platform's cryptographically secure random source, hashed with Web Crypto.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SecretHasher> = Layer.succeed(SecretHasher, {
  generate: Effect.sync(() =>
    ApiKeySecret.make(Encoding.encodeBase64(platform.crypto.getRandomValues(new Uint8Array(SECRET_BYTES))))
  ),
  hash: sha256Hex,
  equals: constantTimeEquals
})

/**
 * Deterministic secrets for tests: the n-th secret is 32 bytes holding n in its last four bytes
 * (big endian). Hashing is the real SHA-256, so hashes match what `layer` would store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest: Layer.Layer<SecretHasher> = Layer.effect(
  SecretHasher,
  Effect.map(Ref.make(0), (counter) => ({
    generate: Effect.map(Ref.updateAndGet(counter, (n) => n + 1), (n) => {
      const bytes = new Uint8Array(SECRET_BYTES)
      new DataView(bytes.buffer).setUint32(SECRET_BYTES - 4, n)
      return ApiKeySecret.make(Encoding.encodeBase64(bytes))
    }),
    hash: sha256Hex,
    equals: constantTimeEquals
  }))
)
