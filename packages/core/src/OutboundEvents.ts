/**
 * Publishing outbound events (see `OutboundEvent` for the model; `WebhookDelivery` delivers them).
 *
 * - **`publish`** records an event and queues one `webhook.deliver` job per enabled endpoint that
 *   subscribes to its type, in one transaction: called inside the transaction of what happened, an
 *   event exists exactly when that did. An event nobody subscribes to is not recorded.
 * - **`replay`** queues a new delivery of a recorded event to an endpoint, whatever came of the
 *   earlier ones; it carries the same `webhook-id`, so a receiver that already handled it can tell.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { IdGenerator } from "./IdGenerator.js"
import { type OrganizationId, OutboundEventId, type WebhookEndpointId } from "./Ids.js"
import * as JobQueue from "./JobQueue.js"
import * as OutboundEvent from "./OutboundEvent.js"
import { OutboundEventRepo } from "./OutboundEventRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import { WebhookEndpointRepo } from "./WebhookEndpointRepo.js"

/**
 * Publishes outbound events.
 *
 * @since 0.1.0
 * @category services
 */
export class OutboundEvents extends Context.Tag("@sightline/core/OutboundEvents")<
  OutboundEvents,
  OutboundEvents.Service
>() {}

export declare namespace OutboundEvents {
  /** The operations. */
  export interface Service {
    /** Records `type` with `data` (ids only) for every subscribed endpoint of the organization. */
    readonly publish: (
      organizationId: OrganizationId,
      type: OutboundEvent.EventType,
      data: OutboundEvent.EventData
    ) => Effect.Effect<void>
    /** Queues another delivery of the event to the endpoint; false when either is not the organization's. */
    readonly replay: (
      organizationId: OrganizationId,
      endpointId: WebhookEndpointId,
      eventId: OutboundEventId
    ) => Effect.Effect<boolean>
  }
}

/** A `webhook.deliver` job's enqueue options. */
const deliveryJob = (payload: OutboundEvent.JobPayload, dedupeKey: string): JobQueue.EnqueueOptions => ({
  organizationId: payload.organizationId,
  kind: OutboundEvent.jobKind,
  payload,
  dedupeKey,
  maxAttempts: OutboundEvent.maxAttempts
})

/**
 * Builds the service over the repositories, the job queue and the sender in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const endpoints = yield* WebhookEndpointRepo
  const events = yield* OutboundEventRepo
  const jobs = yield* JobQueue.JobQueue
  const tx = yield* Transaction
  const ids = yield* IdGenerator

  const publish = Traced.fn("OutboundEvents.publish")(
    function*(organizationId: OrganizationId, type: OutboundEvent.EventType, data: OutboundEvent.EventData) {
      yield* Effect.annotateCurrentSpan("sightline.event.type", type)
      yield* tx.withTransaction(Effect.gen(function*() {
        const subscribed = yield* endpoints.listSubscribed(organizationId, type)
        if (subscribed.length === 0) return
        const now = yield* DateTime.now
        const payload: OutboundEvent.Payload = { type, timestamp: DateTime.formatIso(now), data }
        const event = new OutboundEvent.EventRecord({
          id: OutboundEventId.make(yield* ids.uuid),
          organization_id: organizationId,
          type,
          body: JSON.stringify(payload),
          created_at: now
        })
        yield* events.createEvent(event)
        for (const endpoint of subscribed) {
          yield* jobs.enqueue(deliveryJob(
            { organizationId, eventId: event.id, endpointId: endpoint.id },
            `event:${event.id}:${endpoint.id}`
          ))
        }
      }))
    }
  )

  const replay = Traced.fn("OutboundEvents.replay")(
    function*(organizationId: OrganizationId, endpointId: WebhookEndpointId, eventId: OutboundEventId) {
      const event = yield* events.getEvent(organizationId, eventId)
      const endpoint = yield* endpoints.get(organizationId, endpointId)
      if (Option.isNone(event) || Option.isNone(endpoint)) return false
      yield* jobs.enqueue(deliveryJob(
        { organizationId, eventId, endpointId },
        `event:${eventId}:${endpointId}:replay:${yield* ids.uuid}`
      ))
      return true
    }
  )

  return OutboundEvents.of({ publish, replay })
})

/**
 * The service over `WebhookEndpointRepo`, `OutboundEventRepo`, `JobQueue`, `Transaction` and
 * `IdGenerator`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(OutboundEvents, make)
