/**
 * An agent: a prompt run over data connectors on a schedule, by hand, or from its webhook trigger.
 *
 * Whether a caller may see an agent (hidden unless they can use every connector it uses) is the
 * policy engine's business; this module only says what a valid agent and a valid update are.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { AgentId, ConnectorId, MemberId, OrganizationId, WebhookTriggerId } from "./Ids.js"
import { Email } from "./Member.js"
import * as Playbook from "./Playbook.js"

/**
 * The longest agent name accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const NAME_MAX_LENGTH = 200

/**
 * The longest prompt accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROMPT_MAX_LENGTH = 100_000

/**
 * An agent's display name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Name = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(NAME_MAX_LENGTH))

/**
 * An agent's instructions.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Prompt = Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(PROMPT_MAX_LENGTH))

/**
 * A schedule: the playbooks' cron schema (a standard five-field expression in UTC that fires at
 * least once), so one expression means the same thing wherever a schedule is set and a seconds
 * field cannot flood a run queue.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CronString = Playbook.CronString

/**
 * The name of a tool the agent may use (as for chats).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolName = Schema.NonEmptyTrimmedString

/**
 * The id of the chat channel (for example a Slack channel) the agent posts to.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatChannelId = Schema.NonEmptyTrimmedString

const editable = {
  name: Name,
  prompt: Prompt,
  connector_ids: Schema.Array(ConnectorId),
  /** Absent: the default tool set. */
  tools: Schema.optional(Schema.Array(ToolName)),
  cron_strings: Schema.Array(CronString),
  email_addresses: Schema.Array(Email),
  chat_channel_id: Schema.optional(ChatChannelId)
}

const served = {
  id: AgentId,
  owner_id: MemberId,
  ...editable,
  webhook_trigger_id: WebhookTriggerId,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}

/**
 * An agent as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class Agent extends Schema.Class<Agent>("@sightline/core/Agent")({
  ...served,
  organization_id: OrganizationId
}) {}

/**
 * An agent as served; encoding a stored `Agent` with it leaves `organization_id` out.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct(served).annotations({ identifier: "Agent" })
export type View = typeof View.Type

/**
 * The served form of a stored agent.
 *
 * @since 0.1.0
 * @category utils
 */
export const toView = (agent: Agent): View => Struct.omit(agent, "organization_id")

/**
 * Body of `POST /v2/agents`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRequest = Schema.Struct({
  name: Name,
  prompt: Prompt,
  connector_ids: Schema.Array(ConnectorId),
  tools: Schema.optional(Schema.Array(ToolName)),
  cron_strings: Schema.optional(Schema.Array(CronString)),
  email_addresses: Schema.optional(Schema.Array(Email)),
  chat_channel_id: Schema.optional(ChatChannelId)
})
export type CreateRequest = typeof CreateRequest.Type

/**
 * Body of `PATCH /v2/agents/{id}`: every field optional, an absent field is kept. `tools` and
 * `chat_channel_id` also take `null`, which clears them (back to the default tools, no channel);
 * the list fields are cleared with `[]`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpdateRequest = Schema.Struct({
  name: Schema.optional(Name),
  prompt: Schema.optional(Prompt),
  connector_ids: Schema.optional(Schema.Array(ConnectorId)),
  tools: Schema.optional(Schema.NullOr(Schema.Array(ToolName))),
  cron_strings: Schema.optional(Schema.Array(CronString)),
  email_addresses: Schema.optional(Schema.Array(Email)),
  chat_channel_id: Schema.optional(Schema.NullOr(ChatChannelId))
})
export type UpdateRequest = typeof UpdateRequest.Type

/**
 * Response of `GET /v2/agents`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({ agents: Schema.Array(View) })
export type ListResponse = typeof ListResponse.Type

/**
 * Response of `DELETE /v2/agents/{id}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DeleteResponse = Schema.Struct({ id: AgentId, success: Schema.Boolean })
export type DeleteResponse = typeof DeleteResponse.Type

/**
 * A new agent from its create body; the caller owns it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: AgentId
  readonly organizationId: OrganizationId
  readonly ownerId: MemberId
  readonly webhookTriggerId: WebhookTriggerId
  readonly request: CreateRequest
  readonly at: DateTime.Utc
}): Agent => {
  const { request } = options
  return new Agent({
    id: options.id,
    organization_id: options.organizationId,
    owner_id: options.ownerId,
    name: request.name,
    prompt: request.prompt,
    connector_ids: request.connector_ids,
    ...(request.tools === undefined ? {} : { tools: request.tools }),
    cron_strings: request.cron_strings ?? [],
    email_addresses: request.email_addresses ?? [],
    ...(request.chat_channel_id === undefined ? {} : { chat_channel_id: request.chat_channel_id }),
    webhook_trigger_id: options.webhookTriggerId,
    created_at: options.at,
    updated_at: options.at
  })
}

/**
 * Applies a `PATCH` body; `updated_at` moves to `at` and nothing else outside the body changes.
 *
 * @since 0.1.0
 * @category utils
 */
export const update = (agent: Agent, patch: UpdateRequest, at: DateTime.Utc): Agent => {
  const tools = patch.tools === undefined ? agent.tools : patch.tools ?? undefined
  const channel = patch.chat_channel_id === undefined ? agent.chat_channel_id : patch.chat_channel_id ?? undefined
  return new Agent({
    ...Struct.omit(agent, "tools", "chat_channel_id"),
    name: patch.name ?? agent.name,
    prompt: patch.prompt ?? agent.prompt,
    connector_ids: patch.connector_ids ?? agent.connector_ids,
    cron_strings: patch.cron_strings ?? agent.cron_strings,
    email_addresses: patch.email_addresses ?? agent.email_addresses,
    ...(tools === undefined ? {} : { tools }),
    ...(channel === undefined ? {} : { chat_channel_id: channel }),
    updated_at: at
  })
}
