/**
 * One run of an agent, started by its webhook, its schedule or by hand, and its lifecycle:
 * `queued → running → completed | failed | cancelled`, and `queued → cancelled`. Every other move
 * is a `Conflict`.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { Conflict } from "./Errors.js"
import { AgentId, AgentRunId, ChatId, OrganizationId } from "./Ids.js"
import { JsonObject } from "./Json.js"
import * as Pagination from "./Pagination.js"

/**
 * What started a run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TriggerSource = Schema.Literal("webhook", "schedule", "manual")
export type TriggerSource = typeof TriggerSource.Type

/**
 * Where a run is in its lifecycle.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal("queued", "running", "completed", "failed", "cancelled")
export type Status = typeof Status.Type

const fields = {
  id: AgentRunId,
  agent_id: AgentId,
  trigger_source: TriggerSource,
  status: Status,
  /** The chat the run writes to, once it has one. */
  chat_id: Schema.optional(ChatId),
  /** The webhook payload, added as context for the run. */
  payload: Schema.optional(JsonObject),
  error: Schema.optional(Schema.String),
  created_at: Schema.DateTimeUtc,
  started_at: Schema.optional(Schema.DateTimeUtc),
  finished_at: Schema.optional(Schema.DateTimeUtc)
}

/**
 * A run as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class AgentRun extends Schema.Class<AgentRun>("@sightline/core/AgentRun")({
  ...fields,
  organization_id: OrganizationId
}) {}

/**
 * A run as served; encoding a stored `AgentRun` with it leaves `organization_id` out.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct(fields).annotations({ identifier: "AgentRun" })
export type View = typeof View.Type

/**
 * The served form of a stored run.
 *
 * @since 0.1.0
 * @category utils
 */
export const toView = (run: AgentRun): View => Struct.omit(run, "organization_id")

/**
 * The job kind of a queued run: the agent worker claims jobs of this kind.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobKind = "agent.run"

/**
 * The payload of an `agent.run` job: ids only, so the job never holds a stale copy of the run (the
 * worker loads it, and skips a run that is no longer `queued`, such as a cancelled one).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobPayload = Schema.Struct({ agentRunId: AgentRunId, organizationId: OrganizationId })
export type JobPayload = typeof JobPayload.Type

/**
 * A new queued run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: AgentRunId
  readonly organizationId: OrganizationId
  readonly agentId: AgentId
  readonly triggerSource: TriggerSource
  readonly payload?: JsonObject | undefined
  readonly at: DateTime.Utc
}): AgentRun =>
  new AgentRun({
    id: options.id,
    organization_id: options.organizationId,
    agent_id: options.agentId,
    trigger_source: options.triggerSource,
    status: "queued",
    ...(options.payload === undefined ? {} : { payload: options.payload }),
    created_at: options.at
  })

/**
 * The statuses a run may move to from each status.
 *
 * @since 0.1.0
 * @category constants
 */
export const transitions: { readonly [S in Status]: ReadonlyArray<Status> } = {
  queued: ["running", "cancelled"],
  running: ["completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: []
}

/**
 * May a run move from `from` to `to`?
 *
 * @since 0.1.0
 * @category utils
 */
export const canTransition = (from: Status, to: Status): boolean => transitions[from].includes(to)

/**
 * Has the run finished (no move is possible any more)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isFinished = (status: Status): boolean => transitions[status].length === 0

const move = (
  run: AgentRun,
  to: Status,
  verb: string,
  changes: Partial<AgentRun>
): Either.Either<AgentRun, Conflict> =>
  canTransition(run.status, to)
    ? Either.right(new AgentRun({ ...run, ...changes, status: to }))
    : Either.left(new Conflict({ message: `cannot ${verb} agent run ${run.id}: it is ${run.status}` }))

/**
 * `queued → running`; the chat the run writes to may be attached here.
 *
 * @since 0.1.0
 * @category utils
 */
export const start = (
  run: AgentRun,
  at: DateTime.Utc,
  chatId?: ChatId
): Either.Either<AgentRun, Conflict> =>
  move(run, "running", "start", { started_at: at, ...(chatId === undefined ? {} : { chat_id: chatId }) })

/**
 * `running → completed`.
 *
 * @since 0.1.0
 * @category utils
 */
export const complete = (run: AgentRun, at: DateTime.Utc): Either.Either<AgentRun, Conflict> =>
  move(run, "completed", "complete", { finished_at: at })

/**
 * `running → failed`, with the reason.
 *
 * @since 0.1.0
 * @category utils
 */
export const fail = (run: AgentRun, error: string, at: DateTime.Utc): Either.Either<AgentRun, Conflict> =>
  move(run, "failed", "fail", { error, finished_at: at })

/**
 * `queued | running → cancelled`.
 *
 * @since 0.1.0
 * @category utils
 */
export const cancel = (run: AgentRun, at: DateTime.Utc): Either.Either<AgentRun, Conflict> =>
  move(run, "cancelled", "cancel", { finished_at: at })

/**
 * The keyset position of a run in listings (newest first); adapters must match it.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (run: AgentRun): Pagination.Keyset => ({
  at: DateTime.formatIso(run.created_at),
  id: run.id
})

/**
 * Query of `GET /v2/agents/{id}/runs`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListParams = Schema.Struct({
  limit: Pagination.limitParam(1, 200, 50),
  cursor: Schema.optional(Schema.String)
})
export type ListParams = typeof ListParams.Type

/**
 * Response of `GET /v2/agents/{id}/runs`, newest first; no `next_cursor` on the last page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  runs: Schema.Array(View),
  next_cursor: Schema.optional(Schema.String)
})
export type ListResponse = typeof ListResponse.Type
