/**
 * Publishing outbound events and delivering them (see `OutboundEvent` for the model).
 *
 * - **`publish`** records an event and queues one `webhook.deliver` job per enabled endpoint that
 *   subscribes to its type, in one transaction: called inside the transaction of what happened, an
 *   event exists exactly when that did. An event nobody subscribes to is not recorded.
 * - **`deliver`** is one attempt of a claimed job: the event's exact body, signed with the endpoint's
 *   secret (and the previous one during a rotation's grace), logged with its status and latency.
 *   A `2xx` completes the delivery; `410 Gone` disables the endpoint and ends it; anything else
 *   (including `3xx`: redirects are not followed) is retried on the schedule, or when the endpoint's
 *   `Retry-After` says. The job queue makes it at least once across processes: an attempt whose
 *   process dies is claimed again.
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
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import { EventSender } from "./EventSender.js"
import { IdGenerator } from "./IdGenerator.js"
import { type OrganizationId, OutboundEventId, WebhookAttemptId, type WebhookEndpointId } from "./Ids.js"
import * as JobQueue from "./JobQueue.js"
import * as OutboundEvent from "./OutboundEvent.js"
import { OutboundEventRepo } from "./OutboundEventRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import { WebhookEndpointRecord } from "./WebhookEndpoint.js"
import { WebhookEndpointRepo } from "./WebhookEndpointRepo.js"

/**
 * Publishes and delivers outbound events.
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
    /**
     * One attempt of a claimed `webhook.deliver` job: `undefined` when the delivery is over (sent,
     * or no longer wanted), else when and why to try again (the queue fails it for good when no
     * attempts remain).
     */
    readonly deliver: (job: JobQueue.Job) => Effect.Effect<JobQueue.FailOptions | undefined>
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

const describe = (response: { readonly status?: number | undefined; readonly error?: string | undefined }) =>
  response.error ?? `the endpoint answered ${response.status}`

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
  const sender = yield* EventSender

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

  const signingSecrets = (endpoint: WebhookEndpointRecord, now: DateTime.Utc): ReadonlyArray<string> =>
    endpoint.previous_secret !== undefined && endpoint.previous_secret_expires_at !== undefined &&
      DateTime.lessThan(now, endpoint.previous_secret_expires_at)
      ? [endpoint.secret, endpoint.previous_secret]
      : [endpoint.secret]

  const deliver = Traced.fn("OutboundEvents.deliver")(function*(job: JobQueue.Job) {
    const payload = yield* Effect.orDie(Schema.decodeUnknown(OutboundEvent.JobPayload)(job.payload))
    const { organizationId } = payload
    const event = yield* events.getEvent(organizationId, payload.eventId)
    const endpoint = yield* endpoints.get(organizationId, payload.endpointId)
    // Deleted or turned off since: the delivery is no longer wanted.
    if (Option.isNone(event) || Option.isNone(endpoint) || endpoint.value.disabled_at !== undefined) return undefined
    yield* Effect.annotateCurrentSpan({
      "sightline.event.type": event.value.type,
      "sightline.webhook.attempt": job.attempts
    })
    const sentAt = yield* DateTime.now
    const response = yield* sender.send({
      url: endpoint.value.url,
      id: event.value.id,
      timestamp: DateTime.toDateUtc(sentAt),
      body: event.value.body,
      secrets: signingSecrets(endpoint.value, sentAt)
    })
    const status = response.status
    const succeeded = status !== undefined && status >= 200 && status < 300
    const gone = status === 410
    const wait = succeeded || gone ? undefined : OutboundEvent.nextDelay(
      job.attempts,
      yield* Random.nextRange(0.8, 1.2),
      status === 429 || status === 503 ? response.retryAfterMillis : undefined
    )
    const now = yield* DateTime.now
    const retryAt = wait === undefined ? undefined : DateTime.addDuration(now, wait)
    yield* tx.withTransaction(Effect.gen(function*() {
      yield* events.recordAttempt(
        new OutboundEvent.AttemptRecord({
          id: WebhookAttemptId.make(yield* ids.uuid),
          organization_id: organizationId,
          endpoint_id: endpoint.value.id,
          event_id: event.value.id,
          event_type: event.value.type,
          attempt: job.attempts,
          succeeded,
          ...(status === undefined ? {} : { response_status: status }),
          latency_ms: Math.max(0, Math.round(response.latencyMillis)),
          ...(succeeded ? {} : { error: describe(response) }),
          ...(retryAt === undefined ? {} : { next_attempt_at: retryAt }),
          created_at: sentAt
        })
      )
      if (gone) {
        // Standard Webhooks: 410 means the receiver wants nothing more. An admin turns it back on.
        const current = yield* endpoints.get(organizationId, endpoint.value.id)
        if (Option.isSome(current) && current.value.disabled_at === undefined) {
          yield* endpoints.update(
            new WebhookEndpointRecord({
              ...current.value,
              disabled_at: now,
              disabled_reason: "the endpoint answered 410 Gone",
              updated_at: now
            })
          )
        }
      }
    }))
    if (succeeded || gone) return undefined
    return { error: describe(response), ...(retryAt === undefined ? {} : { retryAt }) }
  })

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

  return OutboundEvents.of({ publish, deliver, replay })
})

/**
 * The service over `WebhookEndpointRepo`, `OutboundEventRepo`, `JobQueue`, `EventSender`,
 * `Transaction` and `IdGenerator`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(OutboundEvents, make)

/**
 * Publishes `type` through the `OutboundEvents` in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const publish = (
  organizationId: OrganizationId,
  type: OutboundEvent.EventType,
  data: OutboundEvent.EventData
): Effect.Effect<void, never, OutboundEvents> =>
  Effect.flatMap(OutboundEvents, (service) => service.publish(organizationId, type, data))
