/**
 * OAuth 2.1 for agents (the MCP server's authorization): the clients that register, the scopes a
 * member grants them, and the grants themselves. A grant is a session of the member (`Session`),
 * bound to a client and its scopes: it is renewed with rotating refresh tokens like a browser's, and
 * ends the same ways (revoked, the member signed out everywhere or removed).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { MemberId } from "./Ids.js"

/**
 * What a member lets a client do: `read` (list connectors, describe data, read the library and the
 * playbooks), `query` (metrics, verified queries, SQL), `ask` (put questions to the analyst),
 * `playbooks` (run them).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Scope = Schema.Literal("read", "query", "ask", "playbooks")
export type Scope = typeof Scope.Type

/**
 * Every scope, in the order a consent page lists them.
 *
 * @since 0.1.0
 * @category constants
 */
export const scopes: ReadonlyArray<Scope> = Scope.literals

/**
 * The scopes of a request's `scope` (space-separated); all of them when it names none. An unknown
 * scope is refused by name.
 *
 * @since 0.1.0
 * @category utils
 */
export const parseScopes = (text: string | undefined): Either.Either<ReadonlyArray<Scope>, string> => {
  const words = (text ?? "").split(" ").filter((word) => word !== "")
  if (words.length === 0) return Either.right(scopes)
  const unknown = words.find((word) => !(scopes as ReadonlyArray<string>).includes(word))
  if (unknown !== undefined) return Either.left(`unknown scope ${unknown}: the scopes are ${scopes.join(", ")}`)
  return Either.right(scopes.filter((scope) => words.includes(scope)))
}

/**
 * How long an authorization code can be exchanged.
 *
 * @since 0.1.0
 * @category constants
 */
export const codeLifetime = Duration.minutes(1)

/**
 * How long a grant lasts without being renewed (each renewal extends it).
 *
 * @since 0.1.0
 * @category constants
 */
export const grantLifetime = Duration.days(30)

/**
 * Whether a redirect URI may be registered: https, or http on a loopback address (a native client's
 * local listener, RFC 8252 §7.3), and never with a fragment. Only these: a list of schemes to refuse
 * (`javascript:`, `data:`, …) is always one short, and an app's own scheme can be claimed by any
 * other app on the device, so native clients use the loopback listener.
 *
 * @since 0.1.0
 * @category utils
 */
export const redirectUriProblem = (uri: string): string | undefined => {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `${uri} is not a URL`
  }
  if (url.hash !== "") return `${uri}: a redirect URI has no fragment`
  const scheme = url.protocol.slice(0, -1)
  if (scheme === "https") return undefined
  if (scheme === "http") {
    return isLoopback(url.hostname) ? undefined : `${uri}: http is allowed only on a loopback address (use https)`
  }
  return `${uri}: a redirect URI is https, or http on a loopback address (not ${scheme}:)`
}

const isLoopback = (hostname: string) => ["localhost", "127.0.0.1", "[::1]"].includes(hostname)

/**
 * Whether a redirect URI of a request matches one the client registered: exactly, or for a loopback
 * http URI on any port (a native client listens on whatever port it gets, RFC 8252 §7.3).
 *
 * @since 0.1.0
 * @category utils
 */
export const redirectUriMatches = (registered: string, requested: string): boolean => {
  if (registered === requested) return true
  try {
    const a = new URL(registered)
    const b = new URL(requested)
    return a.protocol === "http:" && b.protocol === "http:" && isLoopback(a.hostname) &&
      a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search
  } catch {
    return false
  }
}

const RedirectUri = Schema.String.pipe(
  Schema.maxLength(2_000),
  Schema.filter((uri) => redirectUriProblem(uri) ?? true)
)

/**
 * A client's registration (RFC 7591), of a public client: it holds no secret and proves itself with
 * PKCE. Fields this server does not use are accepted and ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RegisterRequest = Schema.Struct({
  redirect_uris: Schema.Array(RedirectUri).pipe(Schema.minItems(1), Schema.maxItems(10)),
  client_name: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  token_endpoint_auth_method: Schema.optional(Schema.Literal("none")),
  grant_types: Schema.optional(Schema.Array(Schema.Literal("authorization_code", "refresh_token"))),
  response_types: Schema.optional(Schema.Array(Schema.Literal("code"))),
  scope: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})
export type RegisterRequest = typeof RegisterRequest.Type

/**
 * Whether a `client_id` names a client ID metadata document: an https URL with a path.
 *
 * @since 0.1.0
 * @category guards
 */
export const isMetadataDocumentUrl = (clientId: string): boolean => {
  try {
    const url = new URL(clientId)
    return url.protocol === "https:" && url.pathname !== "/" && url.hash === "" && url.username === ""
  } catch {
    return false
  }
}

/**
 * A client ID metadata document: the registration a client publishes at its `client_id` URL. Its
 * `client_id` must be that URL; fields this server does not use are ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ClientMetadataDocument = Schema.Struct({
  client_id: Schema.String,
  ...RegisterRequest.fields
})
export type ClientMetadataDocument = typeof ClientMetadataDocument.Type

/**
 * A registered client.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Client = Schema.Struct({
  client_id: Schema.String,
  client_name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  created_at: Schema.DateTimeUtc
})
export type Client = typeof Client.Type

/**
 * An authorization request, as the client sent it to the authorization endpoint (OAuth 2.1 with
 * PKCE, and RFC 8707's `resource`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuthorizationRequest = Schema.Struct({
  response_type: Schema.Literal("code"),
  client_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  redirect_uri: Schema.String.pipe(Schema.maxLength(2_000)),
  code_challenge: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{43,128}$/)),
  code_challenge_method: Schema.Literal("S256"),
  scope: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  state: Schema.optional(Schema.String.pipe(Schema.maxLength(1_000))),
  resource: Schema.optional(Schema.String.pipe(Schema.maxLength(2_000)))
})
export type AuthorizationRequest = typeof AuthorizationRequest.Type

/**
 * What a consent page shows of a request: the client and the scopes it asks for.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Consent = Schema.Struct({
  client_id: Schema.String,
  client_name: Schema.String,
  redirect_uri: Schema.String,
  scopes: Schema.Array(Scope)
})
export type Consent = typeof Consent.Type

/**
 * Where a consent (or a refusal) sends the member's browser: the client's redirect URI with a code
 * (or an error) and the request's `state`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decided = Schema.Struct({ redirect_to: Schema.String })
export type Decided = typeof Decided.Type

/**
 * A connected client as an admin lists it: who granted it what, and when it was last used.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Grant = Schema.Struct({
  id: Schema.UUID,
  client_id: Schema.String,
  client_name: Schema.String,
  member_id: MemberId,
  scopes: Schema.Array(Scope),
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc
}).annotations({ identifier: "OAuthGrant" })
export type Grant = typeof Grant.Type

/**
 * The connected clients of an organization.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GrantList = Schema.Struct({ grants: Schema.Array(Grant) })
export type GrantList = typeof GrantList.Type

/**
 * The member's answer to a request on the consent page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Struct({
  ...AuthorizationRequest.fields,
  approve: Schema.Boolean,
  /** The scopes the member grants, among those requested; all of them when absent. */
  granted_scopes: Schema.optional(Schema.Array(Scope))
})
export type Decision = typeof Decision.Type

/**
 * The answer of revoking a client.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Revoked = Schema.Struct({ success: Schema.Literal(true) })
