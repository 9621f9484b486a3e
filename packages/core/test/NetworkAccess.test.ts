import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as NetworkAccess from "../src/NetworkAccess.js"

const loopbackSpellings = [
  "127.0.0.1",
  "127.1",
  "2130706433",
  "0x7f.0.0.1",
  "0177.0.0.1",
  "127.255.255.254",
  "0.0.0.0",
  "::1",
  "::",
  "[::1]",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::7f00:1"
]

describe("NetworkAccess", () => {
  it("tells public addresses from private ones, in every spelling of loopback", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect(NetworkAccess.isPublicAddress(address), address).toBe(true)
    }
    for (
      const address of [
        ...loopbackSpellings,
        "10.1.2.3",
        "172.20.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "192.0.2.1",
        "224.0.0.1",
        "255.255.255.255",
        "fd00::1",
        "fe80::1",
        "64:ff9b::7f00:1",
        "2002:7f00:1::",
        "::ffff:10.0.0.1",
        "not an address",
        "localhost"
      ]
    ) expect(NetworkAccess.isPublicAddress(address), address).toBe(false)
  })

  it("allows a private address only by the operator's allow-list or allowPrivate; Unix sockets only by allowPrivate", () => {
    const policy: NetworkAccess.Policy = {
      allowPrivate: false,
      allowHosts: ["db.internal", "10.0.0.0/8", "192.168.1.7", "::ffff:172.16.0.0/108"]
    }
    expect(NetworkAccess.isAllowed(policy, "db.internal", "192.168.50.1")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "DB.Internal.", "192.168.50.1")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "other.internal", "192.168.50.1")).toBe(false)
    expect(NetworkAccess.isAllowed(policy, "x", "10.9.8.7")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "x", "::ffff:10.9.8.7")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "x", "192.168.1.7")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "x", "192.168.1.8")).toBe(false)
    expect(NetworkAccess.isAllowed(policy, "x", "172.16.3.4")).toBe(true)
    expect(NetworkAccess.isAllowed(policy, "x", "127.0.0.1")).toBe(false)
    expect(NetworkAccess.isAllowed(policy, "/var/run/postgresql", "/var/run/postgresql")).toBe(false)
    expect(NetworkAccess.isAllowed(NetworkAccess.publicOnly, "example.com", "93.184.215.14")).toBe(true)
    expect(NetworkAccess.isAllowed(NetworkAccess.allowAll, "/var/run/postgresql", "/var/run/postgresql")).toBe(true)
    expect(NetworkAccess.isAllowed(NetworkAccess.allowAll, "localhost", "127.0.0.1")).toBe(true)
  })

  it("validates the operator's allow-list", () => {
    expect(NetworkAccess.validateAllowHosts(["db.internal", "10.0.0.0/8", "fd00::/8", "10.1.2.3"])).toEqual(
      Either.right(["db.internal", "10.0.0.0/8", "fd00::/8", "10.1.2.3"])
    )
    expect(NetworkAccess.validateAllowHosts(["10.0.0.0/40"])).toEqual(
      Either.left("\"10.0.0.0/40\" is not a CIDR range")
    )
    expect(NetworkAccess.validateAllowHosts(["db internal"])).toEqual(
      Either.left("\"db internal\" is not a host name or an IP address")
    )
  })

  it("refuses a name in the lookup when any of its addresses is private, and answers as the socket asked", async () => {
    const addresses: Record<string, ReadonlyArray<NetworkAccess.LookupAddress>> = {
      "public.test": [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800::1", family: 6 }],
      "mixed.test": [{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }]
    }
    const resolve: NetworkAccess.Resolve = (hostname, callback) =>
      hostname in addresses
        ? callback(null, addresses[hostname]!)
        : callback(Object.assign(new Error("not found"), { code: "ENOTFOUND" }), [])
    const lookup = NetworkAccess.lookup(NetworkAccess.publicOnly, resolve)
    const call = (hostname: string, all: boolean) =>
      new Promise<{ error: Error | null; address: unknown; family?: number | undefined }>((resolve) =>
        lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family }))
      )
    expect(await call("public.test", false)).toEqual({ error: null, address: "93.184.215.14", family: 4 })
    expect((await call("public.test", true)).address).toEqual(addresses["public.test"])
    const mixed = await call("mixed.test", false)
    expect(NetworkAccess.isRefusal(mixed.error)).toBe(true)
    const missing = await call("missing.test", false)
    expect(NetworkAccess.isRefusal(missing.error)).toBe(false)
    expect((missing.error as { code?: string }).code).toBe("ENOTFOUND")
  })
})
