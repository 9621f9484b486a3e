/**
 * Core's `AssetStore` over SQL: asset bytes in one table, on PostgreSQL and PGlite alike, so a
 * deployment needs no blob service and every process serves every asset.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { AssetStore } from "@sightline/core/AssetStore"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { TablePrefix } from "./TablePrefix.js"

interface Row {
  readonly mime_type: string
  readonly bytes: Uint8Array
}

// LIKE's wildcards in a key prefix match themselves.
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/**
 * Builds the store over the `SqlClient` and table prefix in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table = sql((yield* TablePrefix).name("asset_objects"))
  return AssetStore.of({
    put: (key, object) =>
      sql`INSERT INTO ${table} (key, mime_type, bytes) VALUES (${key}, ${object.mimeType}, ${object.bytes})
        ON CONFLICT (key) DO UPDATE SET mime_type = EXCLUDED.mime_type, bytes = EXCLUDED.bytes`.pipe(
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("AssetStoreSql.put")
      ),
    get: (key) =>
      sql<Row>`SELECT mime_type, bytes FROM ${table} WHERE key = ${key}`.pipe(
        Effect.map((rows) =>
          Option.map(Option.fromNullable(rows[0]), (row) => ({
            mimeType: row.mime_type,
            // pg answers a Buffer, PGlite a Uint8Array: both are views of the bytes.
            bytes: new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength)
          }))
        ),
        Effect.orDie,
        Effect.withSpan("AssetStoreSql.get")
      ),
    deletePrefix: (prefix) =>
      sql`DELETE FROM ${table} WHERE key LIKE ${likePrefix(prefix)}`.pipe(
        Effect.asVoid,
        Effect.orDie,
        Effect.withSpan("AssetStoreSql.deletePrefix")
      )
  })
})

/**
 * The store over the `SqlClient` and `TablePrefix` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AssetStore, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(AssetStore, make)
