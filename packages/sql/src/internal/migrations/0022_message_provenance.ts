/**
 * Migration 22: how an assistant's answer was made (`chat_messages.provenance`, a JSON object:
 * the model, tokens, tool calls, library commit, semantic models and the client attributes' hash).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the column; messages stored before it have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("chat_messages"))} ADD COLUMN provenance jsonb`
  })
