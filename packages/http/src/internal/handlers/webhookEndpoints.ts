import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as WebhookEndpoints from "@sightline/core/WebhookEndpoints"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "webhookEndpoints", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints.WebhookEndpoints
    return handlers
      .handle("create", ({ payload }) => withPrincipal((principal) => endpoints.create(principal, payload)))
      .handle("list", () => withPrincipal((principal) => endpoints.list(principal)))
      .handle("get", ({ path }) => withPrincipal((principal) => endpoints.get(principal, path.id)))
      .handle("update", ({ path, payload }) =>
        withPrincipal((principal) => endpoints.update(principal, path.id, payload)))
      .handle("delete", ({ path }) =>
        withPrincipal((principal) => endpoints.delete(principal, path.id)))
      .handle("rotateSecret", ({ path }) => withPrincipal((principal) => endpoints.rotateSecret(principal, path.id)))
      .handle(
        "deliveries",
        ({ path, urlParams }) => withPrincipal((principal) => endpoints.deliveries(principal, path.id, urlParams))
      )
      .handle(
        "replay",
        ({ path }) => withPrincipal((principal) => endpoints.replay(principal, path.id, path.event_id))
      )
  })).pipe(only(Authentication, WebhookEndpoints.WebhookEndpoints))
