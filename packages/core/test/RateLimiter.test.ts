import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { RateLimitExceeded } from "../src/Errors.js"
import { type BucketConfig, consume, enforce, layerMemory, take, type TokenBucket } from "../src/RateLimiter.js"
import * as RateLimiter from "../src/RateLimiter.js"
import { rateLimiterContract } from "../src/testing/RateLimiterContract.js"

rateLimiterContract("layerMemory", layerMemory)

const config: BucketConfig = { capacity: 3, refillPerMinute: 6 } // one token every 10 s

describe("RateLimiter.take", () => {
  it("starts a key never seen full", () => {
    const { bucket, result } = take(Option.none(), 1_000, config, 1)
    expect(result).toEqual({ allowed: true, limit: 3, remaining: 2, resetAfterMillis: 10_000, retryAfterMillis: 0 })
    expect(bucket).toEqual({ tokens: 2, updatedAtMillis: 1_000 })
  })

  it("refuses when short of tokens and says exactly when the cost is available", () => {
    const empty: TokenBucket = { tokens: 0.5, updatedAtMillis: 0 }
    const { bucket, result } = take(Option.some(empty), 0, config, 2)
    expect(result.allowed).toBe(false)
    expect(result.retryAfterMillis).toBe(15_000)
    expect(result.resetAfterMillis).toBe(25_000)
    expect(bucket).toEqual(empty)
  })

  it("refills in proportion to elapsed time, never beyond capacity", () => {
    const start: TokenBucket = { tokens: 0, updatedAtMillis: 0 }
    expect(take(Option.some(start), 25_000, config, 0).bucket.tokens).toBe(2.5)
    expect(take(Option.some(start), 10 * 60_000, config, 0).bucket.tokens).toBe(3)
  })

  it("refills nothing for a clock behind the stored time and keeps the stored time", () => {
    const { bucket } = take(Option.some({ tokens: 1, updatedAtMillis: 50_000 }), 20_000, config, 1)
    expect(bucket).toEqual({ tokens: 0, updatedAtMillis: 50_000 })
  })

  const arbConfig = FastCheck.record({
    capacity: FastCheck.integer({ min: 1, max: 1_000 }),
    refillPerMinute: FastCheck.double({ min: 0.01, max: 1e6, noNaN: true })
  })

  it.prop(
    "waiting retryAfterMillis is always enough",
    {
      config: arbConfig,
      tokensFraction: FastCheck.double({ min: 0, max: 1, noNaN: true }),
      costFraction: FastCheck.double({ min: 0, max: 1, noNaN: true })
    },
    ({ config, costFraction, tokensFraction }) => {
      const cost = Math.max(1, Math.round(costFraction * config.capacity))
      const bucket = { tokens: tokensFraction * config.capacity, updatedAtMillis: 0 }
      const refused = take(Option.some(bucket), 0, config, cost)
      if (refused.result.allowed) return
      const later = take(Option.some(refused.bucket), refused.result.retryAfterMillis, config, cost)
      expect(later.result.allowed).toBe(true)
    }
  )

  it.prop(
    "never allows more than capacity plus what refilled",
    {
      config: arbConfig,
      calls: FastCheck.array(
        FastCheck.record({
          wait: FastCheck.integer({ min: 0, max: 120_000 }),
          cost: FastCheck.integer({ min: 0, max: 5 })
        }),
        { maxLength: 60 }
      )
    },
    ({ calls, config }) => {
      let bucket: Option.Option<TokenBucket> = Option.none()
      let now = 0
      let granted = 0
      for (const call of calls) {
        now += call.wait
        const cost = Math.min(call.cost, config.capacity)
        const step = take(bucket, now, config, cost)
        bucket = Option.some(step.bucket)
        if (step.result.allowed) granted += cost
        expect(step.result.remaining).toBeLessThanOrEqual(config.capacity)
      }
      expect(granted).toBeLessThanOrEqual(config.capacity + (now * config.refillPerMinute) / 60_000 + 1e-6)
    }
  )
})

describe("RateLimiter.layerMemory", () => {
  it.effect("refills on Effect's clock", () =>
    Effect.gen(function*() {
      const limiter = { capacity: 1, refillPerMinute: 1 }
      expect((yield* consume("k", limiter)).allowed).toBe(true)
      const refused = yield* consume("k", limiter)
      expect(refused).toMatchObject({ allowed: false, retryAfterMillis: 60_000, resetAfterMillis: 60_000 })
      yield* TestClock.adjust(59_999)
      expect((yield* consume("k", limiter)).allowed).toBe(false)
      yield* TestClock.adjust(1)
      expect((yield* consume("k", limiter)).allowed).toBe(true)
    }).pipe(Effect.provide(layerMemory)))

  const dies = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.map(Effect.exit(effect), (exit) => Exit.isFailure(exit) && Cause.isDie(exit.cause))

  it.effect("dies on a cost beyond capacity or an invalid config", () =>
    Effect.gen(function*() {
      expect(yield* dies(consume("k", { capacity: 2, refillPerMinute: 1 }, 3))).toBe(true)
      expect(yield* dies(consume("k", { capacity: 2, refillPerMinute: 1 }, -1))).toBe(true)
      expect(yield* dies(consume("k", { capacity: 0, refillPerMinute: 1 }))).toBe(true)
      expect(yield* dies(consume("k", { capacity: 2, refillPerMinute: 0 }))).toBe(true)
      expect(yield* dies(consume("k", { capacity: 2, refillPerMinute: 1 }, 2))).toBe(false)
    }).pipe(Effect.provide(layerMemory)))
})

describe("RateLimiter.enforce", () => {
  it.effect("fails a refused result with its retry delay and passes an allowed one", () =>
    Effect.gen(function*() {
      const refused = { allowed: false, limit: 1, remaining: 0, resetAfterMillis: 9_000, retryAfterMillis: 4_000 }
      const error = yield* Effect.flip(enforce(refused))
      expect(error).toBeInstanceOf(RateLimitExceeded)
      expect(error.retryAfterMillis).toBe(4_000)
      yield* enforce({ ...refused, allowed: true, retryAfterMillis: 0 })
    }))
})

describe("RateLimiter.makeLeased", () => {
  /** A store applying `grant` to buckets in memory, counting the leases it served. */
  const store = () => {
    const buckets = new Map<string, RateLimiter.TokenBucket>()
    let now = 0
    const leases: Array<number> = []
    const lease = (key: string, config: RateLimiter.BucketConfig, want: number) =>
      Effect.sync(() => {
        const { bucket, granted } = RateLimiter.grant(Option.fromNullable(buckets.get(key)), now, config, want)
        buckets.set(key, bucket)
        leases.push(granted)
        return { granted, tokens: bucket.tokens }
      })
    return { lease, leases, advance: (millis: number) => (now += millis) }
  }

  it.effect("spends leased tokens without the store: one lease per 1% of the capacity, and exactly the capacity", () =>
    Effect.gen(function*() {
      const shared = store()
      const limiter = RateLimiter.makeLeased(shared.lease)
      const config = { capacity: 1_000, refillPerMinute: 1 }
      const results = yield* Effect.forEach(Array.from({ length: 1_200 }), () => limiter.consume("k", config))
      expect(results.filter((r) => r.allowed)).toHaveLength(1_000)
      expect(shared.leases.slice(0, 100)).toEqual(Array.from({ length: 100 }, () => 10))
      expect(results[0]).toMatchObject({ allowed: true, limit: 1_000, remaining: 999 })
      const refused = results[1_100]!
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterMillis).toBe(60_000)
    }))

  it.effect("two processes over one store never exceed the capacity, and strand at most a lease each", () =>
    Effect.gen(function*() {
      const shared = store()
      const a = RateLimiter.makeLeased(shared.lease)
      const b = RateLimiter.makeLeased(shared.lease)
      const config = { capacity: 500, refillPerMinute: 1 }
      let allowed = 0
      for (let i = 0; i < 1_500; i++) {
        if ((yield* (i % 3 === 0 ? a : b).consume("k", config)).allowed) allowed++
      }
      expect(allowed).toBeLessThanOrEqual(500)
      expect(allowed).toBeGreaterThanOrEqual(500 - 2 * RateLimiter.leaseSize(config, 1))
    }))

  it.effect("refills over time through the store, and a call costing more than a lease leases its cost", () =>
    Effect.gen(function*() {
      const shared = store()
      const limiter = RateLimiter.makeLeased(shared.lease)
      const config = { capacity: 100, refillPerMinute: 60 }
      expect((yield* limiter.consume("k", config, 100)).allowed).toBe(true)
      expect((yield* limiter.consume("k", config)).allowed).toBe(false)
      shared.advance(5_000)
      expect((yield* limiter.consume("k", config)).allowed).toBe(true)
      expect(shared.leases).toEqual([100, 0, 1])
    }))
})
