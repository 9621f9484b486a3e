/**
 * Migration 27: sandboxes from any process. `sandbox_runners` registers the server processes that
 * run sandboxes (where the others reach them, and their heartbeat); a sandbox keeps its runner, the
 * library commit mounted in it, when it was last used (the idle timeout counts from it, whichever
 * process served it) and why it stopped when nobody asked.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the registry and adds the columns; sandboxes from before have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("sandbox_runners")} (
      id text PRIMARY KEY,
      url text NOT NULL,
      draining boolean NOT NULL,
      last_seen_at timestamptz NOT NULL
    )`
    yield* sql`ALTER TABLE ${name("sandboxes")}
      ADD COLUMN runner_id text,
      ADD COLUMN library_ref text,
      ADD COLUMN last_used_at timestamptz,
      ADD COLUMN stop_reason text`
    // Placement counts the running sandboxes of each runner; the heartbeat and the drain address them.
    yield* sql`CREATE INDEX ${name("sandboxes_runner_idx")} ON ${
      name("sandboxes")
    } (runner_id) WHERE status = 'running'`
  })
