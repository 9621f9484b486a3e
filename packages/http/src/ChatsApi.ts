/**
 * The Chat group of /v2: asking questions (answered whole, or streamed as Server-Sent Events),
 * cancelling a run, reading chats and their cells, and the models a chat may use.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Chat from "@sightline/core/Chat"
import * as ChatEvent from "@sightline/core/ChatEvent"
import { CellId, ChatId, MessageId } from "@sightline/core/Ids"
import * as Model from "@sightline/core/Model"
import * as Reruns from "@sightline/core/Reruns"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { ChatRequestBody } from "./ChatForm.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: ChatId })

/**
 * The Chat operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatsApi extends HttpApiGroup.make("chats")
  .add(
    HttpApiEndpoint.post("create", "/v2/chats")
      .setPayload(strict(ChatRequestBody))
      .addSuccess(Chat.CreateChatResponse)
      .annotate(OpenApi.Summary, "Ask a question and wait for the whole answer")
  )
  .add(
    HttpApiEndpoint.post("stream", "/v2/chats/stream")
      .setPayload(strict(ChatRequestBody))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(
        OpenApi.Description,
        "Server-Sent Events, each `id:` increasing (across the chat's runs) and `data:` a JSON object with `type`: " +
          "`metadata`, `text`, `cell` (when a step starts and when it ends), `asset`, `clarification` (the " +
          "answer asks which of its `choices` is meant; answer with `chat_id` and `choice`), `plan` (an " +
          "investigation's steps before they run, again when a deeper step joins them), then `done` " +
          "(`status` completed or failed, `error` when failed). A comment line is sent every 15 s. " +
          "Disconnecting does not stop the run: its answer is stored, and `GET /v2/chats/{id}/stream` " +
          "resumes it with `Last-Event-ID`."
      )
      .annotate(OpenApi.Summary, "Ask a question and stream the answer")
  )
  .add(
    HttpApiEndpoint.get("follow", "/v2/chats/:id/stream")
      .setPath(IdPath)
      .setUrlParams(Schema.Struct({ last_event_id: Schema.optional(ChatEvent.EventIdParam) }))
      .setHeaders(Schema.Struct({ "last-event-id": Schema.optional(ChatEvent.EventIdParam) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(
        OpenApi.Description,
        "The chat's current answer as Server-Sent Events, from any server process: the events after " +
          "`Last-Event-ID` (header, or the `last_event_id` query parameter), or from the run's `metadata` " +
          "without one, then live until `done`. A finished run is replayed to its `done`. Event ids go on " +
          "across the chat's runs; an id from an earlier run starts at the current run's `metadata`."
      )
      .annotate(OpenApi.Summary, "Resume or follow the chat's answer")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v2/chats/:id/cancel")
      .setPath(IdPath)
      .addSuccess(Chat.CancelChatResponse)
      .annotate(OpenApi.Summary, "Stop the chat's running answer")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/chats")
      .setUrlParams(Chat.ListChatsQuery)
      .addSuccess(Chat.ListChatsResponse)
      .annotate(OpenApi.Summary, "List the caller's chats")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/chats/:id")
      .setPath(IdPath)
      .addSuccess(Chat.GetChatResponse)
      .annotate(OpenApi.Summary, "A chat with its messages and assets (asset URLs freshly signed)")
  )
  .add(
    HttpApiEndpoint.get("cells", "/v2/chats/:id/cells")
      .setPath(IdPath)
      .setUrlParams(Chat.ChatCellsQuery)
      .addSuccess(Chat.ChatCellsResponse)
      .annotate(OpenApi.Summary, "A page of a chat's cells, newest first")
  )
  .add(
    HttpApiEndpoint.get("cell", "/v2/chats/:id/cells/:cellId")
      .setPath(Schema.Struct({ id: ChatId, cellId: CellId }))
      .addSuccess(Chat.ChatCell)
      .annotate(OpenApi.Summary, "One cell of a chat")
  )
  .add(
    HttpApiEndpoint.post("rerun", "/v2/chats/:id/messages/:messageId/rerun")
      .setPath(Schema.Struct({ id: ChatId, messageId: MessageId }))
      .addSuccess(Reruns.RerunResult)
      .annotate(OpenApi.Summary, "Ask an answer's question again as it was answered, and compare")
      .annotate(
        OpenApi.Description,
        "A fresh chat of the caller with the answer's model and connectors, reading the library at the commit the " +
          "answer read. For the chat's creator, or an administrator (organization:read); an answer made under client " +
          "attributes is re-run only under the same ones."
      )
  )
  .add(
    HttpApiEndpoint.get("models", "/v2/models")
      .addSuccess(Model.ModelsResponse)
      .annotate(OpenApi.Summary, "The models the caller may use, with the caller's default")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
{}
