/**
 * Authentication of /v2 and the v1 webhook: `Authorization: Bearer` with an API key, a session's
 * access token (when `SessionTokens` is provided) or, when a `JwtVerifier` is configured, a JWT. The principal is what every use case takes first.
 *
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Auth from "@sightline/core/Auth"
import { Unauthenticated } from "@sightline/core/Errors"
import type * as Policy from "@sightline/core/Policy"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as HttpErrors from "./HttpErrors.js"
import * as Jwt from "./Jwt.js"
import * as RateLimit from "./RateLimit.js"
import * as SessionTokens from "./SessionTokens.js"

/** The authenticated caller of the current request. */
export class CurrentPrincipal extends Context.Tag("@sightline/http/CurrentPrincipal")<
  CurrentPrincipal,
  Policy.Principal
>() {}

/**
 * Resolves a bearer token to a principal: a JWT when it looks like one and JWTs are enabled, else an
 * API key. The failure carries the seed's troubleshooting texts (`invalid API key format`, ...).
 */
export const authenticate = (
  token: string
): Effect.Effect<Policy.Principal, Unauthenticated, Auth.Auth> =>
  Effect.gen(function*() {
    const auth = yield* Auth.Auth
    if (token.length === 0) return yield* new Unauthenticated({ message: "Authentication required" })
    if (Jwt.looksLikeJwt(token)) {
      const sessions = yield* Effect.serviceOption(SessionTokens.SessionTokens)
      if (Option.isSome(sessions) && SessionTokens.isSessionToken(token)) {
        const claims = yield* sessions.value.verify(token)
        return yield* auth.sessionPrincipal(claims.organizationId, claims.memberId)
      }
      const verifier = yield* Effect.serviceOption(Jwt.JwtVerifier)
      if (Option.isSome(verifier)) {
        const claims = yield* verifier.value.verify(token)
        return yield* auth.sessionPrincipal(claims.organizationId, claims.memberId)
      }
    }
    return yield* auth.authenticateApiKey(token)
  })

/**
 * The security middleware of every /v2 group: authenticates the bearer token, then takes a token
 * from the caller's organization's rate-limit bucket (limits are per organization, so they can only
 * apply once the organization is known).
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@sightline/http/Authentication", {
  failure: Schema.Union(HttpErrors.Unauthenticated, HttpErrors.RateLimitExceeded),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * Failed authentications allowed per client address: a burst of 30, then 10 a minute. Past that,
 * every request from the address is refused with 429 before its credential is even checked, so a
 * key or token cannot be guessed at line rate. Counted in this process's memory: cheap on the hot
 * path, and each process of a deployment limits on its own.
 */
export const failedAuthBucket: RateLimiter.BucketConfig = { capacity: 30, refillPerMinute: 10 }

const addressOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "unknown")

/** Refuses a request with 429, `Retry-After` and `message` (too many failed credentials). */
export const tooManyFailures = (
  retryAfterSeconds: number,
  message = "Too many failed authentications from this address: retry later"
) =>
  Effect.zipRight(
    HttpApp.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfterSeconds)))
    ),
    Effect.fail(new HttpErrors.RateLimitExceeded({ error: { code: "rate_limit_exceeded", message } }))
  )

/** The middleware over `Auth`, the rate limiter and its configuration (and a `JwtVerifier` if any). */
export const layer: Layer.Layer<
  Authentication,
  never,
  Auth.Auth | RateLimiter.RateLimiter | RateLimit.RateLimitConfig
> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    // Only what `authenticate` and the limit read, the optional verifiers where present: the context
    // is merged into every request's (see `internal/only.ts`).
    const context = Context.pick(
      Auth.Auth,
      RateLimiter.RateLimiter,
      RateLimit.RateLimitConfig,
      SessionTokens.SessionTokens,
      Jwt.JwtVerifier
    )(yield* Effect.context<Auth.Auth | RateLimiter.RateLimiter | RateLimit.RateLimitConfig>())
    const failures = yield* Effect.provide(RateLimiter.RateLimiter, RateLimiter.layerMemory)
    const retryAfter = Math.ceil(60 / failedAuthBucket.refillPerMinute)
    return Authentication.of({
      bearer: (token) =>
        Effect.gen(function*() {
          const key = `auth-failures:${addressOf(yield* HttpServerRequest.HttpServerRequest)}`
          // Cost 0 only reads the bucket: an address out of tokens is refused before any check.
          const left = yield* failures.consume(key, failedAuthBucket, 0)
          if (left.remaining < 1) return yield* tooManyFailures(retryAfter)
          return yield* authenticate(Redacted.value(token)).pipe(
            Effect.tapError(() => failures.consume(key, failedAuthBucket, 1)),
            Effect.mapError((error) => HttpErrors.fromApiError(error) as HttpErrors.Unauthenticated),
            Effect.tap((principal) => RateLimit.enforce(principal.organizationId)),
            Effect.provide(context)
          )
        })
    })
  })
)
