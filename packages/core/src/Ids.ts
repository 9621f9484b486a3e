/**
 * Branded identifiers for every Sightline resource.
 *
 * Ids are UUID strings unless the spec says otherwise (connector ids are integers, execution ids are
 * opaque strings). Branding keeps a `ChatId` from being passed where a `PlaybookId` is expected.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const uuid = <const B extends string>(brand: B) => Schema.UUID.pipe(Schema.brand(brand))

/**
 * An organization (tenant).
 *
 * @since 0.1.0
 * @category schemas
 */
export const OrganizationId = uuid("OrganizationId")
export type OrganizationId = typeof OrganizationId.Type

/**
 * A member of an organization: a human or a service account.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberId = uuid("MemberId")
export type MemberId = typeof MemberId.Type

/**
 * A role (named permission set).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleId = uuid("RoleId")
export type RoleId = typeof RoleId.Type

/**
 * A group of members (the target of SCIM group mappings).
 *
 * @since 0.1.0
 * @category schemas
 */
export const GroupId = uuid("GroupId")
export type GroupId = typeof GroupId.Type

/**
 * A SCIM group mapping.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScimGroupMappingId = uuid("ScimGroupMappingId")
export type ScimGroupMappingId = typeof ScimGroupMappingId.Type

/**
 * An API key record (never the secret).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeyId = uuid("ApiKeyId")
export type ApiKeyId = typeof ApiKeyId.Type

/**
 * A chat.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatId = uuid("ChatId")
export type ChatId = typeof ChatId.Type

/**
 * A chat cell (an execution step or a message).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CellId = uuid("CellId")
export type CellId = typeof CellId.Type

/**
 * A chat message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageId = uuid("MessageId")
export type MessageId = typeof MessageId.Type

/**
 * A generated asset (chart, image, table, file).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssetId = uuid("AssetId")
export type AssetId = typeof AssetId.Type

/**
 * The largest PostgreSQL `integer`: the bound of every integer id.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxInt32 = 2_147_483_647

/**
 * A data connector: an integer, as in the hosted service.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorId = Schema.Int.pipe(
  Schema.positive(),
  // Stored as a PostgreSQL `integer`: a larger id names no connector, and must not reach the database.
  Schema.lessThanOrEqualTo(maxInt32, { message: () => `a connector id is at most ${maxInt32}` }),
  Schema.brand("ConnectorId")
)
export type ConnectorId = typeof ConnectorId.Type

/**
 * A model in the organization's catalogue: an integer, as `default_model_id` is.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelNumber = Schema.Int.pipe(
  Schema.positive(),
  Schema.lessThanOrEqualTo(maxInt32, { message: () => `a model number is at most ${maxInt32}` }),
  Schema.brand("ModelNumber")
)
export type ModelNumber = typeof ModelNumber.Type

/**
 * A playbook.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlaybookId = uuid("PlaybookId")
export type PlaybookId = typeof PlaybookId.Type

/**
 * A playbook report.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReportId = uuid("ReportId")
export type ReportId = typeof ReportId.Type

/**
 * A sandbox ("sandcastle"). The spec calls it a sandbox id rather than a UUID; Sightline mints UUIDs.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxId = uuid("SandboxId")
export type SandboxId = typeof SandboxId.Type

/**
 * An execution recorded by a sandbox: an opaque string.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecutionId = Schema.NonEmptyTrimmedString.pipe(Schema.brand("ExecutionId"))
export type ExecutionId = typeof ExecutionId.Type

/**
 * A reviewable library change (all its revisions share it).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChangeId = uuid("ChangeId")
export type ChangeId = typeof ChangeId.Type

/**
 * An agent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentId = uuid("AgentId")
export type AgentId = typeof AgentId.Type

/**
 * The webhook trigger id of an agent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookTriggerId = uuid("WebhookTriggerId")
export type WebhookTriggerId = typeof WebhookTriggerId.Type

/**
 * One run of an agent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AgentRunId = uuid("AgentRunId")
export type AgentRunId = typeof AgentRunId.Type

/**
 * One run of an evaluation set.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EvalRunId = uuid("EvalRunId")
export type EvalRunId = typeof EvalRunId.Type

/**
 * A member's rating of an assistant message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FeedbackId = uuid("FeedbackId")
export type FeedbackId = typeof FeedbackId.Type

/**
 * An app (GetApp on the RPC surface).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AppId = uuid("AppId")
export type AppId = typeof AppId.Type

/**
 * An audit log entry.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditLogEntryId = uuid("AuditLogEntryId")
export type AuditLogEntryId = typeof AuditLogEntryId.Type

/**
 * A chat channel registered for report delivery (`chat_channel_id` of playbooks and agents).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatChannelId = uuid("ChatChannelId")
export type ChatChannelId = typeof ChatChannelId.Type

/**
 * A queued job.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobId = uuid("JobId")
export type JobId = typeof JobId.Type

/**
 * An endpoint that receives the organization's outbound events (Standard Webhooks).
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookEndpointId = uuid("WebhookEndpointId")
export type WebhookEndpointId = typeof WebhookEndpointId.Type

/**
 * An outbound event; its `webhook-id` on every delivery and replay.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OutboundEventId = uuid("OutboundEventId")
export type OutboundEventId = typeof OutboundEventId.Type

/**
 * One attempt to deliver an outbound event to an endpoint.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookAttemptId = uuid("WebhookAttemptId")
export type WebhookAttemptId = typeof WebhookAttemptId.Type
