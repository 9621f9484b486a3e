/**
 * The access tokens of OAuth grants (the MCP server's): 15-minute HS256 JWTs signed with the
 * deployment's session key, told apart from a browser session's by their issuer and bound to the
 * MCP endpoint by their audience (RFC 8707), so `/v2` refuses them. They name their grant (`sid`),
 * whose end stops them at once, and carry its client and scopes.
 *
 * @since 0.1.0
 */
import { Unauthenticated } from "@sightline/core/Errors"
import type * as OAuthGrants from "@sightline/core/OAuthGrants"
import * as Session from "@sightline/core/Session"
import { Sessions } from "@sightline/core/Sessions"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Jose from "jose"
import * as Jwt from "./Jwt.js"

/**
 * The `iss` of a grant's access token.
 *
 * @since 0.1.0
 * @category constants
 */
export const issuer = "urn:sightline:oauth"

/**
 * The token endpoint's answer (RFC 6749 §5.1).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  refresh_token: Schema.String,
  scope: Schema.String
})
export type TokenResponse = typeof TokenResponse.Type

/**
 * What a verified access token speaks for.
 *
 * @since 0.1.0
 * @category models
 */
export interface GrantClaims extends Jwt.Claims {
  readonly sessionId: string
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
}

/**
 * Issues and verifies grants' access tokens for one resource (the MCP endpoint's URL).
 *
 * @since 0.1.0
 * @category services
 */
export class OAuthTokens extends Context.Tag("@sightline/http/OAuthTokens")<OAuthTokens, OAuthTokens.Service>() {}

export declare namespace OAuthTokens {
  /** Access tokens of grants. */
  export interface Service {
    /** The token response for issued grant tokens. */
    readonly issue: (issued: OAuthGrants.Issued) => Effect.Effect<TokenResponse>
    /** The claims of an access token for this resource; `Unauthenticated` for anything else. */
    readonly verify: (token: string) => Effect.Effect<GrantClaims, Unauthenticated>
  }
}

/**
 * Whether a bearer JWT names the grant issuer (read without verifying: verification follows).
 *
 * @since 0.1.0
 * @category guards
 */
export const isOAuthToken = (token: string): boolean => Jwt.unverifiedIssuer(token) === issuer

const lifetimeSeconds = Duration.toSeconds(Session.accessTokenLifetime)

const GrantPayload = Schema.Struct({ client_id: Schema.String, scope: Schema.String })

/**
 * The service for the resource `resource`, over the key of `Sessions.signingKey`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (resource: string) =>
  Effect.gen(function*() {
    const key = yield* (yield* Sessions).signingKey
    const secret = new TextEncoder().encode(key)
    const verifier = Jwt.make({
      keys: { _tag: "Secret", secret: Redacted.make(key) },
      issuer,
      audience: resource,
      maxLifetimeSeconds: lifetimeSeconds
    })
    const decodeGrant = Schema.decodeUnknownOption(GrantPayload)
    return OAuthTokens.of({
      issue: ({ clientId, scopes, signedIn }) =>
        Effect.promise(() =>
          new Jose.SignJWT({
            organization_id: signedIn.organization_id,
            sid: signedIn.session_id,
            client_id: clientId,
            scope: scopes.join(" ")
          })
            .setProtectedHeader({ alg: "HS256", typ: "at+jwt" })
            .setIssuer(issuer)
            .setAudience(resource)
            .setSubject(signedIn.member_id)
            .setIssuedAt()
            .setExpirationTime(`${lifetimeSeconds}s`)
            .sign(secret)
        ).pipe(Effect.map((token) => ({
          access_token: token,
          token_type: "Bearer" as const,
          expires_in: lifetimeSeconds,
          refresh_token: signedIn.refresh_token,
          scope: scopes.join(" ")
        }))),
      verify: (token) =>
        Effect.flatMap(verifier.verify(token), (claims) => {
          // Verified above: the payload is this deployment's own.
          const grant = decodeGrant(Jose.decodeJwt(token))
          return claims.sessionId === undefined || grant._tag === "None"
            ? Effect.fail(new Unauthenticated({ message: "invalid token: not a grant's" }))
            : Effect.succeed({
              ...claims,
              sessionId: claims.sessionId,
              clientId: grant.value.client_id,
              scopes: grant.value.scope.split(" ").filter((scope) => scope !== "")
            })
        })
    })
  })

/**
 * Grant tokens for `resource`, over the `Sessions` use case in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (resource: string): Layer.Layer<OAuthTokens, never, Sessions> =>
  Layer.effect(OAuthTokens, make(resource))
