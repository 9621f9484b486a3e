/**
 * Groups of members. A group carries roles: its members hold them for as long as they belong to it.
 * Groups are what SCIM group mappings target (see `ScimGroupMapping`).
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import type * as DateTime from "effect/DateTime"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import { GroupId, MemberId, OrganizationId, RoleId } from "./Ids.js"

/**
 * A group as stored. `member_ids` and `role_ids` are sets: deduplicated and sorted, which is also
 * how repositories return them.
 *
 * @since 0.1.0
 * @category models
 */
export class Group extends Schema.Class<Group>("@sightline/core/Group")({
  id: GroupId,
  organization_id: OrganizationId,
  name: Schema.NonEmptyTrimmedString,
  display_name: Schema.optional(Schema.String),
  member_ids: Schema.Array(MemberId),
  role_ids: Schema.Array(RoleId),
  created_at: Schema.DateTimeUtc
}) {}

/**
 * Deduplicated, sorted ids: the canonical form of a group's member and role sets.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeIds = <A extends string>(ids: Iterable<A>): ReadonlyArray<A> =>
  Arr.sort(Arr.dedupe(ids), Order.string)

/**
 * Builds a new group, normalizing its member and role sets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: GroupId
  readonly organizationId: OrganizationId
  readonly name: string
  readonly displayName?: string | undefined
  readonly memberIds?: Iterable<MemberId> | undefined
  readonly roleIds?: Iterable<RoleId> | undefined
  readonly now: DateTime.Utc
}): Group =>
  new Group({
    id: options.id,
    organization_id: options.organizationId,
    name: options.name,
    ...(options.displayName === undefined ? {} : { display_name: options.displayName }),
    member_ids: normalizeIds(options.memberIds ?? []),
    role_ids: normalizeIds(options.roleIds ?? []),
    created_at: options.now
  })
