/**
 * Migration 5: the runtime: sandboxes and their executions, agents and their runs, apps, and the
 * job queue that several server processes share.
 *
 * Every name goes through the prefix and stays within 33 characters, so that a prefixed name (the
 * prefix is at most 30) never passes PostgreSQL's 63-byte identifier limit.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the tables of `SandboxRepoSql`, `ExecutionRepoSql`, `AgentRepoSql`, `AppRepoSql` and `JobQueueSql`. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))

    // A sandbox hangs off the member who started it: a hard delete of the member erases it, and its
    // executions with it. `chat_id` has no foreign key: the chat may be stored later, or deleted.
    yield* sql`CREATE TABLE ${name("sandboxes")} (
      sandbox_id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      member_id uuid NOT NULL,
      chat_id uuid,
      status text NOT NULL,
      started_at timestamptz NOT NULL,
      released_at timestamptz,
      last_seen_at timestamptz,
      CONSTRAINT ${name("sandboxes_pkey")} PRIMARY KEY (sandbox_id),
      CONSTRAINT ${name("sandboxes_organization_id_key")} UNIQUE (organization_id, sandbox_id),
      CONSTRAINT ${name("sandboxes_member_fkey")} FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE,
      CONSTRAINT ${name("sandboxes_status_check")} CHECK (status IN ('running', 'stopped'))
    )`
    // Listings are newest `started_at` first, ties by id, filtered by status and/or member: one index
    // per filter (the member one also serves member + status: a member has few sandboxes).
    yield* sql`CREATE INDEX ${name("sandboxes_started_idx")} ON ${
      name("sandboxes")
    } (organization_id, started_at, sandbox_id)`
    yield* sql`CREATE INDEX ${name("sandboxes_status_started_idx")} ON ${
      name("sandboxes")
    } (organization_id, status, started_at, sandbox_id)`
    yield* sql`CREATE INDEX ${name("sandboxes_member_started_idx")} ON ${
      name("sandboxes")
    } (organization_id, member_id, started_at, sandbox_id)`
    // A member id determines the organization: without saying so, the planner multiplies the two
    // selectivities, expects a few rows, and sorts them instead of reading the index in order.
    yield* sql`CREATE STATISTICS ${name("sandboxes_member_stats")} (dependencies)
      ON organization_id, member_id FROM ${name("sandboxes")}`

    // Execution ids are opaque strings that core orders bytewise: `COLLATE "C"` on the column makes
    // every comparison and the index agree with it. Executions outlive a stopped sandbox, and go
    // with a deleted one.
    yield* sql`CREATE TABLE ${name("executions")} (
      id text COLLATE "C" NOT NULL,
      organization_id uuid NOT NULL,
      sandbox_id uuid NOT NULL,
      kind text NOT NULL,
      source text NOT NULL,
      input text NOT NULL,
      output_preview text NOT NULL,
      error text,
      duration_ms integer NOT NULL CHECK (duration_ms >= 0),
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("executions_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("executions_sandbox_fkey")} FOREIGN KEY (organization_id, sandbox_id)
        REFERENCES ${name("sandboxes")} (organization_id, sandbox_id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("executions_sandbox_created_idx")} ON ${
      name("executions")
    } (organization_id, sandbox_id, created_at, id)`
    // A sandbox id determines its organization (see `sandboxes_member_stats`).
    yield* sql`CREATE STATISTICS ${name("executions_sandbox_stats")} (dependencies)
      ON organization_id, sandbox_id FROM ${name("executions")}`
    // The purge deletes across organizations by age alone. A BRIN index: rows arrive in about time
    // order, so it is tiny and cheap to maintain, and since it cannot return rows in order the
    // planner never prefers it for a sandbox's page (walking a b-tree on `created_at` backwards and
    // filtering by sandbox looks cheap to the planner, and is slow for a quiet sandbox).
    yield* sql`CREATE INDEX ${name("executions_created_brin")} ON ${name("executions")} USING brin (created_at)`

    // Webhook trigger ids are unique across every organization: the webhook finds its agent by it.
    yield* sql`CREATE TABLE ${name("agents")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      owner_id uuid NOT NULL,
      name text NOT NULL,
      prompt text NOT NULL,
      connector_ids integer[] NOT NULL,
      tools text[],
      cron_strings text[] NOT NULL,
      email_addresses text[] NOT NULL,
      chat_channel_id text,
      webhook_trigger_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("agents_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("agents_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("agents_webhook_trigger_id_key")} UNIQUE (webhook_trigger_id),
      CONSTRAINT ${name("agents_owner_fkey")} FOREIGN KEY (organization_id, owner_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("agents_created_idx")} ON ${name("agents")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("agents_owner_idx")} ON ${name("agents")} (organization_id, owner_id)`

    // Runs go with their agent.
    yield* sql`CREATE TABLE ${name("agent_runs")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      agent_id uuid NOT NULL,
      trigger_source text NOT NULL,
      status text NOT NULL,
      chat_id uuid,
      payload jsonb,
      error text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      CONSTRAINT ${name("agent_runs_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("agent_runs_agent_fkey")} FOREIGN KEY (organization_id, agent_id)
        REFERENCES ${name("agents")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("agent_runs_agent_created_idx")} ON ${
      name("agent_runs")
    } (organization_id, agent_id, created_at, id)`
    yield* sql`CREATE STATISTICS ${name("agent_runs_agent_stats")} (dependencies)
      ON organization_id, agent_id FROM ${name("agent_runs")}`

    // `files` maps paths to contents as one `jsonb` object: an app is read and written whole.
    yield* sql`CREATE TABLE ${name("apps")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      owner_id uuid NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      code text NOT NULL,
      files jsonb NOT NULL,
      data_sources integer[] NOT NULL,
      chat_id uuid,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("apps_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("apps_organization_id_key")} UNIQUE (organization_id, id),
      CONSTRAINT ${name("apps_owner_fkey")} FOREIGN KEY (organization_id, owner_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("apps_created_idx")} ON ${name("apps")} (organization_id, created_at, id)`
    yield* sql`CREATE INDEX ${name("apps_owner_idx")} ON ${name("apps")} (organization_id, owner_id)`

    // The job queue. `dedupe_key` is unique per organization for ever (NULLs are distinct, so jobs
    // without one never clash): a schedule that several processes enqueue fires once.
    yield* sql`CREATE TABLE ${name("jobs")} (
      id uuid NOT NULL,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL,
      dedupe_key text,
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL,
      max_attempts integer NOT NULL,
      locked_by text,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      CONSTRAINT ${name("jobs_pkey")} PRIMARY KEY (id),
      CONSTRAINT ${name("jobs_dedupe_key")} UNIQUE (organization_id, dedupe_key),
      CONSTRAINT ${name("jobs_status_check")} CHECK (status IN ('pending', 'running', 'completed', 'failed')),
      CONSTRAINT ${name("jobs_attempts_check")} CHECK (attempts >= 0 AND max_attempts > 0),
      CONSTRAINT ${name("jobs_lease_check")} CHECK ((status = 'running') = (locked_by IS NOT NULL)
        AND (locked_by IS NULL) = (locked_until IS NULL))
    )`
    // What a claim scans: the unfinished jobs of a kind in claim order. Finished jobs (the bulk of
    // the table over time) stay out of it.
    yield* sql`CREATE INDEX ${name("jobs_claim_idx")} ON ${name("jobs")} (kind, run_at, created_at, id)
      WHERE status IN ('pending', 'running')`
    // Leases that ran out on their last attempt are failed by the next claim of their kind.
    yield* sql`CREATE INDEX ${name("jobs_lease_idx")} ON ${name("jobs")} (kind, locked_until)
      WHERE status = 'running'`
  })
