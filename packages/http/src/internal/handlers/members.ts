import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Members from "@sightline/core/Members"
import * as Sessions from "@sightline/core/Sessions"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import * as PublicUrl from "../../PublicUrl.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "members", (handlers) =>
  Effect.gen(function*() {
    const members = yield* Members.Members
    const sessions = yield* Sessions.Sessions
    const base = yield* PublicUrl.base
    const linkUrl = (token: string) => PublicUrl.signInLink(base, token)
    return handlers
      .handle("me", () => withPrincipal((principal) => members.me(principal)))
      .handle("list", () => withPrincipal((principal) => members.list(principal)))
      .handle("invite", ({ payload }) =>
        Effect.gen(function*() {
          const invited = yield* withPrincipal((principal) => members.invite(principal, payload, linkUrl))
          return invited.sign_in_token === undefined
            ? invited
            : { ...invited, sign_in_url: linkUrl(invited.sign_in_token) }
        }))
      .handle("signInLink", ({ path, payload }) =>
        Effect.gen(function*() {
          const link = yield* withPrincipal((principal) => sessions.issueLink(principal, path.id, payload, linkUrl))
          return {
            member_id: link.member_id,
            purpose: link.purpose,
            ...(link.token === undefined ? {} : { token: link.token, url: linkUrl(link.token) }),
            expires_at: DateTime.unsafeFromDate(link.expires_at),
            emailed: link.emailed
          }
        }))
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
  })).pipe(only(Authentication, Members.Members, Sessions.Sessions, PublicUrl.PublicUrl))
