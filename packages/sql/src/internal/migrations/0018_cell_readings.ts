/**
 * Migration 18: a cell keeps how a semantic query read the question (`reading`) and, for a result
 * computed from a reviewed definition, where it came from (`trusted_source`), both as JSON.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the two nullable columns (cells stored before have neither). */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("chat_cells"))} ADD COLUMN reading jsonb, ADD COLUMN trusted_source jsonb`
  })
