/**
 * The role repository port.
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
import type { RoleRecord } from "./Role.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores roles.
 *
 * @since 0.1.0
 * @category services
 */
export class RoleRepo extends Context.Tag("@sightline/core/RoleRepo")<RoleRepo, RoleRepo.Service>() {}

export declare namespace RoleRepo {
  /** Role storage. Role names are unique per organization, case-insensitively (`Conflict`). */
  export interface Service {
    readonly create: (role: RoleRecord) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: RoleId) => Effect.Effect<Option.Option<RoleRecord>>
    /** `get` with a row lock (inside `withTransaction`), for read-modify-write. */
    readonly getForUpdate: (organizationId: OrganizationId, id: RoleId) => Effect.Effect<Option.Option<RoleRecord>>
    /** A role by name, case-insensitively. */
    readonly findByName: (organizationId: OrganizationId, name: string) => Effect.Effect<Option.Option<RoleRecord>>
    /** The organization's roles, oldest first (ties by id). */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<RoleRecord>>
    /**
     * The roles a member holds: assigned directly or granted through its groups, each once, in
     * `list` order. One read, however many roles the organization has (it runs on every request).
     */
    readonly heldBy: (organizationId: OrganizationId, memberId: MemberId) => Effect.Effect<ReadonlyArray<RoleRecord>>
    /** Replaces a stored role (matched by organization and id); `Conflict` if the new name is taken. */
    readonly update: (role: RoleRecord) => Effect.Effect<void, NotFound | Conflict>
    /**
     * Deletes a role with its member assignments and group grants. `Conflict` while a SCIM group
     * mapping targets it: the identity provider's configuration is never dropped silently.
     */
    readonly delete: (organizationId: OrganizationId, id: RoleId) => Effect.Effect<void, NotFound | Conflict>
  }
}

/**
 * The listing order of roles: oldest first, ties broken by id.
 *
 * @since 0.1.0
 * @category constants
 */
export const order: Order.Order<RoleRecord> = Order.combine(
  Order.mapInput(DateTime.Order, (role: RoleRecord) => role.created_at),
  Order.mapInput(Order.string, (role: RoleRecord) => role.id)
)

/**
 * Roles in memory (sharing their tables with the memory `MemberRepo` and `GroupRepo`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<RoleRepo, never, MemoryState> = Layer.effect(
  RoleRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const tables = yield* RbacMemory.RbacTables

    const get = (organizationId: OrganizationId, id: RoleId) =>
      Effect.map(Ref.get(tables.roles), (rows) => RbacMemory.findInOrg(rows, organizationId, id))

    const findByName = (organizationId: OrganizationId, name: string) =>
      Effect.map(Ref.get(tables.roles), (rows) =>
        Arr.findFirst(
          RbacMemory.rowsOfOrg(rows, organizationId),
          (role) => role.name.toLowerCase() === name.toLowerCase()
        ))

    const ensureNameFree = (role: RoleRecord) =>
      Effect.flatMap(
        findByName(role.organization_id, role.name),
        (existing) =>
          Option.isSome(existing) && existing.value.id !== role.id
            ? Effect.fail(new Conflict({ message: `a role named ${role.name} already exists` }))
            : Effect.void
      )

    return RoleRepo.of({
      create: (role) =>
        state.run(Effect.gen(function*() {
          yield* ensureNameFree(role)
          yield* Ref.update(tables.roles, HashMap.set(role.id, role))
        })),

      get: (organizationId, id) => state.run(get(organizationId, id)),

      getForUpdate: (organizationId, id) => state.run(get(organizationId, id)),

      findByName: (organizationId, name) => state.run(findByName(organizationId, name)),

      list: (organizationId) =>
        state.run(
          Effect.map(Ref.get(tables.roles), (rows) => Arr.sort(RbacMemory.rowsOfOrg(rows, organizationId), order))
        ),
      heldBy: (organizationId, memberId) => state.run(RbacMemory.heldRoles(tables, organizationId, memberId, order)),

      update: (role) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* get(role.organization_id, role.id))) return yield* new NotFound()
          yield* ensureNameFree(role)
          yield* Ref.update(tables.roles, HashMap.set(role.id, role))
        })),

      delete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* get(organizationId, id))) return yield* new NotFound()
          const mappings = yield* Ref.get(tables.mappings)
          if (RbacMemory.rowsOfOrg(mappings, organizationId).some((mapping) => mapping.roleId === id)) {
            return yield* new Conflict({ message: "the role is the target of a SCIM group mapping" })
          }
          yield* Ref.update(tables.roles, HashMap.remove(id))
          yield* Ref.update(tables.assignments, HashSet.filter(([, role]) => role !== id))
          yield* Ref.update(
            tables.groups,
            HashMap.map((group) =>
              group.role_ids.includes(id)
                ? new Group({ ...group, role_ids: group.role_ids.filter((r) => r !== id) })
                : group
            )
          )
        }))
    })
  })
).pipe(Layer.provide(RbacMemory.layer))
