/**
 * The Members group of /v2: members and their role assignments.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { MemberId, RoleId } from "@sightline/core/Ids"
import * as Member from "@sightline/core/Member"
import * as Role from "@sightline/core/Role"
import * as Session from "@sightline/core/Session"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: MemberId })

/**
 * The invite's answer on the wire: the sign-in link's token also as the console's URL.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InviteMemberResponse = Schema.Struct({
  ...Member.InviteMemberResult.fields,
  /**
   * Open it to set a password (once, before `sign_in_expires_at`); absent when it went by e-mail to
   * the member only (where the server sends e-mail).
   */
  sign_in_url: Schema.optional(Schema.String)
})

/**
 * `POST /v2/members/{id}/sign-in-link`'s answer: shown this once.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SignInLinkResponse = Schema.Struct({
  member_id: MemberId,
  purpose: Session.LinkPurpose,
  /** The link's token and address; absent when it went by e-mail to the member only. */
  token: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  expires_at: Schema.DateTimeUtc,
  /** Whether it was also e-mailed to the member (where e-mail delivery is configured). */
  emailed: Schema.Boolean
})

/**
 * The Members operations.
 *
 * @since 0.1.0
 * @category models
 */
export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("me", "/v2/members/me")
      .addSuccess(Member.Me)
      .annotate(OpenApi.Summary, "The caller: member, roles and permissions of this credential (any caller)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/members")
      .addSuccess(Member.MemberList)
      .annotate(OpenApi.Summary, "List members (member:read)")
  )
  .add(
    HttpApiEndpoint.post("invite", "/v2/members/invite")
      .setPayload(strict(Member.InviteMember))
      .addSuccess(InviteMemberResponse)
      .annotate(OpenApi.Summary, "Invite a member as member or admin, with a one-time sign-in link (member:write)")
  )
  .add(
    HttpApiEndpoint.post("signInLink", "/v2/members/:id/sign-in-link")
      .setPath(IdPath)
      .setPayload(strict(Session.IssueLink))
      .addSuccess(SignInLinkResponse)
      .annotate(
        OpenApi.Summary,
        "A new one-time link for a member to set a password (purpose reset or invite); earlier links stop working (member:write)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/members/:id")
      .setPath(IdPath)
      .setUrlParams(Member.DeleteMemberParams)
      .addSuccess(Member.DeleteMemberResult)
      .annotate(OpenApi.Summary, "Delete a member: soft by default, hard_delete=true erases (member:write)")
  )
  .add(
    HttpApiEndpoint.get("listRoles", "/v2/members/:id/roles")
      .setPath(IdPath)
      .addSuccess(Role.MemberRoles)
      .annotate(OpenApi.Summary, "A member's roles (role:read)")
  )
  .add(
    HttpApiEndpoint.post("assignRole", "/v2/members/:id/roles")
      .setPath(IdPath)
      .setPayload(strict(Role.AssignRole))
      .addSuccess(Role.RoleAssignmentResult)
      .annotate(OpenApi.Summary, "Assign a role to a member (role:write)")
  )
  .add(
    HttpApiEndpoint.del("unassignRole", "/v2/members/:id/roles/:roleId")
      .setPath(Schema.Struct({ id: MemberId, roleId: RoleId }))
      .addSuccess(Role.RoleAssignmentResult)
      .annotate(OpenApi.Summary, "Take a role from a member (role:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Members")
{}
