/**
 * Core's `OAuthClientDocuments` over https: a GET of the client's URL under the same network rule as
 * chat webhooks (public addresses only, checked on the address connected to, unless the operator
 * allows private ones), never redirected, answered whole within 5 seconds and 64 KiB.
 *
 * @since 0.1.0
 */
import { ClientDocumentError, OAuthClientDocuments } from "@sightline/core/OAuthClientDocuments"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Https from "node:https"
import * as Guard from "./internal/guard.js"

/**
 * Options of the reader.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Allow private and loopback addresses (development and tests only). */
  readonly allowPrivate?: boolean | undefined
  /** The time limit of one read (default 5 s). */
  readonly timeoutMillis?: number | undefined
}

/**
 * The largest document read.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBytes = 64 * 1024

const unreadable = "the client's metadata document could not be read: no answer from a public address in time"

/**
 * The reader.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): OAuthClientDocuments.Service => {
  const lookup = Guard.lookup(options.allowPrivate === true)
  const timeout = options.timeoutMillis ?? 5_000
  return OAuthClientDocuments.of({
    fetch: (url) =>
      Effect.async<unknown, ClientDocumentError>((resume_, signal) => {
        // A destroyed response can still end or fail: only the first outcome counts.
        let settled = false
        const resume = (effect: Effect.Effect<unknown, ClientDocumentError>) => {
          if (settled) return
          settled = true
          resume_(effect)
        }
        const fail = (message: string) => resume(Effect.fail(new ClientDocumentError({ message })))
        if (!url.startsWith("https://")) return fail("the client's metadata document must be at an https URL")
        if (Guard.refusedLiteral(new URL(url), options.allowPrivate === true)) {
          return fail("the client's metadata document is at a private address")
        }
        const request = Https.get(
          url,
          { lookup, timeout, signal, headers: { accept: "application/json" } },
          (response) => {
            if (response.statusCode !== 200) {
              response.resume()
              return fail(`the client's metadata document answered ${response.statusCode}`)
            }
            const chunks: Array<Buffer> = []
            let size = 0
            response.on("data", (chunk: Buffer) => {
              size += chunk.length
              if (size > maxBytes) {
                response.destroy()
                return fail(`the client's metadata document is larger than ${maxBytes} bytes`)
              }
              chunks.push(chunk)
            })
            response.on("end", () => {
              try {
                resume(Effect.succeed(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
              } catch {
                fail("the client's metadata document is not JSON")
              }
            })
            response.on("error", () => fail("the client's metadata document could not be read"))
          }
        )
        request.on("timeout", () => request.destroy(new Error(`no answer within ${timeout} ms`)))
        // One message whatever went wrong on the way (a name that does not resolve, one that resolves
        // to a private address, a refused connection): a member must not learn which of the server's
        // network's names exist by naming them.
        request.on("error", () => {
          if (!signal.aborted) fail(unreadable)
        })
      }).pipe(
        // A total deadline: a server that answers a byte at a time does not stretch it.
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new ClientDocumentError({ message: unreadable }) })
      )
  })
}

/**
 * The reader as core's `OAuthClientDocuments`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<OAuthClientDocuments> =>
  Layer.succeed(OAuthClientDocuments, make(options))
