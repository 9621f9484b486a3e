/**
 * Migration 12: the number of chats per organization and creator, kept by a trigger in the same
 * transaction as every insert and delete of a chat, so that an unfiltered `GET /v2/chats` reads its
 * `total_count` from one row instead of counting the caller's chats (7× slower at 100k than at 1k).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the counts, their trigger, and fills them from the chats already stored. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("chat_counts")} (
      organization_id uuid NOT NULL,
      creator_id uuid NOT NULL,
      n bigint NOT NULL,
      CONSTRAINT ${name("chat_counts_pkey")} PRIMARY KEY (organization_id, creator_id)
    )`
    yield* sql`CREATE FUNCTION ${name("chat_counts_keep")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO ${name("chat_counts")} AS c (organization_id, creator_id, n)
            VALUES (NEW.organization_id, NEW.creator_id, 1)
            ON CONFLICT (organization_id, creator_id) DO UPDATE SET n = c.n + 1;
        ELSE
          UPDATE ${name("chat_counts")} SET n = n - 1
            WHERE organization_id = OLD.organization_id AND creator_id = OLD.creator_id;
        END IF;
        RETURN NULL;
      END
    $$`
    yield* sql`CREATE TRIGGER ${name("chats_count_trigger")} AFTER INSERT OR DELETE ON ${name("chats")}
      FOR EACH ROW EXECUTE FUNCTION ${name("chat_counts_keep")}()`
    yield* sql`INSERT INTO ${name("chat_counts")} (organization_id, creator_id, n)
      SELECT organization_id, creator_id, count(*) FROM ${name("chats")} GROUP BY organization_id, creator_id`
  })
