/**
 * Migration 29: every refresh hash a renewal replaced, with its session. A session kept only the one
 * replaced last, so a token two renewals old (or an OAuth code replayed after the grant's first
 * refresh) read as unknown instead of as a copy, and the session or grant lived on.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table; the hashes replaced before are the sessions' `previous_hash`, still read. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("spent_refresh_hashes")} (
      hash text PRIMARY KEY,
      session_id uuid NOT NULL REFERENCES ${name("sessions")} (id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("spent_refresh_hashes_session_idx")} ON ${name("spent_refresh_hashes")} (session_id)`
  })
