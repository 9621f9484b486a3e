/**
 * Verification of session tokens (JWTs): HS256 with a shared secret, or RS256/ES256/EdDSA against a
 * JWKS. `sub` is the member id, `organization_id` its organization; `exp` is required, and `iss`/`aud`
 * are checked when configured.
 *
 * @since 0.1.0
 */
import { Unauthenticated } from "@sightline/core/Errors"
import { MemberId, OrganizationId } from "@sightline/core/Ids"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Jose from "jose"

/**
 * Where the verification keys come from.
 *
 * @since 0.1.0
 * @category models
 */
export type Keys =
  | { readonly _tag: "Secret"; readonly secret: Redacted.Redacted<string> }
  | { readonly _tag: "JwksUrl"; readonly url: string }
  | { readonly _tag: "Jwks"; readonly jwks: Jose.JSONWebKeySet }

/**
 * The JWT settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly keys: Keys
  readonly issuer?: string | undefined
  readonly audience?: string | undefined
  /** The longest lifetime a token may claim (`exp` after `iat`, or after now without `iat`); default 24 h. */
  readonly maxLifetimeSeconds?: number | undefined
}

/**
 * The default longest token lifetime: a day.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxLifetimeSeconds = 24 * 60 * 60

/**
 * The shortest HS256 secret accepted: 32 bytes, the hash's own size (RFC 7518 §3.2).
 *
 * @since 0.1.0
 * @category constants
 */
export const minSecretBytes = 32

/**
 * Who a verified token speaks for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Claims {
  readonly organizationId: OrganizationId
  readonly memberId: MemberId
  /** The `sid` claim: the session an access token of this deployment's sign-in belongs to. */
  readonly sessionId?: string
}

/**
 * Verifies session tokens; absent when JWTs are not enabled (API keys only).
 *
 * @since 0.1.0
 * @category services
 */
export class JwtVerifier extends Context.Tag("@sightline/http/Jwt/JwtVerifier")<JwtVerifier, JwtVerifier.Service>() {}

export declare namespace JwtVerifier {
  /** Token verification. */
  export interface Service {
    readonly verify: (token: string) => Effect.Effect<Claims, Unauthenticated>
  }
}

/**
 * Does this bearer value look like a JWT (three base64url segments) rather than an API key?
 *
 * @since 0.1.0
 * @category utils
 */
export const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token)

/**
 * The `iss` a bearer JWT names, read without verifying it (to pick the verifier, which then checks
 * it); none for anything that is not a JWT with an issuer.
 *
 * @since 0.1.0
 * @category utils
 */
export const unverifiedIssuer = (token: string): string | undefined => {
  if (!looksLikeJwt(token)) return undefined
  try {
    return Jose.decodeJwt(token).iss
  } catch {
    return undefined
  }
}

const ClaimsSchema = Schema.Struct({
  sub: MemberId,
  organization_id: OrganizationId,
  sid: Schema.optional(Schema.String)
})
const decodeClaims = Schema.decodeUnknownOption(ClaimsSchema)

/** Why a token was refused, in words a caller can act on (never the token itself). */
const reason = (error: unknown): string => {
  if (error instanceof Jose.errors.JWTExpired) return "invalid token: expired"
  if (error instanceof Jose.errors.JWTClaimValidationFailed) return `invalid token: ${error.claim} claim check failed`
  if (error instanceof Jose.errors.JOSEAlgNotAllowed) return "invalid token: algorithm not allowed"
  if (error instanceof Jose.errors.JWSSignatureVerificationFailed) return "invalid token: signature verification failed"
  if (error instanceof Jose.errors.JWKSNoMatchingKey) return "invalid token: no matching key"
  return "invalid token"
}

/** Why a verified payload's timing is refused, if it is. */
const lifetimeProblem = (
  payload: Jose.JWTPayload,
  maxLifetimeSeconds: number,
  nowSeconds: number
): string | undefined => {
  const { exp, iat } = payload
  if (typeof exp !== "number" || !Number.isInteger(exp)) return "invalid token: exp must be a whole number of seconds"
  if (iat !== undefined && (typeof iat !== "number" || !Number.isInteger(iat))) {
    return "invalid token: iat must be a whole number of seconds"
  }
  const from = typeof iat === "number" ? Math.min(iat, nowSeconds) : nowSeconds
  return exp - from > maxLifetimeSeconds
    ? `invalid token: its lifetime exceeds ${maxLifetimeSeconds} seconds`
    : undefined
}

/**
 * A verifier for these options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): JwtVerifier.Service => {
  const maxLifetime = options.maxLifetimeSeconds ?? defaultMaxLifetimeSeconds
  const algorithms = options.keys._tag === "Secret" ? ["HS256"] : ["RS256", "ES256", "EdDSA"]
  const key: Parameters<typeof Jose.jwtVerify>[1] = options.keys._tag === "Secret"
    ? new TextEncoder().encode(Redacted.value(options.keys.secret))
    : options.keys._tag === "JwksUrl"
    ? Jose.createRemoteJWKSet(new URL(options.keys.url))
    : Jose.createLocalJWKSet(options.keys.jwks)
  const verifyOptions: Jose.JWTVerifyOptions = {
    algorithms,
    requiredClaims: ["exp", "sub"],
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience })
  }
  return JwtVerifier.of({
    verify: (token) =>
      Effect.tryPromise({
        try: () => Jose.jwtVerify(token, key as Uint8Array, verifyOptions),
        catch: (error) => new Unauthenticated({ message: reason(error) })
      }).pipe(
        Effect.flatMap((verified) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const problem = lifetimeProblem(verified.payload, maxLifetime, Math.floor(now / 1000))
            return problem === undefined
              ? Effect.succeed(verified)
              : Effect.fail(new Unauthenticated({ message: problem }))
          })
        ),
        Effect.flatMap(({ payload }) =>
          Option.match(decodeClaims(payload), {
            onNone: () =>
              Effect.fail(new Unauthenticated({ message: "invalid token: sub and organization_id must be ids" })),
            onSome: (claims): Effect.Effect<Claims> =>
              Effect.succeed({
                organizationId: claims.organization_id,
                memberId: claims.sub,
                ...(claims.sid === undefined ? {} : { sessionId: claims.sid })
              })
          })
        )
      )
  })
}

/**
 * A verifier layer for these options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<JwtVerifier> => Layer.succeed(JwtVerifier, make(options))

/**
 * The verifier configured from the environment, when any key source is set: `SIGHTLINE_JWT_SECRET`
 * (HS256) or `SIGHTLINE_JWT_JWKS_URL`, with optional `SIGHTLINE_JWT_ISSUER` and `SIGHTLINE_JWT_AUDIENCE`.
 *
 * @since 0.1.0
 * @category constants
 */
export const fromConfig: Config.Config<Option.Option<Options>> = Config.all({
  secret: Config.option(
    Config.redacted("SIGHTLINE_JWT_SECRET").pipe(Config.validate({
      message: `SIGHTLINE_JWT_SECRET must be at least ${minSecretBytes} bytes (a short HS256 secret can be guessed)`,
      validation: (secret) => new TextEncoder().encode(Redacted.value(secret)).length >= minSecretBytes
    }))
  ),
  jwksUrl: Config.option(Config.url("SIGHTLINE_JWT_JWKS_URL")),
  issuer: Config.option(Config.string("SIGHTLINE_JWT_ISSUER")),
  audience: Config.option(Config.string("SIGHTLINE_JWT_AUDIENCE")),
  maxLifetimeSeconds: Config.integer("SIGHTLINE_JWT_MAX_LIFETIME_SECONDS").pipe(
    Config.validate({ message: "must be a positive number of seconds", validation: (n) => n > 0 }),
    Config.withDefault(defaultMaxLifetimeSeconds)
  )
}).pipe(
  Config.map(({ audience, issuer, jwksUrl, maxLifetimeSeconds, secret }): Option.Option<Options> => {
    const keys: Option.Option<Keys> = Option.isSome(secret)
      ? Option.some({ _tag: "Secret", secret: secret.value })
      : Option.map(jwksUrl, (url) => ({ _tag: "JwksUrl", url: url.toString() }))
    return Option.map(keys, (keys) => ({
      keys,
      issuer: Option.getOrUndefined(issuer),
      audience: Option.getOrUndefined(audience),
      maxLifetimeSeconds
    }))
  })
)
