/**
 * Migration 30: a chat keeps the connectors of its latest run (`chats.connector_ids`), so that a
 * follow-up that names none answers from them. Chats from before have none, as if their runs had
 * named none: a follow-up there names its connectors once, and the chat keeps them from then on.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the column. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("chats"))} ADD COLUMN connector_ids integer[]`
  })
