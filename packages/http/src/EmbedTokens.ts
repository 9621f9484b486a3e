/**
 * The tokens of end users' sessions (`EndUser`): the session's claims, encrypted and authenticated
 * as a JWE (`dir`, A256GCM) with a key derived from the deployment's own signing key, so the browser
 * that holds one can neither read the client attributes it carries nor change them, and every
 * process of the deployment opens what another sealed.
 *
 * @since 0.1.0
 */
import * as EndUser from "@sightline/core/EndUser"
import { Unauthenticated } from "@sightline/core/Errors"
import { Sessions } from "@sightline/core/Sessions"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Jose from "jose"
import * as NodeCrypto from "node:crypto"

/**
 * Seals and opens end users' session tokens.
 *
 * @since 0.1.0
 * @category services
 */
export class EmbedTokens extends Context.Tag("@sightline/http/EmbedTokens")<EmbedTokens, EmbedTokens.Service>() {}

export declare namespace EmbedTokens {
  /** Session tokens of end users. */
  export interface Service {
    /** The token of a minted session's claims (it expires at `claims.exp`). */
    readonly seal: (claims: EndUser.Claims) => Effect.Effect<string>
    /** The claims of a token this deployment sealed and that has not expired; `Unauthenticated` otherwise. */
    readonly open: (token: string) => Effect.Effect<EndUser.Claims, Unauthenticated>
  }
}

/**
 * Does this bearer value have a JWE's compact shape (five base64url segments), which no API key,
 * session token or operator JWT has?
 *
 * @since 0.1.0
 * @category guards
 */
export const isEmbedToken = (token: string): boolean => /^[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/.test(token)

const decodeClaims = Schema.decodeUnknownOption(EndUser.Claims)

/**
 * The service over a signing key; the token key is its SHA-256 under a label of its own, so it is
 * never the key that signs sessions' JWTs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSigningKey = (signingKey: string): EmbedTokens.Service => {
  const key = NodeCrypto.createHash("sha256").update(`sightline embed sessions\n${signingKey}`).digest()
  return EmbedTokens.of({
    seal: (claims) =>
      Effect.promise(() =>
        new Jose.EncryptJWT({ ...claims })
          .setProtectedHeader({ alg: "dir", enc: "A256GCM", typ: "sightline-embed" })
          .encrypt(key)
      ),
    open: (token) =>
      Effect.tryPromise({
        try: () => Jose.jwtDecrypt(token, key, { keyManagementAlgorithms: ["dir"], requiredClaims: ["exp"] }),
        catch: (error) =>
          new Unauthenticated({
            message: error instanceof Jose.errors.JWTExpired ? "invalid token: expired" : "invalid token"
          })
      }).pipe(
        Effect.flatMap(({ payload }) =>
          Option.match(decodeClaims(payload), {
            onNone: () => Effect.fail(new Unauthenticated({ message: "invalid token" })),
            onSome: Effect.succeed
          })
        )
      )
  })
}

/**
 * The service over the key of `Sessions.signingKey`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<EmbedTokens, never, Sessions> = Layer.effect(
  EmbedTokens,
  Effect.map(Effect.flatMap(Sessions, (sessions) => sessions.signingKey), fromSigningKey)
)
