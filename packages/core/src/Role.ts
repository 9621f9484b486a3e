/**
 * Roles: named permission sets that also carry the model-selection configuration of their members.
 *
 * Every organization has two system roles, `admin` and `member`, created with it. Their names and
 * permissions are fixed (other modules recognise them by name); their description and model
 * configuration may be edited like any other role's.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import type * as DateTime from "effect/DateTime"
import * as Equivalence from "effect/Equivalence"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import * as Decision from "./Decision.js"
import { MemberId, ModelNumber, OrganizationId, RoleId } from "./Ids.js"
import * as Permission from "./Permission.js"
import * as Policy from "./Policy.js"

/**
 * A role name in a request: non-empty, without surrounding spaces, at most 100 characters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleName = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(100))

/**
 * A role description in a request: at most 1000 characters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleDescription = Schema.String.pipe(Schema.maxLength(1000))

/**
 * A role as served on /v2. Beyond the seed's fields it shows the permissions and the model
 * configuration, so that what `POST /v2/roles` and `PATCH /v2/roles/{id}` set can be read back.
 *
 * @since 0.1.0
 * @category models
 */
export class Role extends Schema.Class<Role>("@sightline/core/Role")({
  id: RoleId,
  name: Schema.NonEmptyTrimmedString,
  description: Schema.String,
  is_system: Schema.Boolean,
  is_scim_managed: Schema.Boolean,
  permissions: Schema.Array(Permission.Permission),
  /** The model members of the role get when they pick none; omitted when unset. */
  default_model_id: Schema.optional(ModelNumber),
  /** The models members of the role may use; omitted when every model is allowed. */
  allowed_model_ids: Schema.optional(Schema.Array(ModelNumber)),
  /** Whether members of the role may pick a model per chat. */
  allow_model_choice: Schema.Boolean,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * A role as stored: the served role plus its organization. Encoding a record with the `Role` schema
 * drops `organization_id`, so handlers can serve records as they are.
 *
 * @since 0.1.0
 * @category models
 */
export class RoleRecord extends Role.extend<RoleRecord>("@sightline/core/RoleRecord")({
  organization_id: OrganizationId
}) {}

// Permissions are kept deduplicated and in `Permission.all` order, so that a stored set compares and
// round-trips the same whatever order a client sent it in.
const permissionOrder: Order.Order<Permission.Permission> = Order.mapInput(
  Order.number,
  (permission) => Permission.all.indexOf(permission)
)

/**
 * Deduplicates permissions and puts them in `Permission.all` order.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizePermissions = (
  permissions: Iterable<Permission.Permission>
): ReadonlyArray<Permission.Permission> => Arr.sort(Arr.dedupe(permissions), permissionOrder)

const samePermissions = Arr.getEquivalence<Permission.Permission>(Equivalence.string)

/**
 * Is this the `admin` system role of its organization? (The policy engine's rule, on a stored role.)
 *
 * @since 0.1.0
 * @category guards
 */
export const isSystemAdmin = (role: Role): boolean => Policy.isAdminRole({ isSystem: role.is_system, name: role.name })

/**
 * A role as the policy engine sees it (for `Policy.Principal.roles`).
 *
 * @since 0.1.0
 * @category utils
 */
export const toRoleInfo = (role: Role): Policy.RoleInfo => ({
  id: role.id,
  name: role.name,
  permissions: role.permissions,
  isSystem: role.is_system,
  model: {
    allowedModelIds: role.allowed_model_ids,
    defaultModelId: role.default_model_id,
    allowModelChoice: role.allow_model_choice
  }
})

/**
 * The two system roles of a new organization.
 *
 * @since 0.1.0
 * @category utils
 */
export const systemRoles = (options: {
  readonly organizationId: OrganizationId
  readonly adminId: RoleId
  readonly memberId: RoleId
  readonly now: DateTime.Utc
}): { readonly admin: RoleRecord; readonly member: RoleRecord } => {
  const system = (
    id: RoleId,
    name: Permission.SystemRoleName,
    description: string,
    permissions: ReadonlyArray<Permission.Permission>
  ) =>
    new RoleRecord({
      id,
      organization_id: options.organizationId,
      name,
      description,
      is_system: true,
      is_scim_managed: false,
      permissions: normalizePermissions(permissions),
      allow_model_choice: true,
      created_at: options.now,
      updated_at: options.now
    })
  return {
    admin: system(options.adminId, "admin", "Every permission in the organization", Permission.all),
    member: system(options.memberId, "member", "Default permissions of every member", Permission.memberDefaults)
  }
}

/**
 * The body of `POST /v2/roles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRole = Schema.Struct({
  name: RoleName,
  description: Schema.optional(RoleDescription),
  /** Omitted: the role grants nothing until permissions are given (least privilege). */
  permissions: Schema.optional(Schema.Array(Permission.Permission))
})
export type CreateRole = typeof CreateRole.Type

/**
 * Builds the record of a new custom role.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: RoleId
  readonly organizationId: OrganizationId
  readonly request: CreateRole
  readonly now: DateTime.Utc
}): RoleRecord =>
  new RoleRecord({
    id: options.id,
    organization_id: options.organizationId,
    name: options.request.name,
    description: options.request.description ?? "",
    is_system: false,
    is_scim_managed: false,
    permissions: normalizePermissions(options.request.permissions ?? []),
    allow_model_choice: true,
    created_at: options.now,
    updated_at: options.now
  })

/**
 * The body of `PATCH /v2/roles/{id}`: the seed's fields plus `permissions` (absent in the seed, which
 * otherwise offers no way to change a custom role's permissions after creation).
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdateRole = Schema.Struct({
  name: Schema.optional(RoleName),
  description: Schema.optional(RoleDescription),
  /** `0` clears the default model. */
  default_model_id: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** An empty list would lock members out of every model; `clear_allowed_model_ids` means "all". */
  allowed_model_ids: Schema.optional(Schema.Array(ModelNumber).pipe(Schema.minItems(1))),
  allow_model_choice: Schema.optional(Schema.Boolean),
  clear_allowed_model_ids: Schema.optional(Schema.Boolean),
  permissions: Schema.optional(Schema.Array(Permission.Permission))
}).pipe(
  Schema.filter((update) =>
    update.clear_allowed_model_ids === true && update.allowed_model_ids !== undefined
      ? "allowed_model_ids and clear_allowed_model_ids cannot be sent together"
      : undefined
  )
)
export type UpdateRole = typeof UpdateRole.Type

type ModelConfiguration = {
  readonly default_model_id?: ModelNumber
  readonly allowed_model_ids?: ReadonlyArray<ModelNumber>
}

const modelConfigurationAfter = (role: Role, update: UpdateRole): ModelConfiguration => {
  const defaultModel = update.default_model_id === undefined
    ? role.default_model_id
    : update.default_model_id === 0
    ? undefined
    : ModelNumber.make(update.default_model_id)
  const allowed = update.clear_allowed_model_ids === true
    ? undefined
    : update.allowed_model_ids === undefined
    ? role.allowed_model_ids
    : Arr.sort(Arr.dedupe(update.allowed_model_ids), Order.number)
  return {
    ...(defaultModel === undefined ? {} : { default_model_id: defaultModel }),
    ...(allowed === undefined ? {} : { allowed_model_ids: allowed })
  }
}

/**
 * May this update be applied to the role? System roles keep their name and permissions
 * (`invalid_request`), and the default model must be one of the allowed models (`invalid_request`).
 * Re-sending a system role's current name or permissions is not a change and is allowed.
 *
 * @since 0.1.0
 * @category utils
 */
export const checkUpdate = (role: Role, update: UpdateRole): Decision.Decision<"invalid_request"> => {
  const models = modelConfigurationAfter(role, update)
  return Decision.all([
    role.is_system && update.name !== undefined && update.name !== role.name
      ? Decision.deny("invalid_request", `the system role ${role.name} cannot be renamed`)
      : Decision.allow,
    role.is_system && update.permissions !== undefined &&
      !samePermissions(normalizePermissions(update.permissions), normalizePermissions(role.permissions))
      ? Decision.deny("invalid_request", `the permissions of the system role ${role.name} cannot be changed`)
      : Decision.allow,
    models.default_model_id !== undefined && models.allowed_model_ids !== undefined &&
      !models.allowed_model_ids.includes(models.default_model_id)
      ? Decision.deny("invalid_request", "default_model_id must be one of allowed_model_ids")
      : Decision.allow
  ])
}

/**
 * The role after an update (check it with `checkUpdate` first); `updated_at` becomes `now`.
 *
 * @since 0.1.0
 * @category utils
 */
export const applyUpdate = (role: RoleRecord, update: UpdateRole, now: DateTime.Utc): RoleRecord =>
  new RoleRecord({
    id: role.id,
    organization_id: role.organization_id,
    name: update.name ?? role.name,
    description: update.description ?? role.description,
    is_system: role.is_system,
    is_scim_managed: role.is_scim_managed,
    permissions: update.permissions === undefined ? role.permissions : normalizePermissions(update.permissions),
    ...modelConfigurationAfter(role, update),
    allow_model_choice: update.allow_model_choice ?? role.allow_model_choice,
    created_at: role.created_at,
    updated_at: now
  })

/**
 * May the role be deleted? System roles never are (`invalid_request`).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkDelete = (role: Role): Decision.Decision<"invalid_request"> =>
  role.is_system
    ? Decision.deny("invalid_request", `the system role ${role.name} cannot be deleted`)
    : Decision.allow

/**
 * The response of deleting a role (`DELETE /v2/roles/{id}`, shaped like the other deletes).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteRoleResult = Schema.Struct({
  id: RoleId,
  success: Schema.Boolean
})
export type DeleteRoleResult = typeof DeleteRoleResult.Type

/**
 * The body of `POST /v2/members/{id}/roles` (camelCase, as the hosted service has it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssignRole = Schema.Struct({
  roleId: RoleId
})
export type AssignRole = typeof AssignRole.Type

/**
 * The response of assigning (`POST /v2/members/{id}/roles`) or unassigning a role.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleAssignmentResult = Schema.Struct({
  member_id: MemberId,
  role_id: RoleId,
  success: Schema.Boolean
})
export type RoleAssignmentResult = typeof RoleAssignmentResult.Type

/**
 * The response of `GET /v2/members/{id}/roles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberRoles = Schema.Struct({
  member_id: MemberId,
  roles: Schema.Array(Role)
})
export type MemberRoles = typeof MemberRoles.Type

/**
 * The response of `GET /v2/roles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleList = Schema.Struct({
  roles: Schema.Array(Role)
})
export type RoleList = typeof RoleList.Type
