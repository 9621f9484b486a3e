import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Chats from "@sightline/core/Chats"
import * as EmbedSessions from "@sightline/core/EmbedSessions"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { EmbedTokens } from "../../EmbedTokens.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "embed", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* EmbedSessions.EmbedSessions
    const tokens = yield* EmbedTokens
    const chats = yield* Chats.Chats
    return handlers
      .handle("mint", ({ payload }) =>
        withPrincipal((principal) =>
          Effect.flatMap(sessions.mint(principal, payload), ({ claims, expiresAt }) =>
            Effect.map(tokens.seal(claims), (token) => ({
              token,
              expires_at: expiresAt,
              external_user_id: claims.external_user_id
            })))
        ))
      .handle("session", () =>
        withPrincipal((principal) =>
          sessions.info(principal)
        ))
      .handle(
        "forget",
        ({ path }) => withPrincipal((principal) => chats.forgetEndUser(principal, path.external_user_id))
      )
  })).pipe(only(Authentication, EmbedSessions.EmbedSessions, EmbedTokens, Chats.Chats))
