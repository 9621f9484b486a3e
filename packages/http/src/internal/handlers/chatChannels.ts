import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as ChatChannels from "@sightline/core/ChatChannels"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "chatChannels", (handlers) =>
  Effect.gen(function*() {
    const channels = yield* ChatChannels.ChatChannels
    return handlers
      .handle("create", ({ payload }) => withPrincipal((principal) => channels.create(principal, payload)))
      .handle("list", () => withPrincipal((principal) => channels.list(principal)))
      .handle("delete", ({ path }) => withPrincipal((principal) => channels.delete(principal, path.id)))
  })).pipe(only(Authentication, ChatChannels.ChatChannels))
