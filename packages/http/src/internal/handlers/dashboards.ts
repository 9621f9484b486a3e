import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Dashboards from "@sightline/core/Dashboards"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "dashboards", (handlers) =>
  Effect.gen(function*() {
    const dashboards = yield* Dashboards.Dashboards
    return handlers
      .handle("list", () => withPrincipal((principal) => dashboards.list(principal)))
      .handle("get", ({ path }) => withPrincipal((principal) => dashboards.get(principal, path.name)))
      .handle("query", ({ path, payload }) =>
        withPrincipal((principal) => dashboards.query(principal, path.name, payload)))
      .handle("edit", ({ path, payload }) =>
        withPrincipal((principal) => dashboards.edit(principal, path.name, payload)))
      .handle("pin", ({ path, payload }) =>
        withPrincipal((principal) =>
          dashboards.pin(principal, path.id, path.cellId, payload)
        ))
  })).pipe(only(Authentication, Dashboards.Dashboards))
