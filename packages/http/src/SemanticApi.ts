/**
 * The Semantic group of /v2: the metrics API. A semantic query names metrics, dimensions, filters
 * and a period of a connector's semantic model; the server compiles it (`compile` returns the SQL
 * without running it) and runs it read-only with the caller's row-level security (`query`). An
 * investigation (`investigate`) is a plan of such queries: where a metric changed, and by what.
 * An import (`import`) reads another semantic layer's definitions (dbt MetricFlow, Cube, LookML,
 * OSI) as a model.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConnectorId } from "@sightline/core/Ids"
import * as Investigation from "@sightline/core/Investigation"
import * as SemanticImports from "@sightline/core/SemanticImports"
import * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"
import { ImportRequestBody } from "./SemanticImportForm.js"

const IdPath = Schema.Struct({ id: Schema.compose(Schema.NumberFromString, ConnectorId) })

/**
 * How a model is written: Sightline's YAML (the library file), or an OSI document.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelFormat = Schema.Struct({ format: Schema.optional(Schema.Literal("yaml", "osi")) })

/**
 * The Semantic operations.
 *
 * @since 0.1.0
 * @category models
 */
export class SemanticApi extends HttpApiGroup.make("semantic")
  .add(
    HttpApiEndpoint.post("query", "/v2/semantic/query")
      .setPayload(strict(SemanticQuery.SemanticQueryRequest))
      .addSuccess(SemanticQuery.SemanticQueryResult)
      .annotate(
        OpenApi.Summary,
        "Run a semantic query on a connector's model: read-only, with the caller's row-level security"
      )
  )
  .add(
    HttpApiEndpoint.post("verified", "/v2/semantic/verified-query")
      .setPayload(strict(SemanticQuery.VerifiedQueryRequest))
      .addSuccess(SemanticQuery.VerifiedQueryResult)
      .annotate(
        OpenApi.Summary,
        "Run a verified query of a connector's library model with values for its parameters: read-only, with the " +
          "caller's row-level security"
      )
  )
  .add(
    HttpApiEndpoint.post("investigate", "/v2/semantic/investigate")
      .setPayload(strict(Investigation.InvestigationRequest))
      .addSuccess(Investigation.Findings)
      .annotate(
        OpenApi.Summary,
        "Find where a metric changed between two periods, or where its total comes from: each step a semantic query " +
          "with the caller's row-level security, the parts of the change by each driver, and a summary that says where"
      )
  )
  .add(
    HttpApiEndpoint.post("compile", "/v2/semantic/compile")
      .setPayload(strict(SemanticQuery.SemanticQueryRequest))
      .addSuccess(SemanticQuery.CompiledQuery)
      .annotate(
        OpenApi.Summary,
        "Compile a semantic query to the SQL it would run, with its reading, without running it"
      )
  )
  .add(
    HttpApiEndpoint.post("import", "/v2/semantic/import")
      .setPayload(ImportRequestBody)
      .addSuccess(SemanticImports.ImportResult)
      .annotate(
        OpenApi.Summary,
        "Import dbt MetricFlow, Cube, LookML or OSI definitions as a connector's semantic model: the model's YAML and a report of every " +
          "construct (imported, approximated or refused, with its file and line); with file_change, filed as a " +
          "library change whose checks probe every metric on the connector"
      )
  )
  .add(
    HttpApiEndpoint.get("model", "/v2/connectors/:id/semantic-model")
      .setPath(IdPath)
      .setUrlParams(ModelFormat)
      .addSuccess(HttpApiSchema.Text({ contentType: "application/yaml" }))
      .annotate(
        OpenApi.Summary,
        "The semantic model that governs a connector, as YAML: the library's, or one derived from its schema; with " +
          "format=osi, as an Apache Ossie (OSI) document for the tools that read one"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Semantic")
{}
