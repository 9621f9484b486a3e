/**
 * The Changes group of /v2: reviewable changes of the Context Library under OWNERS rules.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Change from "@sightline/core/Change"
import { ChangeId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: ChangeId })

/**
 * The Changes operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ChangesApi extends HttpApiGroup.make("changes")
  .add(
    HttpApiEndpoint.get("list", "/v2/changes")
      .setUrlParams(Change.ListChangesQuery)
      .addSuccess(Change.ListChangesResponse)
      .annotate(OpenApi.Summary, "Changes touching only paths the caller may read, with counts per status")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/changes/:id")
      .setPath(IdPath)
      .setUrlParams(Change.GetChangeQuery)
      .addSuccess(Change.Change)
      .annotate(OpenApi.Summary, "A change with its diffs and the caller's capabilities")
  )
  .add(
    HttpApiEndpoint.post("approve", "/v2/changes/:id/approve")
      .setPath(IdPath)
      .setPayload(strict(Change.ExpectedGitRef))
      .addSuccess(Change.ApproveResult)
      .annotate(OpenApi.Summary, "Approve; merges once the folder's rule is met (stale expected_git_ref: 409)")
  )
  .add(
    HttpApiEndpoint.post("deny", "/v2/changes/:id/deny")
      .setPath(IdPath)
      .setPayload(strict(Change.ExpectedGitRef))
      .addSuccess(Change.ActionResult)
      .annotate(OpenApi.Summary, "Deny an open or draft change")
  )
  .add(
    HttpApiEndpoint.post("restore", "/v2/changes/:id/restore")
      .setPath(IdPath)
      .setPayload(strict(Change.ExpectedGitRef))
      .addSuccess(Change.ActionResult)
      .annotate(OpenApi.Summary, "Reopen a denied change")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Changes")
{}
