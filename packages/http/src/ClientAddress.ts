/**
 * The address of the client behind a request, for the limits that count per client (failed
 * authentications, failed sign-ins). By default the socket's peer. Behind a reverse proxy every
 * client would share the proxy's address, so one client's failures would lock everyone out: the
 * operator names the proxies (`TrustedProxies`), and for a request from one of them the client is
 * the last address of `X-Forwarded-For` that is not itself a trusted proxy. A header from anyone
 * else is ignored: a client could write any address into it.
 *
 * @since 0.1.0
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The proxies whose `X-Forwarded-For` is believed: IP addresses and CIDR ranges.
 *
 * @since 0.1.0
 * @category services
 */
export class TrustedProxies
  extends Context.Tag("@sightline/http/ClientAddress/TrustedProxies")<TrustedProxies, ReadonlyArray<string>>()
{}

/**
 * Trusts these proxies (`SIGHTLINE_TRUSTED_PROXIES` on the standalone server).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTrustedProxies = (entries: ReadonlyArray<string>): Layer.Layer<TrustedProxies> =>
  Layer.succeed(TrustedProxies, entries)

/**
 * The client's address of `request` when `trusted` proxies are believed.
 *
 * @since 0.1.0
 * @category utils
 */
export const of = (request: HttpServerRequest.HttpServerRequest, trusted: ReadonlyArray<string>): string => {
  const peer = Option.getOrElse(request.remoteAddress, () => "unknown")
  if (trusted.length === 0 || !NetworkAccess.inRanges(trusted, peer)) return peer
  const forwarded = (request.headers["x-forwarded-for"] ?? "").split(",").map((hop) => hop.trim()).filter((hop) =>
    hop !== ""
  )
  // Right to left: each trusted proxy appended the address it received from.
  for (let i = forwarded.length - 1; i >= 0; i--) {
    if (!NetworkAccess.inRanges(trusted, forwarded[i]!)) return forwarded[i]!
  }
  return forwarded[0] ?? peer
}

/**
 * A resolver over the `TrustedProxies` in context (none when absent), read once where a handler is built.
 *
 * @since 0.1.0
 * @category constants
 */
export const resolver: Effect.Effect<(request: HttpServerRequest.HttpServerRequest) => string> = Effect.map(
  Effect.serviceOption(TrustedProxies),
  (trusted) => {
    const entries = Option.getOrElse(trusted, () => [])
    return (request) => of(request, entries)
  }
)
