/**
 * A member of an organization: a human, or a service account (a non-human member that keys can be
 * minted for).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import { MemberId, OrganizationId } from "./Ids.js"
import * as Permission from "./Permission.js"
import { isSystemAdmin, type Role } from "./Role.js"

/**
 * An e-mail address: one `@`, no spaces, a dotted domain, at most 254 characters (RFC 5321's path
 * limit). Deliberately loose beyond that: the only real check of an address is delivering to it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Email = Schema.String.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/, { message: () => "must be an e-mail address" }),
  Schema.annotations({ identifier: "Email", examples: ["ada@example.com"] })
)
export type Email = typeof Email.Type

/**
 * A member as stored. Role assignments and group memberships live beside it (see `MemberRepo`).
 *
 * @since 0.1.0
 * @category models
 */
export class Member extends Schema.Class<Member>("@sightline/core/Member")({
  id: MemberId,
  organization_id: OrganizationId,
  email: Email,
  name: Schema.String,
  /** What a service account is for; unset for humans. */
  description: Schema.optional(Schema.String),
  is_service_account: Schema.Boolean,
  is_scim_managed: Schema.Boolean,
  /** Set when the member was soft-deleted: the member and every key it owns stop working at once. */
  deleted_at: Schema.optional(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * A member as listed by `GET /v2/members`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberSummary = Schema.Struct({
  id: MemberId,
  email: Schema.String,
  name: Schema.String,
  /** Names of the roles the member holds, in alphabetical order. */
  roles: Schema.Array(Schema.String),
  /** Whether the member holds the `admin` system role. */
  is_admin: Schema.Boolean,
  is_service_account: Schema.Boolean,
  is_scim_managed: Schema.Boolean,
  created_at: Schema.DateTimeUtc
})
export type MemberSummary = typeof MemberSummary.Type

/**
 * Sorted, deduplicated names of roles (a role held directly and through a group shows once).
 *
 * @since 0.1.0
 * @category utils
 */
export const roleNames = (roles: Iterable<Role>): ReadonlyArray<string> =>
  Arr.sort(Arr.dedupe(Arr.map(Arr.fromIterable(roles), (role) => role.name)), Order.string)

/**
 * The listing of a member, given every role it holds (directly or through groups).
 *
 * @since 0.1.0
 * @category utils
 */
export const toSummary = (member: Member, roles: ReadonlyArray<Role>): MemberSummary => ({
  id: member.id,
  email: member.email,
  name: member.name,
  roles: roleNames(roles),
  is_admin: roles.some(isSystemAdmin),
  is_service_account: member.is_service_account,
  is_scim_managed: member.is_scim_managed,
  created_at: member.created_at
})

/**
 * The response of `GET /v2/members`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberList = Schema.Struct({
  members: Schema.Array(MemberSummary)
})
export type MemberList = typeof MemberList.Type

/**
 * The response of `GET /v2/members/me`: who the caller is and what this credential may do (a
 * console shows only what the caller can use; the API enforces it either way).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Me = Schema.Struct({
  member_id: MemberId,
  organization_id: OrganizationId,
  email: Schema.String,
  name: Schema.String,
  /** Names of the roles this credential acts with, in the organization's role order. */
  roles: Schema.Array(Schema.String),
  /** Every permission those roles grant, sorted. */
  permissions: Schema.Array(Permission.Permission),
  is_admin: Schema.Boolean
})
export type Me = typeof Me.Type

/**
 * The body of `POST /v2/members/invite`: who, and which system role they join with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InviteMember = Schema.Struct({
  email: Email,
  role: Permission.SystemRoleName
})
export type InviteMember = typeof InviteMember.Type

/**
 * The response of `POST /v2/members/invite`: with a one-time sign-in link's token, which lets the
 * invited person set a password (shown this once; the http package turns it into a URL).
 *
 * @since 0.1.0
 * @category schemas
 */
export const InviteMemberResult = Schema.Struct({
  success: Schema.Boolean,
  member_id: MemberId,
  /** Absent when the link went by e-mail to the member only (where e-mail is configured). */
  sign_in_token: Schema.optional(Schema.String),
  sign_in_expires_at: Schema.DateTimeUtc,
  /** Whether the link was also e-mailed to the member (only where e-mail delivery is configured). */
  sign_in_emailed: Schema.Boolean
})
export type InviteMemberResult = typeof InviteMemberResult.Type

/**
 * The query of `DELETE /v2/members/{id}`: a soft delete unless `hard_delete=true`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteMemberParams = Schema.Struct({
  hard_delete: Schema.optionalWith(Schema.BooleanFromString, { default: () => false })
})
export type DeleteMemberParams = typeof DeleteMemberParams.Type

/**
 * The response of `DELETE /v2/members/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteMemberResult = Schema.Struct({
  id: MemberId,
  success: Schema.Boolean
})
export type DeleteMemberResult = typeof DeleteMemberResult.Type
