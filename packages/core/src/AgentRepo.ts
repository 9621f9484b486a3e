/**
 * The agent repository port: agents and their runs.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import { Agent } from "./Agent.js"
import { type AgentRun, keyset } from "./AgentRun.js"
import { Conflict, NotFound } from "./Errors.js"
import type { AgentId, AgentRunId, ConnectorId, OrganizationId, WebhookTriggerId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores agents and their runs.
 *
 * @since 0.1.0
 * @category services
 */
export class AgentRepo extends Context.Tag("@sightline/core/AgentRepo")<AgentRepo, AgentRepo.Service>() {}

export declare namespace AgentRepo {
  /**
   * Agent and run storage. Agent ids, webhook trigger ids and run ids are unique across every
   * organization; a run belongs to an agent of its organization.
   */
  export interface Service {
    /** Stores a new agent; an id or webhook trigger id that already exists is a `Conflict`. */
    readonly create: (agent: Agent) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: AgentId) => Effect.Effect<Option.Option<Agent>>
    /** `get` that locks the agent until the surrounding transaction ends (update, delete). */
    readonly getForUpdate: (organizationId: OrganizationId, id: AgentId) => Effect.Effect<Option.Option<Agent>>
    /** The agent whose webhook this trigger id calls. */
    readonly getByTriggerId: (
      organizationId: OrganizationId,
      triggerId: WebhookTriggerId
    ) => Effect.Effect<Option.Option<Agent>>
    /**
     * System operation for the scheduler: every agent with at least one cron expression, in every
     * organization (the only read not scoped to one).
     */
    readonly listScheduled: () => Effect.Effect<ReadonlyArray<Agent>>
    /** Every agent of the organization, newest first (`created_at` desc, then id desc). */
    readonly list: (organizationId: OrganizationId) => Effect.Effect<ReadonlyArray<Agent>>
    /** Replaces a stored agent (matched by organization and id); `NotFound` when there is none. */
    readonly update: (agent: Agent) => Effect.Effect<void, NotFound>
    /** Deletes an agent and all of its runs; false when there was no such agent. */
    readonly delete: (organizationId: OrganizationId, id: AgentId) => Effect.Effect<boolean>
    /** Removes a deleted connector from every agent of the organization that names it (`updated_at` → `at`). */
    readonly detachConnector: (
      organizationId: OrganizationId,
      connectorId: ConnectorId,
      at: DateTime.Utc
    ) => Effect.Effect<void>

    /** Stores a new run; an id that already exists is a `Conflict`. */
    readonly createRun: (run: AgentRun) => Effect.Effect<void, Conflict>
    readonly getRun: (organizationId: OrganizationId, id: AgentRunId) => Effect.Effect<Option.Option<AgentRun>>
    /** `getRun` that locks the row until the surrounding transaction ends (lifecycle moves). */
    readonly getRunForUpdate: (
      organizationId: OrganizationId,
      id: AgentRunId
    ) => Effect.Effect<Option.Option<AgentRun>>
    /** A page of an agent's runs, newest `created_at` first, then id descending. */
    readonly listRuns: (
      organizationId: OrganizationId,
      agentId: AgentId,
      page: Pagination.PageRequest
    ) => Effect.Effect<Pagination.Page<AgentRun>>
    /** Replaces a stored run (matched by organization and id); `NotFound` when there is none. */
    readonly updateRun: (run: AgentRun) => Effect.Effect<void, NotFound>
  }
}

const newestFirst: Order.Order<Agent> = Order.reverse(Order.combine(
  Order.mapInput(DateTime.Order, (agent: Agent) => agent.created_at),
  Order.mapInput(Order.string, (agent: Agent) => agent.id)
))

/**
 * Agents and runs in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<AgentRepo, never, MemoryState> = Layer.effect(
  AgentRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const agents = yield* state.table(HashMap.empty<AgentId, Agent>())
    const runs = yield* state.table(HashMap.empty<AgentRunId, AgentRun>())

    const inOrg = (organizationId: OrganizationId) => (row: { readonly organization_id: OrganizationId }) =>
      row.organization_id === organizationId

    // Reads without a `state.run` of their own, for the operations below that already hold one.
    const findAgent = (organizationId: OrganizationId, id: AgentId) =>
      Effect.map(Ref.get(agents), (rows) => Option.filter(HashMap.get(rows, id), inOrg(organizationId)))
    const findRun = (organizationId: OrganizationId, id: AgentRunId) =>
      Effect.map(Ref.get(runs), (rows) => Option.filter(HashMap.get(rows, id), inOrg(organizationId)))

    const getRun = (organizationId: OrganizationId, id: AgentRunId) => state.run(findRun(organizationId, id))

    return AgentRepo.of({
      create: (agent) =>
        state.run(Effect.gen(function*() {
          const rows = yield* Ref.get(agents)
          if (HashMap.has(rows, agent.id)) {
            return yield* new Conflict({ message: `an agent with id ${agent.id} already exists` })
          }
          if (HashMap.some(rows, (row) => row.webhook_trigger_id === agent.webhook_trigger_id)) {
            return yield* new Conflict({ message: "an agent with this webhook trigger id already exists" })
          }
          yield* Ref.update(agents, HashMap.set(agent.id, agent))
        })),
      get: (organizationId, id) => state.run(findAgent(organizationId, id)),
      getForUpdate: (organizationId, id) => state.run(findAgent(organizationId, id)),
      getByTriggerId: (organizationId, triggerId) =>
        state.run(Effect.map(Ref.get(agents), (rows) =>
          Arr.findFirst(
            HashMap.values(rows),
            (row) => row.organization_id === organizationId && row.webhook_trigger_id === triggerId
          ))),
      listScheduled: () =>
        state.run(
          Effect.map(Ref.get(agents), (rows) =>
            Arr.filter(Arr.fromIterable(HashMap.values(rows)), (agent) => agent.cron_strings.length > 0))
        ),
      list: (organizationId) =>
        state.run(
          Effect.map(Ref.get(agents), (rows) =>
            Arr.sort(Arr.filter(HashMap.values(rows), inOrg(organizationId)), newestFirst))
        ),
      update: (agent) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* findAgent(agent.organization_id, agent.id))) return yield* new NotFound()
          yield* Ref.update(agents, HashMap.set(agent.id, agent))
        })),
      detachConnector: (organizationId, connectorId, at) =>
        state.run(
          Ref.update(
            agents,
            HashMap.map((agent) =>
              agent.organization_id === organizationId && agent.connector_ids.includes(connectorId)
                ? new Agent({
                  ...agent,
                  connector_ids: agent.connector_ids.filter((id) => id !== connectorId),
                  updated_at: at
                })
                : agent
            )
          )
        ),
      delete: (organizationId, id) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* findAgent(organizationId, id))) return false
          yield* Ref.update(agents, HashMap.remove(id))
          yield* Ref.update(runs, HashMap.filter((run) => run.agent_id !== id))
          return true
        })),

      createRun: (run) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(runs), run.id)) {
            return yield* new Conflict({ message: `an agent run with id ${run.id} already exists` })
          }
          yield* Ref.update(runs, HashMap.set(run.id, run))
        })),
      getRun,
      getRunForUpdate: getRun,
      listRuns: (organizationId, agentId, page) =>
        state.run(Effect.map(Ref.get(runs), (rows) => {
          const { after } = page
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId &&
            row.agent_id === agentId &&
            (after === undefined || Pagination.compareDesc(keyset(row), after) > 0)
          )
          matching.sort((a, b) => Pagination.compareDesc(keyset(a), keyset(b)))
          return Pagination.pageFromRows(matching.slice(0, page.limit + 1), page.limit, keyset)
        })),
      updateRun: (run) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* findRun(run.organization_id, run.id))) return yield* new NotFound()
          yield* Ref.update(runs, HashMap.set(run.id, run))
        }))
    })
  })
)
