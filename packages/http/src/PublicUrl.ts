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

/**
 * How a handler finds the base of a request's links: the configured base, else the request's
 * `http://<Host>`. Read where the handler is built, since a request runs without the host's services.
 */
export const resolver: Effect.Effect<Effect.Effect<string, never, HttpServerRequest.HttpServerRequest>> = Effect.map(
  Effect.serviceOption(PublicUrl),
  Option.match({
    onSome: (configured) => Effect.succeed(configured),
    onNone: () =>
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => `http://${request.headers["host"] ?? "localhost"}`)
  })
)
