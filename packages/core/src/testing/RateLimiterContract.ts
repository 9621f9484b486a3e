/**
 * The contract every `RateLimiter` implementation satisfies.
 *
 * The suite runs on real time (`it.live`) because a shared store may take its time from the database
 * rather than from Effect's `Clock`; refill rates are chosen so that waits stay in milliseconds and
 * slow rates never refill during a test. Every test uses fresh random keys.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { type BucketConfig, RateLimiter } from "../RateLimiter.js"
import { uuid } from "./Fixtures.js"

const freshKey = () => `rate-limiter-contract:${uuid()}`

// One token per minute: nothing refills within a test run.
const slow = (capacity: number): BucketConfig => ({ capacity, refillPerMinute: 1 })

/**
 * Registers the `RateLimiter` contract suite for an implementation.
 *
 * @since 0.1.0
 * @category utils
 */
export const rateLimiterContract = (name: string, layer: Layer.Layer<RateLimiter, unknown>): void => {
  describe(`RateLimiter contract: ${name}`, () => {
    it.live("allows a burst up to capacity and refuses beyond it", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const key = freshKey()
        const results = yield* Effect.forEach(Array.from({ length: 6 }), () => limiter.consume(key, slow(5)))
        expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false])
        expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0])
        expect(results.every((r) => r.limit === 5)).toBe(true)
        const refused = results[5]!
        expect(refused.retryAfterMillis).toBeGreaterThan(0)
        expect(refused.retryAfterMillis).toBeLessThanOrEqual(60_000)
        expect(refused.resetAfterMillis).toBeGreaterThanOrEqual(refused.retryAfterMillis)
        expect(results[0]!.retryAfterMillis).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.live("refills tokens over time", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const key = freshKey()
        // One token every 20 ms.
        const config: BucketConfig = { capacity: 2, refillPerMinute: 3_000 }
        let last = yield* limiter.consume(key, config)
        for (let i = 0; i < 20 && last.allowed; i++) last = yield* limiter.consume(key, config)
        expect(last.allowed).toBe(false)
        expect(last.retryAfterMillis).toBeGreaterThan(0)
        expect(last.retryAfterMillis).toBeLessThanOrEqual(20)
        yield* Effect.sleep(last.retryAfterMillis + 5)
        expect((yield* limiter.consume(key, config)).allowed).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.live("keeps keys independent", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const a = freshKey()
        const b = freshKey()
        expect((yield* limiter.consume(a, slow(1))).allowed).toBe(true)
        expect((yield* limiter.consume(a, slow(1))).allowed).toBe(false)
        const other = yield* limiter.consume(b, slow(1))
        expect(other.allowed).toBe(true)
        expect(other.remaining).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.live("never lets concurrent consumers exceed capacity in total", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const key = freshKey()
        const results = yield* Effect.all(
          Array.from({ length: 40 }, () => limiter.consume(key, slow(10))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r.allowed)).toHaveLength(10)
      }).pipe(Effect.provide(layer)))

    it.live("charges the cost, and a refused call takes nothing", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const key = freshKey()
        const first = yield* limiter.consume(key, slow(5), 3)
        expect(first.allowed).toBe(true)
        expect(first.remaining).toBe(2)
        const refused = yield* limiter.consume(key, slow(5), 3)
        expect(refused.allowed).toBe(false)
        expect(refused.remaining).toBe(2)
        const rest = yield* limiter.consume(key, slow(5), 2)
        expect(rest.allowed).toBe(true)
        expect(rest.remaining).toBe(0)
      }).pipe(Effect.provide(layer)))
  })
}
