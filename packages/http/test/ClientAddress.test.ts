import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as ClientAddress from "../src/ClientAddress.js"

const request = (peer: string, forwarded?: string) =>
  ({
    remoteAddress: Option.some(peer),
    headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded }
  }) as unknown as HttpServerRequest.HttpServerRequest

describe("ClientAddress", () => {
  it("is the socket's peer unless the peer is a trusted proxy", () => {
    expect(ClientAddress.of(request("203.0.113.7", "198.51.100.1"), [])).toBe("203.0.113.7")
    // A header from anyone else is ignored: a client writes what it likes there.
    expect(ClientAddress.of(request("203.0.113.7", "198.51.100.1"), ["10.0.0.0/8"])).toBe("203.0.113.7")
  })

  it("behind trusted proxies, is the last forwarded address that is no trusted proxy", () => {
    const trusted = ["10.0.0.0/8", "192.168.1.5"]
    // The client forged the first entry; the proxy appended what it saw.
    expect(ClientAddress.of(request("10.1.2.3", "1.2.3.4, 198.51.100.9"), trusted)).toBe("198.51.100.9")
    // Two proxies in a row.
    expect(ClientAddress.of(request("10.1.2.3", "198.51.100.9, 192.168.1.5"), trusted)).toBe("198.51.100.9")
    // IPv4-mapped peers count as their IPv4 address.
    expect(ClientAddress.of(request("::ffff:10.1.2.3", "198.51.100.9"), trusted)).toBe("198.51.100.9")
    // No header: the proxy itself.
    expect(ClientAddress.of(request("10.1.2.3"), trusted)).toBe("10.1.2.3")
  })
})
