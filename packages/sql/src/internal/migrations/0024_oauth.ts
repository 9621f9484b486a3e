/**
 * Migration 24: OAuth for agents. A grant is a session bound to a client (`sessions.client_id`,
 * `scopes`, and while its code is unexchanged `code_challenge` and `redirect_uri`); registered
 * clients are kept in `oauth_clients`.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the grant columns (browser sessions leave them NULL) and the clients' table. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`ALTER TABLE ${name("sessions")} ADD COLUMN client_id text`
    yield* sql`ALTER TABLE ${name("sessions")} ADD COLUMN scopes jsonb`
    yield* sql`ALTER TABLE ${name("sessions")} ADD COLUMN code_challenge text`
    yield* sql`ALTER TABLE ${name("sessions")} ADD COLUMN redirect_uri text`
    yield* sql`CREATE INDEX ${name("sessions_client_idx")} ON ${name("sessions")} (organization_id, client_id)
      WHERE client_id IS NOT NULL`
    yield* sql`CREATE TABLE ${name("oauth_clients")} (
      client_id text PRIMARY KEY,
      client_name text NOT NULL,
      redirect_uris jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  })
