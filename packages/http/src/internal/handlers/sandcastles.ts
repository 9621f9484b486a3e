import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Sandboxes from "@sightline/core/Sandboxes"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { withPrincipal } from "../handler.js"

export const layer = HttpApiBuilder.group(SightlineApi, "sandcastles", (handlers) =>
  Effect.gen(function*() {
    const sandboxes = yield* Sandboxes.Sandboxes
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((principal) => sandboxes.list(principal, urlParams)))
      .handle("executions", ({ path, urlParams }) =>
        withPrincipal((principal) => sandboxes.executions(principal, path.id, urlParams)))
  }))
