/**
 * Migration 19: evaluation runs (`eval_runs`), each with its case results as one `jsonb` array:
 * a run is written whole as each case is judged.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table and its listing indexes. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (table: string) => sql(prefix.name(table))
    yield* sql`CREATE TABLE ${name("eval_runs")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      set text NOT NULL,
      connector_id integer NOT NULL,
      model text NOT NULL,
      commit text,
      status text NOT NULL,
      created_by uuid NOT NULL,
      cases_total integer NOT NULL,
      results jsonb NOT NULL,
      accuracy double precision,
      regressions jsonb,
      compared_with uuid,
      error text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      CONSTRAINT ${name("eval_runs_pkey")} PRIMARY KEY (id)
    )`
    yield* sql`CREATE INDEX ${name("eval_runs_created_idx")} ON ${name("eval_runs")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("eval_runs_set_idx")} ON ${
      name("eval_runs")
    } (organization_id, set, connector_id, model, created_at)`
  })
