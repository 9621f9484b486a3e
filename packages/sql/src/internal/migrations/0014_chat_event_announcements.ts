/**
 * Migration 14: the chat event log announces its own appends. Every batch stored in
 * `<prefix>chat_events` notifies the channel `<prefix>chat_events` with `a <chat id> <last id>`,
 * the `Appended` payload of `ChatEventBusPg` (its `encode`), from a trigger in the writing
 * transaction: PostgreSQL sends it at commit, exactly when the batch can be read, and a run's batch
 * costs one statement instead of a second one (a `pg_notify`) after it. Every writer of the log is
 * covered, a run's own batches and its end as much as a cancel's or a sweep's `done`.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the trigger that announces each stored batch. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    // The channel is a literal in the function's body (a trigger takes no parameters); the
    // prefix is checked to be a plain identifier (`TablePrefix`), so it cannot break the quoting.
    yield* sql`CREATE FUNCTION ${name("chat_events_announce")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify(${sql.literal(`'${prefix.name("chat_events")}'`)}, 'a ' || NEW.chat_id || ' ' || NEW.last_id);
        RETURN NULL;
      END
    $$`
    yield* sql`CREATE TRIGGER ${name("chat_events_announce_trigger")} AFTER INSERT ON ${name("chat_events")}
      FOR EACH ROW EXECUTE FUNCTION ${name("chat_events_announce")}()`
  })
