/**
 * One POST to a URL a tenant named, under the network rule (`guard.ts`): the socket's own lookup
 * refuses private addresses, redirects are not followed (a `3xx` is an answer like any other), and
 * an attempt ends at its timeout: a total deadline, which a receiver that answers a byte at a time
 * does not stretch. The one home of the request for chat webhooks and outbound events.
 *
 * @internal
 */
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"

/** What the receiver answered. */
export interface Answer {
  readonly status: number
  /** What the receiver asked for with `Retry-After`, in milliseconds. */
  readonly retryAfterMillis?: number | undefined
}

/** Why no answer came. */
export interface Unanswered {
  readonly message: string
  /** The network rule refused the address (trying again will not help). */
  readonly refused: boolean
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now. */
export const retryAfter = (header: string | undefined): number | undefined => {
  if (header === undefined) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const at = Date.parse(header)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** Posts `body` with `headers` (content type and length are added); the body of the answer is discarded. */
export const post = (
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: { readonly lookup: Net.LookupFunction; readonly timeoutMillis: number }
): Effect.Effect<Answer, Unanswered> =>
  Effect.async<Answer, Unanswered>((resume, signal) => {
    const client = url.protocol === "https:" ? Https : Http
    const timeout = options.timeoutMillis
    const request = client.request(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      lookup: options.lookup,
      timeout,
      signal
    }, (response) => {
      // The status is the answer: what follows it is not read, nor waited for.
      response.destroy()
      resume(Effect.succeed({
        status: response.statusCode ?? 0,
        retryAfterMillis: retryAfter(response.headers["retry-after"])
      }))
    })
    request.on("timeout", () => request.destroy(new Error(`no answer within ${timeout} ms`)))
    request.on("error", (error: NodeJS.ErrnoException) => {
      if (signal.aborted) return
      resume(Effect.fail({ message: error.message, refused: NetworkAccess.isRefusal(error) }))
    })
    request.end(body)
  }).pipe(
    // Interrupting aborts the request (its `signal`), wherever it is.
    Effect.timeoutFail({
      duration: options.timeoutMillis,
      onTimeout: (): Unanswered => ({ message: `no answer within ${options.timeoutMillis} ms`, refused: false })
    })
  )
