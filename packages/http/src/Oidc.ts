/**
 * Sign-in through an OpenID Provider: the authorization code flow with PKCE, state and nonce
 * (openid-client). Members are matched by the e-mail address the provider vouches for
 * (`email_verified` must not be false). The flow's secrets travel in a short-lived `HttpOnly`
 * cookie that only `/v2/auth/oidc` receives; it is `SameSite=Lax` because the provider sends the
 * browser back with a cross-site navigation, on which a `Strict` cookie would not be sent.
 *
 * Routes: `GET /v2/auth/oidc/start` (redirects to the provider) and `GET /v2/auth/oidc/callback`
 * (sets the session's refresh cookie and redirects to the console at `/`).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Sessions } from "@sightline/core/Sessions"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Client from "openid-client"
import { withRefreshCookie } from "./internal/sessionCookie.js"
import * as PublicUrl from "./PublicUrl.js"

/**
 * The OpenID Provider and this deployment's client at it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The issuer URL (its `/.well-known/openid-configuration` is read on first use). */
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  /** A name for the sign-in button ("Sign in with …"); default "single sign-on". */
  readonly name?: string | undefined
}

/**
 * The OIDC sign-in of this deployment, when configured.
 *
 * @since 0.1.0
 * @category services
 */
export class Oidc extends Context.Tag("@sightline/http/Oidc")<Oidc, Options>() {}

/**
 * The OIDC configuration layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Oidc> => Layer.succeed(Oidc, options)

/**
 * `SIGHTLINE_OIDC_ISSUER`, `SIGHTLINE_OIDC_CLIENT_ID`, `SIGHTLINE_OIDC_CLIENT_SECRET` (and `_NAME`), when set.
 *
 * @since 0.1.0
 * @category constants
 */
export const fromConfig: Config.Config<Option.Option<Options>> = Config.option(
  Config.all({
    issuer: Config.url("SIGHTLINE_OIDC_ISSUER").pipe(Config.map((url) => url.toString())),
    clientId: Config.string("SIGHTLINE_OIDC_CLIENT_ID"),
    clientSecret: Config.redacted("SIGHTLINE_OIDC_CLIENT_SECRET"),
    name: Config.option(Config.string("SIGHTLINE_OIDC_NAME")).pipe(Config.map(Option.getOrUndefined))
  })
)

const transactionCookie = "sightline_oidc"
const flowPath = "/v2/auth/oidc"

/**
 * The provider's redirect back, whose query carries the authorization code.
 *
 * @since 0.1.0
 * @category constants
 */
export const callbackPath = `${flowPath}/callback`

/**
 * Where a browser starts the flow (relative to the API's root).
 *
 * @since 0.1.0
 * @category constants
 */
export const startPath = `${flowPath}/start`
/** How long a person may take at the provider before the flow must start again. */
const transactionSeconds = 600

/**
 * Where the provider sends the browser back.
 *
 * @since 0.1.0
 * @category utils
 */
export const redirectUri = (base: string): string => `${base}${callbackPath}`

const redirect = (location: string) => HttpServerResponse.empty({ status: 302, headers: { location } })

/**
 * Why a sign-in through the provider failed, as a code the console maps to a fixed message: the
 * page never shows text from its URL, which anyone can put in a link.
 *
 * @since 0.1.0
 * @category models
 */
export type Failure =
  | "provider-unreachable"
  | "expired"
  | "provider-refused"
  | "no-email"
  | "unverified-email"
  | "no-member"

const failed = (base: string, failure: Failure) => redirect(`${base}/#/sign-in-failed/${failure}`)

/**
 * The two routes of the flow (nothing when `Oidc` is absent). Discovery runs on first use and is
 * kept once it succeeds, so a provider that is down at start does not keep the server from starting.
 *
 * @since 0.1.0
 * @category constants
 */
export const routes: Layer.Layer<never, never, Sessions> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const options = yield* Effect.serviceOption(Oidc)
    if (Option.isNone(options)) return
    const { clientId, clientSecret, issuer } = options.value
    const sessions = yield* Sessions
    const base = yield* PublicUrl.base
    const discover = Effect.tryPromise(() =>
      Client.discovery(
        new URL(issuer),
        clientId,
        Redacted.value(clientSecret),
        undefined,
        // A provider on plain http is only for development and loopback tests.
        issuer.startsWith("http:") ? { execute: [Client.allowInsecureRequests] } : undefined
      )
    )
    let configuration: Client.Configuration | undefined
    const config = Effect.suspend(() =>
      configuration === undefined
        ? Effect.tap(discover, (c) => Effect.sync(() => (configuration = c)))
        : Effect.succeed(configuration)
    )

    yield* router.get(
      startPath,
      Effect.gen(function*() {
        const found = yield* Effect.either(config)
        if (found._tag === "Left") return failed(base, "provider-unreachable")
        const verifier = Client.randomPKCECodeVerifier()
        const state = Client.randomState()
        const nonce = Client.randomNonce()
        const url = Client.buildAuthorizationUrl(found.right, {
          redirect_uri: redirectUri(base),
          scope: "openid email profile",
          code_challenge: yield* Effect.promise(() => Client.calculatePKCECodeChallenge(verifier)),
          code_challenge_method: "S256",
          state,
          nonce
        })
        return HttpServerResponse.unsafeSetCookie(
          redirect(url.href),
          transactionCookie,
          JSON.stringify({ verifier, state, nonce }),
          { httpOnly: true, secure: true, sameSite: "lax", path: flowPath, maxAge: `${transactionSeconds} seconds` }
        )
      })
    )

    yield* router.get(
      callbackPath,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const cleared = (response: HttpServerResponse.HttpServerResponse) =>
          HttpServerResponse.unsafeSetCookie(response, transactionCookie, "", {
            httpOnly: true,
            secure: true,
            sameSite: "lax",
            path: flowPath,
            expires: new Date(0)
          })
        const transaction = Option.liftThrowable(() =>
          JSON.parse(request.cookies[transactionCookie] ?? "") as { verifier: string; state: string; nonce: string }
        )()
        if (Option.isNone(transaction)) return failed(base, "expired")
        const current = new URL(request.url, base)
        const outcome = yield* Effect.either(
          Effect.flatMap(config, (c) =>
            Effect.tryPromise(() =>
              Client.authorizationCodeGrant(c, current, {
                pkceCodeVerifier: transaction.value.verifier,
                expectedState: transaction.value.state,
                expectedNonce: transaction.value.nonce,
                idTokenExpected: true
              })
            ))
        )
        if (outcome._tag === "Left") {
          const cause = outcome.left.error
          yield* Effect.logInfo("OIDC sign-in refused by the provider").pipe(
            Effect.annotateLogs({ reason: cause instanceof Error ? cause.message : String(cause) })
          )
          return cleared(failed(base, "provider-refused"))
        }
        // Providers may keep the e-mail claims out of the ID token (they are scope claims): then
        // the UserInfo endpoint has them, for the subject the ID token names.
        const tokens = outcome.right
        const idClaims = tokens.claims()
        const userInfo = typeof idClaims?.["email"] === "string" || idClaims === undefined
          ? {}
          : Option.getOrElse(
            yield* Effect.option(
              Effect.flatMap(
                config,
                (c) => Effect.tryPromise(() => Client.fetchUserInfo(c, tokens.access_token, idClaims.sub))
              )
            ),
            () => ({})
          )
        const claims: Record<string, unknown> = { ...userInfo, ...idClaims }
        const email = typeof claims["email"] === "string" ? claims["email"] : undefined
        if (email === undefined) return cleared(failed(base, "no-email"))
        if (claims["email_verified"] === false) {
          return cleared(failed(base, "unverified-email"))
        }
        const signedIn = yield* Effect.either(sessions.signInWithIdentity(email))
        if (signedIn._tag === "Left") {
          yield* Effect.logInfo("OIDC sign-in of no single member").pipe(
            Effect.annotateLogs({ reason: signedIn.left.message })
          )
          return cleared(failed(base, "no-member"))
        }
        return cleared(
          withRefreshCookie(
            redirect(`${base}/#/chats`),
            signedIn.right.refresh_token,
            signedIn.right.refresh_expires_at
          )
        )
      })
    )
  })
)
