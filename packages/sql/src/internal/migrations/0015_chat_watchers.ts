/**
 * Migration 15: a chat's appends are announced only while some process follows it. Each process
 * that wants a chat's appends (a follower's tail, `ChatEventBusPg.subscribe`) holds a row in
 * `<prefix>chat_watchers` until it stops following or the row expires (a process that died stops
 * being announced to), and the trigger of migration 14 notifies only for a chat with a live row.
 *
 * Most answers have no follower. Their appends used to notify every listening process at each
 * commit, the answer's own process included, which woke both and delayed the asker's `done` by
 * about a millisecond (`pnpm bench:chat`).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the watchers and makes the announcing trigger ask them. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    // No foreign key to the chat: a row lives no longer than its process renews it, and a deleted
    // chat has no appends to announce.
    yield* sql`CREATE TABLE ${name("chat_watchers")} (
      chat_id uuid NOT NULL,
      listener uuid NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (chat_id, listener)
    )`
    // As in migration 14, the names are literals of the body; the prefix is a plain identifier.
    yield* sql`CREATE OR REPLACE FUNCTION ${name("chat_events_announce")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT FROM ${name("chat_watchers")} WHERE chat_id = NEW.chat_id AND expires_at > now()) THEN
          PERFORM pg_notify(${
      sql.literal(`'${prefix.name("chat_events")}'`)
    }, 'a ' || NEW.chat_id || ' ' || NEW.last_id);
        END IF;
        RETURN NULL;
      END
    $$`
  })
