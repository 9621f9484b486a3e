/**
 * Chat channels: where reports go besides e-mail. An admin registers a channel with the
 * incoming-webhook URL of a Slack-compatible chat (Slack, Mattermost, Rocket.Chat, Discord's
 * `/slack` endpoint); playbooks and agents then name it by id in `chat_channel_id`.
 *
 * The webhook URL is a credential (anyone holding it can post), so it is write-only: stored to
 * post with, never served, never logged. A channel shows only the URL's host.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ChatChannelId, MemberId, OrganizationId } from "./Ids.js"

/**
 * The most characters of a channel name.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME_MAX_LENGTH = 100

/**
 * A webhook URL: absolute http(s) without credentials, at most 2,048 characters. Whether plain
 * http and private addresses are allowed is the delivery adapter's rule (`allowPrivate`), checked
 * at registration by the use case's caller and again at every delivery, after DNS resolution.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookUrl = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((text) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "a webhook URL must be absolute"
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") return "a webhook URL must be https"
    if (url.username !== "" || url.password !== "") return "a webhook URL must not carry a user or password"
    return true
  }, {
    description: "an absolute http(s) URL without a user or password",
    jsonSchema: { format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" },
    arbitrary: () => (fc) =>
      fc.constantFrom("https://hooks.example.com/services/T0/B0/x", "https://chat.example.org/hook")
  })
)

/**
 * A channel as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatChannelRecord extends Schema.Class<ChatChannelRecord>("@sightline/core/ChatChannelRecord")({
  id: ChatChannelId,
  organization_id: OrganizationId,
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(NAME_MAX_LENGTH)),
  webhook_url: WebhookUrl,
  created_by: MemberId,
  created_at: Schema.DateTimeUtc
}) {}

/**
 * A channel as served: the webhook's host only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatChannel = Schema.Struct({
  id: ChatChannelId,
  name: Schema.String,
  webhook_host: Schema.String,
  created_by: MemberId,
  created_at: Schema.DateTimeUtc
}).annotations({ identifier: "ChatChannel" })
export type ChatChannel = typeof ChatChannel.Type

/**
 * The served form of a stored channel.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChatChannel = (record: ChatChannelRecord): ChatChannel => ({
  id: record.id,
  name: record.name,
  webhook_host: new URL(record.webhook_url).host,
  created_by: record.created_by,
  created_at: record.created_at
})

/**
 * The body of `POST /v2/chat-channels`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRequest = Schema.Struct({
  name: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(NAME_MAX_LENGTH)),
  webhook_url: WebhookUrl
})
export type CreateRequest = typeof CreateRequest.Type

/**
 * The response of `GET /v2/chat-channels`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({ chat_channels: Schema.Array(ChatChannel) })
export type ListResponse = typeof ListResponse.Type

/**
 * The response of `DELETE /v2/chat-channels/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteResponse = Schema.Struct({ id: ChatChannelId, success: Schema.Boolean })
export type DeleteResponse = typeof DeleteResponse.Type
