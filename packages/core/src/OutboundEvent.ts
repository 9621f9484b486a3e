/**
 * Outbound events: what Sightline tells an organization's own systems when something happened (a
 * playbook run completed, a change merged, a key was revoked), delivered to the endpoints that
 * subscribe to it as Standard Webhooks (https://www.standardwebhooks.com).
 *
 * - **Thin payloads.** The body is `{type, timestamp, data}` with the ids of what happened: the
 *   receiver fetches the details with its own key, under its own permissions, so an event never
 *   carries rows, answers or anything a key could not read.
 * - **One body per event.** The body is serialized once, when the event is recorded, and every
 *   attempt and replay signs and sends those exact bytes: a re-serialized body would not verify.
 * - **Durable delivery.** Each (event, endpoint) pair is a job of the job queue: at least once, from
 *   any process, retried on `retryDelays` (about three days), or when a `429`/`503` answer's
 *   `Retry-After` asks.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { OrganizationId, OutboundEventId, WebhookAttemptId, WebhookEndpointId } from "./Ids.js"

/**
 * The event types an endpoint can subscribe to.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventType = Schema.Literal(
  "chat.completed",
  "playbook.run.completed",
  "playbook.run.failed",
  "agent.run.completed",
  "agent.run.failed",
  "change.opened",
  "change.merged",
  "change.denied",
  "eval.run.completed",
  "api_key.created",
  "api_key.revoked"
).annotations({ identifier: "EventType" })
export type EventType = typeof EventType.Type

/**
 * The ids an event names (`chat_id`, `playbook_id`, `run_id`, ...): strings only, by construction.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventData = Schema.Record({ key: Schema.String, value: Schema.String })
export type EventData = typeof EventData.Type

/**
 * The body every delivery of an event carries.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Payload = Schema.Struct({
  type: EventType,
  /** When the event happened (ISO 8601), the same on every attempt. */
  timestamp: Schema.String,
  data: EventData
}).annotations({ identifier: "WebhookEventPayload" })
export type Payload = typeof Payload.Type

/**
 * An event as stored: `body` is the exact JSON text that is signed and sent.
 *
 * @since 0.1.0
 * @category models
 */
export class EventRecord extends Schema.Class<EventRecord>("@sightline/core/OutboundEvent/EventRecord")({
  id: OutboundEventId,
  organization_id: OrganizationId,
  type: EventType,
  body: Schema.String,
  created_at: Schema.DateTimeUtc
}) {}

/**
 * One delivery attempt as stored: what the endpoint answered (or why nothing came back), and how long
 * it took.
 *
 * @since 0.1.0
 * @category models
 */
export class AttemptRecord extends Schema.Class<AttemptRecord>("@sightline/core/OutboundEvent/AttemptRecord")({
  id: WebhookAttemptId,
  organization_id: OrganizationId,
  endpoint_id: WebhookEndpointId,
  event_id: OutboundEventId,
  event_type: EventType,
  /** 1 for the first attempt of a delivery; a replay starts again at 1. */
  attempt: Schema.Int.pipe(Schema.positive()),
  succeeded: Schema.Boolean,
  /** The endpoint's HTTP status; absent when no answer came (refused, unreachable, timed out). */
  response_status: Schema.optional(Schema.Int),
  latency_ms: Schema.Int.pipe(Schema.nonNegative()),
  /** Why the attempt failed, in words safe to show the organization's admins. */
  error: Schema.optional(Schema.String),
  /** When the next attempt is due; absent when none will follow. */
  next_attempt_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * An attempt as served in an endpoint's delivery log.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeliveryAttempt = Schema.Struct({
  id: WebhookAttemptId,
  event_id: OutboundEventId,
  event_type: EventType,
  attempt: Schema.Int,
  succeeded: Schema.Boolean,
  response_status: Schema.optional(Schema.Int),
  latency_ms: Schema.Int,
  error: Schema.optional(Schema.String),
  next_attempt_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
}).annotations({ identifier: "WebhookDeliveryAttempt" })
export type DeliveryAttempt = typeof DeliveryAttempt.Type

/**
 * The served form of an attempt.
 *
 * @since 0.1.0
 * @category utils
 */
export const toDeliveryAttempt = (record: AttemptRecord): DeliveryAttempt => ({
  id: record.id,
  event_id: record.event_id,
  event_type: record.event_type,
  attempt: record.attempt,
  succeeded: record.succeeded,
  ...(record.response_status === undefined ? {} : { response_status: record.response_status }),
  latency_ms: record.latency_ms,
  ...(record.error === undefined ? {} : { error: record.error }),
  ...(record.next_attempt_at === undefined ? {} : { next_attempt_at: record.next_attempt_at }),
  created_at: record.created_at
})

/**
 * The waits between attempts, after the first (which is immediate): the Standard Webhooks example
 * schedule, ten attempts over about three days.
 *
 * @since 0.1.0
 * @category constants
 */
export const retryDelays: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(14),
  Duration.hours(20),
  Duration.hours(24)
]

/**
 * Attempts of one delivery.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxAttempts = retryDelays.length + 1

/**
 * The longest wait a `Retry-After` can ask for: the schedule's longest.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxRetryAfter = Duration.hours(24)

/**
 * The wait after failed attempt `attempt` (1-based), or `undefined` after the last. `jitter` (from
 * 0.8 to 1.2) spreads retries of many deliveries that failed together; a `Retry-After` the endpoint
 * sent replaces the schedule's wait (it knows when it will be back), up to `maxRetryAfter`.
 *
 * @since 0.1.0
 * @category utils
 */
export const nextDelay = (
  attempt: number,
  jitter: number,
  retryAfterMillis?: number | undefined
): Duration.Duration | undefined => {
  if (attempt >= maxAttempts) return undefined
  if (retryAfterMillis !== undefined) {
    return Duration.min(Duration.millis(Math.max(0, retryAfterMillis)), maxRetryAfter)
  }
  const wait = retryDelays[attempt - 1]
  return wait === undefined ? undefined : Duration.millis(Math.round(Duration.toMillis(wait) * jitter))
}

/**
 * The job kind of a delivery.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobKind = "webhook.deliver"

/**
 * The payload of a `webhook.deliver` job.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobPayload = Schema.Struct({
  organizationId: OrganizationId,
  eventId: OutboundEventId,
  endpointId: WebhookEndpointId
})
export type JobPayload = typeof JobPayload.Type
