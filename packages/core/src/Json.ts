/**
 * JSON values: what a `jsonb` column stores and `JSON.stringify` writes, as a type and a schema.
 * Audit details, job payloads and run payloads are JSON.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/**
 * A JSON value (finite numbers only, so that every value survives a round trip through `jsonb`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Json: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.JsonNumber,
  Schema.String,
  Schema.Array(Schema.suspend(() => Json)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => Json) })
).annotations({ identifier: "Json" })

/**
 * A JSON object (not an array, not a scalar).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonObject = Schema.Record({ key: Schema.String, value: Json })
export type JsonObject = typeof JsonObject.Type
