/**
 * Server-Sent Events for /v2 streams: the framing, and the response body events are pushed into.
 *
 * @internal
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Duration from "effect/Duration"
import { Readable } from "node:stream"
import * as HttpMetrics from "../HttpMetrics.js"

const encoder = new TextEncoder()

/** One event: its `id:` and its JSON `data:`. */
export const event = (id: number, data: unknown): Uint8Array =>
  encoder.encode(`id: ${id}\ndata: ${JSON.stringify(data)}\n\n`)

/** A comment line: ignored by SSE clients, it keeps proxies from closing an idle connection. */
export const heartbeat: Uint8Array = encoder.encode(": keep-alive\n\n")

/** How long a stream may go without a write before a comment is sent. */
export const heartbeatInterval = "15 seconds"

/** Responses that proxies must neither cache nor buffer. */
export const headers = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/**
 * A stream's body: a Node stream that frames are pushed into as they come. An Effect stream per
 * response allocated on every event and kept it until the next one, so with many streams open V8
 * promoted that garbage (1,000 followers in `pnpm bench:chat`: 536 MB peak instead of about 300),
 * and its fiber hops added to every event's latency. What a slow client has not read waits in the
 * stream's buffer, as references to frames shared by every stream that carries them.
 */
export interface Body {
  readonly readable: Readable
  /** Pushes frames (ignored once ended). */
  readonly send: (bytes: Uint8Array) => void
  /** Sends a comment when nothing was sent for `heartbeatInterval`. */
  readonly keepAlive: () => void
  /** Ends the stream after what was sent (once). */
  readonly end: () => void
  /** Runs `f` once the response is over: ended and read, or its client gone. */
  readonly onClose: (f: () => void) => void
}

/**
 * A body whose keep-alive its owner calls (`keepAlive`: a comment once `heartbeatInterval` passed
 * without a write), or, with `keepAliveTimer`, a timer that sends one after that long without a write.
 *
 * `source` is the request's platform object (`HttpServerRequest.source`). On Node it is an
 * `IncomingMessage`, whose socket a frame is flushed to at once: Node's response corks its socket
 * for each chunk and uncorks it on `process.nextTick`, which waits until the microtask queue, where
 * Effect's scheduler runs fibers, is empty. At the end of an answer that was everything the run still
 * had to do: `done` reached its client about a millisecond later (`pnpm bench:chat`).
 */
export const body = (
  options: {
    readonly keepAliveTimer?: Duration.DurationInput | undefined
    readonly source?: unknown
  } = {}
): Body => {
  const socket = (options.source as { readonly socket?: Corkable | null } | undefined)?.socket ?? undefined
  const readable = new Readable({ read() {} })
  const interval = Duration.toMillis(heartbeatInterval)
  let lastWrite = Date.now()
  let ended = false
  const send = (bytes: Uint8Array) => {
    if (ended) return
    lastWrite = Date.now()
    timer?.refresh()
    readable.push(bytes)
    // A frame the response took at once has left the socket's buffer now; one it queued (its client
    // reads slowly) leaves when the client has read the earlier ones, as before.
    if (socket !== undefined && socket.writableCorked > 0) socket.uncork()
  }
  const timer = options.keepAliveTimer === undefined ? undefined : setTimeout(function beat() {
    send(heartbeat)
  }, Duration.toMillis(options.keepAliveTimer))
  const end = () => {
    if (ended) return
    ended = true
    clearTimeout(timer)
    readable.push(null)
  }
  readable.once("close", () => {
    ended = true
    clearTimeout(timer)
  })
  HttpMetrics.streamOpened((f) => readable.once("close", f))
  return {
    readable,
    send,
    keepAlive: () => {
      if (Date.now() - lastWrite >= interval) send(heartbeat)
    },
    end,
    onClose: (f) => readable.once("close", f)
  }
}

/** What a Node socket offers to flush a corked write. */
interface Corkable {
  readonly writableCorked: number
  readonly uncork: () => void
}

/** The response that carries `body`. */
export const response = (body: Body): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.raw(body.readable, { contentType: "text/event-stream", headers })
