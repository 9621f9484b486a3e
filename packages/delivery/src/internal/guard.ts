/**
 * Where the server may connect on a tenant's behalf (core's `NetworkAccess`), as a socket lookup:
 * the one home of the rule for every outbound request this package makes to a URL a tenant or a
 * client named (chat webhooks, OAuth client metadata documents).
 *
 * @internal
 */
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Dns from "node:dns"
import * as Net from "node:net"

/** A socket lookup that resolves every address of a name and refuses it if one is not allowed. */
export const lookup = (allowPrivate: boolean): Net.LookupFunction =>
  NetworkAccess.lookup(
    allowPrivate ? NetworkAccess.allowAll : NetworkAccess.publicOnly,
    (hostname, callback) => Dns.lookup(hostname, { all: true }, callback)
  ) as Net.LookupFunction

/**
 * Whether a URL's host is an address literal the rule refuses: a socket connects to a literal
 * without a lookup, so it is checked here, before connecting.
 */
export const refusedLiteral = (url: URL, allowPrivate: boolean): boolean => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  return !allowPrivate && Net.isIP(host) !== 0 && !NetworkAccess.isPublicAddress(host)
}
