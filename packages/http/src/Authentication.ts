/**
 * Authentication of /v2 and the v1 webhook: `Authorization: Bearer` with an API key, a session's
 * access token (when `SessionTokens` is provided), an end user's session on the routes it may use
 * (when `EmbedTokens` is provided) or, when a `JwtVerifier` is configured, a JWT. The principal is
 * what every use case takes first.
 *
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Auth from "@sightline/core/Auth"
import * as EmbedSessions from "@sightline/core/EmbedSessions"
import { type PermissionDenied, Unauthenticated } from "@sightline/core/Errors"
import type * as Policy from "@sightline/core/Policy"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as ClientAddress from "./ClientAddress.js"
import * as EmbedTokens from "./EmbedTokens.js"
import * as FailedAuthentications from "./FailedAuthentications.js"
import * as HttpErrors from "./HttpErrors.js"
import * as EndUserRoutes from "./internal/endUserRoutes.js"
import { requestOf } from "./internal/fiberRequest.js"
import * as Jwt from "./Jwt.js"
import * as RateLimit from "./RateLimit.js"
import * as SessionTokens from "./SessionTokens.js"

/**
 * The authenticated caller of the current request.
 *
 * @since 0.1.0
 * @category services
 */
export class CurrentPrincipal extends Context.Tag("@sightline/http/Authentication/CurrentPrincipal")<
  CurrentPrincipal,
  Policy.Principal
>() {}

/**
 * What resolving a bearer token reads: `Auth`, and the session and JWT verifiers and the end users'
 * sessions where present.
 */
interface Verifiers {
  readonly auth: Auth.Auth["Type"]
  readonly sessions: Option.Option<SessionTokens.SessionTokens["Type"]>
  readonly jwt: Option.Option<Jwt.JwtVerifier["Type"]>
  readonly embedTokens: Option.Option<EmbedTokens.EmbedTokens["Type"]>
  readonly embedSessions: Option.Option<EmbedSessions.EmbedSessions["Type"]>
}

const verifiers: Effect.Effect<Verifiers, never, Auth.Auth> = Effect.all({
  auth: Auth.Auth,
  sessions: Effect.serviceOption(SessionTokens.SessionTokens),
  jwt: Effect.serviceOption(Jwt.JwtVerifier),
  embedTokens: Effect.serviceOption(EmbedTokens.EmbedTokens),
  embedSessions: Effect.serviceOption(EmbedSessions.EmbedSessions)
})

const authenticateWith = ({ auth, jwt, sessions }: Verifiers) =>
(
  token: string
): Effect.Effect<Policy.Principal, Unauthenticated> => {
  if (token.length === 0) return Effect.fail(new Unauthenticated({ message: "Authentication required" }))
  // Only /v2's middleware takes an end user's session (`endUserWith`), on the routes it may use.
  if (EmbedTokens.isEmbedToken(token)) {
    return Effect.fail(
      new Unauthenticated({ message: "invalid token: an end user's session is used only on /v2's chat routes" })
    )
  }
  if (Jwt.looksLikeJwt(token)) {
    if (Option.isSome(sessions) && SessionTokens.isSessionToken(token)) {
      return Effect.flatMap(
        sessions.value.verify(token),
        (claims) => auth.sessionPrincipal(claims.organizationId, claims.memberId, claims.sessionId)
      )
    }
    if (Option.isSome(jwt)) {
      return Effect.flatMap(
        jwt.value.verify(token),
        (claims) => auth.sessionPrincipal(claims.organizationId, claims.memberId)
      )
    }
  }
  return auth.authenticateApiKey(token)
}

/**
 * The principal of an end user's session presented from `origin`, where the deployment takes them;
 * the caller checks first that the route is one an end user may use (`EndUserRoutes`).
 */
const endUserWith = ({ embedSessions, embedTokens }: Verifiers) =>
(
  token: string,
  origin: string | undefined
): Effect.Effect<Policy.Principal, Unauthenticated | PermissionDenied> =>
  Option.isNone(embedTokens) || Option.isNone(embedSessions)
    ? Effect.fail(new Unauthenticated({ message: "invalid token: this deployment takes no end users' sessions" }))
    : Effect.flatMap(embedTokens.value.open(token), (claims) => embedSessions.value.principalOf(claims, origin))

/**
 * Resolves a bearer token to a principal: a JWT when it looks like one and JWTs are enabled, else an
 * API key. The failure carries the seed's troubleshooting texts (`invalid API key format`, ...).
 *
 * @since 0.1.0
 * @category utils
 */
export const authenticate = (
  token: string
): Effect.Effect<Policy.Principal, Unauthenticated, Auth.Auth> =>
  Effect.flatMap(verifiers, (held) => authenticateWith(held)(token))

/**
 * How a route outside the /v2 groups (the Connect surfaces, MCP) authenticates a bearer token, as
 * the /v2 middleware does: failed tokens count toward the client address's limit, and a caller
 * takes a token of its organization's rate limit. Built once, over the services it reads; each
 * route turns the failures into its own protocol's errors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeGuarded = Effect.gen(function*() {
  // Only what `authenticate` and the limit read: a console session's and a JWT's verifiers where
  // present, so these routes take every credential /v2 takes.
  const context = Context.pick(
    Auth.Auth,
    RateLimiter.RateLimiter,
    RateLimit.RateLimitConfig,
    Jwt.JwtVerifier,
    SessionTokens.SessionTokens
  )(
    yield* Effect.context<Auth.Auth | RateLimiter.RateLimiter | RateLimit.RateLimitConfig>()
  )
  const failures = yield* FailedAuthentications.FailedAuthentications
  const addressOf = yield* ClientAddress.resolver
  return (
    request: HttpServerRequest.HttpServerRequest,
    token: string,
    // A route's own credential (MCP's OAuth grants), resolved under the same guard and limit.
    resolve: Effect.Effect<Policy.Principal, Unauthenticated, Auth.Auth> = authenticate(token)
  ): Effect.Effect<
    Policy.Principal,
    Unauthenticated | FailedAuthentications.Exhausted | HttpErrors.RateLimitExceeded
  > =>
    failures.guard(addressOf(request), resolve).pipe(
      Effect.tap((principal) => RateLimit.enforce(principal.organizationId)),
      Effect.provide(context)
    )
})

/**
 * The security middleware of every /v2 group: authenticates the bearer token, then takes a token
 * from the caller's organization's rate-limit bucket (limits are per organization, so they can only
 * apply once the organization is known).
 *
 * @since 0.1.0
 * @category models
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@sightline/http/Authentication", {
  failure: Schema.Union(HttpErrors.Unauthenticated, HttpErrors.PermissionDenied, HttpErrors.RateLimitExceeded),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/**
 * Refuses a request with 429, `Retry-After` and `message` (too many failed credentials).
 *
 * @since 0.1.0
 * @category utils
 */
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

/**
 * The middleware over `Auth`, the rate limiter and its configuration, the failed-authentication
 * counter (and a `JwtVerifier` and `TrustedProxies` if any).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  Authentication,
  never,
  Auth.Auth | RateLimiter.RateLimiter | RateLimit.RateLimitConfig | FailedAuthentications.FailedAuthentications
> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    // The services are held here rather than provided to each request: providing a context costs
    // a merge and two changes of the fiber's locals on every request.
    const held = yield* verifiers
    const authenticateToken = authenticateWith(held)
    const enforce = RateLimit.enforceWith(yield* RateLimiter.RateLimiter, yield* RateLimit.RateLimitConfig)
    const failures = yield* FailedAuthentications.FailedAuthentications
    const addressOf = yield* ClientAddress.resolver
    const endUserToken = endUserWith(held)
    return Authentication.of({
      bearer: (token) =>
        Effect.withFiberRuntime((fiber) => {
          const request = requestOf(fiber)
          const value = Redacted.value(token)
          const endUser = EmbedTokens.isEmbedToken(value)
          if (endUser && !EndUserRoutes.allows(request.method, request.url)) {
            return Effect.fail(
              new HttpErrors.PermissionDenied({ error: { code: "permission_denied", message: EndUserRoutes.refusal } })
            )
          }
          const attempt = endUser ? endUserToken(value, request.headers["origin"]) : authenticateToken(value)
          return failures.guard(addressOf(request), attempt).pipe(
            Effect.catchAll((error): Effect.Effect<
              never,
              HttpErrors.Unauthenticated | HttpErrors.PermissionDenied | HttpErrors.RateLimitExceeded
            > =>
              error._tag === "Exhausted"
                ? tooManyFailures(error.retryAfterSeconds)
                : Effect.fail(
                  HttpErrors.fromApiError(error) as HttpErrors.Unauthenticated | HttpErrors.PermissionDenied
                )
            ),
            Effect.tap((principal) => enforce(principal.organizationId))
          )
        })
    })
  })
)
