/**
 * The agent webhook trigger, inbound (`POST /v1/agents/webhook/trigger`, Connect protocol,
 * camelCase): an external system queues a run of the agent that owns `triggerId`, with an optional
 * JSON payload of at most 16 KB after serialization. The webhooks Sightline sends are
 * `WebhookEndpoint`'s.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { WebhookTriggerId } from "./Ids.js"
import { byteLength } from "./internal/utf8.js"
import { JsonObject } from "./Json.js"

/**
 * The largest payload, in UTF-8 bytes of its JSON serialization.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_PAYLOAD_BYTES = 16 * 1024

/**
 * The size that counts against `MAX_PAYLOAD_BYTES`: UTF-8 bytes of `JSON.stringify(payload)`.
 * Measuring the compact re-serialization (not the request body) makes the limit independent of how
 * the client formatted its JSON.
 *
 * @since 0.1.0
 * @category utils
 */
export const serializedSize = (payload: JsonObject): number => byteLength(JSON.stringify(payload))

/**
 * A trigger payload: a JSON object of at most `MAX_PAYLOAD_BYTES` once serialized.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Payload = JsonObject.pipe(
  Schema.filter((payload) => {
    const size = serializedSize(payload)
    return size <= MAX_PAYLOAD_BYTES ||
      `payload is ${size} bytes after JSON serialization; at most ${MAX_PAYLOAD_BYTES} are accepted`
  }, {
    identifier: "WebhookPayload",
    description: "a JSON object of at most 16384 bytes once serialized"
  })
)
export type Payload = typeof Payload.Type

/**
 * Body of the trigger.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TriggerRequest = Schema.Struct({
  triggerId: WebhookTriggerId,
  payload: Schema.optional(Payload)
})
export type TriggerRequest = typeof TriggerRequest.Type

/**
 * Response of the trigger: the run is queued, not finished.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TriggerResponse = Schema.Struct({ status: Schema.Literal("queued") })
export type TriggerResponse = typeof TriggerResponse.Type

/**
 * The one response of an accepted trigger.
 *
 * @since 0.1.0
 * @category constants
 */
export const queued: TriggerResponse = { status: "queued" }
