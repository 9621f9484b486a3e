/**
 * Migration 33: a playbook may deliver a dashboard (`playbooks.dashboard`, its name) instead of
 * asking its prompt. Playbooks stored before deliver their prompt's report, as they did.
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
    yield* sql`ALTER TABLE ${sql(prefix.name("playbooks"))} ADD COLUMN dashboard text`
  })
