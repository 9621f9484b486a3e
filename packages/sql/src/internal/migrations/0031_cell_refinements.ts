/**
 * Migration 31: a cell keeps the semantic query it ran (`semantic_query`, JSON) and the earlier cell
 * whose query it refined (`based_on_cell_id`), so that a follow-up can refine an answer's query
 * without restating it. Cells stored before have neither.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the two nullable columns. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("chat_cells"))}
      ADD COLUMN semantic_query jsonb, ADD COLUMN based_on_cell_id uuid`
  })
