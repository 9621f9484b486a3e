/**
 * Migration 9: chat channels (`ChatChannelRepoSql`), the delivery targets an admin registers.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table of `ChatChannelRepoSql`; a channel goes with its organization. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("chat_channels")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      name text NOT NULL,
      webhook_url text NOT NULL,
      created_by uuid NOT NULL,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("chat_channels_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("chat_channels_organization_fkey")} FOREIGN KEY (organization_id)
        REFERENCES ${name("organizations")} (id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("chat_channels_list_idx")} ON ${
      name("chat_channels")
    } (organization_id, created_at, id)`
  })
