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
import * as ClientAddress from "../../ClientAddress.js"
import * as HttpErrors from "../../HttpErrors.js"
import * as Oidc from "../../Oidc.js"
import { SessionTokens } from "../../SessionTokens.js"
import { only } from "../only.js"
import { withRefreshCookie } from "../sessionCookie.js"

/**
 * Failed sign-ins allowed per pair of client address and e-mail address: a burst of 10, then 2 a
 * minute. Past that, that client's sign-ins as that person are refused before the password is even
 * checked; the person signs in from elsewhere as before. In this process's memory, like the
 * failed-authentication limit.
 */
export const signInFailureBucket: RateLimiter.BucketConfig = { capacity: 10, refillPerMinute: 2 }

/** Failed sign-ins allowed per client address, whatever the e-mail address (one client trying many). */
export const signInAddressBucket: RateLimiter.BucketConfig = { capacity: 30, refillPerMinute: 10 }

/**
 * Failed sign-ins allowed per e-mail address from everywhere: far above what one client may fail,
 * so only many clients together (a distributed guess) can exhaust it, and then the person signs in
 * with a sign-in link (a reset link) or through the identity provider until it refills.
 */
export const signInAccountBucket: RateLimiter.BucketConfig = { capacity: 100, refillPerMinute: 20 }

const setCookie = (value: string, expires: Date) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(withRefreshCookie(response, value, expires)))

const presentedCookie = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) => Option.fromNullable(request.cookies[refreshCookie]).pipe(Option.filter((value) => value.length > 0))
)

export const layer = HttpApiBuilder.group(SightlineApi, "auth", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const tokens = yield* SessionTokens
    const failures = yield* Effect.provide(RateLimiter.RateLimiter, RateLimiter.layerMemory)
    const addressOf = yield* ClientAddress.resolver

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
          const address = addressOf(yield* HttpServerRequest.HttpServerRequest)
          const email = payload.email.toLowerCase()
          const buckets = [
            [`pair:${address}|${email}`, signInFailureBucket, "Too many failed sign-ins: retry later"],
            [`address:${address}`, signInAddressBucket, "Too many failed sign-ins from this address: retry later"],
            [
              `email:${email}`,
              signInAccountBucket,
              "Too many failed sign-ins for this account: sign in with a sign-in link (an administrator can send a " +
              "reset link) or through single sign-on, or retry later"
            ]
          ] as const
          for (const [key, bucket, message] of buckets) {
            // Cost 0 only reads the bucket.
            if ((yield* failures.consume(key, bucket, 0)).remaining < 1) {
              return yield* tooManyFailures(Math.ceil(60 / bucket.refillPerMinute), message)
            }
          }
          const signedIn = yield* sessions.signIn(payload).pipe(
            Effect.tapError(() => Effect.forEach(buckets, ([key, bucket]) => failures.consume(key, bucket, 1))),
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
            return undefined
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
