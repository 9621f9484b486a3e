/**
 * Migration 25: outbound events. An organization's `webhook_endpoints`, the `outbound_events` they
 * were sent (each body stored as the exact text that is signed), and `webhook_attempts`, the
 * delivery log. An endpoint's attempts go with it; events stay for replay until their organization
 * goes.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the three tables. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE TABLE ${name("webhook_endpoints")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      event_types text[] NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      disabled_at timestamptz,
      disabled_reason text,
      created_by uuid NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX ${name("webhook_endpoints_list_idx")} ON ${
      name("webhook_endpoints")
    } (organization_id, created_at, id)`
    yield* sql`CREATE TABLE ${name("outbound_events")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      type text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE TABLE ${name("webhook_attempts")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      endpoint_id uuid NOT NULL REFERENCES ${name("webhook_endpoints")} (id) ON DELETE CASCADE,
      event_id uuid NOT NULL REFERENCES ${name("outbound_events")} (id) ON DELETE CASCADE,
      event_type text NOT NULL,
      attempt integer NOT NULL,
      succeeded boolean NOT NULL,
      response_status integer,
      latency_ms integer NOT NULL,
      error text,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX ${name("webhook_attempts_log_idx")} ON ${
      name("webhook_attempts")
    } (endpoint_id, created_at DESC, id DESC)`
  })
