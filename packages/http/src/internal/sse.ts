/**
 * Server-Sent Events framing for /v2 streams.
 *
 * @internal
 */
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

const encoder = new TextEncoder()

/** One event: its `id:` and its JSON `data:`. */
export const event = (id: number, data: unknown): Uint8Array =>
  encoder.encode(`id: ${id}\ndata: ${JSON.stringify(data)}\n\n`)

/** A comment line: ignored by SSE clients, it keeps proxies from closing an idle connection. */
export const heartbeat: Uint8Array = encoder.encode(": keep-alive\n\n")

/** How often a comment is sent while the stream is open. */
export const heartbeatInterval = "15 seconds"

/** Responses that proxies must neither cache nor buffer. */
export const headers = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** The events with a heartbeat every 15 s; ends when the events end. */
export const withHeartbeat = <E, R>(events: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Uint8Array, E, R> =>
  Stream.merge(events, Stream.fromSchedule(Schedule.spaced(heartbeatInterval)).pipe(Stream.as(heartbeat)), {
    haltStrategy: "left"
  })
