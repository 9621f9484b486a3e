import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { InvalidRequest } from "@sightline/core/Errors"
import * as OAuthGrants from "@sightline/core/OAuthGrants"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import * as McpOAuth from "../../McpOAuth.js"
import * as PublicUrl from "../../PublicUrl.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "oauth", (handlers) =>
  Effect.gen(function*() {
    const grants = yield* OAuthGrants.OAuthGrants
    const on = Option.isSome(yield* Effect.serviceOption(McpOAuth.McpOAuth))
    const { resource } = McpOAuth.urls(yield* PublicUrl.base)
    const enabled = on
      ? Effect.void
      : Effect.fail(new InvalidRequest({ message: "OAuth for agents is not enabled on this server" }))
    return handlers
      .handle("consent", ({ urlParams }) =>
        withPrincipal((principal) =>
          Effect.zipRight(enabled, grants.consent(principal, urlParams, resource))
        ))
      .handle("decide", ({ payload: { approve, granted_scopes, ...request } }) =>
        withPrincipal((principal) =>
          Effect.zipRight(enabled, grants.decide(principal, request, resource, approve, granted_scopes))
        ))
      .handle("grants", () =>
        withPrincipal((principal) =>
          grants.list(principal)
        ))
      .handle("revoke", ({ path }) =>
        withPrincipal((principal) =>
          Effect.as(grants.revokeClient(principal, path.client_id), { success: true as const })
        ))
  })).pipe(only(Authentication, OAuthGrants.OAuthGrants, McpOAuth.McpOAuth, PublicUrl.PublicUrl))
