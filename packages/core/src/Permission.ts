/**
 * Permissions are `resource:action` strings carried by roles.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The resources a permission can govern.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Resource = Schema.Literal(
  "organization",
  "member",
  "role",
  "chat",
  "connector",
  "playbook",
  "sandbox",
  "change",
  "agent"
)
export type Resource = typeof Resource.Type

/**
 * The actions a permission grants on a resource.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Action = Schema.Literal("read", "write")
export type Action = typeof Action.Type

/**
 * Every resource, in a stable order.
 *
 * @since 0.1.0
 * @category constants
 */
export const resources: ReadonlyArray<Resource> = Resource.literals

/**
 * Every action, in a stable order.
 *
 * @since 0.1.0
 * @category constants
 */
export const actions: ReadonlyArray<Action> = Action.literals

/**
 * A permission string such as `playbook:write`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Permission = Schema.TemplateLiteral(Resource, ":", Action)
export type Permission = typeof Permission.Type

/**
 * Builds a permission string.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (resource: Resource, action: Action): Permission => `${resource}:${action}`

/**
 * Every permission Sightline knows: the `admin` system role carries all of them.
 *
 * @since 0.1.0
 * @category constants
 */
export const all: ReadonlyArray<Permission> = resources.flatMap((r) => actions.map((a) => make(r, a)))

/**
 * The permissions of the `member` system role: read what a member works with and work with chats,
 * playbooks, sandboxes, changes and agents. Organization, member, role and connector administration
 * stay with admins, and so does `organization:read`: it lists every key of the organization and
 * reads the audit log.
 *
 * @since 0.1.0
 * @category constants
 */
export const memberDefaults: ReadonlyArray<Permission> = [
  "member:read",
  "role:read",
  "chat:read",
  "chat:write",
  "connector:read",
  "playbook:read",
  "playbook:write",
  "sandbox:read",
  "sandbox:write",
  "change:read",
  "change:write",
  "agent:read",
  "agent:write"
]

/**
 * The names of the built-in roles.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemRoleName = Schema.Literal("admin", "member")
export type SystemRoleName = typeof SystemRoleName.Type
