/**
 * Delivering outbound events: one attempt of a claimed `webhook.deliver` job (queued by
 * `OutboundEvents.publish` or a replay), the worker's part.
 *
 * - The event's exact body is signed with the endpoint's secret (and the previous one during a
 *   rotation's grace) and sent by the `EventSender`; the attempt is logged with its status and
 *   latency.
 * - A `2xx` completes the delivery; `410 Gone` disables the endpoint and ends it; anything else
 *   (including `3xx`: redirects are not followed) is retried on `OutboundEvent.retryDelays`, or when
 *   a `429`/`503` answer's `Retry-After` says.
 * - The job queue makes it at least once across processes: an attempt whose process dies is
 *   claimed again.
 * - An event whose endpoint was deleted or disabled meanwhile is dropped.
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
import { WebhookAttemptId } from "./Ids.js"
import type * as JobQueue from "./JobQueue.js"
import * as OutboundEvent from "./OutboundEvent.js"
import { OutboundEventRepo } from "./OutboundEventRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import { WebhookEndpointRecord } from "./WebhookEndpoint.js"
import { WebhookEndpointRepo } from "./WebhookEndpointRepo.js"

/**
 * Delivers outbound events.
 *
 * @since 0.1.0
 * @category services
 */
export class WebhookDelivery extends Context.Tag("@sightline/core/WebhookDelivery")<
  WebhookDelivery,
  WebhookDelivery.Service
>() {}

export declare namespace WebhookDelivery {
  /** The operation. */
  export interface Service {
    /**
     * One attempt of a claimed `webhook.deliver` job: `undefined` when the delivery is over (sent,
     * or no longer wanted), else when and why to try again (the queue fails it for good when no
     * attempts remain).
     */
    readonly deliver: (job: JobQueue.Job) => Effect.Effect<JobQueue.FailOptions | undefined>
  }
}

const describe = (response: { readonly status?: number | undefined; readonly error?: string | undefined }) =>
  response.error ?? `the endpoint answered ${response.status}`

/**
 * Builds the service over the repositories and the sender in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const endpoints = yield* WebhookEndpointRepo
  const events = yield* OutboundEventRepo
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const sender = yield* EventSender

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

  return WebhookDelivery.of({ deliver })
})

/**
 * The service over `WebhookEndpointRepo`, `OutboundEventRepo`, `EventSender`, `Transaction` and
 * `IdGenerator`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(WebhookDelivery, make)
