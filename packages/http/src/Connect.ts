/**
 * The Connect-protocol surfaces: `POST /v1/agents/webhook/trigger` (Bearer) and the public RPC
 * operations under `/rpc/public/…` and without the prefix (`svc_api_key` header).
 *
 * Every answer is Connect's: a JSON message, or `{code, message, details}` with the status of
 * Connect's table. The routes catch every failure themselves, so the /v2 envelope never applies.
 *
 * @since 0.1.0
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Agents from "@sightline/core/Agents"
import * as AgentTrigger from "@sightline/core/AgentTrigger"
import * as App from "@sightline/core/App"
import * as Apps from "@sightline/core/Apps"
import * as Auth from "@sightline/core/Auth"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as ScimGroupMapping from "@sightline/core/ScimGroupMapping"
import * as ScimMappings from "@sightline/core/ScimMappings"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { makeGuarded } from "./Authentication.js"
import * as FailedAuthentications from "./FailedAuthentications.js"
import * as HttpErrors from "./HttpErrors.js"
import * as Connect from "./internal/connect.js"
import * as RateLimit from "./RateLimit.js"
import { Surfaces } from "./Surfaces.js"

/**
 * A Connect error code.
 *
 * @since 0.1.0
 * @category models
 */
export type Code = Connect.Code

/**
 * The HTTP status of each Connect error code.
 *
 * @since 0.1.0
 * @category constants
 */
export const httpStatus = Connect.httpStatus

/**
 * The path of the agent webhook trigger.
 *
 * @since 0.1.0
 * @category constants
 */
export const webhookPath = "/v1/agents/webhook/trigger"

/**
 * The prefix under which the public RPC surface is served (it is also served without it).
 *
 * @since 0.1.0
 * @category constants
 */
export const rpcPrefix = "/rpc/public"

const bearer = (headers: Readonly<Record<string, string | undefined>>): Option.Option<string> => {
  // Everything after the scheme is the token, as for /v2, so a malformed one gets the same answer.
  const match = /^Bearer[ \t]+(.*)$/i.exec(headers["authorization"] ?? "")
  return match === null ? Option.none() : Option.some(match[1]!.trim())
}

const svcApiKey = (headers: Readonly<Record<string, string | undefined>>): Option.Option<string> =>
  Option.filter(Option.fromNullable(headers["svc_api_key"]?.trim()), (key) => key.length > 0)

const Empty = Schema.Struct({})

/** The route handlers, built over the services they need (captured when the layer is built). */
const make = Effect.gen(function*() {
  const agents = yield* Agents.Agents
  const apps = yield* Apps.Apps
  const scim = yield* ScimMappings.ScimMappings
  // Failed credentials count as on /v2 (one count per client address); the operations spend the
  // organization's /v2 rate-limit tokens too: one bucket per org.
  const guarded = yield* makeGuarded
  const identify: Connect.Authenticate<HttpServerRequest.HttpServerRequest> = (token) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => guarded(request, token)).pipe(
      Effect.mapError((error) =>
        error instanceof HttpErrors.RateLimitExceeded
          ? new Connect.ConnectError({ code: "resource_exhausted", message: error.error.message })
          : error._tag === "Exhausted"
          ? new Connect.ConnectError({
            code: "resource_exhausted",
            message: "Too many failed authentications from this address: retry later",
            headers: { "retry-after": String(error.retryAfterSeconds) }
          })
          : Connect.fromApiError(error)
      )
    )

  const rpc = <I, IE, O, OE>(
    name: string,
    request: Schema.Schema<I, IE>,
    response: Schema.Schema<O, OE>,
    handle: Connect.Procedure<I, IE, O, OE, never>["handle"]
  ) =>
    [
      name,
      Connect.unary({
        name,
        credential: svcApiKey,
        missingCredential: "Authentication required: send the API key in the svc_api_key header",
        request,
        response,
        handle
      }, identify)
    ] as const

  const procedures = new Map([
    rpc("svc.rpc.public.app.AppService/GetApp", App.GetAppRequest, App.GetAppResponse, apps.get),
    rpc(
      "svc.rpc.public.rbac.RBACService/MigrateAllScimGroupMappings",
      ScimGroupMapping.MigrateAllScimGroupMappingsRequest,
      ScimGroupMapping.MigrateAllScimGroupMappingsResponse,
      (principal) => scim.migrateAll(principal)
    ),
    rpc(
      "svc.rpc.public.rbac.RBACService/ListScimGroupMappings",
      Empty,
      ScimGroupMapping.ListScimGroupMappingsResponse,
      (principal) => scim.list(principal)
    ),
    rpc(
      "svc.rpc.public.rbac.RBACService/WhoAmI",
      Empty,
      ScimMappings.WhoAmIResponse,
      (principal) => scim.whoAmI(principal)
    )
  ])

  const webhook = Connect.unary({
    name: webhookPath,
    credential: bearer,
    missingCredential: "Authentication required: send Authorization: Bearer <API key or JWT>",
    request: AgentTrigger.TriggerRequest,
    response: AgentTrigger.TriggerResponse,
    // The schema refuses a payload over 16 KB, so an oversized one never reaches the queue.
    handle: agents.trigger
  }, identify)

  // `/rpc/public/<procedure>` and `/<procedure>` reach the same handler.
  const dispatch = (prefix: string) =>
    Effect.flatMap(Connect.currentPath, (path) => procedures.get(path.slice(prefix.length)) ?? Connect.unknownProcedure)

  return { webhook, dispatch }
})

/**
 * The Connect routes, registered on the `Surfaces` router.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  never,
  never,
  | Agents.Agents
  | Apps.Apps
  | ScimMappings.ScimMappings
  | Auth.Auth
  | RateLimiter.RateLimiter
  | RateLimit.RateLimitConfig
  | FailedAuthentications.FailedAuthentications
> = Surfaces.use((router) =>
  Effect.gen(function*() {
    const { dispatch, webhook } = yield* make
    // Every method reaches the handlers, which answer anything but POST with a Connect error.
    yield* router.all(webhookPath, webhook)
    yield* router.all(`${rpcPrefix}/*`, dispatch(`${rpcPrefix}/`))
    // The prefix alone (with or without its slash: the router treats them alike) names no
    // procedure: a Connect error, not the router's empty 404.
    yield* router.all(rpcPrefix, Connect.unknownProcedure)
    yield* router.all("/svc.rpc.public.*", dispatch("/"))
  })
)
