import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Playbook from "@sightline/core/Playbook"
import * as PlaybookRuns from "@sightline/core/PlaybookRuns"
import * as Playbooks from "@sightline/core/Playbooks"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { AssetUrls } from "../../AssetUrls.js"
import { Authentication } from "../../Authentication.js"
import { trustedJson, withPrincipal } from "../handler.js"
import { only } from "../only.js"

const getResponse = trustedJson(Playbook.GetPlaybookResponse)

export const layer = HttpApiBuilder.group(SightlineApi, "playbooks", (handlers) =>
  Effect.gen(function*() {
    const playbooks = yield* Playbooks.Playbooks
    const runs = yield* PlaybookRuns.PlaybookRuns
    const { sign } = yield* AssetUrls
    return handlers
      .handle("create", () => withPrincipal((principal) => playbooks.create(principal)))
      .handle("list", ({ urlParams }) => withPrincipal((principal) => playbooks.list(principal, urlParams)))
      .handle(
        "get",
        ({ path, urlParams }) =>
          withPrincipal((principal) => Effect.map(playbooks.get(principal, path.id, urlParams, sign), getResponse))
      )
      .handle(
        "update",
        ({ path, payload }) => withPrincipal((principal) => playbooks.update(principal, path.id, payload))
      )
      .handle("delete", ({ path }) => withPrincipal((principal) => playbooks.delete(principal, path.id)))
      .handle("deploy", ({ path }) => withPrincipal((principal) => playbooks.deploy(principal, path.id)))
      .handle(
        "run",
        ({ path, payload }) => withPrincipal((principal) => runs.run(principal, path.id, payload, sign))
      )
  })).pipe(only(Authentication, Playbooks.Playbooks, PlaybookRuns.PlaybookRuns, AssetUrls))
