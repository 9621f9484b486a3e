/**
 * The Sandcastles group of /v2: the reads the store answers (listing sandboxes and their recorded
 * executions). Starting, executing, files, queries and library changes arrive with the sandbox runtime.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Execution from "@sightline/core/Execution"
import { SandboxId } from "@sightline/core/Ids"
import * as Sandbox from "@sightline/core/Sandbox"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"

/** The Sandcastles operations. */
export class SandcastlesApi extends HttpApiGroup.make("sandcastles")
  .add(
    HttpApiEndpoint.get("list", "/v2/sandcastles")
      .setUrlParams(Sandbox.ListParams)
      .addSuccess(Sandbox.ListResponse)
      .annotate(OpenApi.Summary, "List sandboxes (your own; every member's for organization:read)")
  )
  .add(
    HttpApiEndpoint.get("executions", "/v2/sandcastles/:id/executions")
      .setPath(Schema.Struct({ id: SandboxId }))
      .setUrlParams(Execution.ListParams)
      .addSuccess(Execution.ListResponse)
      .annotate(OpenApi.Summary, "List a sandbox's recorded executions, newest first (kept 30 days)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Sandcastles")
{}
