/**
 * The RBAC service of the Connect RPC surface (`svc.rpc.public.rbac.RBACService`): listing SCIM
 * group mappings, migrating them from role targets to group targets, and `WhoAmI`. Shapes are
 * camelCase, as on every Connect surface.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Auditor } from "./Auditor.js"
import { enforce } from "./Decision.js"
import type { PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { GroupRepo } from "./GroupRepo.js"
import { IdGenerator } from "./IdGenerator.js"
import { ApiKeyId, GroupId, MemberId, OrganizationId, RoleId, type ScimGroupMappingId } from "./Ids.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Permission from "./Permission.js"
import * as Policy from "./Policy.js"
import * as ScimGroupMapping from "./ScimGroupMapping.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * A role the caller acts with, as `WhoAmI` shows it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WhoAmIRole = Schema.Struct({
  id: RoleId,
  name: Schema.String,
  isSystem: Schema.Boolean
})
export type WhoAmIRole = typeof WhoAmIRole.Type

/**
 * The response of `RBACService/WhoAmI`: who the caller is and what this request may do. `roles` and
 * `permissions` are the effective ones (a key's snapshot intersected with the owner's live roles),
 * which is what a client debugging a `permission_denied` needs to see.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WhoAmIResponse = Schema.Struct({
  organizationId: OrganizationId,
  memberId: MemberId,
  email: Schema.String,
  name: Schema.String,
  isServiceAccount: Schema.Boolean,
  /** How the caller authenticated: an API key or a session (JWT). */
  authMethod: Schema.Literal("api_key", "jwt"),
  /** The calling key; omitted for a session. */
  apiKeyId: Schema.optional(ApiKeyId),
  /** Whether the calling key keeps the owner's direct object grants (always true for a session). */
  fullMemberAccess: Schema.Boolean,
  roles: Schema.Array(WhoAmIRole),
  permissions: Schema.Array(Permission.Permission),
  isAdmin: Schema.Boolean
})
export type WhoAmIResponse = typeof WhoAmIResponse.Type

/**
 * The RBAC RPC use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class ScimMappings extends Context.Tag("@sightline/core/ScimMappings")<ScimMappings, ScimMappings.Service>() {}

export declare namespace ScimMappings {
  /** The operations of `RBACService`. The caller comes first; everything is scoped to its organization. */
  export interface Service {
    /** `ListScimGroupMappings` (`organization:read`): the mappings by display name. */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<ScimGroupMapping.ListScimGroupMappingsResponse, Unauthenticated | PermissionDenied>
    /**
     * `MigrateAllScimGroupMappings` (`organization:write`): moves every role-targeted mapping to a
     * group carrying that role and the SCIM group's members, in one transaction; a second run moves 0.
     */
    readonly migrateAll: (
      principal: Policy.Principal
    ) => Effect.Effect<ScimGroupMapping.MigrateAllScimGroupMappingsResponse, Unauthenticated | PermissionDenied>
    /** `WhoAmI` (no permission: any live caller may ask who it is). */
    readonly whoAmI: (principal: Policy.Principal) => Effect.Effect<WhoAmIResponse, Unauthenticated>
  }
}

/**
 * Builds the RBAC RPC use cases over the repositories in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const members = yield* MemberRepo
  const groups = yield* GroupRepo
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const auditor = yield* Auditor

  const list = Traced.fn("ScimMappings.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const mappings = yield* groups.listMappings(principal.organizationId)
    return { mappings: mappings.map(ScimGroupMapping.toMapping) }
  })

  const migrateAll = Traced.fn("ScimMappings.migrateAll")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "organization:write"))
    const organizationId = principal.organizationId
    return yield* tx.withTransaction(Effect.gen(function*() {
      // Locked, so two concurrent migrations cannot both create a group for the same mapping.
      const mappings = yield* groups.listMappingsForUpdate(organizationId)
      // The plan is pure, so the ids of groups it may create are drawn up front (one per mapping
      // that moves; an id whose group turns out to be reused is simply never stored).
      const fresh = HashMap.fromIterable(
        yield* Effect.forEach(
          ScimGroupMapping.roleTargeted(mappings),
          (mapping) => Effect.map(ids.uuid, (id) => [mapping.id, GroupId.make(id)] as const)
        )
      )
      const plan = ScimGroupMapping.planMigration({
        mappings,
        groups: yield* groups.list(organizationId),
        newGroupId: (mapping) =>
          Option.getOrThrowWith(
            HashMap.get(fresh, mapping.id),
            () => new Error(`no group id drawn for mapping ${mapping.id}`)
          ),
        now: yield* DateTime.now
      })
      // The plan only names members and roles the mappings already reference inside the
      // organization, so a failure here is a broken store rather than a caller's mistake.
      for (const group of plan.groupsToCreate) yield* Effect.orDie(groups.create(group))
      const created = new Set<string>(plan.groupsToCreate.map((group) => group.id))
      const before = new Map<ScimGroupMappingId, ScimGroupMapping.ScimGroupMappingRecord>(
        mappings.map((mapping) => [mapping.id, mapping])
      )
      for (const mapping of plan.mappings) {
        yield* Effect.orDie(groups.updateMapping(mapping))
        yield* auditor.recordBy(principal, {
          action: "scim_group_mapping.migrate",
          resourceType: "scim_group_mapping",
          resourceId: mapping.id,
          details: {
            from_role_id: before.get(mapping.id)?.roleId ?? null,
            to_group_id: mapping.groupId ?? null,
            group_created: mapping.groupId !== undefined && created.has(mapping.groupId)
          }
        })
      }
      return { migratedMappingCount: plan.mappings.length }
    }))
  })

  const whoAmI = Traced.fn("ScimMappings.whoAmI")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.authenticated(principal))
    // The principal was built from the member; one erased since then is no longer anyone.
    const member = yield* Effect.flatMap(
      members.get(principal.organizationId, principal.memberId),
      Effect.mapError(() => new Errors.Unauthenticated())
    )
    if (member.deleted_at !== undefined) return yield* new Errors.Unauthenticated()
    const roles = Policy.effectiveRoles(principal)
    const auth = principal.auth
    return {
      organizationId: principal.organizationId,
      memberId: principal.memberId,
      email: member.email,
      name: member.name,
      isServiceAccount: member.is_service_account,
      authMethod: auth._tag === "ApiKey" ? "api_key" as const : "jwt" as const,
      ...(auth._tag === "ApiKey" ? { apiKeyId: auth.keyId } : {}),
      fullMemberAccess: Policy.keepsMemberGrants(principal),
      roles: roles.map((role) => ({ id: role.id, name: role.name, isSystem: role.isSystem })),
      permissions: Policy.effectivePermissions(principal),
      isAdmin: Policy.isAdmin(principal)
    }
  })

  return ScimMappings.of({ list, migrateAll, whoAmI })
})

/**
 * The RBAC RPC use cases over `MemberRepo`, `GroupRepo`, `Transaction`, `AuditLogRepo` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(ScimMappings, make)
