/**
 * The Playbooks group of /v2.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { PlaybookId } from "@sightline/core/Ids"
import * as Playbook from "@sightline/core/Playbook"
import * as PlaybookRuns from "@sightline/core/PlaybookRuns"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: PlaybookId })

/**
 * `/v2/playbooks`.
 *
 * @since 0.1.0
 * @category models
 */
export class PlaybooksApi extends HttpApiGroup.make("playbooks")
  .add(
    HttpApiEndpoint.post("create", "/v2/playbooks")
      .addSuccess(Playbook.Playbook, { status: 201 })
      .annotate(OpenApi.Summary, "Create an empty playbook (status draft)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/playbooks")
      .setUrlParams(Playbook.ListPlaybooksQuery)
      .addSuccess(Playbook.ListPlaybooksResponse)
      .annotate(OpenApi.Summary, "List playbooks")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/playbooks/:id")
      .setPath(IdPath)
      .setUrlParams(Playbook.GetPlaybookQuery)
      .addSuccess(Playbook.GetPlaybookResponse)
      .annotate(OpenApi.Summary, "Get a playbook with a page of its reports")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/playbooks/:id")
      .setPath(IdPath)
      .setPayload(strict(Playbook.UpdatePlaybookRequest))
      .addSuccess(Playbook.Playbook)
      .annotate(OpenApi.Summary, "Update a playbook's configuration")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/playbooks/:id")
      .setPath(IdPath)
      .addSuccess(Playbook.DeletePlaybookResponse)
      .annotate(OpenApi.Summary, "Delete a playbook and its reports")
  )
  .add(
    HttpApiEndpoint.post("deploy", "/v2/playbooks/:id/deploy")
      .setPath(IdPath)
      .addSuccess(Playbook.DeployPlaybookResponse)
      .annotate(OpenApi.Summary, "Deploy a playbook")
      .annotate(OpenApi.Description, "Refused (400) while the playbook could not run: the checks of a dry run.")
  )
  .add(
    HttpApiEndpoint.post("run", "/v2/playbooks/:id/run")
      .setPath(IdPath)
      .setPayload(strict(Playbook.RunPlaybookRequest))
      .addSuccess(PlaybookRuns.RunResponse)
      .annotate(OpenApi.Summary, "Run a playbook and return its report")
      .annotate(
        OpenApi.Description,
        "With dry_run, only checks that the playbook could run (400 invalid_request naming every problem). " +
          "Otherwise runs the agent with the playbook's prompt, delivers the report and returns it. " +
          "504 timeout when the run outlasts the server's limit: the run goes on, and its report is listed " +
          "by GET /v2/playbooks/{id}."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Playbooks")
{}
