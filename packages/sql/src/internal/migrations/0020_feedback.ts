/**
 * Migration 20: members' ratings of assistant messages (`feedback`), one per member and message,
 * with what they rated.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table, its one-rating-per-member key and its listing index. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (table: string) => sql(prefix.name(table))
    yield* sql`CREATE TABLE ${name("feedback")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      chat_id uuid NOT NULL,
      message_id uuid NOT NULL,
      member_id uuid NOT NULL,
      rating text NOT NULL,
      comment text,
      question text NOT NULL,
      answer text NOT NULL,
      model text NOT NULL,
      connector_id integer,
      sql text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("feedback_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("feedback_member_message_key")} UNIQUE (organization_id, message_id, member_id)
    )`
    yield* sql`CREATE INDEX ${name("feedback_updated_idx")} ON ${name("feedback")} (organization_id, updated_at, id)`
  })
