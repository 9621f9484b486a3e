/**
 * The password hasher port: a memory-hard key derivation for the passwords people sign in with.
 * Core cannot reach a KDF without I/O-capable platform code, so the standalone deployment provides
 * scrypt from `node:crypto` (`@sightline/http/Passwords`); `layerTest` is for unit tests only.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Secret from "./Secret.js"

/**
 * Hashes passwords and checks them against their stored hashes.
 *
 * @since 0.1.0
 * @category services
 */
export class PasswordHasher extends Context.Tag("@sightline/core/PasswordHasher")<
  PasswordHasher,
  PasswordHasher.Service
>() {}

export declare namespace PasswordHasher {
  /** Password hashing. */
  export interface Service {
    /** The stored form of a password: self-describing (algorithm, parameters, salt, digest). */
    readonly hash: (password: string) => Effect.Effect<string>
    /** Whether `password` is the one `stored` was made from; false for a hash it cannot read. */
    readonly verify: (password: string, stored: string) => Effect.Effect<boolean>
  }
}

const testPrefix = "test-sha256$"

/**
 * A fast, NOT memory-hard hasher for unit tests: salted SHA-256. A deployment must never use it,
 * which is why its hashes say so in their prefix.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest: Layer.Layer<PasswordHasher> = Layer.succeed(PasswordHasher, {
  hash: (password) => Effect.map(Secret.sha256Hex(`salt:${password}`), (digest) => `${testPrefix}${digest}`),
  verify: (password, stored) =>
    Effect.map(
      Secret.sha256Hex(`salt:${password}`),
      (digest) => Secret.constantTimeEquals(`${testPrefix}${digest}`, stored)
    )
})
