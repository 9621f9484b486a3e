/**
 * Migration 28: audiences. What is made under a key with client attributes (chats, playbooks,
 * sandboxes, feedback) records the fingerprint of those attributes (`Audience` in core),
 * so that end users behind one member stay apart. Rows from before are of the audience without
 * attributes (`''`): their member reaches them, no key with attributes does.
 *
 * The chat counts (migration 12) are kept per creator and audience, as listings read them.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the columns, and keys the chat counts by audience too. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    for (const table of ["chats", "playbooks", "sandboxes", "feedback", "chat_counts"]) {
      yield* sql`ALTER TABLE ${name(table)} ADD COLUMN audience text NOT NULL DEFAULT ''`
    }
    yield* sql`ALTER TABLE ${name("chat_counts")} DROP CONSTRAINT ${name("chat_counts_pkey")}`
    yield* sql`ALTER TABLE ${name("chat_counts")}
      ADD CONSTRAINT ${name("chat_counts_pkey")} PRIMARY KEY (organization_id, creator_id, audience)`
    yield* sql`CREATE OR REPLACE FUNCTION ${name("chat_counts_keep")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO ${name("chat_counts")} AS c (organization_id, creator_id, audience, n)
            VALUES (NEW.organization_id, NEW.creator_id, NEW.audience, 1)
            ON CONFLICT (organization_id, creator_id, audience) DO UPDATE SET n = c.n + 1;
        ELSE
          UPDATE ${name("chat_counts")} SET n = n - 1
            WHERE organization_id = OLD.organization_id AND creator_id = OLD.creator_id
              AND audience = OLD.audience;
        END IF;
        RETURN NULL;
      END
    $$`
  })
