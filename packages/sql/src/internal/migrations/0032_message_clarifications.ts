/**
 * Migration 32: an answer that asked instead of answering keeps its clarification
 * (`chat_messages.clarification`, JSON: the question and its choices), so that a later request can
 * answer it by a choice's id. Messages stored before have none.
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
    yield* sql`ALTER TABLE ${sql(prefix.name("chat_messages"))} ADD COLUMN clarification jsonb`
  })
