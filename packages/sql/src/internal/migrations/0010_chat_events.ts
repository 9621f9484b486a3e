/**
 * Migration 10: the chat event log (`ChatRepoSql.appendEvents`, `readEvents`): every event of every
 * run, in batches as the run's writer stored them, purged with its chat.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/**
 * One row per stored batch: the events `first_id`..`last_id` (a JSON array, in order) of the run
 * whose first event is `run_start`. The key on `(chat_id, first_id)` makes two writers of the same
 * ids collide, so the log never holds an id twice.
 */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("chat_events")} (
      organization_id uuid NOT NULL,
      chat_id uuid NOT NULL,
      first_id integer NOT NULL,
      last_id integer NOT NULL,
      run_start integer NOT NULL,
      events jsonb NOT NULL,
      CONSTRAINT ${name("chat_events_pkey")} PRIMARY KEY (chat_id, first_id),
      CONSTRAINT ${
      name("chat_events_ids_check")
    } CHECK (run_start >= 1 AND first_id >= run_start AND last_id >= first_id),
      CONSTRAINT ${name("chat_events_chat_fkey")} FOREIGN KEY (organization_id, chat_id)
        REFERENCES ${name("chats")} (organization_id, id) ON DELETE CASCADE
    )`
  })
