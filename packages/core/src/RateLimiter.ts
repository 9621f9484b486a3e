/**
 * The rate limiter port: a token bucket per key (Sightline keys it per organization).
 *
 * The bucket arithmetic is the pure function `take`, so that a shared store (a PostgreSQL row read
 * `FOR UPDATE`, a Redis script) applies exactly the same rule as the in-memory limiter and several
 * processes over one store share one limit.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { RateLimitExceeded } from "./Errors.js"

/**
 * The shape of a bucket: at most `capacity` tokens, refilled continuously at `refillPerMinute`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BucketConfig = Schema.Struct({
  capacity: Schema.Number.pipe(Schema.int(), Schema.positive()),
  refillPerMinute: Schema.Number.pipe(Schema.finite(), Schema.positive())
})
export type BucketConfig = typeof BucketConfig.Type

/**
 * The stored state of one bucket: its tokens (fractional) as of `updatedAtMillis` (epoch millis).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TokenBucket = Schema.Struct({
  tokens: Schema.Number.pipe(Schema.nonNegative()),
  updatedAtMillis: Schema.Number
})
export type TokenBucket = typeof TokenBucket.Type

/**
 * The outcome of one `consume`: whether it was allowed, and what a 429 and the `RateLimit-*` headers need.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly allowed: boolean
  /** The bucket's capacity (`RateLimit-Limit`). */
  readonly limit: number
  /** Whole tokens left after this call (`RateLimit-Remaining`). */
  readonly remaining: number
  /** Milliseconds until the bucket is full again (`RateLimit-Reset`). */
  readonly resetAfterMillis: number
  /** Milliseconds until a refused call of the same cost would be allowed (`Retry-After`); 0 when allowed. */
  readonly retryAfterMillis: number
}

/**
 * Limits calls per key with a token bucket.
 *
 * @since 0.1.0
 * @category services
 */
export class RateLimiter extends Context.Tag("@sightline/core/RateLimiter")<RateLimiter, RateLimiter.Service>() {}

export declare namespace RateLimiter {
  /** Token buckets by key. */
  export interface Service {
    /**
     * Takes `cost` tokens (default 1) from the bucket of `key` when it holds that many. A key never
     * seen starts full. `cost` must lie in `[0, capacity]` (anything else is a defect): a call that
     * could never be allowed has no meaningful `Retry-After`.
     */
    readonly consume: (key: string, config: BucketConfig, cost?: number) => Effect.Effect<Result>
  }
}

// Floating-point refills (e.g. 10 tokens/minute over 6 s) may land a hair below a whole token; without
// a tolerance a caller that waited exactly `retryAfterMillis` could be refused again.
const epsilon = 1e-9

const millisFor = (tokens: number, config: BucketConfig): number =>
  tokens <= epsilon ? 0 : Math.ceil((tokens * 60_000) / config.refillPerMinute)

/**
 * A bucket refilled up to `nowMillis` (none: a key never seen, full). A `nowMillis` earlier than the
 * stored time (clock skew between processes) refills nothing and never moves the stored time back.
 */
const refill = (bucket: Option.Option<TokenBucket>, nowMillis: number, config: BucketConfig): TokenBucket =>
  Option.match(bucket, {
    onNone: () => ({ tokens: config.capacity, updatedAtMillis: nowMillis }),
    onSome: (b) => ({
      tokens: Math.min(
        config.capacity,
        b.tokens + (Math.max(0, nowMillis - b.updatedAtMillis) * config.refillPerMinute) / 60_000
      ),
      updatedAtMillis: Math.max(nowMillis, b.updatedAtMillis)
    })
  })

/** What a call of `cost` answers when the bucket holds `tokens` after it (allowed or not). */
const resultOf = (config: BucketConfig, tokens: number, cost: number, allowed: boolean): Result => ({
  allowed,
  limit: config.capacity,
  remaining: Math.floor(tokens + epsilon),
  resetAfterMillis: millisFor(config.capacity - tokens, config),
  retryAfterMillis: allowed ? 0 : millisFor(cost - tokens, config)
})

/**
 * The token bucket rule, pure: refills `bucket` (`Option.none()` for a key never seen, which starts
 * full) up to `nowMillis`, then takes `cost` tokens if it holds them. Returns the result and the state
 * to store. A `nowMillis` earlier than the stored time (clock skew between processes) refills nothing
 * and never moves the stored time backwards. Requires `0 <= cost <= config.capacity`.
 *
 * @since 0.1.0
 * @category utils
 */
export const take = (
  bucket: Option.Option<TokenBucket>,
  nowMillis: number,
  config: BucketConfig,
  cost: number
): { readonly result: Result; readonly bucket: TokenBucket } => {
  const refilled = refill(bucket, nowMillis, config)
  const allowed = refilled.tokens + epsilon >= cost
  const tokens = allowed ? Math.max(0, refilled.tokens - cost) : refilled.tokens
  return {
    result: resultOf(config, tokens, cost, allowed),
    bucket: { tokens, updatedAtMillis: refilled.updatedAtMillis }
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Leases: a shared limit without a round trip per call
// ---------------------------------------------------------------------------------------------------------------------

/**
 * What a shared store answers to a lease: the whole tokens it granted (0 to `want`), and what it holds after.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly granted: number
  readonly tokens: number
}

/**
 * How many tokens a process takes from the shared store at a time: 1% of the capacity, at least the
 * call's cost. Unspent leased tokens are what makes a shared limit inexact, so with N processes the
 * limit holds to within N% of the capacity, while only one call in `capacity / 100` reaches the store.
 *
 * @since 0.1.0
 * @category utils
 */
export const leaseSize = (config: BucketConfig, cost: number): number =>
  Math.min(config.capacity, Math.max(cost, Math.ceil(config.capacity / 100)))

/**
 * The lease rule, pure (a shared store applies it in one atomic statement): refills `bucket` (none:
 * a key never seen, full) up to `nowMillis`, then grants as many whole tokens as it holds, at most `want`.
 *
 * @since 0.1.0
 * @category utils
 */
export const grant = (
  bucket: Option.Option<TokenBucket>,
  nowMillis: number,
  config: BucketConfig,
  want: number
): { readonly granted: number; readonly bucket: TokenBucket } => {
  const refilled = refill(bucket, nowMillis, config)
  const granted = Math.min(want, Math.floor(refilled.tokens + epsilon))
  return {
    granted,
    bucket: { tokens: Math.max(0, refilled.tokens - granted), updatedAtMillis: refilled.updatedAtMillis }
  }
}

/**
 * A limiter over a shared store that hands out leases: each process keeps the tokens it leased per
 * key in memory and spends them without I/O; only when they run out does it take the next lease
 * (`leaseSize`) with one call of `lease`. A refusal keeps what was granted for the next call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeLeased = (
  lease: (key: string, config: BucketConfig, want: number) => Effect.Effect<Lease>
): RateLimiter.Service => {
  // Tokens leased and unspent, and the store's tokens at the last lease (for the headers), per key.
  const held = new Map<string, number>()
  const shared = new Map<string, number>()

  const answer = (key: string, config: BucketConfig, cost: number, allowed: boolean): Result =>
    resultOf(config, (held.get(key) ?? 0) + (shared.get(key) ?? 0), cost, allowed)

  // Synchronous, so a check and the spend it guards see the same count whatever else runs.
  const spend = (key: string, cost: number): boolean => {
    const local = held.get(key) ?? 0
    if (local + epsilon < cost) return false
    held.set(key, Math.max(0, local - cost))
    return true
  }

  return RateLimiter.of({
    consume: (key, config, cost = 1) =>
      Effect.zipRight(
        checkArguments(config, cost),
        Effect.suspend(() => {
          if (spend(key, cost)) return Effect.succeed(answer(key, config, cost, true))
          return Effect.map(lease(key, config, leaseSize(config, cost)), (granted) => {
            held.set(key, (held.get(key) ?? 0) + granted.granted)
            shared.set(key, granted.tokens)
            return answer(key, config, cost, spend(key, cost))
          })
        })
      )
  })
}

/**
 * Consumes tokens from the `RateLimiter` in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const consume = (
  key: string,
  config: BucketConfig,
  cost?: number
): Effect.Effect<Result, never, RateLimiter> =>
  Effect.flatMap(RateLimiter, (limiter) => limiter.consume(key, config, cost))

/**
 * Fails with `RateLimitExceeded` (carrying `retryAfterMillis`) when the result was refused.
 *
 * @since 0.1.0
 * @category utils
 */
export const enforce = (result: Result): Effect.Effect<void, RateLimitExceeded> =>
  result.allowed ? Effect.void : Effect.fail(new RateLimitExceeded({ retryAfterMillis: result.retryAfterMillis }))

const isBucketConfig = Schema.is(BucketConfig)
// A deployment passes the same few config objects on every request: each is checked once.
const validConfigs = new WeakSet<BucketConfig>()
const isValidConfig = (config: BucketConfig): boolean => {
  if (validConfigs.has(config)) return true
  if (!isBucketConfig(config)) return false
  validConfigs.add(config)
  return true
}

/**
 * Dies unless the config is valid and `cost` lies in `[0, capacity]`: such calls are programming
 * errors (a shared-store implementation should check the same way before touching its store).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkArguments = (config: BucketConfig, cost: number): Effect.Effect<void> =>
  !isValidConfig(config)
    ? Effect.dieMessage(`RateLimiter: invalid bucket config ${JSON.stringify(config)}`)
    : !(Number.isFinite(cost) && cost >= 0 && cost <= config.capacity)
    ? Effect.dieMessage(`RateLimiter: cost ${cost} outside [0, ${config.capacity}]`)
    : Effect.void

/**
 * Buckets in this process's memory, timed by Effect's `Clock` (TestClock in tests). Fine for a single
 * process; several processes need a shared store. Buckets are not rolled back by memory transactions
 * (a refused or counted request stays counted, as in any real store), so they are not `MemoryState` tables.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
  const buckets = new Map<string, TokenBucket>()
  return RateLimiter.of({
    consume: (key, config, cost = 1) =>
      Effect.zipRight(
        checkArguments(config, cost),
        Effect.clockWith((clock) =>
          // Read, take and store in one synchronous step: concurrent consumers of a key can never overdraw it.
          Effect.sync(() => {
            const { bucket, result } = take(
              Option.fromNullable(buckets.get(key)),
              clock.unsafeCurrentTimeMillis(),
              config,
              cost
            )
            buckets.set(key, bucket)
            return result
          })
        )
      )
  })
})
