/**
 * Where people reach this deployment: the base of the links it hands out (sign-in links). Without
 * one, a link is built from the `Host` of the request that asked for it, which is what an operator
 * on one machine expects; behind a proxy or when links are e-mailed, configure it.
 *
 * @since 0.1.0
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** The public base URL (`scheme://host[:port][/path]`, no trailing slash). */
export class PublicUrl extends Context.Tag("@sightline/http/PublicUrl")<PublicUrl, string>() {}

/** A public URL layer; a trailing slash is dropped. */
export const layer = (url: string): Layer.Layer<PublicUrl> => Layer.succeed(PublicUrl, url.replace(/\/+$/, ""))

/** The console's page that sets a password with a sign-in link's token (the token stays out of logs). */
export const signInLink = (base: string, token: string): string => `${base}/#/set-password/${token}`

/** The configured base, else the current request's `http://<Host>`. */
export const current: Effect.Effect<string, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
  const configured = yield* Effect.serviceOption(PublicUrl)
  if (Option.isSome(configured)) return configured.value
  const request = yield* HttpServerRequest.HttpServerRequest
  return `http://${request.headers["host"] ?? "localhost"}`
})
