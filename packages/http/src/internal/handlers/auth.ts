import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as RateLimiter from "@sightline/core/RateLimiter"
import type * as Session from "@sightline/core/Session"
import { Sessions } from "@sightline/core/Sessions"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SightlineApi } from "../../Api.js"
import { refreshCookie } from "../../AuthApi.js"
import { tooManyFailures } from "../../Authentication.js"
import * as HttpErrors from "../../HttpErrors.js"
import * as Oidc from "../../Oidc.js"
import { SessionTokens } from "../../SessionTokens.js"
import { only } from "../only.js"
import { withRefreshCookie } from "../sessionCookie.js"

/**
 * Failed sign-ins allowed per client address and per e-mail address: a burst of 10, then 2 a
 * minute. Past that the sign-in is refused before the password is even checked. In this process's
 * memory, like the failed-authentication limit.
 */
export const signInFailureBucket: RateLimiter.BucketConfig = { capacity: 10, refillPerMinute: 2 }

const setCookie = (value: string, expires: Date) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withRefreshCookie(response, value, expires)))

const presentedCookie = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.fromNullable(request.cookies[refreshCookie]).pipe(Option.filter((value) => value.length > 0))
)

const noSession = new HttpErrors.Unauthenticated({
  error: { code: "unauthenticated", message: "No session: sign in" }
})

export const layer = HttpApiBuilder.group(SightlineApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const tokens = yield* SessionTokens
    const failures = yield* Effect.provide(RateLimiter.RateLimiter, RateLimiter.layerMemory)
    const retryAfter = Math.ceil(60 / signInFailureBucket.refillPerMinute)

    // The access token in the body, the refresh token in the cookie.
    const answer = (signedIn: Session.SignedIn) =>
      Effect.zipRight(
        setCookie(signedIn.refresh_token, signedIn.refresh_expires_at),
        tokens.issue(signedIn)
      )

    const oidc = yield* Effect.serviceOption(Oidc.Oidc)
    return handlers
      .handle("methods", () =>
        Effect.succeed({
          password: true,
          oidc: Option.match(oidc, {
            onNone: () => undefined,
            onSome: (options) => ({ name: options.name ?? "single sign-on", start_url: Oidc.startPath })
          })
        }))
      .handle("signIn", ({ payload }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const keys = [
            `address:${Option.getOrElse(request.remoteAddress, () => "unknown")}`,
            `email:${payload.email.toLowerCase()}`
          ]
          for (const key of keys) {
            // Cost 0 only reads the bucket.
            if ((yield* failures.consume(key, signInFailureBucket, 0)).remaining < 1) {
              return yield* tooManyFailures(retryAfter, "Too many failed sign-ins: retry later")
            }
          }
          const signedIn = yield* sessions.signIn(payload).pipe(
            Effect.tapError(() => Effect.forEach(keys, (key) => failures.consume(key, signInFailureBucket, 1))),
            Effect.mapError(HttpErrors.fromApiError)
          )
          return yield* answer(signedIn)
        }))
      .handle("setPassword", ({ payload }) =>
        sessions.setPassword(payload).pipe(Effect.mapError(HttpErrors.fromApiError), Effect.flatMap(answer)))
      .handle("refresh", () =>
        Effect.gen(function*() {
          const presented = yield* presentedCookie
          if (Option.isNone(presented)) {
            return yield* Effect.fail(noSession)
          }
          return yield* sessions.refresh(presented.value).pipe(
            Effect.mapError(HttpErrors.fromApiError),
            Effect.flatMap(answer)
          )
        }))
      .handle("signOut", () =>
        Effect.gen(function*() {
          const presented = yield* presentedCookie
          if (Option.isSome(presented)) {
            yield* sessions.signOut(presented.value)
          }
          yield* setCookie("", new Date(0))
        }))
  })).pipe(only(Sessions, SessionTokens, Oidc.Oidc))
