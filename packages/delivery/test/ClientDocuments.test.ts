/**
 * Reading OAuth client ID metadata documents: only https, never into the server's own network
 * unless the operator allows it, within a size limit. The refusals need no server: they happen
 * before a connection is made (an address literal) or at the socket's lookup (a name).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"
import * as ClientDocuments from "../src/ClientDocuments.js"

const reasonOf = (url: string, options?: ClientDocuments.Options) =>
  Effect.map(Effect.flip(ClientDocuments.make(options).fetch(url)), (error) => error.message)

describe("ClientDocuments", () => {
  it.effect("reads only https URLs", () =>
    Effect.gen(function*() {
      expect(yield* reasonOf("http://example.com/client.json")).toMatch(/must be at an https URL/)
    }))

  it.effect("refuses private and loopback addresses, as literals and as names, unless allowed", () =>
    Effect.gen(function*() {
      for (const url of ["https://127.0.0.1/client.json", "https://[::1]/client.json", "https://10.0.0.1/c.json"]) {
        expect(yield* reasonOf(url)).toMatch(/private address/)
      }
      // A name that resolves privately reads like one that does not resolve: no oracle of the
      // server's network's names.
      const privateName = yield* reasonOf("https://localhost:1/client.json")
      expect(privateName).toMatch(/could not be read/)
      expect(yield* reasonOf("https://no-such-name.invalid/client.json")).toBe(privateName)
      // Allowed, the connection is attempted (and here finds nothing listening).
      expect(yield* reasonOf("https://127.0.0.1:1/client.json", { allowPrivate: true })).toBe(privateName)
    }))

  it.effect("gives up at its deadline on a server that answers a byte at a time", () =>
    Effect.gen(function*() {
      // A TLS record header announcing 16 KiB, then a byte every 50 ms: each byte would restart an
      // idle timeout, so only a total deadline ends it.
      const server = Net.createServer((socket) => {
        socket.once("data", () => {
          socket.write(Buffer.from([0x16, 0x03, 0x03, 0x40, 0x00]))
          const drip = setInterval(() => socket.write(Buffer.from([0x00])), 50)
          socket.on("close", () => clearInterval(drip))
          socket.on("error", () => clearInterval(drip))
        })
      })
      const port = yield* Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      })
      const started = Date.now()
      const reason = yield* reasonOf(`https://127.0.0.1:${port}/client.json`, {
        allowPrivate: true,
        timeoutMillis: 300
      })
      const took = Date.now() - started
      server.close()
      expect(reason).toMatch(/could not be read/)
      expect(took).toBeLessThan(2_000)
    }))

  it.effect("gives up on a server that does not answer in time", () =>
    Effect.gen(function*() {
      // A listener that accepts and never speaks: the TLS handshake waits until the time limit.
      const server = Net.createServer(() => {})
      const port = yield* Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      })
      const reason = yield* reasonOf(`https://127.0.0.1:${port}/client.json`, {
        allowPrivate: true,
        timeoutMillis: 200
      })
      server.close()
      expect(reason).toMatch(/could not be read/)
    }))
})
