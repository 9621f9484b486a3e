/**
 * Migration 13: sign-in for people. Password hashes, one-time sign-in links and browser sessions
 * (each goes with its member), the deployment's session signing key, and an index that finds the
 * members of every organization by e-mail address (sign-in knows an address before an organization).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the sign-in tables. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    yield* sql`CREATE INDEX ${name("members_email_idx")} ON ${name("members")} (lower(email))`
    yield* sql`CREATE TABLE ${name("member_passwords")} (
      organization_id uuid NOT NULL,
      member_id uuid NOT NULL,
      hash text NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, member_id),
      FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE TABLE ${name("sign_in_links")} (
      token_hash text PRIMARY KEY,
      organization_id uuid NOT NULL,
      member_id uuid NOT NULL,
      purpose text NOT NULL CHECK (purpose IN ('invite', 'reset')),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL,
      FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("sign_in_links_member_idx")} ON ${name("sign_in_links")}
      (organization_id, member_id) WHERE used_at IS NULL`
    yield* sql`CREATE TABLE ${name("sessions")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      member_id uuid NOT NULL,
      refresh_hash text NOT NULL,
      previous_hash text,
      rotated_at timestamptz,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL,
      FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE UNIQUE INDEX ${name("sessions_refresh_key")} ON ${name("sessions")} (refresh_hash)`
    yield* sql`CREATE INDEX ${name("sessions_previous_idx")} ON ${name("sessions")} (previous_hash)`
    yield* sql`CREATE INDEX ${name("sessions_member_idx")} ON ${name("sessions")} (organization_id, member_id)
      WHERE revoked_at IS NULL`
    yield* sql`CREATE TABLE ${name("server_keys")} (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  })
