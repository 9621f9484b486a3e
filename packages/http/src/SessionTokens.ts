/**
 * The access tokens of browser sessions: 15-minute HS256 JWTs signed with the deployment's own key
 * (made once and kept in the store, so every process signs and verifies alike). They carry the same
 * claims as an operator's JWTs (`sub`, `organization_id`) and are told apart by their issuer.
 *
 * @since 0.1.0
 */
import { Unauthenticated } from "@sightline/core/Errors"
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
 * The `iss` of a session's access token.
 *
 * @since 0.1.0
 * @category constants
 */
export const issuer = "urn:sightline:session"

/**
 * What sign-in, password setting and renewal answer; the refresh token goes in a cookie.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SessionToken = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  /** Seconds until the access token expires: renew before then with `POST /v2/auth/refresh`. */
  expires_in: Schema.Int,
  member_id: Schema.String,
  organization_id: Schema.String
})
export type SessionToken = typeof SessionToken.Type

/**
 * Signs and verifies session access tokens.
 *
 * @since 0.1.0
 * @category services
 */
export class SessionTokens extends Context.Tag("@sightline/http/SessionTokens")<
  SessionTokens,
  SessionTokens.Service
>() {}

export declare namespace SessionTokens {
  /** Access tokens of sessions. */
  export interface Service {
    /** A new access token for a signed-in member. */
    readonly issue: (signedIn: Session.SignedIn) => Effect.Effect<SessionToken>
    /** The claims of a token this deployment issued; `Unauthenticated` for anything else. */
    readonly verify: (token: string) => Effect.Effect<Jwt.Claims, Unauthenticated>
  }
}

/**
 * Whether a bearer JWT names the session issuer (read without verifying: verification follows).
 *
 * @since 0.1.0
 * @category guards
 */
export const isSessionToken = (token: string): boolean => Jwt.unverifiedIssuer(token) === issuer

const lifetimeSeconds = Duration.toSeconds(Session.accessTokenLifetime)

/**
 * The service over the key of `Sessions.signingKey`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const key = yield* (yield* Sessions).signingKey
  const secret = new TextEncoder().encode(key)
  const verifier = Jwt.make({
    keys: { _tag: "Secret", secret: Redacted.make(key) },
    issuer,
    maxLifetimeSeconds: lifetimeSeconds
  })
  return SessionTokens.of({
    issue: (signedIn) =>
      Effect.promise(() =>
        new Jose.SignJWT({ organization_id: signedIn.organization_id, sid: signedIn.session_id })
          .setProtectedHeader({ alg: "HS256", typ: "JWT" })
          .setIssuer(issuer)
          .setSubject(signedIn.member_id)
          .setIssuedAt()
          .setExpirationTime(`${lifetimeSeconds}s`)
          .sign(secret)
      ).pipe(Effect.map((token) => ({
        access_token: token,
        token_type: "Bearer" as const,
        expires_in: lifetimeSeconds,
        member_id: signedIn.member_id,
        organization_id: signedIn.organization_id
      }))),
    // A token of this sign-in names its session: without one (forged claims cannot get here, but
    // a token must never skip the session's check) it is refused.
    verify: (token) =>
      Effect.flatMap(verifier.verify(token), (claims) =>
        claims.sessionId === undefined
          ? Effect.fail(new Unauthenticated({ message: "invalid token: no session" }))
          : Effect.succeed(claims))
  })
})

/**
 * Session tokens over the `Sessions` use case in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionTokens, never, Sessions> = Layer.effect(SessionTokens, make)
