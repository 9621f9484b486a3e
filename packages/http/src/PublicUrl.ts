/**
 * Where people reach this deployment: the base of the links it hands out (sign-in links). Configure
 * it: without one, links point at `http://localhost` (`unconfigured`). They are never built from the
 * request's `Host`, which the client writes: a reset link e-mailed to an admin would otherwise send
 * its token to whatever host the attacker named.
 *
 * The same goes for which browser pages may drive the server where no CORS preflight guards it
 * (the MCP endpoint): the public URL's origin and the deployment's allowed origins, never one read
 * from `Host`, which DNS rebinding lets a foreign page's name carry.
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

/**
 * Browser origins allowed to call the deployment besides its public URL's (`SIGHTLINE_CORS_ORIGINS`).
 *
 * @since 0.1.0
 * @category services
 */
export class AllowedOrigins extends Context.Tag("@sightline/http/PublicUrl/AllowedOrigins")<
  AllowedOrigins,
  ReadonlyArray<string>
>() {}

/**
 * An allowed-origins layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAllowedOrigins = (origins: ReadonlyArray<string>): Layer.Layer<AllowedOrigins> =>
  Layer.succeed(AllowedOrigins, origins)

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Whether a page of `origin` may call the deployment: the public URL's origin, an allowed origin,
 * or, where no public URL is configured, a page on a loopback address (`http://localhost:8787`).
 * Compared as origins (scheme, host and port), never with the request's `Host`.
 *
 * @since 0.1.0
 * @category utils
 */
export const originAllowed = (
  origin: string,
  deployment: { readonly publicUrl: Option.Option<string>; readonly allowed: ReadonlyArray<string> }
): boolean => {
  let parsed: URL
  try {
    parsed = new URL(origin)
  } catch {
    return false
  }
  const allowed = [...Option.toArray(deployment.publicUrl), ...deployment.allowed].flatMap((url) => {
    try {
      return [new URL(url).origin]
    } catch {
      return []
    }
  })
  if (allowed.includes(parsed.origin)) return true
  return Option.isNone(deployment.publicUrl) && parsed.protocol === "http:" && loopbackHosts.has(parsed.hostname)
}

/**
 * The deployment's `originAllowed`, over the services in context (read where a handler is built).
 *
 * @since 0.1.0
 * @category utils
 */
export const originPolicy: Effect.Effect<(origin: string) => boolean> = Effect.map(
  Effect.all([Effect.serviceOption(PublicUrl), Effect.serviceOption(AllowedOrigins)]),
  ([publicUrl, allowed]) => (origin) =>
    originAllowed(origin, { publicUrl, allowed: Option.getOrElse(allowed, () => []) })
)
