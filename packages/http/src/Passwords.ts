/**
 * Core's `PasswordHasher` port with scrypt from `node:crypto` (memory-hard, no native addon).
 * Hashes read `scrypt$<logN>$<r>$<p>$<salt>$<digest>` (base64url), so parameters can be raised
 * later without making stored hashes unreadable.
 *
 * @since 0.1.0
 */
import { PasswordHasher } from "@sightline/core/PasswordHasher"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"

/**
 * The cost of a new hash: N = 2^logN, block size r and parallelism p.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly logN: number
  readonly r: number
  readonly p: number
  /**
   * Hashes computed at once. Each holds 128·N·r bytes (64 MiB by default) while it runs, so a burst
   * of sign-ins queues here instead of exhausting memory.
   */
  readonly concurrency: number
}

/**
 * 2^16 with r = 8 and p = 1: about 0.3 s and 64 MiB per hash on a 2-core server. OWASP's floor is
 * 2^17 (0.6 s here); a sign-in that slow felt broken, and the sign-in limiter already caps guessing.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { logN: 16, r: 8, p: 1, concurrency: 2 }

const keyLength = 32
const saltLength = 16

const derive = (password: string, salt: Buffer, logN: number, r: number, p: number) =>
  Effect.async<Buffer, Error>((resume) => {
    const N = 2 ** logN
    NodeCrypto.scrypt(
      password.normalize("NFKC"),
      salt,
      keyLength,
      { N, r, p, maxmem: 128 * N * r * p + 1024 * 1024 },
      (error, key) => resume(error === null ? Effect.succeed(key) : Effect.fail(error))
    )
  })

const format = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([\w-]+)\$([\w-]+)$/

/**
 * The scrypt hasher with these costs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = defaultOptions): Effect.Effect<PasswordHasher.Service> =>
  Effect.map(Effect.makeSemaphore(options.concurrency), (permits) => {
    const limited = <A, E>(effect: Effect.Effect<A, E>) => permits.withPermits(1)(effect)
    return PasswordHasher.of({
      hash: (password) =>
        Effect.gen(function*() {
          const salt = NodeCrypto.randomBytes(saltLength)
          const digest = yield* limited(derive(password, salt, options.logN, options.r, options.p))
          return `scrypt$${options.logN}$${options.r}$${options.p}$${salt.toString("base64url")}$${
            digest.toString("base64url")
          }`
        }).pipe(Effect.orDie),
      verify: (password, stored) => {
        const parts = format.exec(stored)
        if (parts === null) return Effect.succeed(false)
        const [logN, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
        // A stored hash is ours, but a corrupt row must not make a sign-in allocate gigabytes.
        if (logN > 20 || r > 16 || p > 4) return Effect.succeed(false)
        const expected = Buffer.from(parts[5]!, "base64url")
        return limited(derive(password, Buffer.from(parts[4]!, "base64url"), logN, r, p)).pipe(
          Effect.map((digest) => digest.length === expected.length && NodeCrypto.timingSafeEqual(digest, expected)),
          Effect.orElseSucceed(() => false)
        )
      }
    })
  })

/**
 * The scrypt hasher layer (default costs unless given).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = defaultOptions): Layer.Layer<PasswordHasher> =>
  Layer.effect(PasswordHasher, make(options))
