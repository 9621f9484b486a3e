/**
 * Per-organization rate limiting of /v2: a token bucket per organization in the `RateLimiter` port
 * (in memory for one process, or a shared store so several processes enforce one limit).
 *
 * @since 0.1.0
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { OrganizationId } from "@sightline/core/Ids"
import * as Metrics from "@sightline/core/Metrics"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as HttpErrors from "./HttpErrors.js"

/**
 * The bucket every organization gets.
 *
 * @since 0.1.0
 * @category services
 */
export class RateLimitConfig extends Context.Tag("@sightline/http/RateLimit/RateLimitConfig")<
  RateLimitConfig,
  RateLimiter.BucketConfig
>() {}

/**
 * The default: 600 requests a minute per organization, in bursts of up to 600.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPerMinute = 600

/**
 * A bucket that allows `perMinute` requests a minute, in bursts of up to `perMinute`.
 *
 * @since 0.1.0
 * @category utils
 */
export const perMinute = (perMinute: number): RateLimiter.BucketConfig => ({
  capacity: Math.max(1, Math.floor(perMinute)),
  refillPerMinute: Math.max(1, perMinute)
})

/**
 * The bucket from `SIGHTLINE_RATE_LIMIT_PER_MINUTE` (default 600).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<RateLimitConfig, import("effect/ConfigError").ConfigError> = Layer.effect(
  RateLimitConfig,
  Config.integer("SIGHTLINE_RATE_LIMIT_PER_MINUTE").pipe(
    Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
    Config.withDefault(defaultPerMinute),
    Effect.map(perMinute)
  )
)

/**
 * A fixed bucket.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: RateLimiter.BucketConfig): Layer.Layer<RateLimitConfig> =>
  Layer.succeed(RateLimitConfig, config)

/**
 * The `RateLimit-*` (and, when refused, `Retry-After`) headers of a result, in whole seconds.
 *
 * @since 0.1.0
 * @category utils
 */
export const headers = (result: RateLimiter.Result): Record<string, string> => {
  const reset = String(Math.ceil(result.resetAfterMillis / 1000))
  const base: Record<string, string> = {
    "ratelimit-limit": String(result.limit),
    "ratelimit-remaining": String(result.remaining),
    "ratelimit-reset": reset,
    "ratelimit-policy": `${result.limit};w=60`
  }
  return result.allowed
    ? base
    : { ...base, "retry-after": String(Math.max(1, Math.ceil(result.retryAfterMillis / 1000))) }
}

/**
 * Takes one token from the organization's bucket. The headers are added to whatever response the
 * request ends with (a success or an error); a refusal fails with 429 `rate_limit_exceeded`.
 *
 * @since 0.1.0
 * @category utils
 */
export const enforce = (
  organizationId: OrganizationId,
  cost = 1
): Effect.Effect<void, HttpErrors.RateLimitExceeded, RateLimiter.RateLimiter | RateLimitConfig> =>
  Effect.flatMap(
    Effect.all([RateLimiter.RateLimiter, RateLimitConfig]),
    ([limiter, config]) => enforceWith(limiter, config)(organizationId, cost)
  )

/**
 * `enforce` with the limiter and bucket given (as the authentication middleware holds them).
 *
 * @since 0.1.0
 * @category utils
 */
export const enforceWith = (limiter: RateLimiter.RateLimiter.Service, config: RateLimiter.BucketConfig) =>
(
  organizationId: OrganizationId,
  // Requests that carry several calls (an MCP batch) spend a token per call.
  cost = 1
): Effect.Effect<void, HttpErrors.RateLimitExceeded> =>
  Effect.flatMap(limiter.consume(`org:${organizationId}`, config, cost), (result) => {
    const extra = headers(result)
    const withHeaders = HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, extra))
    )
    return result.allowed ? withHeaders : Effect.zipRight(
      Effect.zipRight(withHeaders, Metric.increment(Metrics.rateLimitRefusals)),
      Effect.fail(
        new HttpErrors.RateLimitExceeded({
          error: { code: "rate_limit_exceeded", message: "Rate limit exceeded: too many requests for the organization" }
        })
      )
    )
  })
