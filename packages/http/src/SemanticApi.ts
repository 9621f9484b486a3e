/**
 * The Semantic group of /v2: the metrics API. A semantic query names metrics, dimensions, filters
 * and a period of a connector's semantic model; the server compiles it (`compile` returns the SQL
 * without running it) and runs it read-only with the caller's row-level security (`query`).
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConnectorId } from "@sightline/core/Ids"
import * as SemanticQuery from "@sightline/core/SemanticQuery"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: Schema.compose(Schema.NumberFromString, ConnectorId) })

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
    HttpApiEndpoint.post("compile", "/v2/semantic/compile")
      .setPayload(strict(SemanticQuery.SemanticQueryRequest))
      .addSuccess(SemanticQuery.CompiledQuery)
      .annotate(
        OpenApi.Summary,
        "Compile a semantic query to the SQL it would run, with its reading, without running it"
      )
  )
  .add(
    HttpApiEndpoint.get("model", "/v2/connectors/:id/semantic-model")
      .setPath(IdPath)
      .addSuccess(HttpApiSchema.Text({ contentType: "application/yaml" }))
      .annotate(
        OpenApi.Summary,
        "The semantic model that governs a connector, as YAML: the library's, or one derived from its schema"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Semantic")
{}
