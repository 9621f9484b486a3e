import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Connectors from "@sightline/core/Connectors"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "connectors", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors.Connectors
    return handlers
      .handle("list", () => withPrincipal((principal) => connectors.list(principal)))
      .handle("create", ({ payload }) => withPrincipal((principal) => connectors.create(principal, payload)))
      .handle("types", () => withPrincipal((principal) => connectors.types(principal)))
      .handle("test", ({ payload }) => withPrincipal((principal) => connectors.test(principal, payload)))
      .handle("update", ({ path, payload }) =>
        withPrincipal((principal) => connectors.update(principal, path.id, payload)))
      .handle("delete", ({ path }) =>
        withPrincipal((principal) => connectors.delete(principal, path.id)))
      .handle("getAccess", ({ path }) => withPrincipal((principal) => connectors.getAccess(principal, path.id)))
      .handle("putAccess", ({ path, payload }) =>
        withPrincipal((principal) =>
          connectors.putAccess(principal, path.id, payload)
        ))
  })).pipe(only(Authentication, Connectors.Connectors))
