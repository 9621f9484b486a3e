import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Changes from "@sightline/core/Changes"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "changes", (handlers) =>
  Effect.gen(function*() {
    const changes = yield* Changes.Changes
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((principal) => changes.list(principal, urlParams)))
      .handle("get", ({ path, urlParams }) => withPrincipal((principal) => changes.get(principal, path.id, urlParams)))
      .handle("approve", ({ path, payload }) =>
        withPrincipal((principal) => changes.approve(principal, path.id, payload)))
      .handle("deny", ({ path, payload }) =>
        withPrincipal((principal) => changes.deny(principal, path.id, payload)))
      .handle("restore", ({ path, payload }) =>
        withPrincipal((principal) =>
          changes.restore(principal, path.id, payload)
        ))
  })).pipe(only(Authentication, Changes.Changes))
