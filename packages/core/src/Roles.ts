/**
 * The roles use cases (`/v2/roles`): listing, creating, updating (including the model
 * configuration) and deleting roles.
 *
 * Who may touch which role is the policy engine's (`Policy.canCreateRole`, `Policy.canEditRole`);
 * what an update may change is `Role.checkUpdate`'s; this module adds what needs the stores: model
 * ids must exist in the organization's catalogue, names must be free, and every change is audited
 * in the transaction that makes it.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auditor } from "./Auditor.js"
import { enforce } from "./Decision.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { type ModelNumber, RoleId } from "./Ids.js"
import { ModelCatalogue } from "./Model.js"
import * as Model from "./Model.js"
import * as Policy from "./Policy.js"
import * as Role from "./Role.js"
import { RoleRepo } from "./RoleRepo.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The roles use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Roles extends Context.Tag("@sightline/core/Roles")<Roles, Roles.Service>() {}

export declare namespace Roles {
  /** The operations of `/v2/roles`. The caller comes first; every lookup is scoped to its organization. */
  export interface Service {
    /** `GET /v2/roles` (`role:read`): the organization's roles, oldest first. */
    readonly list: (principal: Policy.Principal) => Effect.Effect<Role.RoleList, Unauthenticated | PermissionDenied>
    /** `POST /v2/roles` (`Policy.canCreateRole`); a name taken ignoring case is a `Conflict`. */
    readonly create: (
      principal: Policy.Principal,
      request: Role.CreateRole
    ) => Effect.Effect<Role.RoleRecord, Unauthenticated | PermissionDenied | Conflict>
    /**
     * `PATCH /v2/roles/{id}` (`Policy.canEditRole`, `Role.checkUpdate`). Model ids must be in the
     * catalogue (`InvalidRequest`); a name taken by another role is a `Conflict`.
     */
    readonly update: (
      principal: Policy.Principal,
      id: RoleId,
      request: Role.UpdateRole
    ) => Effect.Effect<
      Role.RoleRecord,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
    /**
     * `DELETE /v2/roles/{id}` (`Policy.canEditRole`): system roles are `InvalidRequest`, a role a
     * SCIM group mapping targets is a `Conflict`.
     */
    readonly delete: (
      principal: Policy.Principal,
      id: RoleId
    ) => Effect.Effect<
      Role.DeleteRoleResult,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
  }
}

/**
 * The model numbers an update names that the catalogue does not have, in the order given.
 *
 * @since 0.1.0
 * @category utils
 */
export const unknownModels = (catalogue: Model.Catalogue, update: Role.UpdateRole): ReadonlyArray<number> => {
  // `default_model_id: 0` is the seed's "clear", not a model.
  const named = [
    ...(update.default_model_id === undefined || update.default_model_id === 0 ? [] : [update.default_model_id]),
    ...(update.allowed_model_ids ?? [])
  ]
  return Arr.dedupe(named.filter((number) => Option.isNone(Model.findByNumber(catalogue, number as ModelNumber))))
}

// What changed between two versions of a role: the permission set, and the other fields by name.
// Permission sets are stored normalized and the other fields are scalars or sorted number lists, so
// comparing their JSON is exact.
const changes = (before: Role.RoleRecord, after: Role.RoleRecord) => ({
  permissions: before.permissions.join(",") !== after.permissions.join(","),
  fields: (["name", "description", "default_model_id", "allowed_model_ids", "allow_model_choice"] as const).filter(
    (field) => JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null)
  )
})

/**
 * Builds the roles use cases over the repositories and the model catalogue in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const roles = yield* RoleRepo
  const catalogues = yield* ModelCatalogue
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const auditor = yield* Auditor

  const list = Traced.fn("Roles.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "role:read"))
    return { roles: yield* roles.list(principal.organizationId) }
  })

  const create = Traced.fn("Roles.create")(function*(principal: Policy.Principal, request: Role.CreateRole) {
    yield* enforce(Policy.canCreateRole(principal, request.permissions ?? []))
    return yield* tx.withTransaction(Effect.gen(function*() {
      const role = Role.make({
        id: RoleId.make(yield* ids.uuid),
        organizationId: principal.organizationId,
        request,
        now: yield* DateTime.now
      })
      yield* roles.create(role)
      yield* auditor.recordBy(principal, {
        action: "role.create",
        resourceType: "role",
        resourceId: role.id,
        details: { name: role.name, permissions: role.permissions }
      })
      return role
    }))
  })

  const update = Traced.fn("Roles.update")(
    function*(principal: Policy.Principal, id: RoleId, request: Role.UpdateRole) {
      // Checked before the lookup, so a caller without `role:write` learns nothing about ids.
      yield* enforce(Policy.requirePermission(principal, "role:write"))
      const organizationId = principal.organizationId
      return yield* tx.withTransaction(Effect.gen(function*() {
        const role = yield* Effect.flatMap(
          roles.getForUpdate(organizationId, id),
          Effect.mapError(() => new Errors.NotFound())
        )
        yield* enforce(
          Policy.canEditRole(principal, Role.toRoleInfo(role), request.permissions ?? [])
        )
        yield* enforce(Role.checkUpdate(role, request))
        const unknown = unknownModels(yield* catalogues.catalogue(organizationId), request)
        if (unknown.length > 0) {
          return yield* new Errors.InvalidRequest({ message: `unknown model id: ${unknown.join(", ")}` })
        }
        const updated = Role.applyUpdate(role, request, yield* DateTime.now)
        const changed = changes(role, updated)
        // A PATCH that changes nothing writes nothing: `updated_at` and the log only move on changes.
        if (!changed.permissions && changed.fields.length === 0) return role
        yield* roles.update(updated)
        if (changed.fields.length > 0) {
          yield* auditor.recordBy(principal, {
            action: "role.update",
            resourceType: "role",
            resourceId: role.id,
            details: { fields: changed.fields }
          })
        }
        if (changed.permissions) {
          yield* auditor.recordBy(principal, {
            action: "role.permissions_update",
            resourceType: "role",
            resourceId: role.id,
            details: { before: role.permissions, after: updated.permissions }
          })
        }
        return updated
      }))
    }
  )

  const remove = Traced.fn("Roles.delete")(function*(principal: Policy.Principal, id: RoleId) {
    yield* enforce(Policy.requirePermission(principal, "role:write"))
    const organizationId = principal.organizationId
    return yield* tx.withTransaction(Effect.gen(function*() {
      const role = yield* Effect.flatMap(
        roles.getForUpdate(organizationId, id),
        Effect.mapError(() => new Errors.NotFound())
      )
      yield* enforce(Policy.canEditRole(principal, Role.toRoleInfo(role)))
      yield* enforce(Role.checkDelete(role))
      yield* roles.delete(organizationId, id)
      yield* auditor.recordBy(principal, {
        action: "role.delete",
        resourceType: "role",
        resourceId: id,
        details: { name: role.name, permissions: role.permissions }
      })
      return { id, success: true }
    }))
  })

  return Roles.of({ list, create, update, delete: remove })
})

/**
 * The roles use cases over `RoleRepo`, `ModelCatalogue`, `Transaction`, `AuditLogRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Roles, make)
