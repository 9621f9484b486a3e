/**
 * The audit log: who did what to which resource, and how they were authenticated.
 *
 * Security-relevant writes (key create/rotate/revoke, role and membership changes, ...) append an
 * entry with `record`, inside the same transaction as the write, so that the log and the data can
 * never disagree.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { AuditLogEntryId, MemberId, OrganizationId } from "./Ids.js"
import { type Json, JsonObject } from "./Json.js"
import * as Pagination from "./Pagination.js"
import type * as Policy from "./Policy.js"

/**
 * The actions the audit log records, as `<resource>.<verb>`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Action = Schema.Literal(
  "api_key.create",
  "api_key.rotate",
  "api_key.revoke",
  "role.create",
  "role.update",
  "role.delete",
  "role.permissions_update",
  "member.invite",
  "member.sign_in_link",
  "member.password_set",
  "member.delete",
  "member.role_assign",
  "member.role_unassign",
  "service_account.create",
  "service_account.delete",
  "connector.create",
  "connector.update",
  "connector.delete",
  "connector.access_update",
  "change.approve",
  "change.deny",
  "change.restore",
  "agent.create",
  "agent.update",
  "agent.delete",
  "agent.run",
  "eval.run",
  "model.usage",
  "scim_group_mapping.migrate",
  "playbook.create",
  "playbook.update",
  "playbook.deploy",
  "playbook.run",
  "playbook.delete",
  "chat_channel.create",
  "chat_channel.delete",
  "mcp.tool_call",
  "organization.settings_update",
  "oauth.grant",
  "oauth.revoke",
  "webhook_endpoint.create",
  "webhook_endpoint.update",
  "webhook_endpoint.delete",
  "webhook_endpoint.rotate_secret",
  "webhook_endpoint.replay"
)
export type Action = typeof Action.Type

/**
 * The kinds of resource an entry is about.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResourceType = Schema.Literal(
  "api_key",
  "role",
  "member",
  "service_account",
  "connector",
  "change",
  "agent",
  "eval_run",
  "chat",
  "scim_group_mapping",
  "organization",
  "playbook",
  "chat_channel",
  "webhook_endpoint"
)
export type ResourceType = typeof ResourceType.Type

/**
 * How the actor was authenticated; `system` for work no request started (ops CLI, scheduler).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuthMethod = Schema.Literal("api_key", "jwt", "system")
export type AuthMethod = typeof AuthMethod.Type

/**
 * How a request's caller authenticated, as the audit log records it: a key, or a session (JWT).
 *
 * @since 0.1.0
 * @category utils
 */
export const authMethodOf = (principal: Policy.Principal): AuthMethod =>
  principal.auth._tag === "ApiKey" ? "api_key" : "jwt"

/**
 * The actor of an action a request's caller performed, as `record` takes it: the caller's
 * organization, member and authentication method.
 *
 * @since 0.1.0
 * @category utils
 */
export const actorOf = (
  principal: Policy.Principal
): Pick<RecordInput, "organizationId" | "actorId" | "authMethod"> => ({
  organizationId: principal.organizationId,
  actorId: principal.memberId,
  authMethod: authMethodOf(principal)
})

// Property names that would only ever hold a credential. A match is a bug in the caller, caught
// when the entry is built rather than discovered in a log export.
const secretLikeName = /secret|password|token|credential|^key$/i

const secretLikePath = (value: Json, path: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = secretLikePath(item, path)
      if (found !== undefined) return found
    }
  } else if (Predicate.isRecord(value)) {
    for (const [name, item] of Object.entries(value as JsonObject)) {
      if (secretLikeName.test(name)) return [...path, name]
      const found = secretLikePath(item, [...path, name])
      if (found !== undefined) return found
    }
  }
  return undefined
}

/**
 * The details of an entry: a JSON object describing the change (names, role ids, ...). Never a
 * secret: a property named like one (`secret`, `password`, `token`, `credential`, `key`) is rejected.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Details = JsonObject.pipe(
  Schema.filter((details) => {
    const path = secretLikePath(details, [])
    return path === undefined || { path, message: "audit details must not carry secrets" }
  }),
  Schema.annotations({ identifier: "AuditLogDetails" })
)
export type Details = typeof Details.Type

/**
 * An audit log entry as served by `GET /v2/audit-logs`.
 *
 * @since 0.1.0
 * @category models
 */
export class AuditLogEntry extends Schema.Class<AuditLogEntry>("@sightline/core/AuditLogEntry")({
  id: AuditLogEntryId,
  /** The member who acted; omitted for `system` actions that no member started. */
  actor_id: Schema.optional(MemberId),
  action: Action,
  resource_type: ResourceType,
  resource_id: Schema.String,
  details: Details,
  auth_method: AuthMethod,
  created_at: Schema.DateTimeUtc
}) {}

/**
 * An audit log entry as stored: the served fields plus the organization.
 *
 * @since 0.1.0
 * @category models
 */
export class AuditLogRecord extends Schema.Class<AuditLogRecord>("@sightline/core/AuditLogRecord")({
  ...AuditLogEntry.fields,
  organization_id: OrganizationId
}) {}

/**
 * The served form of a stored entry.
 *
 * @since 0.1.0
 * @category utils
 */
export const toEntry = (record: AuditLogRecord): AuditLogEntry =>
  new AuditLogEntry(Struct.omit(record, "organization_id"), true)

/**
 * The page size bounds and default of `GET /v2/audit-logs`.
 *
 * @since 0.1.0
 * @category constants
 */
export const PAGE_SIZE = { min: 1, max: 100, default: 50 } as const

/**
 * The query of `GET /v2/audit-logs`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListAuditLogs = Schema.Struct({
  cursor: Schema.optional(Schema.String),
  page_size: Pagination.limitParam(PAGE_SIZE.min, PAGE_SIZE.max, PAGE_SIZE.default),
  action: Schema.optional(Action),
  actor_id: Schema.optional(MemberId)
}).annotations({ identifier: "ListAuditLogs" })
export type ListAuditLogs = typeof ListAuditLogs.Type

/**
 * The response of `GET /v2/audit-logs`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListAuditLogsResponse = Schema.Struct({
  entries: Schema.Array(AuditLogEntry),
  next_cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "ListAuditLogsResponse" })
export type ListAuditLogsResponse = typeof ListAuditLogsResponse.Type

/**
 * What a use case says about an action it performed (in-process input, so camelCase).
 *
 * @since 0.1.0
 * @category models
 */
export interface RecordInput {
  readonly organizationId: OrganizationId
  /** Omit for `system` actions that no member started. */
  readonly actorId?: MemberId | undefined
  readonly authMethod: AuthMethod
  readonly action: Action
  readonly resourceType: ResourceType
  readonly resourceId: string
  readonly details?: Details | undefined
}
