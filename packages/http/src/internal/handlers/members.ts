import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Members from "@sightline/core/Members"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { withPrincipal } from "../handler.js"

export const layer = HttpApiBuilder.group(SightlineApi, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members.Members
    return handlers
      .handle("list", () => withPrincipal((principal) => members.list(principal)))
      .handle("invite", ({ payload }) => withPrincipal((principal) => members.invite(principal, payload)))
      .handle("delete", ({ path, urlParams }) =>
        withPrincipal((principal) => members.delete(principal, path.id, urlParams)))
      .handle("listRoles", ({ path }) =>
        withPrincipal((principal) => members.listRoles(principal, path.id)))
      .handle("assignRole", ({ path, payload }) =>
        withPrincipal((principal) =>
          members.assignRole(principal, path.id, payload)
        ))
      .handle("unassignRole", ({ path }) =>
        withPrincipal((principal) =>
          members.unassignRole(principal, path.id, path.roleId)
        ))
  }))
