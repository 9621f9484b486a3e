import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as ServiceAccounts from "@sightline/core/ServiceAccounts"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "serviceAccounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* ServiceAccounts.ServiceAccounts
    return handlers
      .handle("create", ({ payload }) => withPrincipal((principal) => accounts.create(principal, payload)))
      .handle("list", () => withPrincipal((principal) => accounts.list(principal)))
      .handle("delete", ({ path }) => withPrincipal((principal) => accounts.delete(principal, path.id)))
  })).pipe(only(Authentication, ServiceAccounts.ServiceAccounts))
