/**
 * The member repository port: members and their direct role assignments.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import { Conflict, NotFound } from "./Errors.js"
import { Group } from "./Group.js"
import type { MemberId, OrganizationId, RoleId } from "./Ids.js"
import * as RbacMemory from "./internal/rbacMemory.js"
import { Member } from "./Member.js"
import { ScimGroupMappingRecord } from "./ScimGroupMapping.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores members.
 *
 * @since 0.1.0
 * @category services
 */
export class MemberRepo extends Context.Tag("@sightline/core/MemberRepo")<MemberRepo, MemberRepo.Service>() {}

export declare namespace MemberRepo {
  /**
   * Member storage. E-mail addresses are unique per organization (case-insensitive), soft-deleted
   * members included. A role can be assigned only to a member of the role's organization.
   */
  export interface Service {
    readonly create: (member: Member) => Effect.Effect<void, Conflict>
    /** A member of the organization, soft-deleted ones included (callers check `deleted_at`). */
    readonly get: (organizationId: OrganizationId, id: MemberId) => Effect.Effect<Option.Option<Member>>
    /** A member by e-mail address (case-insensitive), soft-deleted ones included. */
    readonly findByEmail: (organizationId: OrganizationId, email: string) => Effect.Effect<Option.Option<Member>>
    /**
     * The members of every organization with this e-mail address (case-insensitive), soft-deleted
     * ones included, oldest first: sign-in knows an address before it knows an organization.
     */
    readonly findEverywhereByEmail: (email: string) => Effect.Effect<ReadonlyArray<Member>>
    /** The organization's members, oldest first (ties by id); soft-deleted ones only when asked. */
    readonly list: (organizationId: OrganizationId, options?: ListOptions) => Effect.Effect<ReadonlyArray<Member>>
    /**
     * Marks a member deleted at `at` and returns it; already deleted members keep their first
     * `deleted_at`. Role assignments and group memberships stay (they are inert while deleted).
     */
    readonly softDelete: (
      organizationId: OrganizationId,
      id: MemberId,
      at: DateTime.Utc
    ) => Effect.Effect<Member, NotFound>
    /** Removes a member with its role assignments, group memberships and SCIM group memberships. */
    readonly hardDelete: (organizationId: OrganizationId, id: MemberId) => Effect.Effect<void, NotFound>
    /** Assigns a role; assigning a held role does nothing. `NotFound` unless both are the organization's. */
    readonly assignRole: (
      organizationId: OrganizationId,
      memberId: MemberId,
      roleId: RoleId
    ) => Effect.Effect<void, NotFound>
    /** Removes a role assignment; removing one that does not exist does nothing. */
    readonly unassignRole: (organizationId: OrganizationId, memberId: MemberId, roleId: RoleId) => Effect.Effect<void>
    /** The roles assigned to a member directly (not through groups), sorted by id. */
    readonly roleIds: (organizationId: OrganizationId, memberId: MemberId) => Effect.Effect<ReadonlyArray<RoleId>>
    /** The members a role is assigned to directly (soft-deleted ones included), sorted by id. */
    readonly membersWithRole: (
      organizationId: OrganizationId,
      roleId: RoleId
    ) => Effect.Effect<ReadonlyArray<MemberId>>
  }

  /** Filters of `list`. */
  export interface ListOptions {
    /** Include soft-deleted members (default false). */
    readonly includeDeleted?: boolean | undefined
    /** Only service accounts (true) or only humans (false); both when omitted. */
    readonly isServiceAccount?: boolean | undefined
  }
}

/**
 * The listing order of members: oldest first, ties broken by id.
 *
 * @since 0.1.0
 * @category constants
 */
export const order: Order.Order<Member> = Order.combine(
  Order.mapInput(DateTime.Order, (member: Member) => member.created_at),
  Order.mapInput(Order.string, (member: Member) => member.id)
)

/**
 * Members in memory (sharing their tables with the memory `RoleRepo` and `GroupRepo`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<MemberRepo, never, MemoryState> = Layer.effect(
  MemberRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const tables = yield* RbacMemory.RbacTables
    const notFound = () => new NotFound()

    const findByEmail = (organizationId: OrganizationId, email: string) =>
      Effect.map(Ref.get(tables.members), (rows) =>
        Arr.findFirst(
          RbacMemory.rowsOfOrg(rows, organizationId),
          (member) => member.email.toLowerCase() === email.toLowerCase()
        ))

    const getMember = (organizationId: OrganizationId, id: MemberId) =>
      Effect.map(Ref.get(tables.members), (rows) => RbacMemory.findInOrg(rows, organizationId, id))

    return MemberRepo.of({
      create: (member) =>
        state.run(Effect.gen(function*() {
          if (Option.isSome(yield* findByEmail(member.organization_id, member.email))) {
            return yield* new Conflict({ message: `a member with e-mail ${member.email} already exists` })
          }
          yield* Ref.update(tables.members, HashMap.set(member.id, member))
        })),

      get: (organizationId, id) => state.run(getMember(organizationId, id)),

      findByEmail: (organizationId, email) => state.run(findByEmail(organizationId, email)),

      findEverywhereByEmail: (email) =>
        state.run(Effect.map(Ref.get(tables.members), (rows) =>
          Arr.sort(
            Arr.filter(
              Arr.fromIterable(HashMap.values(rows)),
              (member) => member.email.toLowerCase() === email.toLowerCase()
            ),
            order
          ))),

      list: (organizationId, options = {}) =>
        state.run(Effect.map(Ref.get(tables.members), (rows) =>
          Arr.sort(
            RbacMemory.rowsOfOrg(rows, organizationId).filter((member) =>
              (options.includeDeleted === true || member.deleted_at === undefined) &&
              (options.isServiceAccount === undefined || member.is_service_account === options.isServiceAccount)
            ),
            order
          ))),

      softDelete: (organizationId, id, at) =>
        state.run(Effect.gen(function*() {
          const member = yield* Effect.flatMap(getMember(organizationId, id), Effect.mapError(notFound))
          if (member.deleted_at !== undefined) return member
          const deleted = new Member({ ...member, deleted_at: at })
          yield* Ref.update(tables.members, HashMap.set(id, deleted))
          return deleted
        })),

      hardDelete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          yield* Effect.flatMap(getMember(organizationId, id), Effect.mapError(notFound))
          yield* Ref.update(tables.members, HashMap.remove(id))
          yield* Ref.update(tables.assignments, HashSet.filter(([member]) => member !== id))
          yield* Ref.update(
            tables.groups,
            HashMap.map((group) =>
              group.member_ids.includes(id)
                ? new Group({ ...group, member_ids: group.member_ids.filter((m) => m !== id) })
                : group
            )
          )
          yield* Ref.update(
            tables.mappings,
            HashMap.map((mapping) =>
              mapping.member_ids.includes(id)
                ? new ScimGroupMappingRecord({ ...mapping, member_ids: mapping.member_ids.filter((m) => m !== id) })
                : mapping
            )
          )
        })),

      assignRole: (organizationId, memberId, roleId) =>
        state.run(Effect.gen(function*() {
          const members = yield* Ref.get(tables.members)
          const roles = yield* Ref.get(tables.roles)
          if (
            Option.isNone(RbacMemory.findInOrg(members, organizationId, memberId)) ||
            Option.isNone(RbacMemory.findInOrg(roles, organizationId, roleId))
          ) {
            return yield* notFound()
          }
          yield* Ref.update(tables.assignments, HashSet.add(RbacMemory.assignment(memberId, roleId)))
        })),

      unassignRole: (organizationId, memberId, roleId) =>
        state.run(Effect.gen(function*() {
          const members = yield* Ref.get(tables.members)
          if (Option.isNone(RbacMemory.findInOrg(members, organizationId, memberId))) return
          yield* Ref.update(tables.assignments, HashSet.remove(RbacMemory.assignment(memberId, roleId)))
        })),

      roleIds: (organizationId, memberId) =>
        state.run(Effect.gen(function*() {
          const members = yield* Ref.get(tables.members)
          if (Option.isNone(RbacMemory.findInOrg(members, organizationId, memberId))) return []
          const assignments = yield* Ref.get(tables.assignments)
          return Arr.sort(
            Arr.filterMap(
              Arr.fromIterable(assignments),
              ([member, role]) => member === memberId ? Option.some(role) : Option.none()
            ),
            Order.string
          )
        })),

      membersWithRole: (organizationId, roleId) =>
        state.run(Effect.gen(function*() {
          const roles = yield* Ref.get(tables.roles)
          if (Option.isNone(RbacMemory.findInOrg(roles, organizationId, roleId))) return []
          const assignments = yield* Ref.get(tables.assignments)
          return Arr.sort(
            Arr.filterMap(
              Arr.fromIterable(assignments),
              ([member, role]) => role === roleId ? Option.some(member) : Option.none()
            ),
            Order.string
          )
        }))
    })
  })
).pipe(Layer.provide(RbacMemory.layer))
