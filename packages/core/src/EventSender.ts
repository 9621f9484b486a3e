/**
 * The event sender port: one signed attempt to deliver an outbound event to an endpoint. The
 * adapter (`@sightline/delivery`'s `EventWebhook`) signs with the Standard Webhooks library and
 * connects under the same network rule as every other URL a tenant names; the schedule of attempts,
 * and what an answer means, are `OutboundEvents`'.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/**
 * One attempt to send.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly url: string
  /** `webhook-id`: the event's id, the same on every attempt. */
  readonly id: string
  /** `webhook-timestamp`: this attempt's time. */
  readonly timestamp: Date
  /** The exact bytes to sign and send. */
  readonly body: string
  /** The `whsec_…` secrets to sign with: the current one first, then one in its rotation grace. */
  readonly secrets: ReadonlyArray<string>
}

/**
 * What came of an attempt: the endpoint's status, or why there was none.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly status?: number | undefined
  readonly latencyMillis: number
  /** `Retry-After`, in milliseconds. */
  readonly retryAfterMillis?: number | undefined
  /** Why no answer came (refused by the network rule, unreachable, timed out), safe to show. */
  readonly error?: string | undefined
}

/**
 * Sends signed events.
 *
 * @since 0.1.0
 * @category services
 */
export class EventSender extends Context.Tag("@sightline/core/EventSender")<EventSender, EventSender.Service>() {}

export declare namespace EventSender {
  /** The sender. */
  export interface Service {
    /** Why the sender will never post to `url` (http, a private address), or `undefined`. */
    readonly urlProblem: (url: string) => string | undefined
    /** One attempt; never fails: a failure is a `Response` without a 2xx status. */
    readonly send: (request: Request) => Effect.Effect<Response>
  }
}

/**
 * The memory sender's record and script, for tests.
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryEventSender extends Context.Tag("@sightline/core/EventSender/MemoryEventSender")<
  MemoryEventSender,
  {
    /** Every request, in order. */
    readonly sent: Effect.Effect<ReadonlyArray<Request>>
    /** How the endpoints answer from now on: `n` is the request's 1-based place among all. */
    readonly respond: (answer: (request: Request, n: number) => Response) => Effect.Effect<void>
  }
>() {}

/**
 * A sender for unit tests: it records each request and answers `204` unless told otherwise
 * (`MemoryEventSender.respond`); https URLs only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<EventSender | MemoryEventSender> = Layer.effectContext(
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<Request>>([])
    const answer = yield* Ref.make<(request: Request, n: number) => Response>(() => ({
      status: 204,
      latencyMillis: 0
    }))
    const sender = EventSender.of({
      urlProblem: (url) => url.startsWith("https://") ? undefined : "the webhook URL must be https",
      send: (request) =>
        Effect.flatMap(
          Ref.updateAndGet(sent, (all) => [...all, request]),
          (all) => Effect.map(Ref.get(answer), (respond) => respond(request, all.length))
        )
    })
    return Context.make(EventSender, sender).pipe(
      Context.add(MemoryEventSender, { sent: Ref.get(sent), respond: (f) => Ref.set(answer, f) })
    )
  })
)

/**
 * The sender of a deployment that has none: every attempt fails, saying so.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUnconfigured: Layer.Layer<EventSender> = Layer.succeed(
  EventSender,
  EventSender.of({
    urlProblem: () => "outbound webhooks are not configured on this server",
    send: () => Effect.succeed({ latencyMillis: 0, error: "outbound webhooks are not configured on this server" })
  })
)
