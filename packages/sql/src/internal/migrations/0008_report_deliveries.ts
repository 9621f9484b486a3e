/**
 * Migration 8: each report keeps the outcome of its delivery to every target (`Report.deliveries`).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds `deliveries` to the reports; reports stored before it had none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("playbook_reports"))} ADD COLUMN deliveries jsonb NOT NULL DEFAULT '[]'`
  })
