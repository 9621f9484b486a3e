/**
 * Sightline's HTTP application as layers: the /v2 API with its handlers and middleware, and the
 * service endpoints (`/healthz`, `/readyz`, `/v2/openapi.json`, `/docs`) in the error envelope; the
 * surfaces that speak their own protocol (Connect, MCP, the sandbox channel) on a router of their
 * own beside it (`Surfaces`). A host serves `layer` with any `HttpServer` (Node, Bun, ...) or mounts
 * `toWebHandler` in its own server.
 *
 * @since 0.1.0
 */
import * as Etag from "@effect/platform/Etag"
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpPlatform from "@effect/platform/HttpPlatform"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Path from "@effect/platform/Path"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import { SightlineApi } from "./Api.js"
import * as Authentication from "./Authentication.js"
import * as Connect from "./Connect.js"
import * as EmbedTokens from "./EmbedTokens.js"
import * as FailedAuthentications from "./FailedAuthentications.js"
import * as HttpErrors from "./HttpErrors.js"
import * as HttpMetrics from "./HttpMetrics.js"
import * as BodyLimit from "./internal/bodyLimit.js"
import * as EndUserRoutes from "./internal/endUserRoutes.js"
import { requestOf } from "./internal/fiberRequest.js"
import * as AgentsHandlers from "./internal/handlers/agents.js"
import * as ApiKeysHandlers from "./internal/handlers/apiKeys.js"
import * as AssetsHandlers from "./internal/handlers/assets.js"
import * as AuditLogsHandlers from "./internal/handlers/auditLogs.js"
import * as AuthHandlers from "./internal/handlers/auth.js"
import * as ChangesHandlers from "./internal/handlers/changes.js"
import * as ChatChannelsHandlers from "./internal/handlers/chatChannels.js"
import * as ChatsHandlers from "./internal/handlers/chats.js"
import * as ConnectorsHandlers from "./internal/handlers/connectors.js"
import * as DashboardsHandlers from "./internal/handlers/dashboards.js"
import * as EmbedHandlers from "./internal/handlers/embed.js"
import * as EvalsHandlers from "./internal/handlers/evals.js"
import * as FeedbackHandlers from "./internal/handlers/feedback.js"
import * as MembersHandlers from "./internal/handlers/members.js"
import * as OAuthHandlers from "./internal/handlers/oauth.js"
import * as PlaybooksHandlers from "./internal/handlers/playbooks.js"
import * as RolesHandlers from "./internal/handlers/roles.js"
import * as SandcastlesHandlers from "./internal/handlers/sandcastles.js"
import * as SemanticHandlers from "./internal/handlers/semantic.js"
import * as ServiceAccountsHandlers from "./internal/handlers/serviceAccounts.js"
import * as SettingsHandlers from "./internal/handlers/settings.js"
import * as WebhookEndpointsHandlers from "./internal/handlers/webhookEndpoints.js"
import * as InputGuard from "./internal/inputGuard.js"
import * as Issues from "./internal/issues.js"
import { only } from "./internal/only.js"
import * as Routes from "./internal/routes.js"
import * as Mcp from "./Mcp.js"
import * as McpOAuth from "./McpOAuth.js"
import * as OAuthTokens from "./OAuthTokens.js"
import * as Oidc from "./Oidc.js"
import * as PublicUrl from "./PublicUrl.js"
import * as SessionTokens from "./SessionTokens.js"
import { Surfaces } from "./Surfaces.js"

/**
 * Whether the process can serve: `GET /readyz` answers 503 until `check` succeeds.
 *
 * @since 0.1.0
 * @category services
 */
export class Readiness extends Context.Tag("@sightline/http/Server/Readiness")<
  Readiness,
  { readonly check: Effect.Effect<void, unknown> }
>() {}

/**
 * Readiness that is always ready (for hosts without a store check).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReadinessAlways: Layer.Layer<Readiness> = Layer.succeed(Readiness, { check: Effect.void })

/**
 * The largest request body accepted (1 MiB); larger bodies get 413.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBodyBytes = BodyLimit.maxBodyBytes

// Answered as a response rather than failed as an error: 413 shares its envelope (code
// `invalid_request`) with 400, and the API's error encoder picks the status by shape.
const tooLarge = (limit: number = maxBodyBytes) =>
  HttpServerResponse.unsafeJson(
    { error: { code: "invalid_request", message: `Request body too large: at most ${limit} bytes` } },
    { status: 413 }
  )

// Short and human, whatever the input: an issue never echoes a large value or a schema rendering.
const decodeMessage = (error: HttpApiDecodeError): string =>
  Issues.describe("Invalid request", error.issues, error.message)

const envelopeResponse = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ error: { code: "invalid_request", message } }, { status, headers })

const bodyMethods = new Set(["POST", "PUT", "PATCH"])

// Whatever the method: a request that sends no body has none to read, check or limit.
const carriesBody = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? "0") > 0

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean =>
  bodyMethods.has(request.method) && carriesBody(request)

/**
 * What a /v2 request with a body must pass before an operation decodes it: a content type the
 * operation declares (415 otherwise), and a JSON body that is neither too deep nor carrying text the
 * database cannot store. A response when it does not pass.
 */
const bodyGuard = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    if (!hasBody(request)) return Option.none()
    const accepted = Routes.contentTypesOf(request.method, request.url)
    if (accepted === undefined) return Option.none()
    const mediaType = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
    if (accepted.size === 0) {
      // An operation that takes no body: clients commonly send `{}` (or nothing) with a POST anyway.
      const text = (yield* request.text).trim()
      const json = mediaType === "" || mediaType === "application/json"
      if (text === "" || (json && isEmptyObject(text))) return Option.none()
      return Option.some(envelopeResponse(400, "Invalid request: this operation takes no body (send none, or {})"))
    }
    if (!accepted.has(mediaType)) {
      const expected = [...accepted].join(" or ")
      return Option.some(envelopeResponse(
        415,
        InputGuard.shorten(`Unsupported content type ${JSON.stringify(mediaType || "(none)")}: send ${expected}`)
      ))
    }
    if (mediaType !== "application/json") return Option.none()
    // The text is cached on the request: the operation's decoder reads the same text again.
    const text = yield* request.text
    const inBody = InputGuard.jsonProblem(text)
    return inBody === undefined ? Option.none() : Option.some(envelopeResponse(400, `Invalid request: ${inBody}`))
  })

const isEmptyObject = (text: string): boolean => {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0
  } catch {
    return false
  }
}

/**
 * Turns every failure into the envelope: decode errors and malformed bodies are 400, unknown routes
 * 404, oversized bodies 413, anything unexpected 500 with nothing internal shown (logged instead,
 * with the request id).
 */
const toEnvelope = (
  cause: Cause.Cause<unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse, HttpErrors.HttpError> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
  const failure = Cause.squash(cause)
  if (failure instanceof HttpApiDecodeError) {
    return Effect.fail(
      new HttpErrors.InvalidRequest({ error: { code: "invalid_request", message: decodeMessage(failure) } })
    )
  }
  for (const known of HttpErrors.all) {
    if (failure instanceof known) return Effect.fail(failure as HttpErrors.HttpError)
  }
  if (HttpServerError.isServerError(failure)) {
    switch (failure._tag) {
      case "RouteNotFound": {
        const allowed = Routes.methodsOf(failure.request.url)
        // The method is served on a path of this shape: the router refused the path itself (a
        // segment it cannot take, such as `..;` or an over-long id), which is no method problem.
        if (allowed.length > 0 && !allowed.includes(failure.request.method)) {
          return Effect.succeed(envelopeResponse(
            405,
            `Method ${failure.request.method} is not allowed here: use ${allowed.join(", ")}`,
            { allow: allowed.join(", ") }
          ))
        }
        // The path only: a query string may carry anything, and a 404 never echoes it.
        const path = InputGuard.shorten(failure.request.url.split("?")[0]!, 200)
        return Effect.fail(
          new HttpErrors.NotFound({
            error: { code: "not_found", message: `No route for ${failure.request.method} ${path}` }
          })
        )
      }
      case "RequestError":
        if (BodyLimit.isBodyTooLarge(failure)) {
          const { headers, method, url } = failure.request
          return Effect.succeed(
            tooLarge(BodyLimit.isUpload(method, url, headers["content-type"]) ? BodyLimit.maxUploadBytes : maxBodyBytes)
          )
        }
        return Effect.fail(
          new HttpErrors.InvalidRequest({
            error: { code: "invalid_request", message: "Invalid request body: malformed JSON or unreadable body" }
          })
        )
    }
  }
  return Effect.logError("unexpected failure", cause).pipe(
    Effect.zipRight(
      Effect.fail(new HttpErrors.Internal({ error: { code: "internal", message: "Internal server error" } }))
    )
  )
}

const requestIdPattern = /^[\w.:-]{1,128}$/

// Every log line of a request carries its id under this annotation; the annotation is also where
// the envelope middleware finds the id that `accessLog` chose.
const requestIdAnnotation = "requestId"

/** The id that `accessLog` (or the envelope middleware) chose for the current request, if any. */
const requestIdIn = (fiber: Fiber.RuntimeFiber<unknown, unknown>): string | undefined => {
  const chosen = HashMap.get(fiber.getFiberRef(FiberRef.currentLogAnnotations), requestIdAnnotation)
  return Option.isSome(chosen) && typeof chosen.value === "string" ? chosen.value : undefined
}

/**
 * The request id of the current request, once `accessLog` (or the envelope middleware) chose it.
 *
 * @since 0.1.0
 * @category utils
 */
export const currentRequestId: Effect.Effect<string | undefined> = Effect.withFiberRuntime((fiber) =>
  Effect.succeed(requestIdIn(fiber))
)

/** The caller's `x-request-id` when it is sane, else a new UUID. */
const requestIdOf = (request: HttpServerRequest.HttpServerRequest): string => {
  const sent = request.headers["x-request-id"]
  return sent !== undefined && requestIdPattern.test(sent) ? sent : crypto.randomUUID()
}

// The two middlewares below run on every request, so they are written as few effects as they can be:
// each step of the runtime, and above all each change of a fiber's locals (an annotation, a limit),
// costs CPU on every request (`bench:http`: the two took 0.095 ms of a `/healthz` request's 0.173).

/**
 * `app` with every log line annotated with the request id. The platform runs each request in a
 * fiber of its own, so the annotation is set on that fiber for the rest of its life rather than
 * scoped with `Effect.annotateLogs`, whose save and restore of the fiber's locals (an
 * uninterruptible region, two copies of the locals) cost 5–7% of the server's CPU per
 * `GET /v2/playbooks/{id}` (`pnpm bench:http`). Nothing else runs in the fiber afterwards but the
 * platform writing the response, whose log lines are the request's too.
 */
const withRequestId = <A, E, R>(app: Effect.Effect<A, E, R>, requestId: string): Effect.Effect<A, E, R> =>
  Effect.zipRight(
    FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>(requestIdAnnotation, requestId)),
    app
  )

/**
 * Server middleware: picks the request id, annotates every log line of the request with it, and
 * writes one structured access log line per request (method, path, status, duration, request id),
 * and records it in the request metrics where they are on (`HttpMetrics`). When the minimum log
 * level drops `Info` and metrics are off, nothing waits for the request's end.
 *
 * @since 0.1.0
 * @category constants
 */
export const accessLog = HttpMiddleware.make((app) =>
  Effect.withFiberRuntime<
    HttpServerResponse.HttpServerResponse,
    Effect.Effect.Error<typeof app>,
    Effect.Effect.Context<typeof app>
  >((fiber) => {
    const request = requestOf(fiber)
    const requestId = requestIdOf(request)
    const logged = !LogLevel.greaterThan(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), LogLevel.Info)
    const measured = fiber.getFiberRef(HttpMetrics.currentEnabled)
    if (!logged && !measured) return withRequestId(app, requestId)
    const started = Date.now()
    return app.pipe(
      Effect.onExit((exit) => {
        const status = Exit.isSuccess(exit) ? exit.value.status : Exit.isInterrupted(exit) ? 499 : 500
        const durationMs = Date.now() - started
        return Effect.zipRight(
          logged
            ? Effect.logInfo("request").pipe(
              Effect.annotateLogs({ method: request.method, path: request.url.split("?")[0], status, durationMs })
            )
            : Effect.void,
          measured ? HttpMetrics.record(request.url, status, durationMs / 1000) : Effect.void
        )
      }),
      (effect) => withRequestId(effect, requestId)
    )
  })
)

/**
 * Gives every response its request id, the surfaces' as well as the /v2 application's.
 */
const requestIdHeader = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const chosen = requestIdIn(fiber)
    const requestId = chosen ?? requestIdOf(requestOf(fiber))
    const withId = (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.setHeader(response, "x-request-id", requestId)
    // A response is given its id here. A failure the application did not make a response of gets
    // it from a pre-response handler. Only failures take one: adding a handler changes the fiber's
    // locals, a change that compares the old and new handlers by hash and so registers each new
    // function in a WeakMap (2–3% of the server's CPU per request).
    const answered = app.pipe(
      Effect.map(withId),
      Effect.tapErrorCause(() =>
        HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withId(response)))
      )
    )
    // Without `accessLog`, this request's log lines get the id here.
    return chosen === undefined ? withRequestId(answered, requestId) : answered
  })

/**
 * The /v2 application's own middleware: its checks and error envelope, inside the API's error
 * schemas (which make a response of a failure after it), and around nothing else.
 */
const envelopeOnly = HttpApiBuilder.Middleware.of({
  add: () => Effect.void,
  retrieve: Effect.succeed((app) => Effect.withFiberRuntime((fiber) => enveloped(app, requestOf(fiber))))
})

/**
 * Everything served, as one application: the routes of `Surfaces` (Connect, MCP, the sandbox
 * channel) as they are, every other request to the `HttpApiBuilder` router's application in its
 * envelope, and around both the request id and the host's middleware (`HttpApiBuilder.middleware`
 * and `middlewareCors` register it: CORS, a role gate).
 *
 * @since 0.1.0
 * @category constructors
 */
export const httpApp: Effect.Effect<
  HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>,
  never,
  HttpApiBuilder.Router | HttpApi.Api | HttpApiBuilder.Middleware | Surfaces
> = Effect.gen(function*() {
  const host = yield* (yield* HttpApiBuilder.Middleware).retrieve
  const api = yield* Effect.provideService(HttpApiBuilder.httpApp, HttpApiBuilder.Middleware, envelopeOnly)
  // A path no surface serves is the application's, which answers it in the envelope: routed there
  // (a failure would cost an error's stack on every request), or, for a path the router cannot
  // read (a broken percent-encoding), handed over.
  const surfaces = yield* HttpRouter.toHttpApp(HttpRouter.all(yield* Surfaces.router, "*", api))
  const app = Effect.catchIf(surfaces, (error) => error instanceof HttpServerError.RouteNotFound, () => api)
  return host(requestIdHeader(app)) as HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>
})

/** The routers `httpApp` reads, each shared by every layer that adds routes to it. */
const routers = Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer, Surfaces.Live)

/** `app` behind the checks and the error envelope of every /v2 request. */
const enveloped = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | HttpErrors.HttpError, R> => {
  const length = Number(request.headers["content-length"] ?? "0")
  const limit = BodyLimit.isUpload(request.method, request.url, request.headers["content-type"])
    ? BodyLimit.maxUploadBytes
    : maxBodyBytes
  if (Number.isFinite(length) && length > limit) return Effect.succeed(tooLarge(limit))
  // A path and query the database can store.
  const inUrl = InputGuard.urlProblem(request.url)
  if (inUrl !== undefined) return Effect.succeed(envelopeResponse(400, `Invalid request: ${inUrl}`))
  // Most requests send no body: nothing more to check, and no body limit to set.
  if (!carriesBody(request)) return Effect.catchAllCause(app, toEnvelope)
  return bodyGuard(request).pipe(
    Effect.flatMap(Option.match({ onNone: () => app, onSome: Effect.succeed })),
    HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
    Effect.catchAllCause(toEnvelope)
  )
}

/**
 * `GET /healthz` (the process is up) and `GET /readyz` (the store answers).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHealth: Layer.Layer<never, never, Readiness> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    yield* router.get("/healthz", HttpServerResponse.json({ status: "ok" }))
    yield* router.get(
      "/readyz",
      readiness.check.pipe(
        Effect.timeout("2 seconds"),
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.logWarning("not ready", error).pipe(
              Effect.zipRight(HttpServerResponse.json({ status: "unavailable" }, { status: 503 }))
            ),
          onSuccess: () => HttpServerResponse.json({ status: "ready" })
        })
      )
    )
  })
)

/**
 * `/v2/openapi.json` and `/docs`, each made on its first request: the document takes tens of
 * milliseconds to build, and the reference page inlines Scalar's 6.5 MB script, which is not even
 * loaded until then (an idle server holds about 12 MB less, measured on PostgreSQL).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerReference: Layer.Layer<never, never, HttpApi.Api> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const api = yield* HttpApi.Api
    const document = yield* Effect.cached(HttpServerResponse.json(OpenApi.fromApi(api.api)).pipe(Effect.orDie))
    yield* router.get("/v2/openapi.json", document)
    // Scalar's layer adds its page to a router: here to one of its own, run for `/docs` requests.
    const page = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform/HttpApiScalar")).pipe(
        Effect.flatMap((Scalar) =>
          HttpApiBuilder.Router.router.pipe(
            Effect.provide(
              Scalar.layer({ path: "/docs" }).pipe(
                Layer.provideMerge(HttpApiBuilder.Router.Live),
                Layer.provide(Layer.succeed(HttpApi.Api, api))
              )
            )
          )
        )
      )
    )
    yield* router.get("/docs", Effect.flatten(page))
  })
)

/**
 * The /v2 groups with their handlers (the security middleware is provided to each group).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerGroups = Layer.mergeAll(
  ChatsHandlers.layer,
  ConnectorsHandlers.layer,
  PlaybooksHandlers.layer,
  SandcastlesHandlers.layer,
  ChangesHandlers.layer,
  ApiKeysHandlers.layer,
  MembersHandlers.layer,
  RolesHandlers.layer,
  ServiceAccountsHandlers.layer,
  ChatChannelsHandlers.layer,
  WebhookEndpointsHandlers.layer,
  AgentsHandlers.layer,
  EvalsHandlers.layer,
  FeedbackHandlers.layer,
  AuditLogsHandlers.layer,
  SettingsHandlers.layer,
  EmbedHandlers.layer,
  OAuthHandlers.layer,
  SemanticHandlers.layer,
  DashboardsHandlers.layer
).pipe(
  Layer.provide(Authentication.layer),
  // Signed asset URLs carry their own credential (the signature), and sign-in its password, link
  // or refresh cookie, not a bearer token.
  Layer.merge(Layer.merge(AssetsHandlers.layer, AuthHandlers.layer)),
  Layer.provide(Layer.merge(SessionTokens.layer, EmbedTokens.layer))
)

/**
 * Everything Sightline serves, as routes of the `HttpApiBuilder` router: needs the use cases, `Auth`,
 * the rate limiter with its config, and `Readiness`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.mergeAll(
  layerReference,
  layerHealth,
  Oidc.routes,
  Connect.layer,
  Mcp.layer,
  McpOAuth.routes,
  HttpMetrics.route
).pipe(
  Layer.provideMerge(HttpApiBuilder.api(SightlineApi).pipe(Layer.provide(layerGroups))),
  // One count of failed authentications for /v2 and the Connect surfaces alike.
  Layer.provide(FailedAuthentications.layer),
  // Console sessions' tokens open MCP and the Connect surfaces too, as they do /v2.
  Layer.provide(SessionTokens.layer),
  // The MCP endpoint's grant tokens are bound to its URL.
  Layer.provide(
    Layer.unwrapEffect(Effect.map(PublicUrl.base, (base) => OAuthTokens.layer(McpOAuth.urls(base).resource)))
  )
)

/**
 * The request headers a trace may record as they are (`http.request.header.*`): everything else, a
 * credential header under any name (`authorization`, `svc_api_key`, a host's own), is recorded
 * redacted. An allow-list, so a credential header nobody thought of stays out of the collector.
 *
 * @since 0.1.0
 * @category constants
 */
export const recordedHeaders: ReadonlyArray<string> = [
  "accept",
  "accept-encoding",
  "accept-language",
  "cache-control",
  "connect-protocol-version",
  "content-length",
  "content-type",
  "host",
  "last-event-id",
  "mcp-protocol-version",
  "origin",
  "traceparent",
  "tracestate",
  "user-agent",
  "x-request-id"
]

/**
 * Every header name but `recordedHeaders`, for the platform's `Headers.currentRedactedNames`.
 *
 * @since 0.1.0
 * @category constants
 */
export const unrecordedHeaders = new RegExp(
  // The names are plain tokens (letters, digits and `-`): nothing in them needs escaping.
  `^(?!(?:${recordedHeaders.join("|")})$)`,
  "i"
)

/**
 * Whether a request's URL carries a credential (a signed asset URL's signature, an identity
 * provider's authorization code): a tracer records the URL, so such requests get no span.
 *
 * @since 0.1.0
 * @category guards
 */
export const credentialInUrl = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.url.startsWith("/v2/assets/") || request.url.startsWith(Oidc.callbackPath)

/**
 * The headers a browser may read from a cross-origin response.
 *
 * @since 0.1.0
 * @category constants
 */
export const corsExposedHeaders = [
  "RateLimit-Limit",
  "RateLimit-Remaining",
  "RateLimit-Reset",
  "Retry-After",
  "x-request-id"
] as const

const corsOptions = {
  allowedMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
  allowedHeaders: [
    "authorization",
    "content-type",
    "x-request-id",
    "last-event-id",
    "connect-protocol-version",
    "connect-timeout-ms",
    "svc_api_key"
  ],
  exposedHeaders: [...corsExposedHeaders],
  maxAge: 600
}

/**
 * Cross-origin access for browsers: from the given origins (exact `scheme://host[:port]`) to every
 * route, as short-lived keys used from a browser need, and from any origin to the routes an end
 * user's session may use (`internal/endUserRoutes.ts`), where the embedded widget runs in a host's
 * page. A preflight carries no credential, so it cannot tell the organization whose `embed_origins`
 * decide; the session's own origin check refuses a page it does not name, before anything runs.
 * Preflight is answered, the bearer header allowed, the rate-limit headers and the request id
 * exposed. No cookies are involved, so credentials stay off.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCors = (origins: ReadonlyArray<string>): Layer.Layer<never> => {
  // A predicate, never a list: an empty list would answer `*` to every origin.
  const configured = HttpMiddleware.cors({ ...corsOptions, allowedOrigins: (origin) => origins.includes(origin) })
  const embedded = HttpMiddleware.cors({ ...corsOptions, allowedOrigins: () => true })
  return HttpApiBuilder.middleware((app) => {
    const forConfigured = configured(app)
    const forEmbedded = embedded(app)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const origin = request.headers["origin"]
      if (origin === undefined || origins.includes(origin)) return forConfigured
      // A preflight names the method it asks for; the request itself is its own method.
      const method = request.method === "OPTIONS"
        ? request.headers["access-control-request-method"] ?? ""
        : request.method
      return EndUserRoutes.allows(method, request.url) ? forEmbedded : forConfigured
    })
  })
}

/**
 * Every service `layer` needs from the host.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Layer.Layer.Context<typeof layer>

/**
 * The platform's server for `layer`, with access logs carrying the request id. Every request fiber
 * starts over the platform's services alone (the server, the API, and what file and ETag responses
 * need), not over everything the host provides around it: see `internal/only.ts`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServe: Layer.Layer<
  never,
  never,
  HttpServer.HttpServer | HttpApi.Api | HttpRouter.HttpRouter.DefaultServices
> = Effect.map(httpApp, (app) => HttpServer.serve(app, accessLog)).pipe(
  Layer.unwrapEffect,
  Layer.provide(routers),
  only(HttpServer.HttpServer, HttpApi.Api, HttpPlatform.HttpPlatform, Etag.Generator, FileSystem.FileSystem, Path.Path)
)

/**
 * Serves `layer` (already provided with its requirements) on an `HttpServer` from the host, with
 * access logs carrying the request id.
 *
 * @since 0.1.0
 * @category utils
 */
export const serve = <A, E, R>(app: Layer.Layer<A, E, R>) =>
  layerServe.pipe(
    Layer.provide(app),
    HttpServer.withLogAddress
  )

/**
 * A web-standard handler (`Request` → `Promise<Response>`) for hosts that mount Sightline in their
 * own server; `dispose` releases the layer (closing the store).
 *
 * @since 0.1.0
 * @category utils
 */
export const toWebHandler = <A, E>(app: Layer.Layer<A | HttpApi.Api, E>) =>
  HttpApp.toWebHandlerLayerWith(Layer.mergeAll(app, HttpServer.layerContext, routers), {
    middleware: accessLog,
    toHandler: (context) => Effect.provide(httpApp, context)
  })

export type { HttpRouter }
