/**
 * Which network addresses the server may connect to on a tenant's behalf: the one rule behind data
 * connectors and chat-channel webhooks, both of which connect wherever an organization says.
 *
 * An organization is not trusted with the server's own network. By default only public addresses
 * are reached: loopback, private, carrier-grade NAT, link-local, unique-local, multicast, reserved
 * and documentation ranges are refused, IPv4-mapped and IPv4-compatible IPv6 forms are read as
 * the IPv4 address they carry, and Unix sockets are refused. The operator (and only the operator)
 * opens more, with `allowPrivate` or an allow-list of host names and CIDR ranges.
 *
 * The rule runs on resolved addresses, in the socket's own DNS lookup (`lookup`), so the address
 * checked is the address connected to: a name that resolves to a public address once and a
 * private one the next time gains nothing.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import ipaddr from "ipaddr.js"

/**
 * What the operator allows beyond the public internet.
 *
 * @since 0.1.0
 * @category models
 */
export interface Policy {
  /** Every address, private and loopback ones and Unix sockets included. */
  readonly allowPrivate: boolean
  /** Host names (exact, case-insensitive) and CIDR ranges that are allowed although private. */
  readonly allowHosts: ReadonlyArray<string>
}

/**
 * The default: the public internet only.
 *
 * @since 0.1.0
 * @category constants
 */
export const publicOnly: Policy = { allowPrivate: false, allowHosts: [] }

/**
 * Everything (development and tests, or an operator who runs a single tenant).
 *
 * @since 0.1.0
 * @category constants
 */
export const allowAll: Policy = { allowPrivate: true, allowHosts: [] }

/**
 * Checks an allow-list's entries (host names, IP addresses, CIDR ranges), answering the first that
 * is neither: an operator's typo must stop the start, not open or close the wrong thing.
 *
 * @since 0.1.0
 * @category utils
 */
export const validateAllowHosts = (entries: ReadonlyArray<string>): Either.Either<ReadonlyArray<string>, string> => {
  for (const entry of entries) {
    if (entry.includes("/")) {
      if (!ipaddr.isValidCIDR(entry)) return Either.left(`"${entry}" is not a CIDR range`)
    } else if (!ipaddr.isValid(entry) && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(entry)) {
      return Either.left(`"${entry}" is not a host name or an IP address`)
    }
  }
  return Either.right(entries)
}

// IPv4-compatible IPv6 (`::a.b.c.d`, deprecated), which ipaddr.js files as unicast.
const ipv4Compatible = ipaddr.parseCIDR("::/96")

const parse = (address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  const bare = address.replace(/^\[|\]$/g, "")
  if (!ipaddr.isValid(bare)) return undefined
  // `process` reads an IPv4-mapped IPv6 address as its IPv4 address.
  return ipaddr.process(bare)
}

/**
 * Is `address` on the public internet? IPv4 in any form the C library accepts (`127.1`,
 * `2130706433`, `0x7f.1`), IPv6, and IPv4-mapped IPv6; anything else is not.
 *
 * @since 0.1.0
 * @category guards
 */
export const isPublicAddress = (address: string): boolean => {
  const parsed = parse(address)
  if (parsed === undefined || parsed.range() !== "unicast") return false
  return !(parsed.kind() === "ipv6" && parsed.match(ipv4Compatible))
}

/** Is an IP address (any spelling) or a CIDR entry of the allow-list a match for `address`? */
const allowedRange = (entry: string, address: ipaddr.IPv4 | ipaddr.IPv6): boolean => {
  if (entry.includes("/")) {
    const [network, bits] = ipaddr.parseCIDR(entry)
    const normalized = network.kind() === "ipv6" && (network as ipaddr.IPv6).isIPv4MappedAddress()
      ? [(network as ipaddr.IPv6).toIPv4Address(), bits - 96] as const
      : [network, bits] as const
    return address.kind() === normalized[0].kind() && address.match(normalized[0], normalized[1])
  }
  const single = parse(entry)
  return single !== undefined && single.kind() === address.kind() && single.toString() === address.toString()
}

/**
 * Does `address` match one of `entries` (IP addresses in any spelling, and CIDR ranges)? Host names
 * in `entries` match nothing here.
 *
 * @since 0.1.0
 * @category utils
 */
export const inRanges = (entries: ReadonlyArray<string>, address: string): boolean => {
  const parsed = parse(address)
  return parsed !== undefined && entries.some((entry) => isAddressOrRange(entry) && allowedRange(entry, parsed))
}

/**
 * Is `entry` an IP address (any spelling) or a CIDR range?
 *
 * @since 0.1.0
 * @category guards
 */
export const isAddressOrRange = (entry: string): boolean =>
  entry.includes("/") ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry)

/**
 * May the server connect to `address`, which `host` (the name a tenant gave, or the address
 * itself) resolved to? Unix socket paths (a host starting with `/`) are allowed only with
 * `allowPrivate`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isAllowed = (policy: Policy, host: string, address: string): boolean => {
  if (policy.allowPrivate) return true
  if (host.startsWith("/") || address.startsWith("/")) return false
  if (isPublicAddress(address)) return true
  const parsed = parse(address)
  if (parsed === undefined) return false
  const name = host.toLowerCase().replace(/\.$/, "")
  return policy.allowHosts.some((entry) =>
    entry.includes("/") || ipaddr.isValid(entry) ? allowedRange(entry, parsed) : entry.toLowerCase() === name
  )
}

/**
 * The code of the error a refused lookup fails with (as Node's own lookup errors have codes).
 *
 * @since 0.1.0
 * @category constants
 */
export const refusedCode = "EPRIVATE"

/**
 * One address of a lookup, as Node's `dns.lookup` answers it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LookupAddress {
  readonly address: string
  readonly family: number
}

/**
 * A resolver as Node's `dns.lookup(hostname, { all: true }, callback)`.
 *
 * @since 0.1.0
 * @category models
 */
export type Resolve = (
  hostname: string,
  callback: (error: Error | null, addresses: ReadonlyArray<LookupAddress>) => void
) => void

/**
 * A socket's `lookup` option, as `net.connect` calls it.
 *
 * @since 0.1.0
 * @category models
 */
export type Lookup = (
  hostname: string,
  options: { readonly all?: boolean | undefined },
  callback: (error: Error | null, address: string | ReadonlyArray<LookupAddress>, family?: number) => void
) => void

/**
 * A socket's `lookup` under `policy`: it resolves every address of the name and refuses the name
 * (an error with code `EPRIVATE`) if any one is not allowed, so a name with one public and one
 * private address cannot be steered to the private one.
 *
 * @since 0.1.0
 * @category utils
 */
export const lookup = (policy: Policy, resolve: Resolve): Lookup => (hostname, options, callback) => {
  resolve(hostname, (error, addresses) => {
    if (error !== null) return callback(error, "", 0)
    const refused = addresses.find((a) => !isAllowed(policy, hostname, a.address))
    if (refused !== undefined || addresses.length === 0) return callback(refusal(hostname), "", 0)
    if (options.all === true) return callback(null, addresses)
    callback(null, addresses[0]!.address, addresses[0]!.family)
  })
}

/**
 * Is `error` a refusal of `lookup` (or of a check of a literal address that threw one)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isRefusal = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === refusedCode

/**
 * A refusal for `host`, to fail a connection with before it starts.
 *
 * @since 0.1.0
 * @category utils
 */
export const refusal = (host: string): Error =>
  Object.assign(new Error(`${host} is not a public address`), { code: refusedCode })
