/**
 * The Webhook endpoints group of /v2: where an organization receives its outbound events as
 * Standard Webhooks, their delivery logs and replays. Admin only (`organization:write`); an
 * endpoint's signing secret is in the answers of create and rotate-secret only.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { OutboundEventId, WebhookEndpointId } from "@sightline/core/Ids"
import * as WebhookEndpoint from "@sightline/core/WebhookEndpoint"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const ById = Schema.Struct({ id: WebhookEndpointId })

/**
 * The Webhook endpoints operations.
 *
 * @since 0.1.0
 * @category models
 */
export class WebhookEndpointsApi extends HttpApiGroup.make("webhookEndpoints")
  .add(
    HttpApiEndpoint.post("create", "/v2/webhook-endpoints")
      .setPayload(strict(WebhookEndpoint.CreateRequest))
      .addSuccess(WebhookEndpoint.Created, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Register an endpoint for outbound events; its secret is shown once (organization:write)"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/webhook-endpoints")
      .addSuccess(WebhookEndpoint.ListResponse)
      .annotate(OpenApi.Summary, "List the organization's webhook endpoints (organization:write)")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/webhook-endpoints/:id")
      .setPath(ById)
      .addSuccess(WebhookEndpoint.WebhookEndpoint)
      .annotate(OpenApi.Summary, "Get a webhook endpoint (organization:write)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/webhook-endpoints/:id")
      .setPath(ById)
      .setPayload(strict(WebhookEndpoint.UpdateRequest))
      .addSuccess(WebhookEndpoint.WebhookEndpoint)
      .annotate(
        OpenApi.Summary,
        "Change an endpoint's URL, description or event types, or turn it on or off (organization:write)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/webhook-endpoints/:id")
      .setPath(ById)
      .addSuccess(WebhookEndpoint.DeleteResponse)
      .annotate(OpenApi.Summary, "Remove a webhook endpoint and its delivery log (organization:write)")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/v2/webhook-endpoints/:id/rotate-secret")
      .setPath(ById)
      .addSuccess(WebhookEndpoint.Rotated)
      .annotate(
        OpenApi.Summary,
        "Issue a new signing secret; the old one also signs for 24 hours (organization:write)"
      )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/v2/webhook-endpoints/:id/deliveries")
      .setPath(ById)
      .setUrlParams(WebhookEndpoint.DeliveriesQuery)
      .addSuccess(WebhookEndpoint.DeliveriesResponse)
      .annotate(OpenApi.Summary, "An endpoint's latest delivery attempts, newest first (organization:write)")
  )
  .add(
    HttpApiEndpoint.post("replay", "/v2/webhook-endpoints/:id/events/:event_id/replay")
      .setPath(Schema.Struct({ id: WebhookEndpointId, event_id: OutboundEventId }))
      .addSuccess(WebhookEndpoint.ReplayResponse, { status: 202 })
      .annotate(OpenApi.Summary, "Deliver an event to the endpoint again (organization:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Webhook endpoints")
{}
