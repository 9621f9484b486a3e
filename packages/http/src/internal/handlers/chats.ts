import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Chats from "@sightline/core/Chats"
import * as Models from "@sightline/core/Models"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { AssetUrls } from "../../AssetUrls.js"
import { withPrincipal } from "../handler.js"

export const layer = HttpApiBuilder.group(SightlineApi, "chats", (handlers) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const models = yield* Models.Models
    const { sign } = yield* AssetUrls
    return handlers
      .handle("list", ({ urlParams }) => withPrincipal((principal) => chats.list(principal, urlParams)))
      .handle("get", ({ path }) => withPrincipal((principal) => chats.get(principal, path.id, sign)))
      .handle("cells", ({ path, urlParams }) =>
        withPrincipal((principal) => chats.cells(principal, path.id, urlParams, sign)))
      .handle("cell", ({ path }) =>
        withPrincipal((principal) => chats.cell(principal, path.id, path.cellId, sign)))
      .handle("models", () => withPrincipal((principal) => models.list(principal)))
  }))
