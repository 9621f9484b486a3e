/**
 * The agents use cases (`/v2/agents`, `/v2/agent-runs`, `POST /v1/agents/webhook/trigger`): agent
 * CRUD, their runs, and queueing runs from the webhook or by hand.
 *
 * Who may see and change an agent is the policy engine's (`Policy.canAccessAgent`: an agent is
 * hidden, `NotFound`, from a caller who cannot reach every connector it uses); whether the caller
 * may use a connector it names is the shared connector-use rule's (`internal/connectorUse`); the run lifecycle is `AgentRun`'s.
 * Queueing a run writes the run and its `agent.run` job in one transaction, so a run is never queued
 * without a job to execute it, nor a job left pointing at no run.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Agent from "./Agent.js"
import { AgentRepo } from "./AgentRepo.js"
import * as AgentRun from "./AgentRun.js"
import * as AgentTrigger from "./AgentTrigger.js"
import { Auditor } from "./Auditor.js"
import { ChatChannelRepo } from "./ChatChannelRepo.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { enforce } from "./Decision.js"
import { type Conflict, InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { AgentId, AgentRunId, type ConnectorId, type OrganizationId, WebhookTriggerId } from "./Ids.js"
import * as ChatChannelUse from "./internal/chatChannelUse.js"
import { policyAccess, requireUsable } from "./internal/connectorUse.js"
import { JobQueue } from "./JobQueue.js"
import * as Json from "./Json.js"
import * as Pagination from "./Pagination.js"
import type * as Permission from "./Permission.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The agents use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Agents extends Context.Tag("@sightline/core/Agents")<Agents, Agents.Service>() {}

export declare namespace Agents {
  /**
   * The operations on agents and their runs. The caller comes first; every lookup is scoped to its
   * organization, and an agent the caller cannot see (`Policy.agentVisible`) is `NotFound`, as are
   * its runs.
   */
  export interface Service {
    /** `GET /v2/agents` (`agent:read`): the agents the caller can see, newest first. */
    readonly list: (
      principal: Policy.Principal
    ) => Effect.Effect<Agent.ListResponse, Unauthenticated | PermissionDenied>
    /** `GET /v2/agents/{id}` (`agent:read`). */
    readonly get: (
      principal: Policy.Principal,
      id: AgentId
    ) => Effect.Effect<Agent.View, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `POST /v2/agents` (`agent:write`): the caller owns the new agent, which gets a fresh
     * `webhook_trigger_id`. Every connector must be one the caller may use, else `InvalidRequest`.
     */
    readonly create: (
      principal: Policy.Principal,
      request: Agent.CreateRequest
    ) => Effect.Effect<Agent.View, Unauthenticated | PermissionDenied | InvalidRequest>
    /** `PATCH /v2/agents/{id}` (`agent:write`); new `connector_ids` are checked as on create. */
    readonly update: (
      principal: Policy.Principal,
      id: AgentId,
      request: Agent.UpdateRequest
    ) => Effect.Effect<Agent.View, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** `DELETE /v2/agents/{id}` (`agent:write`): the agent and its runs. */
    readonly delete: (
      principal: Policy.Principal,
      id: AgentId
    ) => Effect.Effect<Agent.DeleteResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/agents/{id}/runs` (`agent:read`): newest first, by cursor; a foreign cursor is `InvalidRequest`. */
    readonly listRuns: (
      principal: Policy.Principal,
      agentId: AgentId,
      params: AgentRun.ListParams
    ) => Effect.Effect<AgentRun.ListResponse, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** `GET /v2/agent-runs/{id}` (`agent:read` on the run's agent). */
    readonly getRun: (
      principal: Policy.Principal,
      runId: AgentRunId
    ) => Effect.Effect<AgentRun.View, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `POST /v1/agents/webhook/trigger` (`agent:write` on the agent whose trigger id it is): queues a
     * run with the payload as context. An oversized payload is `InvalidRequest` before anything else.
     */
    readonly trigger: (
      principal: Policy.Principal,
      request: AgentTrigger.TriggerRequest
    ) => Effect.Effect<AgentTrigger.TriggerResponse, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** Queues a manual run (`agent:write`) and returns it, `queued`. */
    readonly runNow: (
      principal: Policy.Principal,
      agentId: AgentId
    ) => Effect.Effect<AgentRun.View, Unauthenticated | PermissionDenied | NotFound>
    /**
     * System operation for the scheduler (no principal): queues the run of the agent's schedule that
     * fires at `scheduledAt`, once across processes (the job's dedupe key holds the agent and the
     * time, and the agent's row lock orders concurrent callers). True when this call queued it.
     */
    readonly queueScheduled: (
      organizationId: OrganizationId,
      agentId: AgentId,
      scheduledAt: DateTime.Utc
    ) => Effect.Effect<boolean>
    /** Cancels a queued or running run (`agent:write` on its agent); a finished one is a `Conflict`. */
    readonly cancelRun: (
      principal: Policy.Principal,
      runId: AgentRunId
    ) => Effect.Effect<AgentRun.View, Unauthenticated | PermissionDenied | NotFound | Conflict>
  }
}

// The fields a PATCH may change, to name in the audit log the ones it did change.
const editableFields = [
  "name",
  "prompt",
  "connector_ids",
  "tools",
  "cron_strings",
  "email_addresses",
  "chat_channel_id"
] as const

const changedFields = (before: Agent.Agent, after: Agent.Agent): ReadonlyArray<string> =>
  editableFields.filter((field) => JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null))

/**
 * Builds the agents use cases over the repositories and the job queue in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const agents = yield* AgentRepo
  const channels = yield* ChatChannelRepo
  const connectorRepo = yield* ConnectorRepo
  const jobs = yield* JobQueue
  const ids = yield* IdGenerator
  const tx = yield* Transaction
  const auditor = yield* Auditor
  const audit = (principal: Policy.Principal, entry: Omit<Auditor.Entry, "resourceType">) =>
    auditor.recordBy(principal, { ...entry, resourceType: "agent" })

  // The access of the given connectors, as the policy engine reads it. A missing one is simply left
  // out: `Policy.agentVisible` counts it as unreachable.
  const connectorAccess = Effect.fnUntraced(function*(
    principal: Policy.Principal,
    connectorIds: ReadonlyArray<ConnectorId>,
    now: DateTime.Utc
  ) {
    const found = yield* Effect.forEach(connectorIds, (id) =>
      Effect.map(
        Effect.all([
          connectorRepo.get(principal.organizationId, id),
          connectorRepo.getAccess(principal.organizationId, id)
        ]),
        ([record, access]) => Option.all([record, access])
      ))
    return Arr.getSomes(found).map(([record, access]) => policyAccess(record, access, now))
  })

  // Enforces `Policy.canAccessAgent` on a loaded agent: invisible is `NotFound`, then the permission.
  const authorize = Effect.fnUntraced(function*(
    principal: Policy.Principal,
    agent: Agent.Agent,
    action: Permission.Action
  ) {
    const now = yield* DateTime.now
    const reachable = yield* connectorAccess(principal, agent.connector_ids, now)
    yield* enforce(
      Policy.canAccessAgent(
        principal,
        action,
        { organizationId: agent.organization_id, connectorIds: agent.connector_ids },
        reachable,
        now
      )
    )
    return agent
  })

  // A visible agent the caller may act on; `forUpdate` locks it for the surrounding transaction.
  const load = Effect.fnUntraced(function*(
    principal: Policy.Principal,
    id: AgentId,
    action: Permission.Action,
    forUpdate = false
  ) {
    const agent = yield* (forUpdate ? agents.getForUpdate : agents.get)(principal.organizationId, id)
    if (Option.isNone(agent)) return yield* new NotFound()
    return yield* authorize(principal, agent.value, action)
  })

  const checkConnectors = (principal: Policy.Principal, connectorIds: ReadonlyArray<ConnectorId>) =>
    Effect.flatMap(DateTime.now, (now) => requireUsable(connectorRepo, principal, connectorIds, now, "connector_ids"))

  // Writes a queued run and its job together; the job carries ids only (see `AgentRun.JobPayload`).
  const queue = (
    principal: Policy.Principal,
    agent: Agent.Agent,
    triggerSource: AgentRun.TriggerSource,
    payload?: Json.JsonObject
  ) =>
    tx.withTransaction(Effect.gen(function*() {
      const run = AgentRun.make({
        id: AgentRunId.make(yield* ids.uuid),
        organizationId: principal.organizationId,
        agentId: agent.id,
        triggerSource,
        payload,
        at: yield* DateTime.now
      })
      // A fresh id cannot clash; if it did, the store is broken.
      yield* Effect.orDie(agents.createRun(run))
      const jobPayload: AgentRun.JobPayload = { agentRunId: run.id, organizationId: run.organization_id }
      yield* jobs.enqueue({
        organizationId: principal.organizationId,
        kind: AgentRun.jobKind,
        payload: jobPayload,
        // A retried transaction never queues the same run twice.
        dedupeKey: `${AgentRun.jobKind}:${run.id}`
      })
      yield* audit(principal, {
        action: "agent.run",
        resourceId: agent.id,
        details: { run_id: run.id, trigger_source: triggerSource }
      })
      return run
    }))

  const list = Traced.fn("Agents.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.requirePermission(principal, "agent:read"))
    const now = yield* DateTime.now
    const reachable = (yield* connectorRepo.listWithAccess(principal.organizationId)).map(({ access, connector }) =>
      policyAccess(connector, access, now)
    )
    const all = yield* agents.list(principal.organizationId)
    return {
      agents: all
        .filter((agent) =>
          Policy.agentVisible(
            principal,
            { organizationId: agent.organization_id, connectorIds: agent.connector_ids },
            reachable,
            now
          )._tag === "Allow"
        )
        .map(Agent.toView)
    }
  })

  const get = Traced.fn("Agents.get")(function*(principal: Policy.Principal, id: AgentId) {
    return Agent.toView(yield* load(principal, id, "read"))
  })

  const create = Traced.fn("Agents.create")(function*(principal: Policy.Principal, request: Agent.CreateRequest) {
    yield* enforce(Policy.requirePermission(principal, "agent:write"))
    yield* enforce(Policy.canRunUnattended(principal))
    const connectorIds = Arr.dedupe(request.connector_ids)
    yield* checkConnectors(principal, connectorIds)
    yield* ChatChannelUse.require(channels, principal.organizationId, request.chat_channel_id)
    return yield* tx.withTransaction(Effect.gen(function*() {
      const agent = Agent.make({
        id: AgentId.make(yield* ids.uuid),
        organizationId: principal.organizationId,
        ownerId: principal.memberId,
        webhookTriggerId: WebhookTriggerId.make(yield* ids.uuid),
        request: { ...request, connector_ids: connectorIds },
        at: yield* DateTime.now
      })
      // Fresh ids cannot clash; if they did, the store is broken.
      yield* Effect.orDie(agents.create(agent))
      yield* audit(principal, {
        action: "agent.create",
        resourceId: agent.id,
        details: { name: agent.name, connector_ids: agent.connector_ids }
      })
      return Agent.toView(agent)
    }))
  })

  const update = Traced.fn("Agents.update")(function*(
    principal: Policy.Principal,
    id: AgentId,
    request: Agent.UpdateRequest
  ) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const agent = yield* load(principal, id, "write", true)
      const connectorIds = request.connector_ids === undefined ? undefined : Arr.dedupe(request.connector_ids)
      if (connectorIds !== undefined) yield* checkConnectors(principal, connectorIds)
      yield* ChatChannelUse.require(channels, principal.organizationId, request.chat_channel_id ?? undefined)
      const updated = Agent.update(
        agent,
        connectorIds === undefined ? request : { ...request, connector_ids: connectorIds },
        yield* DateTime.now
      )
      const changed = changedFields(agent, updated)
      // A PATCH that changes nothing writes nothing: `updated_at` and the log only move on changes.
      if (changed.length === 0) return Agent.toView(agent)
      yield* agents.update(updated)
      yield* audit(principal, { action: "agent.update", resourceId: id, details: { fields: changed } })
      return Agent.toView(updated)
    }))
  })

  const remove = Traced.fn("Agents.delete")(function*(principal: Policy.Principal, id: AgentId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const agent = yield* load(principal, id, "write", true)
      // Jobs of its queued runs stay behind and find no run: the worker skips them.
      yield* agents.delete(principal.organizationId, id)
      yield* audit(principal, { action: "agent.delete", resourceId: id, details: { name: agent.name } })
      return { id, success: true }
    }))
  })

  const listRuns = Traced.fn("Agents.listRuns")(function*(
    principal: Policy.Principal,
    agentId: AgentId,
    params: AgentRun.ListParams
  ) {
    yield* load(principal, agentId, "read")
    const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor, Schema.UUID)
    const page = yield* agents.listRuns(principal.organizationId, agentId, { limit: params.limit, after })
    return {
      runs: page.items.map(AgentRun.toView),
      ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
    }
  })

  const getRun = Traced.fn("Agents.getRun")(function*(principal: Policy.Principal, runId: AgentRunId) {
    const run = yield* agents.getRun(principal.organizationId, runId)
    if (Option.isNone(run)) return yield* new NotFound()
    yield* load(principal, run.value.agent_id, "read")
    return AgentRun.toView(run.value)
  })

  const trigger = Traced.fn("Agents.trigger")(
    function*(principal: Policy.Principal, request: AgentTrigger.TriggerRequest) {
      // The schema already holds the limit; checked again because nothing may be queued past it,
      // whoever built the request.
      if (request.payload !== undefined) {
        const size = AgentTrigger.serializedSize(request.payload)
        if (size > AgentTrigger.MAX_PAYLOAD_BYTES) {
          return yield* new InvalidRequest({
            message:
              `payload is ${size} bytes after JSON serialization; at most ${AgentTrigger.MAX_PAYLOAD_BYTES} are accepted`
          })
        }
      }
      // Authorized and queued in one transaction with the agent locked: a concurrent delete of the
      // agent or change of its connectors cannot slip between the check and the queued run.
      return yield* tx.withTransaction(Effect.gen(function*() {
        const found = yield* agents.getByTriggerId(principal.organizationId, request.triggerId)
        if (Option.isNone(found)) return yield* new NotFound()
        const agent = yield* agents.getForUpdate(principal.organizationId, found.value.id)
        if (Option.isNone(agent)) return yield* new NotFound()
        yield* authorize(principal, agent.value, "write")
        yield* queue(principal, agent.value, "webhook", request.payload)
        return AgentTrigger.queued
      }))
    }
  )

  const runNow = Traced.fn("Agents.runNow")(function*(principal: Policy.Principal, agentId: AgentId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      yield* agents.getForUpdate(principal.organizationId, agentId)
      const agent = yield* load(principal, agentId, "write")
      return AgentRun.toView(yield* queue(principal, agent, "manual"))
    }))
  })

  const queueScheduled = Traced.fn("Agents.queueScheduled")(
    function*(organizationId: OrganizationId, agentId: AgentId, scheduledAt: DateTime.Utc) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        if (Option.isNone(yield* agents.getForUpdate(organizationId, agentId))) return false
        const run = AgentRun.make({
          id: AgentRunId.make(yield* ids.uuid),
          organizationId,
          agentId,
          triggerSource: "schedule",
          at: yield* DateTime.now
        })
        const jobPayload: AgentRun.JobPayload = { agentRunId: run.id, organizationId }
        const job = yield* jobs.enqueue({
          organizationId,
          kind: AgentRun.jobKind,
          payload: jobPayload,
          dedupeKey: `agent.schedule:${agentId}:${DateTime.formatIso(scheduledAt)}`
        })
        // Another process queued this firing first: its job names its own run.
        const queued = (job.payload as Partial<AgentRun.JobPayload> | null)?.agentRunId === run.id
        if (queued) {
          yield* Effect.orDie(agents.createRun(run))
          // No member started it: the scheduler is the actor.
          yield* auditor.record({
            organizationId,
            authMethod: "system",
            action: "agent.run",
            resourceType: "agent",
            resourceId: agentId,
            details: { run_id: run.id, trigger_source: "schedule" }
          })
        }
        return queued
      }))
    }
  )

  const cancelRun = Traced.fn("Agents.cancelRun")(function*(principal: Policy.Principal, runId: AgentRunId) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const run = yield* agents.getRunForUpdate(principal.organizationId, runId)
      if (Option.isNone(run)) return yield* new NotFound()
      yield* load(principal, run.value.agent_id, "write")
      // The job stays in the queue; its worker sees the run is no longer `queued` and skips it (or,
      // for a running one, stops at its next check of the run).
      const cancelled = yield* AgentRun.cancel(run.value, yield* DateTime.now)
      yield* agents.updateRun(cancelled)
      return AgentRun.toView(cancelled)
    }))
  })

  return Agents.of({
    list,
    get,
    create,
    update,
    delete: remove,
    listRuns,
    getRun,
    trigger,
    runNow,
    queueScheduled,
    cancelRun
  })
})

/**
 * The agents use cases over `AgentRepo`, `ConnectorRepo`, `JobQueue`, `Transaction` and `Auditor` in
 * context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Agents, make)
