/**
 * Sign-in for people (`/v2/auth`): password sign-in, setting a password with a sign-in link, renewal
 * and sign-out. These operations carry no bearer token: the credential is the password, the link's
 * token, or the refresh token in the `HttpOnly` cookie that only this path receives. The answer's
 * access token is then sent as `Authorization: Bearer`, never as a cookie, so the API stays safe from
 * cross-site request forgery by construction.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Session from "@sightline/core/Session"
import * as Schema from "effect/Schema"
import { strict } from "./internal/strict.js"
import { SessionToken } from "./SessionTokens.js"

/**
 * The cookie holding a session's refresh token.
 *
 * @since 0.1.0
 * @category constants
 */
export const refreshCookie = "sightline_refresh"

/**
 * The only path the refresh cookie is sent to.
 *
 * @since 0.1.0
 * @category constants
 */
export const refreshCookiePath = "/v2/auth"

/**
 * How people can sign in to this deployment (what a sign-in page offers).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignInMethods = Schema.Struct({
  password: Schema.Boolean,
  /** Present when an OpenID Provider is configured: open `start_url` in the browser to sign in. */
  oidc: Schema.optional(Schema.Struct({ name: Schema.String, start_url: Schema.String }))
})

/**
 * The sign-in operations (no bearer authentication).
 *
 * @since 0.1.0
 * @category models
 */
export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.get("methods", "/v2/auth/methods")
      .addSuccess(SignInMethods)
      .annotate(OpenApi.Summary, "How people sign in here: password, and single sign-on when configured")
  )
  .add(
    HttpApiEndpoint.post("signIn", "/v2/auth/sign-in")
      .setPayload(strict(Session.PasswordSignIn))
      .addSuccess(SessionToken)
      .annotate(
        OpenApi.Summary,
        "Sign in with e-mail and password: an access token, and the refresh token in an HttpOnly cookie"
      )
  )
  .add(
    HttpApiEndpoint.post("setPassword", "/v2/auth/password")
      .setPayload(strict(Session.SetPassword))
      .addSuccess(SessionToken)
      .annotate(OpenApi.Summary, "Set a password with a sign-in link's token (invite or reset), and sign in")
  )
  .add(
    HttpApiEndpoint.post("refresh", "/v2/auth/refresh")
      .addSuccess(SessionToken)
      // Without a cookie there is nothing to renew, which is not an error: a signed-out page renews
      // on load, and a 401 there would log an error in every fresh visitor's console.
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(
        OpenApi.Summary,
        "Renew a session with its refresh cookie; the cookie is replaced. 204 when no cookie is presented"
      )
  )
  .add(
    HttpApiEndpoint.post("signOut", "/v2/auth/sign-out")
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "End the session of the refresh cookie and clear it")
  )
  .annotate(OpenApi.Title, "Sign-in")
{}
