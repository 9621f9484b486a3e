/**
 * The Connectors group of /v2. Connector ids are integers; confidential settings are write-only.
 *
 * @since 0.1.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Connector from "@sightline/core/Connector"
import { ConnectorId } from "@sightline/core/Ids"
import * as Schema from "effect/Schema"
import { Authentication } from "./Authentication.js"
import { ConnectorRequestBody, FilesForm } from "./ConnectorForm.js"
import { strict } from "./internal/strict.js"

const IdPath = Schema.Struct({ id: Schema.compose(Schema.NumberFromString, ConnectorId) })

/**
 * The Connectors operations.
 *
 * @since 0.1.0
 * @category models
 */
export class ConnectorsApi extends HttpApiGroup.make("connectors")
  .add(
    HttpApiEndpoint.get("list", "/v2/connectors")
      .addSuccess(Connector.ListConnectorsResponse)
      .annotate(OpenApi.Summary, "List the connectors the caller can use (connector:read)")
  )
  .add(
    HttpApiEndpoint.post("create", "/v2/connectors")
      .setPayload(ConnectorRequestBody)
      .addSuccess(Connector.Connector, { status: 201 })
      .annotate(
        OpenApi.Summary,
        "Create a connector from a configuration (JSON), or a FILES connector from files (multipart); the caller owns it (connector:write)"
      )
  )
  .add(
    HttpApiEndpoint.get("types", "/v2/connectors/types")
      .addSuccess(Connector.ConnectorTypesResponse)
      .annotate(OpenApi.Summary, "Connector types and their settings")
  )
  .add(
    HttpApiEndpoint.post("test", "/v2/connectors/test")
      .setPayload(strict(Connector.TestConnectorRequest))
      .addSuccess(Connector.TestConnectorResponse)
      .annotate(OpenApi.Summary, "Try a configuration; a failed connection is still 200 with success false")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v2/connectors/:id")
      .setPath(IdPath)
      .setPayload(strict(Connector.UpdateConnectorRequest))
      .addSuccess(Connector.Connector)
      .annotate(OpenApi.Summary, "Update a connector; empty confidential settings keep the stored ones")
  )
  .add(
    HttpApiEndpoint.del("delete", "/v2/connectors/:id")
      .setPath(IdPath)
      .addSuccess(Connector.DeleteConnectorResponse)
      .annotate(OpenApi.Summary, "Delete a connector (owner)")
  )
  .add(
    HttpApiEndpoint.get("getAccess", "/v2/connectors/:id/access")
      .setPath(IdPath)
      .addSuccess(Connector.ConnectorAccess)
      .annotate(OpenApi.Summary, "Who may use the connector")
  )
  .add(
    HttpApiEndpoint.put("putAccess", "/v2/connectors/:id/access")
      .setPath(IdPath)
      .setPayload(strict(Connector.SetConnectorAccess))
      .addSuccess(Connector.ConnectorAccess)
      .annotate(OpenApi.Summary, "Replace the connector's access at once; the caller's owner grant is kept")
  )
  .add(
    HttpApiEndpoint.get("files", "/v2/connectors/:id/files")
      .setPath(IdPath)
      .addSuccess(Connector.FilesResponse)
      .annotate(OpenApi.Summary, "The tables of a FILES connector, with their columns")
  )
  .add(
    HttpApiEndpoint.post("addFiles", "/v2/connectors/:id/files")
      .setPath(IdPath)
      .setPayload(FilesForm)
      .addSuccess(Connector.FilesResponse)
      .annotate(
        OpenApi.Summary,
        "Add files to a FILES connector (multipart); a file whose table exists replaces it (editor, connector:write)"
      )
  )
  .add(
    HttpApiEndpoint.del("removeTable", "/v2/connectors/:id/files/:table")
      .setPath(Schema.Struct({ ...IdPath.fields, table: Schema.String }))
      .addSuccess(Connector.FilesResponse)
      .annotate(OpenApi.Summary, "Remove a table of a FILES connector (editor, connector:write)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Connectors")
{}
