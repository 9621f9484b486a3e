/**
 * SCIM group mappings: how a group pushed by the identity provider grants access. A mapping targets
 * either a role (legacy: the SCIM group's members get the role) or a Sightline group (the SCIM
 * group's members become the group's members and hold its roles). `MigrateAllScimGroupMappings`
 * moves every role-targeted mapping to a group; `planMigration` computes that move.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import type * as DateTime from "effect/DateTime"
import * as Equal from "effect/Equal"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Group from "./Group.js"
import { GroupId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "./Ids.js"

/**
 * What a mapping grants: a role directly, or membership of a group.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TargetMode = Schema.Literal("role", "group")
export type TargetMode = typeof TargetMode.Type

/**
 * A mapping as served on the RPC surface (camelCase). Exactly the target named by `targetMode` is
 * set: `roleId` for `role`, `groupId` for `group`.
 *
 * @since 0.1.0
 * @category models
 */
export class ScimGroupMapping extends Schema.Class<ScimGroupMapping>("@sightline/core/ScimGroupMapping")(
  Schema.Struct({
    id: ScimGroupMappingId,
    /** The SCIM group's display name, as the identity provider pushed it. */
    displayName: Schema.NonEmptyTrimmedString,
    /** The identity provider's id of the SCIM group: unique per organization. */
    externalId: Schema.NonEmptyString,
    roleId: Schema.optional(RoleId),
    groupId: Schema.optional(GroupId),
    targetMode: TargetMode
  }).pipe(
    Schema.filter((mapping) =>
      mapping.targetMode === "role"
        ? mapping.roleId !== undefined && mapping.groupId === undefined ||
          "a mapping with targetMode role has a roleId and no groupId"
        : mapping.groupId !== undefined && mapping.roleId === undefined ||
          "a mapping with targetMode group has a groupId and no roleId"
    )
  )
) {}

/**
 * A mapping as stored: plus its organization and the members the identity provider last pushed for
 * the SCIM group (a sorted set), which is what a migration needs to fill the new group.
 *
 * @since 0.1.0
 * @category models
 */
export class ScimGroupMappingRecord extends ScimGroupMapping.extend<ScimGroupMappingRecord>(
  "@sightline/core/ScimGroupMappingRecord"
)({
  organization_id: OrganizationId,
  member_ids: Schema.Array(MemberId)
}) {}

/**
 * The served form of a stored mapping: the organization and the pushed members stay internal.
 *
 * @since 0.1.0
 * @category utils
 */
export const toMapping = (record: ScimGroupMappingRecord): ScimGroupMapping =>
  new ScimGroupMapping({
    id: record.id,
    displayName: record.displayName,
    externalId: record.externalId,
    ...(record.roleId === undefined ? {} : { roleId: record.roleId }),
    ...(record.groupId === undefined ? {} : { groupId: record.groupId }),
    targetMode: record.targetMode
  }, true)

/**
 * The body of `RBACService/MigrateAllScimGroupMappings`: empty.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MigrateAllScimGroupMappingsRequest = Schema.Struct({})
export type MigrateAllScimGroupMappingsRequest = typeof MigrateAllScimGroupMappingsRequest.Type

/**
 * The response of `RBACService/MigrateAllScimGroupMappings`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MigrateAllScimGroupMappingsResponse = Schema.Struct({
  migratedMappingCount: Schema.Int.pipe(Schema.nonNegative())
})
export type MigrateAllScimGroupMappingsResponse = typeof MigrateAllScimGroupMappingsResponse.Type

/**
 * The response of `RBACService/ListScimGroupMappings`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListScimGroupMappingsResponse = Schema.Struct({
  mappings: Schema.Array(ScimGroupMapping)
})
export type ListScimGroupMappingsResponse = typeof ListScimGroupMappingsResponse.Type

/**
 * What a migration writes: the groups to create and the mappings to update.
 *
 * @since 0.1.0
 * @category models
 */
export interface MigrationPlan {
  readonly groupsToCreate: ReadonlyArray<Group.Group>
  readonly mappings: ReadonlyArray<ScimGroupMappingRecord>
}

/**
 * The mappings a migration moves: those still targeting a role.
 *
 * @since 0.1.0
 * @category utils
 */
export const roleTargeted = (
  mappings: ReadonlyArray<ScimGroupMappingRecord>
): ReadonlyArray<ScimGroupMappingRecord & { readonly roleId: RoleId }> =>
  mappings.filter((mapping): mapping is ScimGroupMappingRecord & { readonly roleId: RoleId } =>
    mapping.targetMode === "role" && mapping.roleId !== undefined
  )

const sameSet = <A>(a: Iterable<A>, b: Iterable<A>): boolean =>
  Equal.equals(HashSet.fromIterable(a), HashSet.fromIterable(b))

/**
 * Plans the migration of every role-targeted mapping of one organization to a group that carries
 * exactly that role and has exactly the SCIM group's members. A group that already matches (existing,
 * or planned for an earlier mapping) is reused rather than duplicated; otherwise a group named after
 * the SCIM group is created with the id `newGroupId` gives for the mapping. Group-targeted mappings
 * are left alone, so planning again after applying a plan moves nothing.
 *
 * @since 0.1.0
 * @category utils
 */
export const planMigration = (options: {
  readonly mappings: ReadonlyArray<ScimGroupMappingRecord>
  readonly groups: ReadonlyArray<Group.Group>
  readonly newGroupId: (mapping: ScimGroupMappingRecord) => GroupId
  readonly now: DateTime.Utc
}): MigrationPlan => {
  const [groupsToCreate, mappings] = Arr.mapAccum(
    roleTargeted(options.mappings),
    Arr.empty<Group.Group>(),
    (created, mapping) => {
      const existing = Arr.findFirst(
        Arr.appendAll(options.groups, created),
        (group) =>
          group.organization_id === mapping.organization_id &&
          sameSet(group.role_ids, [mapping.roleId]) &&
          sameSet(group.member_ids, mapping.member_ids)
      )
      const target = Option.getOrElse(existing, () =>
        Group.make({
          id: options.newGroupId(mapping),
          organizationId: mapping.organization_id,
          name: mapping.displayName,
          displayName: mapping.displayName,
          memberIds: mapping.member_ids,
          roleIds: [mapping.roleId],
          now: options.now
        }))
      const migrated = new ScimGroupMappingRecord({
        id: mapping.id,
        organization_id: mapping.organization_id,
        displayName: mapping.displayName,
        externalId: mapping.externalId,
        groupId: target.id,
        targetMode: "group",
        member_ids: mapping.member_ids
      })
      return [Option.isSome(existing) ? created : Arr.append(created, target), migrated] as const
    }
  )
  return { groupsToCreate, mappings }
}
