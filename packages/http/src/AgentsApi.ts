/**
 * The Agents group of /v2: agents and their runs. An agent is hidden (404) from callers lacking
 * access to any connector it uses.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Agent from "@sightline/core/Agent"
import * as AgentRun from "@sightline/core/AgentRun"
import { AgentId, AgentRunId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: AgentId })

/**
 * The Agents operations.
 *
 * @since 0.1.0
 * @category models
 */
export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("create", "/v2/agents")
      .setPayload(strict(Agent.CreateRequest))
      .addSuccess(Agent.View, { status: 201 })
      .annotate(OpenApi.Summary, "Create an agent with its webhook trigger id (agent:write)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/agents")
      .addSuccess(Agent.ListResponse)
      .annotate(OpenApi.Summary, "List the agents the caller can see")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/agents/:id")
      .setPath(IdPath)
      .addSuccess(Agent.View)
      .annotate(OpenApi.Summary, "An agent")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/agents/:id")
      .setPath(IdPath)
      .setPayload(strict(Agent.UpdateRequest))
      .addSuccess(Agent.View)
      .annotate(OpenApi.Summary, "Update an agent")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/agents/:id")
      .setPath(IdPath)
      .addSuccess(Agent.DeleteResponse)
      .annotate(OpenApi.Summary, "Delete an agent and its runs")
  )
  .add(
    HttpApiEndpoint.get("listRuns", "/v2/agents/:id/runs")
      .setPath(IdPath)
      .setUrlParams(AgentRun.ListParams)
      .addSuccess(AgentRun.ListResponse)
      .annotate(OpenApi.Summary, "An agent's runs, newest first")
  )
  .add(
    HttpApiEndpoint.get("getRun", "/v2/agent-runs/:id")
      .setPath(Schema.Struct({ id: AgentRunId }))
      .addSuccess(AgentRun.View)
      .annotate(OpenApi.Summary, "One agent run")
  )
  .add(
    HttpApiEndpoint.post("run", "/v2/agents/:id/run")
      .setPath(IdPath)
      .addSuccess(AgentRun.View, { status: 202 })
      .annotate(OpenApi.Summary, "Queue a run of the agent now")
      .annotate(
        OpenApi.Description,
        "The run is queued (202) and executed by a server's worker; follow it with GET /v2/agent-runs/{id}."
      )
  )
  .add(
    HttpApiEndpoint.post("cancelRun", "/v2/agent-runs/:id/cancel")
      .setPath(Schema.Struct({ id: AgentRunId }))
      .addSuccess(AgentRun.View)
      .annotate(OpenApi.Summary, "Cancel a queued or running agent run")
      .annotate(OpenApi.Description, "Works from any server process; a finished run is 409 conflict.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Agents")
{}
