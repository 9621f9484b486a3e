/**
 * The OAuth use cases behind the MCP server's authorization: clients register (RFC 7591); a
 * signed-in member consents to a client's request, which makes a grant whose authorization code the
 * client exchanges, with its PKCE verifier, for a refresh token; the client renews it (each renewal
 * rotates it, and a replayed token ends the grant); admins list the connected clients and revoke
 * them.
 *
 * A grant is a session of the member bound to the client and its scopes (`Session`, `OAuth`): its
 * access tokens act as the member, with the member's live roles, narrowed by the scopes.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { Auditor } from "./Auditor.js"
import { enforce } from "./Decision.js"
import { InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import * as SignInLinks from "./internal/signInLinks.js"
import { MemberRepo } from "./MemberRepo.js"
import * as OAuth from "./OAuth.js"
import { OAuthClientDocuments } from "./OAuthClientDocuments.js"
import * as Policy from "./Policy.js"
import * as Secret from "./Secret.js"
import * as Session from "./Session.js"
import { SessionRepo } from "./SessionRepo.js"
import * as Traced from "./Traced.js"

/**
 * An error of the token endpoint, as RFC 6749 §5.2 names them.
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenError extends Schema.TaggedError<TokenError>()("TokenError", {
  error: Schema.Literal("invalid_request", "invalid_grant", "invalid_client", "invalid_scope"),
  message: Schema.String
}) {}

/**
 * A code's exchange, as the token endpoint received it.
 *
 * @since 0.1.0
 * @category models
 */
export interface CodeExchange {
  readonly code: string
  readonly code_verifier: string
  readonly redirect_uri: string
  readonly client_id: string
}

/**
 * A grant's tokens were issued: the session they renew, and what the client may do with them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Issued {
  readonly signedIn: Session.SignedIn
  readonly clientId: string
  readonly scopes: ReadonlyArray<OAuth.Scope>
}

/**
 * The OAuth use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class OAuthGrants extends Context.Tag("@sightline/core/OAuthGrants")<OAuthGrants, OAuthGrants.Service>() {}

export declare namespace OAuthGrants {
  /** Registration, consent, tokens and the connected clients. */
  export interface Service {
    /** Registers a public client; an unusable redirect URI is `InvalidRequest` naming it. */
    readonly register: (request: OAuth.RegisterRequest) => Effect.Effect<OAuth.Client>
    /**
     * What a consent page shows of a request, checked: the client exists, the redirect URI is one
     * it registered, the scopes exist and `resource` (when given) is this server's. Only a member
     * signed in to the console consents (not a key).
     */
    readonly consent: (
      principal: Policy.Principal,
      request: OAuth.AuthorizationRequest,
      resource: string
    ) => Effect.Effect<OAuth.Consent, InvalidRequest | PermissionDenied | Unauthenticated>
    /**
     * The member's answer: approved, a grant with a one-minute code of the scopes the member kept
     * (`granted`, among those requested; all of them when absent); refused, `access_denied`. Either
     * way, where to send the browser (the client's redirect URI with the `state`).
     */
    readonly decide: (
      principal: Policy.Principal,
      request: OAuth.AuthorizationRequest,
      resource: string,
      approve: boolean,
      granted?: ReadonlyArray<OAuth.Scope>
    ) => Effect.Effect<OAuth.Decided, InvalidRequest | PermissionDenied | Unauthenticated>
    /** Exchanges a code for the grant's first refresh token (once: a replay ends the grant). */
    readonly exchange: (request: CodeExchange) => Effect.Effect<Issued, TokenError>
    /** Renews a grant: a new refresh token for the presented one, which stops working. */
    readonly refresh: (refreshToken: string, clientId: string) => Effect.Effect<Issued, TokenError>
    /** The organization's connected clients (`organization:read`). */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<OAuth.GrantList, PermissionDenied | Unauthenticated>
    /** Ends every grant of a client in the organization (`organization:write`); none live is `NotFound`. */
    readonly revokeClient: (
      principal: Policy.Principal,
      clientId: string
    ) => Effect.Effect<void, NotFound | PermissionDenied | Unauthenticated>
  }
}

const invalidGrant = (message: string) => new TokenError({ error: "invalid_grant", message })

/**
 * Builds the use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* SessionRepo
  const members = yield* MemberRepo
  const hasher = yield* Secret.SecretHasher
  const ids = yield* IdGenerator
  const auditor = yield* Auditor
  const newToken = Effect.provideService(SignInLinks.newToken, Secret.SecretHasher, hasher)

  const documents = yield* Effect.serviceOption(OAuthClientDocuments)
  const decodeDocument = Schema.decodeUnknown(OAuth.ClientMetadataDocument)

  // A client named by its metadata document's URL: read at each authorization request (so a change
  // of its redirect URIs takes effect), and kept, since its code and refresh tokens name it.
  const fromDocument = (reader: OAuthClientDocuments.Service, url: string) =>
    Effect.gen(function*() {
      const document = yield* reader.fetch(url).pipe(
        Effect.flatMap((json) => decodeDocument(json)),
        Effect.mapError((error) =>
          new InvalidRequest({
            message: `client_id: the client's metadata document is unusable: ${
              error._tag === "ParseError" ? ParseResult.TreeFormatter.formatErrorSync(error) : error.message
            }`
          })
        )
      )
      if (document.client_id !== url) {
        return yield* new InvalidRequest({ message: "client_id: the metadata document names another client_id" })
      }
      const client: OAuth.Client = {
        client_id: url,
        client_name: document.client_name?.trim() || new URL(url).host,
        redirect_uris: document.redirect_uris,
        created_at: yield* DateTime.now
      }
      yield* repo.createClient(client)
      return client
    })

  const register = Traced.fn("OAuthGrants.register")(function*(request: OAuth.RegisterRequest) {
    const client: OAuth.Client = {
      client_id: yield* ids.uuid,
      client_name: request.client_name?.trim() || "Unnamed client",
      redirect_uris: request.redirect_uris,
      created_at: yield* DateTime.now
    }
    yield* repo.createClient(client)
    return client
  })

  // The request checked against its client: the client, the scopes.
  const checked = (principal: Policy.Principal, request: OAuth.AuthorizationRequest, resource: string) =>
    Effect.gen(function*() {
      if (principal.auth._tag !== "Session") {
        return yield* new InvalidRequest({ message: "only a member signed in to the console can connect a client" })
      }
      const client = OAuth.isMetadataDocumentUrl(request.client_id) && Option.isSome(documents)
        ? Option.some(yield* fromDocument(documents.value, request.client_id))
        : yield* repo.getClient(request.client_id)
      if (Option.isNone(client)) return yield* new InvalidRequest({ message: "client_id: no such client" })
      if (!client.value.redirect_uris.some((uri) => OAuth.redirectUriMatches(uri, request.redirect_uri))) {
        return yield* new InvalidRequest({ message: "redirect_uri: not one the client registered" })
      }
      if (request.resource !== undefined && request.resource !== resource) {
        return yield* new InvalidRequest({ message: `resource: this server grants access to ${resource} only` })
      }
      const scopes = yield* Either.mapLeft(
        OAuth.parseScopes(request.scope),
        (message) => new InvalidRequest({ message: `scope: ${message}` })
      )
      return { client: client.value, scopes }
    })

  const consent = Traced.fn("OAuthGrants.consent")(
    function*(principal: Policy.Principal, request: OAuth.AuthorizationRequest, resource: string) {
      const { client, scopes } = yield* checked(principal, request, resource)
      return {
        client_id: client.client_id,
        client_name: client.client_name,
        redirect_uri: request.redirect_uri,
        scopes
      }
    }
  )

  const redirect = (request: OAuth.AuthorizationRequest, params: Record<string, string>) => {
    const url = new URL(request.redirect_uri)
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
    if (request.state !== undefined) url.searchParams.set("state", request.state)
    return { redirect_to: url.toString() }
  }

  const decide = Traced.fn("OAuthGrants.decide")(
    function*(
      principal: Policy.Principal,
      request: OAuth.AuthorizationRequest,
      resource: string,
      approve: boolean,
      granted?: ReadonlyArray<OAuth.Scope>
    ) {
      const checkedRequest = yield* checked(principal, request, resource)
      if (!approve) return redirect(request, { error: "access_denied", error_description: "the member refused" })
      const { client } = checkedRequest
      const extra = granted?.find((scope) => !checkedRequest.scopes.includes(scope))
      if (extra !== undefined) {
        return yield* new InvalidRequest({ message: `granted_scopes: the client did not ask for ${extra}` })
      }
      const scopes = granted === undefined ? checkedRequest.scopes : OAuth.scopes.filter((s) => granted.includes(s))
      if (scopes.length === 0) {
        return yield* new InvalidRequest({ message: "granted_scopes: grant at least one scope, or deny" })
      }
      const code = yield* newToken
      const now = yield* DateTime.now
      const id = yield* ids.uuid
      // The code is the grant's first refresh hash: exchanging it rotates the grant, so it works once,
      // and a replay finds a spent code and ends the grant (RFC 6749 §4.1.2).
      yield* repo.createSession({
        id,
        organization_id: principal.organizationId,
        member_id: principal.memberId,
        refresh_hash: yield* hasher.hash(code),
        expires_at: DateTime.addDuration(now, OAuth.codeLifetime),
        created_at: now,
        client_id: client.client_id,
        scopes,
        code_challenge: request.code_challenge,
        redirect_uri: request.redirect_uri
      })
      yield* auditor.recordBy(principal, {
        action: "oauth.grant",
        resourceType: "member",
        resourceId: principal.memberId,
        details: { client_id: client.client_id, client_name: client.client_name, scopes: scopes.join(" ") }
      })
      return redirect(request, { code })
    }
  )

  // Renews a grant (or spends its code) for a client, checking the member may still sign in.
  const rotate = (presented: string, kind: Session.RotationKind, clientId: string) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const next = yield* newToken
      const expires = DateTime.addDuration(now, OAuth.grantLifetime)
      const rotation = yield* repo.rotate(yield* hasher.hash(presented), yield* hasher.hash(next), now, expires, kind)
      if (rotation._tag === "Superseded") {
        // A spent code or an old refresh token presented again: someone else holds a copy.
        yield* repo.revokeSession(rotation.session.id, now)
        return yield* invalidGrant("the grant was used twice and has ended: connect the client again")
      }
      if (rotation._tag === "Unknown") return yield* invalidGrant("unknown, expired or revoked grant")
      const session = rotation.session
      const member = yield* members.get(session.organization_id, session.member_id)
      if (session.client_id !== clientId || Option.isNone(member) || member.value.deleted_at !== undefined) {
        yield* repo.revokeSession(session.id, now)
        return yield* invalidGrant("the grant is not this client's, or its member is gone")
      }
      return {
        signedIn: Session.signedIn(session, next, expires),
        clientId,
        scopes: session.scopes ?? []
      } satisfies Issued
    })

  const exchange = Traced.fn("OAuthGrants.exchange")(function*(request: CodeExchange) {
    // Checked before the code is spent: a wrong verifier or redirect URI leaves it to its owner.
    const pending = Option.filter(
      yield* repo.findByRefresh(yield* hasher.hash(request.code)),
      (session) => session.code_challenge !== undefined
    )
    if (Option.isSome(pending)) {
      const session = pending.value
      if (session.client_id !== request.client_id) return yield* invalidGrant("the code was not issued to this client")
      if (session.redirect_uri !== request.redirect_uri) {
        return yield* invalidGrant("redirect_uri differs from the authorization request's")
      }
      if ((yield* Secret.sha256Base64Url(request.code_verifier)) !== session.code_challenge) {
        return yield* invalidGrant("code_verifier does not match the code challenge")
      }
    }
    return yield* rotate(request.code, "code", request.client_id)
  })

  const refresh = Traced.fn("OAuthGrants.refresh")(function*(refreshToken: string, clientId: string) {
    return yield* rotate(refreshToken, "grant", clientId)
  })

  const list = Traced.fn("OAuthGrants.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const sessions = yield* repo.listGrants(principal.organizationId, yield* DateTime.now)
    const names = new Map<string, string>()
    for (const session of sessions) {
      const id = session.client_id!
      if (!names.has(id)) {
        names.set(id, Option.match(yield* repo.getClient(id), { onNone: () => id, onSome: (c) => c.client_name }))
      }
    }
    return {
      grants: sessions.map((session) => ({
        id: session.id,
        client_id: session.client_id!,
        client_name: names.get(session.client_id!)!,
        member_id: session.member_id,
        scopes: session.scopes ?? [],
        created_at: session.created_at,
        last_used_at: session.rotated_at ?? session.created_at,
        expires_at: session.expires_at
      }))
    }
  })

  const revokeClient = Traced.fn("OAuthGrants.revokeClient")(function*(principal: Policy.Principal, clientId: string) {
    yield* enforce(Policy.requirePermission(principal, "organization:write"))
    const ended = yield* repo.revokeClientGrants(principal.organizationId, clientId, yield* DateTime.now)
    if (ended === 0) return yield* new NotFound()
    yield* auditor.recordBy(principal, {
      action: "oauth.revoke",
      resourceType: "organization",
      resourceId: principal.organizationId,
      details: { client_id: clientId, grants: ended }
    })
  })

  return OAuthGrants.of({ register, consent, decide, exchange, refresh, list, revokeClient })
})

/**
 * The OAuth use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(OAuthGrants, make)
