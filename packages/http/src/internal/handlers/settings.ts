import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Settings from "@sightline/core/Settings"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "settings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings.Settings
    return handlers
      .handle("get", () => withPrincipal((principal) => settings.get(principal)))
      .handle("update", ({ payload }) => withPrincipal((principal) => settings.update(principal, payload)))
  })).pipe(only(Authentication, Settings.Settings))
