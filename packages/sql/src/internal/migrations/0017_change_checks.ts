/**
 * Migration 17: a change keeps the checks of its current revision (`checks`, a JSON array of
 * `{name, status, messages}`), written at filing and again at merge.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the checks column; changes filed before it have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("changes"))} ADD COLUMN checks jsonb NOT NULL DEFAULT '[]'`
  })
