/**
 * The Chat channels group of /v2: the Slack-compatible incoming webhooks that playbooks and agents
 * deliver to. The webhook URL is write-only: responses show its host.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as ChatChannel from "@sightline/core/ChatChannel"
import { ChatChannelId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The Chat channels operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatChannelsApi extends HttpApiGroup.make("chatChannels")
  .add(
    HttpApiEndpoint.post("create", "/v2/chat-channels")
      .setPayload(strict(ChatChannel.CreateRequest))
      .addSuccess(ChatChannel.ChatChannel, { status: 201 })
      .annotate(OpenApi.Summary, "Register a chat channel by its incoming-webhook URL (organization:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/chat-channels")
      .addSuccess(ChatChannel.ListResponse)
      .annotate(OpenApi.Summary, "List the organization's chat channels (playbook:read)")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/chat-channels/:id")
      .setPath(Schema.Struct({ id: ChatChannelId }))
      .addSuccess(ChatChannel.DeleteResponse)
      .annotate(OpenApi.Summary, "Remove a chat channel (organization:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat channels")
{}
