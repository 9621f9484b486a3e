/**
 * Webhook endpoints: where an organization receives its outbound events. An admin registers an
 * https URL and the event types it wants; Sightline signs every delivery with the endpoint's secret
 * (`whsec_…`, shown once, at creation and at rotation).
 *
 * The signing secret must stay readable to the server (it signs with it), so it is stored as is,
 * like a chat channel's webhook URL, and is write-only through the API: never served again, never
 * logged, never audited. A rotation keeps the previous secret for `rotationGraceHours`, during which
 * deliveries carry both signatures (Standard Webhooks §Signature scheme), so a receiver can switch
 * secrets without losing one event.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { WebhookUrl } from "./ChatChannel.js"
import { MemberId, OrganizationId, OutboundEventId, WebhookEndpointId } from "./Ids.js"
import { DeliveryAttempt, EventType } from "./OutboundEvent.js"

/**
 * How long a rotated-out secret still signs.
 *
 * @since 0.1.0
 * @category constants
 */
export const rotationGrace = Duration.hours(24)

/**
 * The most endpoints an organization may register.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ENDPOINTS = 20

/**
 * The prefix of a Standard Webhooks symmetric secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const SECRET_PREFIX = "whsec_"

const Description = Schema.String.pipe(Schema.maxLength(500))
const EventTypes = Schema.NonEmptyArray(EventType).pipe(Schema.maxItems(EventType.literals.length))

/**
 * An endpoint as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class WebhookEndpointRecord
  extends Schema.Class<WebhookEndpointRecord>("@sightline/core/WebhookEndpointRecord")({
    id: WebhookEndpointId,
    organization_id: OrganizationId,
    url: WebhookUrl,
    description: Schema.optional(Description),
    event_types: Schema.Array(EventType),
    /** `whsec_` and base64 of 32 random bytes. */
    secret: Schema.String,
    /** The secret before the last rotation, while it still signs. */
    previous_secret: Schema.optional(Schema.String),
    previous_secret_expires_at: Schema.optional(Schema.DateTimeUtc),
    /** Set when the endpoint stopped receiving: it answered `410 Gone`, or an admin turned it off. */
    disabled_at: Schema.optional(Schema.DateTimeUtc),
    disabled_reason: Schema.optional(Schema.String),
    created_by: MemberId,
    created_at: Schema.DateTimeUtc,
    updated_at: Schema.DateTimeUtc
  })
{}

/**
 * An endpoint as served: never its secrets.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookEndpoint = Schema.Struct({
  id: WebhookEndpointId,
  url: Schema.String,
  description: Schema.optional(Schema.String),
  event_types: Schema.Array(EventType),
  enabled: Schema.Boolean,
  disabled_reason: Schema.optional(Schema.String),
  disabled_at: Schema.optional(Schema.DateTimeUtc),
  /** Until when deliveries are also signed with the previous secret. */
  previous_secret_expires_at: Schema.optional(Schema.DateTimeUtc),
  created_by: MemberId,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}).annotations({ identifier: "WebhookEndpoint" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

/**
 * The served form of a stored endpoint.
 *
 * @since 0.1.0
 * @category utils
 */
export const toWebhookEndpoint = (record: WebhookEndpointRecord): WebhookEndpoint => ({
  id: record.id,
  url: record.url,
  ...(record.description === undefined ? {} : { description: record.description }),
  event_types: record.event_types,
  enabled: record.disabled_at === undefined,
  ...(record.disabled_reason === undefined ? {} : { disabled_reason: record.disabled_reason }),
  ...(record.disabled_at === undefined ? {} : { disabled_at: record.disabled_at }),
  ...(record.previous_secret_expires_at === undefined
    ? {}
    : { previous_secret_expires_at: record.previous_secret_expires_at }),
  created_by: record.created_by,
  created_at: record.created_at,
  updated_at: record.updated_at
})

/**
 * The body of `POST /v2/webhook-endpoints`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRequest = Schema.Struct({
  url: WebhookUrl,
  description: Schema.optional(Description),
  event_types: EventTypes
})
export type CreateRequest = typeof CreateRequest.Type

/**
 * The answer of `POST /v2/webhook-endpoints`: the endpoint and its secret, shown this once.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Created = Schema.Struct({ ...WebhookEndpoint.fields, secret: Schema.String }).annotations({
  identifier: "WebhookEndpointCreated"
})
export type Created = typeof Created.Type

/**
 * The body of `PATCH /v2/webhook-endpoints/{id}`: what changes. `enabled: true` turns an endpoint
 * that answered `410 Gone` (or was turned off) back on.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdateRequest = Schema.Struct({
  url: Schema.optional(WebhookUrl),
  description: Schema.optional(Description),
  event_types: Schema.optional(EventTypes),
  enabled: Schema.optional(Schema.Boolean)
})
export type UpdateRequest = typeof UpdateRequest.Type

/**
 * The answer of `POST /v2/webhook-endpoints/{id}/rotate-secret`: the new secret, shown this once.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rotated = Schema.Struct({
  id: WebhookEndpointId,
  secret: Schema.String,
  previous_secret_expires_at: Schema.DateTimeUtc
})
export type Rotated = typeof Rotated.Type

/**
 * The response of `GET /v2/webhook-endpoints`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({ webhook_endpoints: Schema.Array(WebhookEndpoint) })
export type ListResponse = typeof ListResponse.Type

/**
 * The response of `DELETE /v2/webhook-endpoints/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteResponse = Schema.Struct({ id: WebhookEndpointId, success: Schema.Boolean })
export type DeleteResponse = typeof DeleteResponse.Type

/**
 * The most attempts one page of the delivery log shows.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ATTEMPTS_PAGE = 100

/**
 * The query of `GET /v2/webhook-endpoints/{id}/deliveries`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeliveriesQuery = Schema.Struct({
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, MAX_ATTEMPTS_PAGE))
  ),
  event_id: Schema.optional(OutboundEventId)
})
export type DeliveriesQuery = typeof DeliveriesQuery.Type

/**
 * The response of `GET /v2/webhook-endpoints/{id}/deliveries`: the latest attempts, newest first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeliveriesResponse = Schema.Struct({ deliveries: Schema.Array(DeliveryAttempt) })
export type DeliveriesResponse = typeof DeliveriesResponse.Type

/**
 * The answer of `POST /v2/webhook-endpoints/{id}/events/{event_id}/replay`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReplayResponse = Schema.Struct({
  endpoint_id: WebhookEndpointId,
  event_id: OutboundEventId,
  queued: Schema.Boolean
})
export type ReplayResponse = typeof ReplayResponse.Type
