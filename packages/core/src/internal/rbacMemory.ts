/**
 * The tables shared by the memory `MemberRepo`, `RoleRepo` and `GroupRepo`.
 *
 * In SQL these are related tables with foreign keys: deleting a role removes its assignments and
 * group grants, hard-deleting a member removes its assignments and memberships. The memory ports
 * need the same reach across each other's rows, so they share one set of tables. Each memory layer
 * provides this layer to itself; layers are memoized per build, so ports built together share it.
 *
 * @internal
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import type { Group } from "../Group.js"
import type { GroupId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "../Ids.js"
import type { Member } from "../Member.js"
import type { RoleRecord } from "../Role.js"
import type { ScimGroupMappingRecord } from "../ScimGroupMapping.js"
import { MemoryState } from "../Transaction.js"

/** A role assignment: a tuple with structural equality, so a `HashSet` holds each pair once. */
export type Assignment = readonly [member: MemberId, role: RoleId]

/** Builds an assignment. */
export const assignment = (member: MemberId, role: RoleId): Assignment => Data.tuple(member, role)

/** The shared memory tables. */
export class RbacTables extends Context.Tag("@sightline/core/internal/rbacMemory/RbacTables")<
  RbacTables,
  RbacTables.Service
>() {}

export declare namespace RbacTables {
  /** One `MemoryState` table per relation. */
  export interface Service {
    readonly members: Ref.Ref<HashMap.HashMap<MemberId, Member>>
    readonly roles: Ref.Ref<HashMap.HashMap<RoleId, RoleRecord>>
    readonly assignments: Ref.Ref<HashSet.HashSet<Assignment>>
    readonly groups: Ref.Ref<HashMap.HashMap<GroupId, Group>>
    readonly mappings: Ref.Ref<HashMap.HashMap<ScimGroupMappingId, ScimGroupMappingRecord>>
  }
}

/** Creates the shared tables in `MemoryState`, so transactions snapshot and restore them. */
export const layer: Layer.Layer<RbacTables, never, MemoryState> = Layer.effect(
  RbacTables,
  Effect.gen(function*() {
    const state = yield* MemoryState
    return {
      members: yield* state.table(HashMap.empty<MemberId, Member>()),
      roles: yield* state.table(HashMap.empty<RoleId, RoleRecord>()),
      assignments: yield* state.table(HashSet.empty<Assignment>()),
      groups: yield* state.table(HashMap.empty<GroupId, Group>()),
      mappings: yield* state.table(HashMap.empty<ScimGroupMappingId, ScimGroupMappingRecord>())
    }
  })
)

/** The row of `id` in `rows` if it belongs to the organization: rows of other organizations are absent. */
export const findInOrg = <K, V extends { readonly organization_id: OrganizationId }>(
  rows: HashMap.HashMap<K, V>,
  organizationId: OrganizationId,
  id: K
): Option.Option<V> => Option.filter(HashMap.get(rows, id), (row) => row.organization_id === organizationId)

/** Every row of the organization. */
export const rowsOfOrg = <K, V extends { readonly organization_id: OrganizationId }>(
  rows: HashMap.HashMap<K, V>,
  organizationId: OrganizationId
): Array<V> => Array.from(HashMap.values(rows)).filter((row) => row.organization_id === organizationId)

/** Do all of `ids` name rows of the organization? */
export const allInOrg = <K, V extends { readonly organization_id: OrganizationId }>(
  rows: HashMap.HashMap<K, V>,
  organizationId: OrganizationId,
  ids: Iterable<K>
): boolean => Array.from(ids).every((id) => Option.isSome(findInOrg(rows, organizationId, id)))

/**
 * The roles a member holds in memory: assigned directly or through its groups, each once, in
 * `order` (the memory `RoleRepo.heldBy`, and the memory `ApiKeyRepo.findCredential`).
 */
export const heldRoles = (
  tables: RbacTables.Service,
  organizationId: OrganizationId,
  memberId: MemberId,
  order: Order.Order<RoleRecord>
): Effect.Effect<Array<RoleRecord>> =>
  Effect.gen(function*() {
    const held = new Set<string>()
    for (const [member, role] of yield* Ref.get(tables.assignments)) if (member === memberId) held.add(role)
    for (const group of rowsOfOrg(yield* Ref.get(tables.groups), organizationId)) {
      if (group.member_ids.includes(memberId)) { for (const role of group.role_ids) held.add(role) }
    }
    const roles = rowsOfOrg(yield* Ref.get(tables.roles), organizationId)
    return Arr.sort(roles.filter((role) => held.has(role.id)), order)
  })
