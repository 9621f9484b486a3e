/**
 * OAuth 2.1 for the MCP server, so a hosted agent connects with a member's sign-in instead of a
 * pasted key. Off unless the host provides `McpOAuth`: where it is off, no metadata is served, since
 * a client that finds some starts OAuth even when it has a key.
 *
 * When on, this deployment is both the resource server (`/mcp`, RFC 9728 metadata) and its
 * authorization server (RFC 8414 metadata):
 * - clients named by the URL of their metadata document (where the host provides
 *   `OAuthClientDocuments`), or registered dynamically at `POST /oauth/register` (RFC 7591, public
 *   clients, limited per address);
 * - `GET /oauth/authorize`: sends the browser to the console's consent page, which asks the member
 *   (signed in) through `/v2/oauth/consent` and sends the browser back with a code;
 * - `POST /oauth/token`: the code (with its PKCE verifier) or a refresh token, for a 15-minute access
 *   token bound to `/mcp` and a rotating refresh token.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OAuth from "@sightline/core/OAuth"
import { OAuthClientDocuments } from "@sightline/core/OAuthClientDocuments"
import * as OAuthGrants from "@sightline/core/OAuthGrants"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ClientAddress from "./ClientAddress.js"
import * as BodyLimit from "./internal/bodyLimit.js"
import * as OAuthTokens from "./OAuthTokens.js"
import * as PublicUrl from "./PublicUrl.js"

/**
 * Turns OAuth for the MCP server on (its presence is the switch).
 *
 * @since 0.1.0
 * @category services
 */
export class McpOAuth extends Context.Tag("@sightline/http/McpOAuth")<McpOAuth, {}>() {}

/**
 * OAuth for the MCP server, on.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<McpOAuth> = Layer.succeed(McpOAuth, {})

/**
 * The URLs of the deployment whose public base is `base`.
 *
 * @since 0.1.0
 * @category utils
 */
export const urls = (base: string) => ({
  /** The protected resource: the MCP endpoint. */
  resource: `${base}/mcp`,
  /** Its metadata (RFC 9728: the well-known path, then the resource's path). */
  resourceMetadata: `${base}/.well-known/oauth-protected-resource/mcp`,
  issuer: base,
  authorization: `${base}/oauth/authorize`,
  token: `${base}/oauth/token`,
  registration: `${base}/oauth/register`,
  /** The console's consent page, which the authorization endpoint sends the browser to. */
  consent: `${base}/#/oauth/authorize`
})

/**
 * How many clients one address may register: a burst, then a few a minute (registration needs no
 * credentials, so this is what keeps it from filling the store).
 *
 * @since 0.1.0
 * @category constants
 */
export const registrationBucket: RateLimiter.BucketConfig = { capacity: 10, refillPerMinute: 2 }

// RFC 6749 §5.2 and RFC 7591 §3.2.2 errors: a JSON object, never cached.
const oauthError = (status: number, error: string, description: string) =>
  HttpServerResponse.unsafeJson({ error, error_description: description }, {
    status,
    headers: { "cache-control": "no-store" }
  })

const formatted = (error: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => `${issue.path.join(".")}: ${issue.message}`)
    .join("; ")

const ExchangeForm = Schema.Struct({
  grant_type: Schema.Literal("authorization_code"),
  code: Schema.String.pipe(Schema.maxLength(200)),
  code_verifier: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9._~-]{43,128}$/)),
  redirect_uri: Schema.String.pipe(Schema.maxLength(2_000)),
  client_id: Schema.String.pipe(Schema.maxLength(200)),
  resource: Schema.optional(Schema.String)
})
const RefreshForm = Schema.Struct({
  grant_type: Schema.Literal("refresh_token"),
  refresh_token: Schema.String.pipe(Schema.maxLength(200)),
  client_id: Schema.String.pipe(Schema.maxLength(200)),
  // A renewal keeps the grant's scopes, which the answer states.
  scope: Schema.optional(Schema.String),
  resource: Schema.optional(Schema.String)
})
const TokenForm = Schema.Union(ExchangeForm, RefreshForm)

/**
 * The routes (nothing when `McpOAuth` is absent).
 *
 * @since 0.1.0
 * @category layers
 */
export const routes: Layer.Layer<
  never,
  never,
  OAuthGrants.OAuthGrants | OAuthTokens.OAuthTokens | RateLimiter.RateLimiter
> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    if (Option.isNone(yield* Effect.serviceOption(McpOAuth))) return
    const grants = yield* OAuthGrants.OAuthGrants
    const tokens = yield* OAuthTokens.OAuthTokens
    const limiter = yield* RateLimiter.RateLimiter
    const addressOf = yield* ClientAddress.resolver
    const at = urls(yield* PublicUrl.base)
    const scopes = OAuth.scopes
    // Clients named by a metadata document's URL, where the deployment can read one.
    const documents = Option.isSome(yield* Effect.serviceOption(OAuthClientDocuments))

    const resourceMetadata = HttpServerResponse.unsafeJson({
      resource: at.resource,
      authorization_servers: [at.issuer],
      scopes_supported: scopes,
      bearer_methods_supported: ["header"],
      resource_name: "Sightline"
    })
    yield* router.get("/.well-known/oauth-protected-resource", Effect.succeed(resourceMetadata))
    yield* router.get("/.well-known/oauth-protected-resource/mcp", Effect.succeed(resourceMetadata))
    yield* router.get(
      "/.well-known/oauth-authorization-server",
      Effect.succeed(HttpServerResponse.unsafeJson({
        issuer: at.issuer,
        authorization_endpoint: at.authorization,
        token_endpoint: at.token,
        registration_endpoint: at.registration,
        scopes_supported: scopes,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
        client_id_metadata_document_supported: documents
      }))
    )

    yield* router.post(
      "/oauth/register",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const allowed = yield* limiter.consume(`oauth-register:${addressOf(request)}`, registrationBucket)
        if (!allowed.allowed) {
          return HttpServerResponse.setHeader(
            oauthError(429, "too_many_requests", "Too many registrations from this address: retry later"),
            "retry-after",
            String(Math.ceil(allowed.retryAfterMillis / 1000))
          )
        }
        const body = yield* Effect.either(
          HttpIncomingMessage.withMaxBodySize(request.json, Option.some(64 * 1024))
        )
        if (Either.isLeft(body)) return oauthError(400, "invalid_client_metadata", "the body is not JSON")
        const decoded = Schema.decodeUnknownEither(OAuth.RegisterRequest)(body.right)
        if (Either.isLeft(decoded)) {
          const message = formatted(decoded.left)
          return oauthError(
            400,
            message.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata",
            message
          )
        }
        const client = yield* grants.register(decoded.right)
        return HttpServerResponse.unsafeJson({
          client_id: client.client_id,
          client_id_issued_at: Math.floor(client.created_at.epochMillis / 1000),
          client_name: client.client_name,
          redirect_uris: client.redirect_uris,
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"]
        }, { status: 201, headers: { "cache-control": "no-store" } })
      })
    )

    // The console asks the member, who must be signed in there; the request travels in the URL.
    yield* router.get(
      "/oauth/authorize",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : ""
        return HttpServerResponse.empty({ status: 302, headers: { location: `${at.consent}${query}` } })
      })
    )

    yield* router.post(
      "/oauth/token",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const form = yield* Effect.either(
          HttpIncomingMessage.withMaxBodySize(request.urlParamsBody, Option.some(BodyLimit.maxBodyBytes))
        )
        if (Either.isLeft(form)) {
          return oauthError(400, "invalid_request", "send the parameters as application/x-www-form-urlencoded")
        }
        const decoded = Schema.decodeUnknownEither(TokenForm)(Object.fromEntries(form.right))
        if (Either.isLeft(decoded)) {
          const type = Object.fromEntries(form.right)["grant_type"]
          return type !== undefined && type !== "authorization_code" && type !== "refresh_token"
            ? oauthError(400, "unsupported_grant_type", "grant_type: authorization_code or refresh_token")
            : oauthError(400, "invalid_request", formatted(decoded.left))
        }
        const params = decoded.right
        if (params.resource !== undefined && params.resource !== at.resource) {
          return oauthError(400, "invalid_target", `resource: this server grants access to ${at.resource} only`)
        }
        const issued = yield* Effect.either(
          params.grant_type === "authorization_code"
            ? grants.exchange(params)
            : grants.refresh(params.refresh_token, params.client_id)
        )
        if (Either.isLeft(issued)) return oauthError(400, issued.left.error, issued.left.message)
        return HttpServerResponse.unsafeJson(yield* tokens.issue(issued.right), {
          headers: { "cache-control": "no-store", pragma: "no-cache" }
        })
      })
    )
  })
)
