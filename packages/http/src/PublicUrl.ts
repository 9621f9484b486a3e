/**
 * Where people reach this deployment: the base of the links it hands out (sign-in links). Configure
 * it: without one, links point at `http://localhost` (`unconfigured`). They are never built from the
 * request's `Host`, which the client writes: a reset link e-mailed to an admin would otherwise send
 * its token to whatever host the attacker named.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The public base URL (`scheme://host[:port][/path]`, no trailing slash).
 *
 * @since 0.1.0
 * @category services
 */
export class PublicUrl extends Context.Tag("@sightline/http/PublicUrl")<PublicUrl, string>() {}

/**
 * A public URL layer; a trailing slash is dropped.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (url: string): Layer.Layer<PublicUrl> => Layer.succeed(PublicUrl, url.replace(/\/+$/, ""))

/**
 * The console's page that sets a password with a sign-in link's token (the token stays out of logs).
 *
 * @since 0.1.0
 * @category utils
 */
export const signInLink = (base: string, token: string): string => `${base}/#/set-password/${token}`

/**
 * The base of links where no public URL is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const unconfigured = "http://localhost"

/**
 * The base of the deployment's links: the configured one, else `unconfigured`. Read where a handler
 * is built, since a request runs without the host's services.
 *
 * @since 0.1.0
 * @category utils
 */
export const base: Effect.Effect<string> = Effect.map(
  Effect.serviceOption(PublicUrl),
  Option.getOrElse(() => unconfigured)
)
