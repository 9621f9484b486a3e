import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Feedbacks from "@sightline/core/Feedbacks"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "feedback", (handlers) =>
  Effect.gen(function*() {
    const feedback = yield* Feedbacks.Feedbacks
    return handlers
      .handle("rate", ({ path, payload }) =>
        withPrincipal((principal) =>
          feedback.rate(principal, path.chat_id, path.message_id, payload)
        ))
      .handle("list", ({ urlParams }) => withPrincipal((principal) => feedback.list(principal, urlParams)))
      .handle("promote", ({ path, payload }) =>
        withPrincipal((principal) =>
          feedback.promote(principal, path.id, payload)
        ))
  })).pipe(only(Authentication, Feedbacks.Feedbacks))
