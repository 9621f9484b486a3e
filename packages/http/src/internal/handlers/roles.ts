import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Roles from "@sightline/core/Roles"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "roles", (handlers) =>
  Effect.gen(function*() {
    const roles = yield* Roles.Roles
    return handlers
      .handle("list", () => withPrincipal((principal) => roles.list(principal)))
      .handle("create", ({ payload }) => withPrincipal((principal) => roles.create(principal, payload)))
      .handle("update", ({ path, payload }) => withPrincipal((principal) => roles.update(principal, path.id, payload)))
      .handle("delete", ({ path }) => withPrincipal((principal) => roles.delete(principal, path.id)))
  })).pipe(only(Authentication, Roles.Roles))
