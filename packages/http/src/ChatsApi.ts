/**
 * The Chat group of /v2: reading chats and their cells, and the models a chat may use. Asking
 * questions (create, stream, cancel) arrives with the agent.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Chat from "@sightline/core/Chat"
import { CellId, ChatId } from "@sightline/core/Ids"
import * as Model from "@sightline/core/Model"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"

const IdPath = Schema.Struct({ id: ChatId })

/** The Chat operations. */
export class ChatsApi extends HttpApiGroup.make("chats")
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
    HttpApiEndpoint.get("models", "/v2/models")
      .addSuccess(Model.ModelsResponse)
      .annotate(OpenApi.Summary, "The models the caller may use, with the caller's default")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
{}
