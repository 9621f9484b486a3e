/**
 * Migration 23: an organization's settings (`organizations.settings`, a JSON object of the settings
 * its admins changed; the others read as their defaults).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the column; every organization starts with no setting changed. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("organizations"))} ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'`
  })
