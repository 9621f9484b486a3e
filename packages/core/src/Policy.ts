/**
 * The policy engine: who may do what, computed from plain data.
 *
 * Inputs are camelCase interfaces that use cases build from stored records: a `Principal` from the
 * authenticated member, its live roles and the credential it used; an `ObjectAccess` from an
 * object's owner and grants; a `Catalogue` from the configured model providers. Every answer is a
 * `Decision` (or a value), so the same rules run in use cases, in host applications and in tests
 * without any layer.
 *
 * The key model of the seed in one paragraph: a key has an owner (who decides ownership and
 * personal shares) and assumed roles (which decide permissions). The assumed roles are a snapshot
 * intersected with the owner's live roles on every request, so removing a role from a member removes
 * it from every key at once while granting one later adds nothing. Roles never substitute for
 * ownership: a key with the `admin` role and the wrong owner cannot reach another member's shares.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Data from "effect/Data"
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import type { ListScope } from "./ApiKey.js"
import * as Audience from "./Audience.js"
import * as Decision from "./Decision.js"
import * as EndUser from "./EndUser.js"
import type { ApiKeyId, ChatId, ConnectorId, MemberId, ModelNumber, OrganizationId, RoleId } from "./Ids.js"
import * as Permission from "./Permission.js"

// -----------------------------------------------------------------------------------------------
// Roles and principals
// -----------------------------------------------------------------------------------------------

/**
 * The model-selection configuration a role carries (`PATCH /v2/roles/{id}`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelConfig {
  /** The catalogue models members of the role may use; absent means every model. */
  readonly allowedModelIds?: ReadonlyArray<ModelNumber> | undefined
  /** The model a new chat uses when the caller names none. */
  readonly defaultModelId?: ModelNumber | undefined
  /** Whether members of the role may pick a model per chat. */
  readonly allowModelChoice: boolean
}

/**
 * A role as the policy engine sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RoleInfo {
  readonly id: RoleId
  readonly name: string
  /** The stored permissions; ignored for the system roles, whose permissions are fixed in code. */
  readonly permissions: ReadonlyArray<Permission.Permission>
  readonly isSystem: boolean
  readonly model: ModelConfig
}

/**
 * How the caller authenticated: a session (JWT) or an API key.
 *
 * @since 0.1.0
 * @category models
 */
export type Auth = Data.TaggedEnum<{
  /** A JWT session: acts with the member's live roles and direct grants. */
  Session: {
    /**
     * An OAuth client's grant (the MCP server's): the client, and the scopes the member let it
     * use, which narrow what it may call. Absent for a browser's session.
     */
    readonly grant?: { readonly clientId: string; readonly scopes: ReadonlyArray<string> } | undefined
  }
  /** An API key: acts as its owner with the permissions of its assumed roles. */
  ApiKey: {
    readonly keyId: ApiKeyId
    /** The snapshot taken when the key was minted. */
    readonly assumedRoleIds: ReadonlyArray<RoleId>
    /** A legacy "All roles" key: follows the owner's live roles. Minting never creates one. */
    readonly inheritAllRoles: boolean
    /** Keeps the owner's direct object grants (still capped by the assumed roles). */
    readonly fullMemberAccess: boolean
    /**
     * The key's client metadata (a JSON object as text, `clientId` of the key): row-level security
     * reads its fields as `_svc.client_attributes_json.<field>`. Absent for keys without one.
     */
    readonly clientId?: string | undefined
    /**
     * Set for an end user's session minted with this key (`EndUser`): it narrows the key to chat,
     * to what the session names, and to an audience of its own; `clientId` then holds the session's
     * attributes (the key's and the end user's).
     */
    readonly endUser?: EndUser.Scope | undefined
  }
}>

/**
 * A session credential.
 *
 * @since 0.1.0
 * @category models
 */
export type Session = Data.TaggedEnum.Value<Auth, "Session">

/**
 * An API key credential.
 *
 * @since 0.1.0
 * @category models
 */
export type ApiKey = Data.TaggedEnum.Value<Auth, "ApiKey">

const authEnum = Data.taggedEnum<Auth>()

/**
 * Builds a session credential.
 *
 * @since 0.1.0
 * @category constants
 */
export const Session: (args?: Omit<Session, "_tag">) => Auth = (args = {}) => authEnum.Session(args)

/**
 * Builds an API key credential.
 *
 * @since 0.1.0
 * @category constants
 */
export const ApiKey: (args: Omit<ApiKey, "_tag">) => Auth = authEnum.ApiKey

/**
 * The client metadata of the caller's key as a JSON object text (`"{}"` for sessions and keys without one).
 *
 * @since 0.1.0
 * @category utils
 */
export const clientAttributesJson = (principal: Principal): string =>
  principal.auth._tag === "ApiKey" && principal.auth.clientId !== undefined && principal.auth.clientId !== ""
    ? principal.auth.clientId
    : "{}"

/**
 * The caller's audience (`Audience`): the fingerprint of its key's client attributes, or
 * `Audience.none` without any. What the caller makes belongs to it, and only it reaches that.
 *
 * @since 0.1.0
 * @category utils
 */
export const audienceOf = (principal: Principal): string => {
  const endUser = endUserOf(principal)
  if (endUser !== undefined) {
    return EndUser.audienceOf(principal.organizationId, endUser.keyClientId, endUser.externalUserId)
  }
  const json = clientAttributesJson(principal)
  return json === "{}" ? Audience.none : Audience.of(principal.organizationId, json)
}

/**
 * The end-user scope of the caller's session, when it is an end user's (`EndUser`).
 *
 * @since 0.1.0
 * @category utils
 */
export const endUserOf = (principal: Principal): EndUser.Scope | undefined =>
  principal.auth._tag === "ApiKey" ? principal.auth.endUser : undefined

/**
 * Is a record of this audience (absent: made without client attributes) the caller's? The one rule
 * of `objectAccess`, for use cases that judge a record without it (a sandbox, a rating, a re-run).
 *
 * @since 0.1.0
 * @category utils
 */
export const inAudience = (principal: Principal, audience: string | undefined): boolean =>
  (audience ?? Audience.none) === audienceOf(principal)

/**
 * The authenticated caller: a member of an organization, its live roles, and its credential.
 *
 * @since 0.1.0
 * @category models
 */
export interface Principal {
  readonly organizationId: OrganizationId
  /** The member the caller acts as: the key's owner for an API key. */
  readonly memberId: MemberId
  /** The member's e-mail address, when authentication read it (it did for keys and sessions). */
  readonly email?: string | undefined
  readonly isServiceAccount: boolean
  /** Set once the member was soft-deleted: the member and every key it owns stop working at once. */
  readonly deleted?: boolean | undefined
  /** The member's live roles, in a stable order (it decides which role's default model wins). */
  readonly roles: ReadonlyArray<RoleInfo>
  readonly auth: Auth
}

const isActive = (principal: Principal): boolean => principal.deleted !== true

/**
 * Is this the built-in `admin` role?
 *
 * @since 0.1.0
 * @category guards
 */
export const isAdminRole = (role: Pick<RoleInfo, "isSystem" | "name">): boolean =>
  role.isSystem && role.name === "admin"

/**
 * The permissions a role grants. System roles are defined in code rather than by what is stored,
 * so a permission added in a later version reaches every organization without a data migration.
 *
 * @since 0.1.0
 * @category utils
 */
export const rolePermissions = (
  role: Pick<RoleInfo, "isSystem" | "name" | "permissions">
): ReadonlyArray<Permission.Permission> => {
  if (isAdminRole(role)) return Permission.all
  if (role.isSystem && role.name === "member") return Permission.memberDefaults
  return role.permissions
}

/**
 * The roles the caller acts with on this request. A session and a legacy "All roles" key use the
 * live roles; any other key uses its snapshot intersected with the live roles, so a removed role
 * is gone at once and a role granted later adds nothing. A deleted member has none.
 *
 * @since 0.1.0
 * @category utils
 */
export const effectiveRoles = (principal: Principal): ReadonlyArray<RoleInfo> => {
  if (!isActive(principal)) return []
  const auth = principal.auth
  if (auth._tag === "Session" || auth.inheritAllRoles) return principal.roles
  return principal.roles.filter((role) => auth.assumedRoleIds.includes(role.id))
}

const roleIds = (roles: ReadonlyArray<RoleInfo>): ReadonlyArray<RoleId> => roles.map((role) => role.id)

const permissionsOf = (roles: ReadonlyArray<RoleInfo>): ReadonlyArray<Permission.Permission> => {
  const granted = new Set(roles.flatMap(rolePermissions))
  return Permission.all.filter((permission) => granted.has(permission))
}

/**
 * The caller's permissions on this request (the union over its effective roles, in `Permission.all` order).
 *
 * @since 0.1.0
 * @category utils
 */
export const effectivePermissions = (principal: Principal): ReadonlyArray<Permission.Permission> => {
  const granted = permissionsOf(effectiveRoles(principal))
  return endUserOf(principal) === undefined ? granted : granted.filter((p) => EndUser.permissions.includes(p))
}

/**
 * Does the caller hold the permission on this request? Asked of each effective role, without
 * building the whole set (`effectivePermissions`): every request asks it once or twice.
 *
 * @since 0.1.0
 * @category utils
 */
export const hasPermission = (principal: Principal, permission: Permission.Permission): boolean =>
  (endUserOf(principal) === undefined || EndUser.permissions.includes(permission)) &&
  effectiveRoles(principal).some((role) => rolePermissions(role).includes(permission))

/**
 * Does the caller act with the `admin` role on this request (a key must have assumed it)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isAdmin = (principal: Principal): boolean =>
  endUserOf(principal) === undefined && effectiveRoles(principal).some(isAdminRole)

/**
 * Does the caller keep the member's direct object grants (always for a session)?
 *
 * @since 0.1.0
 * @category utils
 */
export const keepsMemberGrants = (principal: Principal): boolean =>
  principal.auth._tag === "Session" || principal.auth.fullMemberAccess

// -----------------------------------------------------------------------------------------------
// Permission decisions
// -----------------------------------------------------------------------------------------------

const denied = Decision.deny

const notFound = denied("not_found", "not found")

/**
 * A decision that refuses only a caller who is not (or no longer) authenticated.
 *
 * @since 0.1.0
 * @category models
 */
export type AuthDecision = Decision.Decision<"unauthenticated">

/**
 * A decision about a permission: unauthenticated, or `permission_denied`.
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionDecision = Decision.Decision<"unauthenticated" | "permission_denied">

/**
 * A decision about an object: a permission decision, or `not_found` for an object the caller cannot see.
 *
 * @since 0.1.0
 * @category models
 */
export type ObjectDecision = Decision.Decision<"unauthenticated" | "permission_denied" | "not_found">

/**
 * Allows a live caller. A soft-deleted member (and so every key it owns) is unauthenticated: the
 * credential may still verify, but it must stop working at once.
 *
 * @since 0.1.0
 * @category utils
 */
export const authenticated = (principal: Principal): AuthDecision =>
  isActive(principal)
    ? Decision.allow
    : principal.auth._tag === "ApiKey"
    ? denied("unauthenticated", "invalid API key: API key not found")
    : denied("unauthenticated", "Authentication required")

/**
 * May the caller act for or against a member holding these roles: remove it, or issue it a sign-in
 * link (whoever holds the link becomes that member)? Only when the member's permissions are all the
 * caller's own: reaching someone stronger is taking more than the caller holds, which reads as the
 * seed's `admin role required`.
 *
 * @since 0.1.0
 * @category utils
 */
export const canActOnMember = (
  principal: Principal,
  memberRoles: ReadonlyArray<RoleInfo>
): Decision.Decision<"permission_denied"> => {
  const own: ReadonlyArray<Permission.Permission> = effectivePermissions(principal)
  return memberRoles.flatMap(rolePermissions).every((permission) => own.includes(permission))
    ? Decision.allow
    : Decision.deny("permission_denied", "admin role required")
}

/**
 * Allows a caller that holds the permission; otherwise `permission_denied` naming it.
 *
 * @since 0.1.0
 * @category utils
 */
export const requirePermission = (principal: Principal, permission: Permission.Permission): PermissionDecision =>
  Decision.all([
    authenticated(principal),
    hasPermission(principal, permission)
      ? Decision.allow
      : denied("permission_denied", `permission denied: ${permission} required`)
  ])

/**
 * May the caller set up work that runs on its own (a deployed playbook's schedule, an agent's
 * schedule, webhook and runs)? Such work runs as the member, without client attributes, so a key
 * with client attributes (an end user's) may not: its rows would escape row-level security.
 *
 * @since 0.1.0
 * @category utils
 */
export const canRunUnattended = (principal: Principal): PermissionDecision =>
  Decision.all([
    authenticated(principal),
    clientAttributesJson(principal) === "{}"
      ? Decision.allow
      : denied(
        "permission_denied",
        "a key with client attributes cannot set up unattended runs: they run as the member, without the attributes"
      )
  ])

/**
 * Allows a caller acting with the `admin` role; otherwise the seed's `admin role required`.
 *
 * @since 0.1.0
 * @category utils
 */
export const requireAdmin = (principal: Principal): PermissionDecision =>
  Decision.all([
    authenticated(principal),
    isAdmin(principal) ? Decision.allow : denied("permission_denied", "admin role required")
  ])

// Only an admin holds every permission, so "you may only hand out what you hold" reads, to a
// caller who lacks some of them, as the seed's `admin role required`.
const withinOwnPermissions = (
  principal: Principal,
  permissions: ReadonlyArray<Permission.Permission>
): Decision.Decision<"permission_denied"> => {
  const own = effectivePermissions(principal)
  return permissions.every((permission) => own.includes(permission))
    ? Decision.allow
    : denied("permission_denied", "admin role required")
}

/**
 * May the caller assign the role to a member, or remove it from one (`role:write`)? A role that
 * grants anything the caller lacks (the `admin` role above all) needs the `admin` role, so role
 * administration never widens the administrator's own reach, nor demotes someone above it.
 *
 * @since 0.1.0
 * @category utils
 */
export const canAssignRole = (
  principal: Principal,
  role: Pick<RoleInfo, "isSystem" | "name" | "permissions">
): PermissionDecision =>
  Decision.all([requirePermission(principal, "role:write"), withinOwnPermissions(principal, rolePermissions(role))])

/**
 * May the caller create a role with these permissions (`role:write`, and only permissions it holds)?
 *
 * @since 0.1.0
 * @category utils
 */
export const canCreateRole = (
  principal: Principal,
  permissions: ReadonlyArray<Permission.Permission>
): PermissionDecision =>
  Decision.all([requirePermission(principal, "role:write"), withinOwnPermissions(principal, permissions)])

/**
 * May the caller edit or delete the role (`role:write`)? The system roles apply to everyone, so
 * only an admin changes them (their model configuration); a role granting more than the caller
 * holds, before or after the edit, also needs the `admin` role.
 *
 * @since 0.1.0
 * @category utils
 */
export const canEditRole = (
  principal: Principal,
  role: Pick<RoleInfo, "isSystem" | "name" | "permissions">,
  newPermissions: ReadonlyArray<Permission.Permission> = []
): PermissionDecision =>
  Decision.all([
    requirePermission(principal, "role:write"),
    role.isSystem ? requireAdmin(principal) : Decision.allow,
    withinOwnPermissions(principal, [...rolePermissions(role), ...newPermissions])
  ])

// -----------------------------------------------------------------------------------------------
// Minting API keys
// -----------------------------------------------------------------------------------------------

/**
 * The member a key is minted for when it is not the caller (`targetMemberId`, as looked up).
 *
 * @since 0.1.0
 * @category models
 */
export interface TargetMember {
  readonly id: MemberId
  readonly organizationId: OrganizationId
  readonly isServiceAccount: boolean
  readonly deleted?: boolean | undefined
  readonly liveRoleIds: ReadonlyArray<RoleId>
}

/**
 * The policy-relevant part of `POST /v2/api-keys`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MintRequest {
  /** `assumedRoles`: the roles to scope the key to. */
  readonly assumedRoleIds: ReadonlyArray<RoleId>
  /** Take every role the caller may hand out; required when `assumedRoleIds` is empty. */
  readonly inheritAllRoles: boolean
  /** The member named by `targetMemberId`, absent for a personal key. */
  readonly targetMember?: TargetMember | undefined
  readonly fullMemberAccess: boolean
}

/**
 * An allowed mint, with what to store: the owner and the resolved role snapshot.
 *
 * @since 0.1.0
 * @category models
 */
export interface Minted extends Decision.Allow {
  readonly ownerId: MemberId
  /** The snapshot to store: never empty, never a role outside what the caller may hand out. */
  readonly assumedRoleIds: ReadonlyArray<RoleId>
  readonly fullMemberAccess: boolean
}

/**
 * The outcome of `canMint`: a denial, or an allow carrying the key to store.
 *
 * @since 0.1.0
 * @category models
 */
export type MintDecision =
  | Decision.Deny<"unauthenticated" | "permission_denied" | "not_found" | "invalid_request">
  | Minted

/**
 * The minting rules of `POST /v2/api-keys`.
 *
 * - A personal key assumes only roles the caller acts with: the live roles for a session, the
 *   calling key's effective roles for an API key (so `inheritAllRoles` from a key means "all of my
 *   key's roles", never the owner's full set).
 * - A key for another member needs `organization:write` and a service-account target; it assumes
 *   roles the target holds and, unless the caller is an admin, the caller holds too, so minting
 *   never widens the caller's permissions.
 * - `fullMemberAccess` from an API key needs a calling key that has it.
 *
 * @since 0.1.0
 * @category utils
 */
export const canMint = (caller: Principal, request: MintRequest): MintDecision => {
  const auth = authenticated(caller)
  if (Decision.isDeny(auth)) return auth
  const requested = Arr.dedupe(request.assumedRoleIds)
  if (request.inheritAllRoles && requested.length > 0) {
    return denied("invalid_request", "assumedRoles and inheritAllRoles cannot be combined")
  }
  if (!request.inheritAllRoles && requested.length === 0) {
    return denied("invalid_request", "inheritAllRoles is required when assumedRoles is empty")
  }
  const scope = mintScope(caller, request.targetMember)
  if (scope._tag === "Deny") return scope
  const outside = Arr.findFirst(requested, (roleId) => !scope.pool.includes(roleId))
  if (Option.isSome(outside)) return denied("permission_denied", scope.missing(outside.value))
  const snapshot = request.inheritAllRoles ? scope.pool : requested
  if (snapshot.length === 0) return denied("permission_denied", "permission denied: no roles to assume")
  if (request.fullMemberAccess && !keepsMemberGrants(caller)) {
    return denied(
      "permission_denied",
      "permission denied: fullMemberAccess requires a calling key with full member access"
    )
  }
  return { _tag: "Allow", ownerId: scope.ownerId, assumedRoleIds: snapshot, fullMemberAccess: request.fullMemberAccess }
}

// Who the key will act as, and the roles the caller may hand it.
interface MintScope {
  readonly _tag: "Scope"
  readonly ownerId: MemberId
  readonly pool: ReadonlyArray<RoleId>
  readonly missing: (roleId: RoleId) => string
}

const mintScope = (
  caller: Principal,
  target: TargetMember | undefined
): Decision.Deny<"permission_denied" | "not_found" | "invalid_request"> | MintScope => {
  const callerRoleIds = roleIds(effectiveRoles(caller))
  const notHeld = (roleId: RoleId) =>
    `permission denied: role ${roleId} is not held by ${
      caller.auth._tag === "ApiKey" ? "the calling key" : "the caller"
    }`
  if (target === undefined || target.id === caller.memberId) {
    return { _tag: "Scope", ownerId: caller.memberId, pool: callerRoleIds, missing: notHeld }
  }
  if (!hasPermission(caller, "organization:write")) {
    return denied(
      "permission_denied",
      "permission denied: organization:write required to mint a key for another member"
    )
  }
  if (target.organizationId !== caller.organizationId || target.deleted === true) return notFound
  if (!target.isServiceAccount) return denied("invalid_request", "targetMemberId must be a service account")
  return {
    _tag: "Scope",
    ownerId: target.id,
    // An admin holds every permission, so handing out any of the target's roles cannot widen it.
    pool: isAdmin(caller) ? target.liveRoleIds : Arr.intersection(target.liveRoleIds, callerRoleIds),
    missing: (roleId) =>
      target.liveRoleIds.includes(roleId)
        ? notHeld(roleId)
        : `permission denied: role ${roleId} is not held by the target member`
  }
}

/**
 * The `scope` of `GET /v2/api-keys`.
 *
 * @since 0.1.0
 * @category models
 */
export type KeyListScope = ListScope

/**
 * May the caller list keys of this scope? Own keys need nothing; anyone else's need `organization:read`.
 *
 * @since 0.1.0
 * @category utils
 */
export const canListKeys = (principal: Principal, scope: KeyListScope): PermissionDecision =>
  scope === "personal" ? authenticated(principal) : requirePermission(principal, "organization:read")

/**
 * A stored key as the capability table needs it.
 *
 * @since 0.1.0
 * @category models
 */
export interface KeyInfo {
  readonly id: ApiKeyId
  readonly organizationId: OrganizationId
  readonly ownerId: MemberId
  readonly assumedRoleIds: ReadonlyArray<RoleId>
  readonly inheritAllRoles: boolean
  readonly fullMemberAccess: boolean
}

/**
 * What the caller wants to do with a key.
 *
 * @since 0.1.0
 * @category models
 */
export type KeyAction = "revoke" | "rotate"

/**
 * May the caller revoke or rotate the key? Revoke anyone's with `organization:write`, and rotate
 * anyone's no wider than the caller (any key for an admin); one's own always,
 * except that an API key may rotate a sibling key only when it is no wider than itself (rotation
 * hands out a fresh secret, which would otherwise widen a narrow embed key). A key may always
 * revoke or rotate itself. Another member's key is `not_found` to a caller that cannot list it.
 *
 * @since 0.1.0
 * @category utils
 */
export const canManageKey = (principal: Principal, key: KeyInfo, action: KeyAction): ObjectDecision => {
  const auth = authenticated(principal)
  if (Decision.isDeny(auth)) return auth
  if (key.organizationId !== principal.organizationId) return notFound
  if (hasPermission(principal, "organization:write")) {
    // Rotating another member's key hands the caller a working secret that acts with that key's
    // roles: below admin, only for a key no wider than the caller, so it never widens its reach.
    if (action === "revoke" || key.ownerId === principal.memberId || isAdmin(principal)) return Decision.allow
    const own = roleIds(effectiveRoles(principal))
    return key.inheritAllRoles || key.assumedRoleIds.some((roleId) => !own.includes(roleId))
      ? denied("permission_denied", "admin role required")
      : Decision.allow
  }
  if (key.ownerId !== principal.memberId) {
    return hasPermission(principal, "organization:read")
      ? denied("permission_denied", "permission denied: organization:write required to manage another member's key")
      : notFound
  }
  const callerAuth = principal.auth
  if (callerAuth._tag === "Session" || callerAuth.keyId === key.id || action === "revoke") return Decision.allow
  const own = roleIds(effectiveRoles(principal))
  const keyAuth = ApiKey({
    keyId: key.id,
    assumedRoleIds: key.assumedRoleIds,
    inheritAllRoles: key.inheritAllRoles,
    fullMemberAccess: key.fullMemberAccess
  })
  const keyRoles = roleIds(effectiveRoles({ ...principal, auth: keyAuth }))
  const wider = keyRoles.some((roleId) => !own.includes(roleId)) ||
    (key.fullMemberAccess && !keepsMemberGrants(principal))
  return wider
    ? denied("permission_denied", "permission denied: cannot rotate a key wider than the calling key")
    : Decision.allow
}

// -----------------------------------------------------------------------------------------------
// Object access
// -----------------------------------------------------------------------------------------------

/**
 * The level of access a grant gives on an object.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AccessType = Schema.Literal("owner", "editor", "viewer")
export type AccessType = typeof AccessType.Type

const accessRank: { readonly [K in AccessType]: number } = { viewer: 0, editor: 1, owner: 2 }

/**
 * Orders access types from the weakest (`viewer`) to the strongest (`owner`).
 *
 * @since 0.1.0
 * @category constants
 */
export const AccessOrder: Order.Order<AccessType> = Order.mapInput(Order.number, (access) => accessRank[access])

interface GrantBase {
  readonly accessType: AccessType
  /** After this instant the grant no longer counts. */
  readonly expiresAt?: DateTime.Utc | undefined
}

/**
 * A direct share with one member.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemberGrant extends GrantBase {
  readonly memberId: MemberId
  readonly roleId?: never
}

/**
 * A share with everyone holding a role (through the caller's effective roles).
 *
 * @since 0.1.0
 * @category models
 */
export interface RoleGrant extends GrantBase {
  readonly roleId: RoleId
  readonly memberId?: never
}

/**
 * A grant on an object: to a member or to a role.
 *
 * @since 0.1.0
 * @category models
 */
export type Grant = MemberGrant | RoleGrant

/**
 * Who may reach an object.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectAccess {
  readonly organizationId: OrganizationId
  /** The member who owns the object (its creator), when it has one. */
  readonly ownerId?: MemberId | undefined
  /** Visible to the whole organization. */
  readonly isPublic: boolean
  /** The access org-wide visibility gives; `viewer` when absent. */
  readonly publicAccessType?: AccessType | undefined
  readonly grants: ReadonlyArray<Grant>
  /**
   * For what end users make under one member (chats, playbooks, sandboxes, feedback):
   * the audience it was made in (`Audience.none` without client attributes). Only a caller of the
   * same audience reaches it, by any source; absent for objects that belong to no audience.
   */
  readonly audience?: string | undefined
}

/**
 * The strongest access the caller has on the object, or none when it cannot see it. Sources:
 * ownership (the owner decides it, whatever the roles), direct member grants (kept by a session or a
 * key with `fullMemberAccess`), role grants through the effective roles, and org-wide visibility.
 * Expired grants, objects of another organization and objects of another audience give nothing.
 *
 * @since 0.1.0
 * @category utils
 */
export const objectAccess = (
  principal: Principal,
  object: ObjectAccess,
  now: DateTime.Utc
): Option.Option<AccessType> => {
  if (!isActive(principal) || object.organizationId !== principal.organizationId) return Option.none()
  if (object.audience !== undefined && !inAudience(principal, object.audience)) return Option.none()
  const roles = roleIds(effectiveRoles(principal))
  const memberGrants = keepsMemberGrants(principal)
  const fromGrants = Arr.filterMap(object.grants, (grant) => {
    if (grant.expiresAt !== undefined && DateTime.lessThanOrEqualTo(grant.expiresAt, now)) return Option.none()
    const applies = grant.memberId !== undefined
      ? memberGrants && grant.memberId === principal.memberId
      : roles.includes(grant.roleId)
    return applies ? Option.some(grant.accessType) : Option.none()
  })
  const sources: Array<AccessType> = [
    ...(object.ownerId === principal.memberId ? ["owner" as const] : []),
    ...(object.isPublic ? [object.publicAccessType ?? "viewer"] : []),
    ...fromGrants
  ]
  return Arr.isNonEmptyArray(sources) ? Option.some(Arr.max(sources, AccessOrder)) : Option.none()
}

const accessDecision = (needed: AccessType, action: Permission.Action) =>
(
  principal: Principal,
  resource: Permission.Resource,
  object: ObjectAccess,
  now: DateTime.Utc
): ObjectDecision => {
  const auth = authenticated(principal)
  if (Decision.isDeny(auth)) return auth
  const access = objectAccess(principal, object, now)
  // An object the caller cannot see answers exactly like one that does not exist.
  if (Option.isNone(access)) return notFound
  const permission = requirePermission(principal, Permission.make(resource, action))
  if (Decision.isDeny(permission)) return permission
  return Order.lessThan(AccessOrder)(access.value, needed)
    ? denied("permission_denied", `permission denied: ${needed} access required`)
    : Decision.allow
}

/**
 * May the caller read the object? Needs `<resource>:read` and any access; invisible is `not_found`.
 *
 * @since 0.1.0
 * @category constants
 */
export const canRead: (
  principal: Principal,
  resource: Permission.Resource,
  object: ObjectAccess,
  now: DateTime.Utc
) => ObjectDecision = accessDecision("viewer", "read")

/**
 * May the caller change the object? Needs `<resource>:write` and editor access; invisible is `not_found`.
 *
 * @since 0.1.0
 * @category constants
 */
export const canWrite: (
  principal: Principal,
  resource: Permission.Resource,
  object: ObjectAccess,
  now: DateTime.Utc
) => ObjectDecision = accessDecision("editor", "write")

/**
 * May the caller delete the object or change who can reach it? Needs `<resource>:write` and owner access.
 *
 * @since 0.1.0
 * @category constants
 */
export const canOwn: (
  principal: Principal,
  resource: Permission.Resource,
  object: ObjectAccess,
  now: DateTime.Utc
) => ObjectDecision = accessDecision("owner", "write")

/**
 * A connector's access, with its id (to resolve an agent's `connector_ids`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectorAccess extends ObjectAccess {
  readonly id: ConnectorId
}

/**
 * What the policy needs of an agent.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentAccess {
  readonly organizationId: OrganizationId
  readonly connectorIds: ReadonlyArray<ConnectorId>
}

/**
 * Is the agent visible to the caller? Only when the caller can reach every connector it uses;
 * otherwise it is `not_found`, as the seed's troubleshooting says. A connector id missing from
 * `connectors` (deleted, or of another organization) counts as unreachable. Agents and their runs
 * act as their owner without client attributes, so they are of the audience without attributes:
 * invisible to a key with client attributes.
 *
 * @since 0.1.0
 * @category utils
 */
export const agentVisible = (
  principal: Principal,
  agent: AgentAccess,
  connectors: ReadonlyArray<ConnectorAccess>,
  now: DateTime.Utc
): Decision.Decision<"unauthenticated" | "not_found"> => {
  const auth = authenticated(principal)
  if (Decision.isDeny(auth)) return auth
  if (agent.organizationId !== principal.organizationId) return notFound
  if (audienceOf(principal) !== Audience.none) return notFound
  const reachable = (id: ConnectorId) =>
    connectors.some((connector) => connector.id === id && Option.isSome(objectAccess(principal, connector, now)))
  return agent.connectorIds.every(reachable) ? Decision.allow : notFound
}

/**
 * May the caller read (`agent:read`) or change, trigger or delete (`agent:write`) the agent?
 *
 * @since 0.1.0
 * @category utils
 */
export const canAccessAgent = (
  principal: Principal,
  action: Permission.Action,
  agent: AgentAccess,
  connectors: ReadonlyArray<ConnectorAccess>,
  now: DateTime.Utc
): ObjectDecision =>
  Decision.all<"unauthenticated" | "permission_denied" | "not_found">([
    agentVisible(principal, agent, connectors, now),
    requirePermission(principal, Permission.make("agent", action))
  ])

// -----------------------------------------------------------------------------------------------
// Model access
// -----------------------------------------------------------------------------------------------

/**
 * A model of the organization's catalogue.
 *
 * @since 0.1.0
 * @category models
 */
export interface CatalogueModel {
  /** The integer the role configuration refers to (`default_model_id`, `allowed_model_ids`). */
  readonly number: ModelNumber
  /** The string clients send as `model` and `GET /v2/models` lists. */
  readonly id: string
  readonly provider: string
}

/**
 * The organization's catalogue (from the configured providers) and its default model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Catalogue {
  readonly models: ReadonlyArray<CatalogueModel>
  readonly defaultModel?: ModelNumber | undefined
}

/**
 * The catalogue models the caller may use, in catalogue order. Roles combine like permissions do:
 * the union of their allow-lists, where any role without a list allows every model. A caller with
 * no effective role may use none.
 *
 * @since 0.1.0
 * @category utils
 */
export const allowedModels = (principal: Principal, catalogue: Catalogue): ReadonlyArray<CatalogueModel> => {
  const roles = effectiveRoles(principal)
  const byRoles = roles.some((role) => role.model.allowedModelIds === undefined)
    ? catalogue.models
    : catalogue.models.filter((model) => roles.some((role) => role.model.allowedModelIds?.includes(model.number)))
  const endUser = endUserOf(principal)
  return endUser === undefined ? byRoles : byRoles.filter((model) => EndUser.allows(endUser.models, model.id))
}

/**
 * May the caller pick a model per chat (any effective role allows it)?
 *
 * @since 0.1.0
 * @category utils
 */
export const modelChoiceAllowed = (principal: Principal): boolean =>
  effectiveRoles(principal).some((role) => role.model.allowModelChoice)

/**
 * The model a new chat uses when the caller names none: the first effective role's default that the
 * caller may use, else the organization's default when permitted, else the first permitted model.
 *
 * @since 0.1.0
 * @category utils
 */
export const defaultModel = (principal: Principal, catalogue: Catalogue): Option.Option<CatalogueModel> => {
  const allowed = allowedModels(principal, catalogue)
  const permitted = (number: ModelNumber | undefined) =>
    Arr.findFirst(allowed, (model) => number !== undefined && model.number === number)
  return Arr.findFirst(effectiveRoles(principal), (role) => permitted(role.model.defaultModelId)).pipe(
    Option.orElse(() => permitted(catalogue.defaultModel)),
    Option.orElse(() => Arr.head(allowed))
  )
}

/**
 * The model-related fields of a chat request.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelRequest {
  /** `model`: a catalogue model id. */
  readonly requested?: string | undefined
  /** `chat_id`: continuing an existing chat. */
  readonly chatId?: ChatId | undefined
}

/**
 * An allowed model choice: the model of a new chat, or none to keep an existing chat's model.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelResolved extends Decision.Allow {
  readonly model: Option.Option<CatalogueModel>
}

/**
 * The outcome of `resolveChatModel`.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelDecision = Decision.Deny<"unauthenticated" | "invalid_request" | "permission_denied"> | ModelResolved

/**
 * Resolves the model of a chat request. `model` with `chat_id` is `invalid_request` (a chat keeps
 * its model); a model outside the catalogue or the caller's allow-lists is `permission_denied`, and
 * so is picking a model other than the default when no role allows model choice. Without `model`, a
 * new chat gets `defaultModel`.
 *
 * @since 0.1.0
 * @category utils
 */
export const resolveChatModel = (
  principal: Principal,
  request: ModelRequest,
  catalogue: Catalogue
): ModelDecision => {
  const auth = authenticated(principal)
  if (Decision.isDeny(auth)) return auth
  if (request.chatId !== undefined) {
    return request.requested !== undefined
      ? denied("invalid_request", "model is valid only on new chats (omit it with chat_id)")
      : { _tag: "Allow", model: Option.none() }
  }
  const fallback = defaultModel(principal, catalogue)
  if (request.requested === undefined) {
    return Option.isSome(fallback)
      ? { _tag: "Allow", model: fallback }
      : denied("permission_denied", "permission denied: no model is permitted for your roles")
  }
  const requested = request.requested
  const model = catalogue.models.find((candidate) => candidate.id === requested)
  if (model === undefined) {
    return denied("permission_denied", `permission denied: model ${requested} is not available in this organization`)
  }
  if (!allowedModels(principal, catalogue).some((candidate) => candidate.number === model.number)) {
    return denied("permission_denied", `permission denied: model ${requested} is not permitted for your roles`)
  }
  // Naming the model the caller would get anyway is not a choice, so clients that always send it work.
  const isDefault = Option.exists(fallback, (candidate) => candidate.number === model.number)
  if (!isDefault && !modelChoiceAllowed(principal)) {
    return denied("permission_denied", "permission denied: model choice is not allowed for your roles")
  }
  return { _tag: "Allow", model: Option.some(model) }
}
