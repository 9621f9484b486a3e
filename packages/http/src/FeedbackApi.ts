/**
 * The Feedback group of /v2: members rate assistant messages; administrators read the ratings and
 * promote them into verified queries or evaluation cases, as library changes.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Feedback from "@sightline/core/Feedback"
import { ChatId, FeedbackId, MessageId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

/**
 * The Feedback operations.
 *
 * @since 0.1.0
 * @category models
 */
export class FeedbackApi extends HttpApiGroup.make("feedback")
  .add(
    HttpApiEndpoint.put("rate", "/v2/chats/:chat_id/messages/:message_id/feedback")
      .setPath(Schema.Struct({ chat_id: ChatId, message_id: MessageId }))
      .setPayload(strict(Feedback.RateRequest))
      .addSuccess(Feedback.View)
      .annotate(OpenApi.Summary, "Rate an assistant message up or down, with a comment (chat:write)")
      .annotate(OpenApi.Description, "Rating the message again replaces the caller's rating.")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/feedback")
      .setUrlParams(Feedback.ListParams)
      .addSuccess(Feedback.ListResponse)
      .annotate(OpenApi.Summary, "Ratings of answers, newest first, by rating, connector and model (organization:read)")
  )
  .add(
    HttpApiEndpoint.post("promote", "/v2/feedback/:id/promote")
      .setPath(Schema.Struct({ id: FeedbackId }))
      .setPayload(strict(Feedback.PromoteRequest))
      .addSuccess(Feedback.PromoteResponse, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "File a library change that makes a rated answer a verified query or an evaluation case"
      )
      .annotate(
        OpenApi.Description,
        "A verified query goes to the connector's library semantic model; a case to evals/feedback.yaml. The change " +
          "is filed as the caller and reviewed under OWNERS like any other."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Feedback")
{}
