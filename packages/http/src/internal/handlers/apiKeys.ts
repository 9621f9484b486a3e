import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    return handlers
      .handle("create", ({ payload }) => withPrincipal((principal) => keys.create(principal, payload)))
      .handle("list", ({ urlParams }) => withPrincipal((principal) => keys.list(principal, urlParams)))
      .handle("rotate", ({ path }) => withPrincipal((principal) => keys.rotate(principal, path.id)))
      .handle("revoke", ({ path }) => withPrincipal((principal) => keys.revoke(principal, path.id)))
  })).pipe(only(Authentication, ApiKeys.ApiKeys))
