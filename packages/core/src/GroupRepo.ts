/**
 * The group repository port: groups (with their members and roles) and SCIM group mappings.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import { Conflict, NotFound } from "./Errors.js"
import { Group, normalizeIds } from "./Group.js"
import type { GroupId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "./Ids.js"
import * as RbacMemory from "./internal/rbacMemory.js"
import { ScimGroupMappingRecord } from "./ScimGroupMapping.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores groups and SCIM group mappings.
 *
 * @since 0.1.0
 * @category services
 */
export class GroupRepo extends Context.Tag("@sightline/core/GroupRepo")<GroupRepo, GroupRepo.Service>() {}

export declare namespace GroupRepo {
  /**
   * Group and mapping storage. Member and role sets are returned deduplicated and sorted by id.
   * Every member, role and group a row refers to must belong to the row's organization (`NotFound`).
   */
  export interface Service {
    readonly create: (group: Group) => Effect.Effect<void, NotFound>
    readonly get: (organizationId: OrganizationId, id: GroupId) => Effect.Effect<Option.Option<Group>>
    /** The organization's groups, oldest first (ties by id). */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<Group>>
    /** Deletes a group; `Conflict` while a SCIM group mapping targets it. */
    readonly delete: (organizationId: OrganizationId, id: GroupId) => Effect.Effect<void, NotFound | Conflict>
    /** Replaces the members of a group and returns the group. */
    readonly setMembers: (
      organizationId: OrganizationId,
      id: GroupId,
      memberIds: Iterable<MemberId>
    ) => Effect.Effect<Group, NotFound>
    /** Replaces the roles a group carries and returns the group. */
    readonly setRoles: (
      organizationId: OrganizationId,
      id: GroupId,
      roleIds: Iterable<RoleId>
    ) => Effect.Effect<Group, NotFound>
    /** The roles a member holds through its groups, deduplicated and sorted by id. */
    readonly groupRoleIds: (organizationId: OrganizationId, memberId: MemberId) => Effect.Effect<ReadonlyArray<RoleId>>

    /** Stores a mapping; `Conflict` when the organization already maps the same `externalId`. */
    readonly createMapping: (mapping: ScimGroupMappingRecord) => Effect.Effect<void, NotFound | Conflict>
    readonly getMapping: (
      organizationId: OrganizationId,
      id: ScimGroupMappingId
    ) => Effect.Effect<Option.Option<ScimGroupMappingRecord>>
    /** The organization's mappings, by `displayName` (byte order) then id. */
    readonly listMappings: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<ScimGroupMappingRecord>>
    /** `listMappings` with row locks (inside `withTransaction`): the migration reads and rewrites them. */
    readonly listMappingsForUpdate: (
      organizationId: OrganizationId
    ) => Effect.Effect<ReadonlyArray<ScimGroupMappingRecord>>
    /** Replaces a stored mapping (matched by organization and id). */
    readonly updateMapping: (mapping: ScimGroupMappingRecord) => Effect.Effect<void, NotFound | Conflict>
  }
}

/**
 * The listing order of groups: oldest first, ties broken by id.
 *
 * @since 0.1.0
 * @category constants
 */
export const order: Order.Order<Group> = Order.combine(
  Order.mapInput(DateTime.Order, (group: Group) => group.created_at),
  Order.mapInput(Order.string, (group: Group) => group.id)
)

/**
 * The listing order of mappings: by display name, ties broken by id.
 *
 * @since 0.1.0
 * @category constants
 */
export const mappingOrder: Order.Order<ScimGroupMappingRecord> = Order.combine(
  Order.mapInput(Order.string, (mapping: ScimGroupMappingRecord) => mapping.displayName),
  Order.mapInput(Order.string, (mapping: ScimGroupMappingRecord) => mapping.id)
)

/**
 * Groups and mappings in memory (sharing their tables with the memory `MemberRepo` and `RoleRepo`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<GroupRepo, never, MemoryState> = Layer.effect(
  GroupRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const tables = yield* RbacMemory.RbacTables

    const ensureInOrg = <K, V extends { readonly organization_id: OrganizationId }>(
      table: Ref.Ref<HashMap.HashMap<K, V>>,
      organizationId: OrganizationId,
      ids: Iterable<K>
    ) =>
      Effect.flatMap(
        Ref.get(table),
        (rows) => RbacMemory.allInOrg(rows, organizationId, ids) ? Effect.void : Effect.fail(new NotFound())
      )

    const getGroup = (organizationId: OrganizationId, id: GroupId) =>
      Effect.flatMap(
        Effect.map(Ref.get(tables.groups), (rows) => RbacMemory.findInOrg(rows, organizationId, id)),
        Effect.mapError(() => new NotFound())
      )

    const ensureMappingValid = (mapping: ScimGroupMappingRecord) =>
      Effect.gen(function*() {
        yield* ensureInOrg(tables.members, mapping.organization_id, mapping.member_ids)
        yield* ensureInOrg(tables.roles, mapping.organization_id, mapping.roleId === undefined ? [] : [mapping.roleId])
        yield* ensureInOrg(
          tables.groups,
          mapping.organization_id,
          mapping.groupId === undefined ? [] : [mapping.groupId]
        )
        const mappings = yield* Ref.get(tables.mappings)
        const clash = RbacMemory.rowsOfOrg(mappings, mapping.organization_id).some((other) =>
          other.id !== mapping.id && other.externalId === mapping.externalId
        )
        if (clash) {
          return yield* new Conflict({ message: `the SCIM group ${mapping.externalId} is already mapped` })
        }
      })

    const normalizedMapping = (mapping: ScimGroupMappingRecord) =>
      new ScimGroupMappingRecord({ ...mapping, member_ids: normalizeIds(mapping.member_ids) })

    const listMappings = (organizationId: OrganizationId) =>
      state.run(
        Effect.map(
          Ref.get(tables.mappings),
          (rows) => Arr.sort(RbacMemory.rowsOfOrg(rows, organizationId), mappingOrder)
        )
      )

    return GroupRepo.of({
      create: (group) =>
        state.run(Effect.gen(function*() {
          yield* ensureInOrg(tables.members, group.organization_id, group.member_ids)
          yield* ensureInOrg(tables.roles, group.organization_id, group.role_ids)
          const stored = new Group({
            ...group,
            member_ids: normalizeIds(group.member_ids),
            role_ids: normalizeIds(group.role_ids)
          })
          yield* Ref.update(tables.groups, HashMap.set(group.id, stored))
        })),

      get: (organizationId, id) =>
        state.run(Effect.map(Ref.get(tables.groups), (rows) => RbacMemory.findInOrg(rows, organizationId, id))),

      list: (organizationId) =>
        state.run(
          Effect.map(Ref.get(tables.groups), (rows) => Arr.sort(RbacMemory.rowsOfOrg(rows, organizationId), order))
        ),

      delete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          yield* getGroup(organizationId, id)
          const mappings = yield* Ref.get(tables.mappings)
          if (RbacMemory.rowsOfOrg(mappings, organizationId).some((mapping) => mapping.groupId === id)) {
            return yield* new Conflict({ message: "the group is the target of a SCIM group mapping" })
          }
          yield* Ref.update(tables.groups, HashMap.remove(id))
        })),

      setMembers: (organizationId, id, memberIds) =>
        state.run(Effect.gen(function*() {
          const group = yield* getGroup(organizationId, id)
          const ids = normalizeIds(memberIds)
          yield* ensureInOrg(tables.members, organizationId, ids)
          const updated = new Group({ ...group, member_ids: ids })
          yield* Ref.update(tables.groups, HashMap.set(id, updated))
          return updated
        })),

      setRoles: (organizationId, id, roleIds) =>
        state.run(Effect.gen(function*() {
          const group = yield* getGroup(organizationId, id)
          const ids = normalizeIds(roleIds)
          yield* ensureInOrg(tables.roles, organizationId, ids)
          const updated = new Group({ ...group, role_ids: ids })
          yield* Ref.update(tables.groups, HashMap.set(id, updated))
          return updated
        })),

      groupRoleIds: (organizationId, memberId) =>
        state.run(Effect.map(Ref.get(tables.groups), (rows) =>
          normalizeIds(
            RbacMemory.rowsOfOrg(rows, organizationId)
              .filter((group) => group.member_ids.includes(memberId))
              .flatMap((group) => group.role_ids)
          ))),

      createMapping: (mapping) =>
        state.run(Effect.gen(function*() {
          yield* ensureMappingValid(mapping)
          yield* Ref.update(tables.mappings, HashMap.set(mapping.id, normalizedMapping(mapping)))
        })),

      getMapping: (organizationId, id) =>
        state.run(Effect.map(Ref.get(tables.mappings), (rows) => RbacMemory.findInOrg(rows, organizationId, id))),

      listMappings,

      listMappingsForUpdate: listMappings,

      updateMapping: (mapping) =>
        state.run(Effect.gen(function*() {
          const mappings = yield* Ref.get(tables.mappings)
          if (Option.isNone(RbacMemory.findInOrg(mappings, mapping.organization_id, mapping.id))) {
            return yield* new NotFound()
          }
          yield* ensureMappingValid(mapping)
          yield* Ref.update(tables.mappings, HashMap.set(mapping.id, normalizedMapping(mapping)))
        }))
    })
  })
).pipe(Layer.provide(RbacMemory.layer))
