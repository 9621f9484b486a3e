/**
 * Migration 21: the evaluation check of a change's current revision (`changes.evaluation`, a JSON
 * object the check's job rewrites as it moves), and the change an evaluation run was asked for
 * (`eval_runs.change_id`: such runs are compared with no other).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds both columns; changes and runs from before have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("changes"))} ADD COLUMN evaluation jsonb`
    yield* sql`ALTER TABLE ${sql(prefix.name("eval_runs"))} ADD COLUMN change_id uuid`
  })
