/**
 * Failed authentications counted per client address, on every surface that takes a credential
 * (/v2, the Connect procedures, the agent webhook): a burst of 30, then 10 a minute. Only failures
 * are refused: a request whose credential is valid always goes through, so one client's failures
 * (or every client's, behind one proxy) never lock out anyone with a valid key. A failure past the
 * budget answers 429 instead of 401, which slows down a guesser without costing a valid caller.
 *
 * In this process's memory: cheap on the hot path (a request from an address that never failed
 * pays nothing), and each process of a deployment counts on its own.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Failed authentications allowed per client address: a burst of 30, then 10 a minute.
 *
 * @since 0.1.0
 * @category constants
 */
export const bucket: RateLimiter.BucketConfig = { capacity: 30, refillPerMinute: 10 }

/**
 * A failure past the address's budget: answer 429 with `Retry-After`.
 *
 * @since 0.1.0
 * @category errors
 */
export class Exhausted extends Data.TaggedError("Exhausted")<{ readonly retryAfterSeconds: number }> {}

/**
 * Counts failed authentications per client address.
 *
 * @since 0.1.0
 * @category services
 */
export class FailedAuthentications extends Context.Tag("@sightline/http/FailedAuthentications")<
  FailedAuthentications,
  FailedAuthentications.Service
>() {}

export declare namespace FailedAuthentications {
  /** The counter. */
  export interface Service {
    /**
     * Runs `attempt` (an authentication) for a client at `address`: its success as it is; its
     * failure counted, and turned into `Exhausted` once the address has failed past its budget.
     */
    readonly guard: <A, E, R>(address: string, attempt: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Exhausted, R>
  }
}

/**
 * The counter over a fresh in-memory limiter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<FailedAuthentications.Service> = Effect.map(
  Effect.provide(RateLimiter.RateLimiter, RateLimiter.layerMemory),
  (limiter) => {
    const retryAfterSeconds = Math.ceil(60 / bucket.refillPerMinute)
    return {
      guard: <A, E, R>(address: string, attempt: Effect.Effect<A, E, R>) =>
        Effect.catchAll(attempt, (error) =>
          Effect.flatMap(
            limiter.consume(`auth-failures:${address}`, bucket, 1),
            (result): Effect.Effect<never, E | Exhausted> =>
              result.allowed ? Effect.fail(error) : Effect.fail(new Exhausted({ retryAfterSeconds }))
          ))
    }
  }
)

/**
 * One counter for the process (share it between every surface that authenticates).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FailedAuthentications> = Layer.effect(FailedAuthentications, make)
