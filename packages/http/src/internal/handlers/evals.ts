import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Evals from "@sightline/core/Evals"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "evals", (handlers) =>
  Effect.gen(function*() {
    const evals = yield* Evals.Evals
    return handlers
      .handle("start", ({ payload }) => withPrincipal((principal) => evals.start(principal, payload)))
      .handle("list", ({ urlParams }) => withPrincipal((principal) => evals.list(principal, urlParams)))
      .handle("get", ({ path }) => withPrincipal((principal) => evals.get(principal, path.id)))
      .handle("compare", ({ urlParams }) => withPrincipal((principal) => evals.compare(principal, urlParams)))
      .handle("cancel", ({ path }) => withPrincipal((principal) => evals.cancel(principal, path.id)))
  })).pipe(only(Authentication, Evals.Evals))
