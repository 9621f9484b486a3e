/**
 * The Evaluations group of /v2: runs of an evaluation set of the library against a model and a
 * connector (`connector:write`).
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as EvalRun from "@sightline/core/EvalRun"
import { EvalRunId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: EvalRunId })

/**
 * The Evaluations operations.
 *
 * @since 0.1.0
 * @category models
 */
export class EvalsApi extends HttpApiGroup.make("evals")
  .add(
    HttpApiEndpoint.post("start", "/v2/evals/runs")
      .setPayload(strict(EvalRun.StartRequest))
      .addSuccess(EvalRun.View, { status: 202 })
      .annotate(OpenApi.Summary, "Queue a run of an evaluation set (connector:write)")
      .annotate(
        OpenApi.Description,
        "The set is a library file: evals/<name>.yaml, or a semantic model (its verified queries with defaults). " +
          "Each case is asked as a fresh chat of the model on the connector, and its answer's rows compared with " +
          "the right ones. The run is queued (202) and executed by a server's worker; follow it with " +
          "GET /v2/evals/runs/{id}, whose results grow case by case."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v2/evals/runs")
      .setUrlParams(EvalRun.ListParams)
      .addSuccess(EvalRun.ListResponse)
      .annotate(OpenApi.Summary, "Evaluation runs, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/v2/evals/runs/:id")
      .setPath(IdPath)
      .addSuccess(EvalRun.View)
      .annotate(OpenApi.Summary, "One evaluation run: its accuracy, each case's result, and its regressions")
  )
  .add(
    HttpApiEndpoint.get("compare", "/v2/evals/compare")
      .setUrlParams(EvalRun.CompareParams)
      .addSuccess(EvalRun.CompareResponse)
      .annotate(OpenApi.Summary, "Two evaluation runs side by side: each one's accuracy, and each question in both")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v2/evals/runs/:id/cancel")
      .setPath(IdPath)
      .addSuccess(EvalRun.View)
      .annotate(OpenApi.Summary, "Cancel a queued or running evaluation run")
      .annotate(
        OpenApi.Description,
        "Works from any server process, before the next case; a finished run is 409 conflict."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Evaluations")
{}
