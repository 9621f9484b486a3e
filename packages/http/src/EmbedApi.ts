/**
 * The Embed group of /v2: end users' sessions for the embedded widget (`EndUser`). A host's backend
 * mints one with its API key for each of its end users, and can forget an end user's chats; the
 * widget, holding the session, reads what its session reaches.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as EndUser from "@sightline/core/EndUser"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The Embed operations.
 *
 * @since 0.1.0
 * @category models
 */
export class EmbedApi extends HttpApiGroup.make("embed")
  .add(
    HttpApiEndpoint.post("mint", "/v2/embed/sessions")
      .setPayload(strict(EndUser.MintRequest))
      .addSuccess(EndUser.Minted)
      .annotate(OpenApi.Summary, "Mint a short-lived session for one of the host's end users (an API key only)")
      .annotate(
        OpenApi.Description,
        "Called by the host's backend, never a browser. The token acts as the key, narrowed: it may only chat, rate " +
          "answers and view the dashboards it names; its client attributes add to the key's and drive row-level " +
          "security; it is used only from its allowed_origins, each of the organization's embed_origins; it ends at " +
          "expires_at (at most an hour, never after the key) and when the key is revoked. The end user's chats are the " +
          "key owner's, kept apart by external_user_id: list them with GET /v2/chats?external_user_id=…"
      )
  )
  .add(
    HttpApiEndpoint.get("session", "/v2/embed/session")
      .addSuccess(EndUser.SessionInfo)
      .annotate(
        OpenApi.Summary,
        "What an end user's session reaches: its connectors, dashboards and suggested questions"
      )
  )
  .add(
    HttpApiEndpoint.del("forget", "/v2/embed/users/:external_user_id/chats")
      .setPath(Schema.Struct({ external_user_id: EndUser.ExternalUserId }))
      .addSuccess(Schema.Struct({ deleted: Schema.Int }))
      .annotate(OpenApi.Summary, "Delete every chat one of the host's end users made (chat:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Embed")
{}
