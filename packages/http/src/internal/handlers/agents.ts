import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Agents from "@sightline/core/Agents"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "agents", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents.Agents
    return handlers
      .handle("create", ({ payload }) => withPrincipal((principal) => agents.create(principal, payload)))
      .handle("list", () => withPrincipal((principal) => agents.list(principal)))
      .handle("get", ({ path }) => withPrincipal((principal) => agents.get(principal, path.id)))
      .handle("update", ({ path, payload }) => withPrincipal((principal) => agents.update(principal, path.id, payload)))
      .handle("delete", ({ path }) => withPrincipal((principal) => agents.delete(principal, path.id)))
      .handle("listRuns", ({ path, urlParams }) =>
        withPrincipal((principal) => agents.listRuns(principal, path.id, urlParams)))
      .handle("getRun", ({ path }) =>
        withPrincipal((principal) => agents.getRun(principal, path.id)))
      .handle("run", ({ path }) => withPrincipal((principal) => agents.runNow(principal, path.id)))
      .handle("cancelRun", ({ path }) => withPrincipal((principal) => agents.cancelRun(principal, path.id)))
  })).pipe(only(Authentication, Agents.Agents))
