/**
 * Migration 7: the bytes of stored assets (`AssetStoreSql`), keyed by `Asset.storageKey`.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table of `AssetStoreSql`. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    // `text_pattern_ops` serves the prefix deletes (`key LIKE 'org/chats/chat/%'`) of a purged chat.
    yield* sql`CREATE TABLE ${name("asset_objects")} (
      key text NOT NULL,
      mime_type text NOT NULL,
      bytes bytea NOT NULL,
      CONSTRAINT ${name("asset_objects_pkey")} PRIMARY KEY (key)
    )`
    yield* sql`CREATE INDEX ${name("asset_objects_prefix_idx")} ON ${name("asset_objects")} (key text_pattern_ops)`
  })
