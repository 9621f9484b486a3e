/**
 * The `multipart/form-data` variant of `POST /v2/connectors`: a FILES connector made from the files
 * sent, one `files` part each (CSV, TSV, Excel, Parquet, JSON, NDJSON), with an optional `name` and
 * `access` (the JSON body's `access`, as JSON text). The platform streams each part to a temporary
 * file while the request lasts; the connector is loaded from there.
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Multipart from "@effect/platform/Multipart"
import * as Connector from "@sightline/core/Connector"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The most files one request sends.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_FILES = 20

const files = Multipart.FilesSchema.pipe(Schema.minItems(1), Schema.maxItems(MAX_FILES)).annotations({
  jsonSchema: { type: "array", items: { type: "string", format: "binary" }, minItems: 1, maxItems: MAX_FILES },
  description: "The files, a table each (a sheet each for a workbook): .csv, .tsv, .xlsx, .parquet, .json, .ndjson"
})

/**
 * The form's fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorFormFields = Schema.Struct({
  name: Schema.optional(Connector.ConnectorName),
  /** `{is_public, grants}` as JSON text, as the JSON body's `access`. */
  access: Schema.optional(Schema.parseJson(Connector.SetConnectorAccess)),
  files
})
export type ConnectorFormFields = typeof ConnectorFormFields.Type

/**
 * The multipart body of `POST /v2/connectors/{id}/files`: more files.
 *
 * @since 0.1.0
 * @category constants
 */
export const FilesForm = HttpApiSchema.Multipart(Schema.Struct({ files }), {
  maxParts: Option.some(MAX_FILES),
  maxFieldSize: 64 * 1024
})

/**
 * The multipart body of `POST /v2/connectors`.
 *
 * @since 0.1.0
 * @category constants
 */
export const ConnectorForm = HttpApiSchema.Multipart(ConnectorFormFields, {
  maxParts: Option.some(MAX_FILES + 2),
  maxFieldSize: 64 * 1024
})

/**
 * A connector request body: multipart (files) or JSON (a configuration).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorRequestBody = Schema.Union(
  ConnectorForm,
  Connector.CreateConnectorRequest.annotations({ parseOptions: { onExcessProperty: "error" } })
)
