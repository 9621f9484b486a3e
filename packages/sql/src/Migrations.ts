/**
 * Sightline's schema, as migrations bundled in the package (no files are read at run time, so the
 * package works from any bundle) and run by `@effect/sql`'s Migrator.
 *
 * Every name goes through the `TablePrefix`, including the Migrator's own bookkeeping table
 * (`<prefix>migrations`), so that two prefixes in one database never see each other's migrations.
 *
 * @since 0.1.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { migration as migration0002Access } from "./internal/migrations/0002_access.js"
import { migration as migration0003Content } from "./internal/migrations/0003_content.js"
import { migration as migration0004 } from "./internal/migrations/0004_library.js"
import { migration as migration0005Runtime } from "./internal/migrations/0005_runtime.js"
import { migration as migration0006RateLimits } from "./internal/migrations/0006_rate_limits.js"
import { migration as migration0007AssetObjects } from "./internal/migrations/0007_asset_objects.js"
import { migration as migration0008ReportDeliveries } from "./internal/migrations/0008_report_deliveries.js"
import { migration as migration0009ChatChannels } from "./internal/migrations/0009_chat_channels.js"
import { migration as migration0010ChatEvents } from "./internal/migrations/0010_chat_events.js"
import { migration as migration0011RateLimitLeases } from "./internal/migrations/0011_rate_limit_leases.js"
import { migration as migration0012ChatCounts } from "./internal/migrations/0012_chat_counts.js"
import { migration as migration0013Sessions } from "./internal/migrations/0013_sessions.js"
import { migration as migration0014ChatEventAnnouncements } from "./internal/migrations/0014_chat_event_announcements.js"
import { migration as migration0015ChatWatchers } from "./internal/migrations/0015_chat_watchers.js"
import { migration as migration0016ApiKeyParents } from "./internal/migrations/0016_api_key_parents.js"
import { migration as migration0017ChangeChecks } from "./internal/migrations/0017_change_checks.js"
import { migration as migration0018CellReadings } from "./internal/migrations/0018_cell_readings.js"
import { migration as migration0019EvalRuns } from "./internal/migrations/0019_eval_runs.js"
import { migration as migration0020Feedback } from "./internal/migrations/0020_feedback.js"
import { migration as migration0021ChangeEvaluations } from "./internal/migrations/0021_change_evaluations.js"
import { migration as migration0022MessageProvenance } from "./internal/migrations/0022_message_provenance.js"
import { migration as migration0023OrganizationSettings } from "./internal/migrations/0023_organization_settings.js"
import { migration as migration0024OAuth } from "./internal/migrations/0024_oauth.js"
import { migration as migration0025WebhookEndpoints } from "./internal/migrations/0025_webhook_endpoints.js"
import { migration as migration0026TraceContext } from "./internal/migrations/0026_trace_context.js"
import { migration as migration0027SandboxRunners } from "./internal/migrations/0027_sandbox_runners.js"
import { migration as migration0028Audiences } from "./internal/migrations/0028_audiences.js"
import { migration as migration0029SpentRefreshHashes } from "./internal/migrations/0029_spent_refresh_hashes.js"
import { migration as migration0030ChatConnectors } from "./internal/migrations/0030_chat_connectors.js"
import { migration as migration0031CellRefinements } from "./internal/migrations/0031_cell_refinements.js"
import { migration as migration0032MessageClarifications } from "./internal/migrations/0032_message_clarifications.js"
import { migration as migration0033PlaybookDashboards } from "./internal/migrations/0033_playbook_dashboards.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * Migration 1: the whole schema of the first release.
 *
 * Until Sightline's first release this migration may still grow (one table per aggregate, added by
 * the engineer who implements that repository); after the release, changes go into new migrations.
 */
const initialSchema = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))

    yield* sql`CREATE TABLE ${name("organizations")} (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL
    )`
    yield* sql`CREATE INDEX ${name("organizations_created_idx")} ON ${name("organizations")} (created_at, id)`

    // `UNIQUE (organization_id, id)` is the target of composite foreign keys: a row that refers to a
    // member (a role assignment, an API key, ...) cannot refer to a member of another organization.
    // Rows that hang off a member reference it with `ON DELETE CASCADE`, so that a hard delete of the
    // member removes them all (`MemberRepoSql.hardDelete` is one DELETE).
    yield* sql`CREATE TABLE ${name("members")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      email text NOT NULL,
      name text NOT NULL,
      description text,
      is_service_account boolean NOT NULL DEFAULT false,
      is_scim_managed boolean NOT NULL DEFAULT false,
      deleted_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT ${name("members_organization_id_key")} UNIQUE (organization_id, id)
    )`
    // E-mails are unique per organization regardless of case, soft-deleted members included (as in
    // core's memory repository). `MemberRepoSql` maps a violation of this index to `Conflict`.
    yield* sql`CREATE UNIQUE INDEX ${name("members_email_key")} ON ${name("members")} (organization_id, lower(email))`
    yield* sql`CREATE INDEX ${name("members_created_idx")} ON ${name("members")} (organization_id, created_at, id)`

    // Roles are here because role assignments need them; the roles repository owns this table and
    // may still change it (name uniqueness, permission storage) while migration 1 grows.
    yield* sql`CREATE TABLE ${name("roles")} (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES ${name("organizations")} (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL DEFAULT '',
      is_system boolean NOT NULL DEFAULT false,
      is_scim_managed boolean NOT NULL DEFAULT false,
      permissions text[] NOT NULL DEFAULT '{}',
      default_model_id integer,
      allowed_model_ids integer[],
      allow_model_choice boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT ${name("roles_organization_id_key")} UNIQUE (organization_id, id)
    )`
    yield* sql`CREATE UNIQUE INDEX ${name("roles_name_key")} ON ${name("roles")} (organization_id, lower(name))`
    yield* sql`CREATE INDEX ${name("roles_created_idx")} ON ${name("roles")} (organization_id, created_at, id)`

    // Both foreign keys include the organization: an assignment can only pair a member and a role of
    // the same organization, whatever the code above it does.
    yield* sql`CREATE TABLE ${name("member_roles")} (
      organization_id uuid NOT NULL,
      member_id uuid NOT NULL,
      role_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, member_id, role_id),
      FOREIGN KEY (organization_id, member_id)
        REFERENCES ${name("members")} (organization_id, id) ON DELETE CASCADE,
      FOREIGN KEY (organization_id, role_id)
        REFERENCES ${name("roles")} (organization_id, id) ON DELETE CASCADE
    )`
    yield* sql`CREATE INDEX ${name("member_roles_role_idx")} ON ${
      name("member_roles")
    } (organization_id, role_id, member_id)`
  })

/**
 * Every migration, keyed `<id>_<name>` as `Migrator.fromRecord` expects.
 *
 * @since 0.1.0
 * @category utils
 */
export const migrations = (
  prefix: TablePrefix.Service
): Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> => ({
  "0001_initial_schema": initialSchema(prefix),
  "0002_access": migration0002Access(prefix),
  "0003_content": migration0003Content(prefix),
  "0004_library": migration0004(prefix),
  "0005_runtime": migration0005Runtime(prefix),
  "0006_rate_limits": migration0006RateLimits(prefix),
  "0007_asset_objects": migration0007AssetObjects(prefix),
  "0008_report_deliveries": migration0008ReportDeliveries(prefix),
  "0009_chat_channels": migration0009ChatChannels(prefix),
  "0010_chat_events": migration0010ChatEvents(prefix),
  "0011_rate_limit_leases": migration0011RateLimitLeases(prefix),
  "0012_chat_counts": migration0012ChatCounts(prefix),
  "0013_sessions": migration0013Sessions(prefix),
  "0014_chat_event_announcements": migration0014ChatEventAnnouncements(prefix),
  "0015_chat_watchers": migration0015ChatWatchers(prefix),
  "0016_api_key_parents": migration0016ApiKeyParents(prefix),
  "0017_change_checks": migration0017ChangeChecks(prefix),
  "0018_cell_readings": migration0018CellReadings(prefix),
  "0019_eval_runs": migration0019EvalRuns(prefix),
  "0020_feedback": migration0020Feedback(prefix),
  "0021_change_evaluations": migration0021ChangeEvaluations(prefix),
  "0022_message_provenance": migration0022MessageProvenance(prefix),
  "0023_organization_settings": migration0023OrganizationSettings(prefix),
  "0024_oauth": migration0024OAuth(prefix),
  "0025_webhook_endpoints": migration0025WebhookEndpoints(prefix),
  "0026_trace_context": migration0026TraceContext(prefix),
  "0027_sandbox_runners": migration0027SandboxRunners(prefix),
  "0028_audiences": migration0028Audiences(prefix),
  "0029_spent_refresh_hashes": migration0029SpentRefreshHashes(prefix),
  "0030_chat_connectors": migration0030ChatConnectors(prefix),
  "0031_cell_refinements": migration0031CellRefinements(prefix),
  "0032_message_clarifications": migration0032MessageClarifications(prefix),
  "0033_playbook_dashboards": migration0033PlaybookDashboards(prefix)
})

/**
 * The Migrator's bookkeeping table for a prefix.
 *
 * @since 0.1.0
 * @category utils
 */
export const migrationsTable = (prefix: TablePrefix.Service): string => prefix.name("migrations")

/**
 * Creates the bookkeeping table under a transaction-scoped advisory lock. The Migrator creates it
 * itself when missing, but two processes starting at once on one PostgreSQL would race on that
 * `CREATE TABLE` and one of them would fail; its later steps are serialized by a table lock.
 */
const ensureMigrationsTable = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      sql`SELECT pg_advisory_xact_lock(hashtext(${table}))`.pipe(
        Effect.zipRight(sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`)
      )
    ))

/**
 * Runs the migrations not yet applied under the prefix in context; returns those it applied.
 *
 * @since 0.1.0
 * @category constants
 */
export const run: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient.SqlClient | TablePrefix
> = Effect.gen(function*() {
  const prefix = yield* TablePrefix
  const table = migrationsTable(prefix)
  yield* ensureMigrationsTable(table)
  return yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations(prefix)), table })
}).pipe(Effect.withSpan("Migrations.run"))

/**
 * Drops the store of the prefix in context: every table and function whose name starts with it,
 * and with them all their data. For tests and benchmarks, which each migrate a random prefix, and
 * for removing a store. Functions are dropped too, since the store's trigger functions outlive
 * their tables.
 *
 * @since 0.1.0
 * @category utils
 */
export const drop: Effect.Effect<void, SqlError, SqlClient.SqlClient | TablePrefix> = Effect.gen(function*() {
  const { prefix } = yield* TablePrefix
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ name: string }>`
    SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, ${prefix})`
  yield* Effect.forEach(tables, (t) => sql`DROP TABLE IF EXISTS ${sql(t.name)} CASCADE`, { discard: true })
  const functions = yield* sql<{ name: string }>`
    SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = current_schema() AND starts_with(p.proname, ${prefix})`
  yield* Effect.forEach(functions, (f) => sql`DROP FUNCTION IF EXISTS ${sql(f.name)} CASCADE`, { discard: true })
}).pipe(Effect.withSpan("Migrations.drop"))

/**
 * Runs the migrations when built (hosts put it before anything that queries Sightline's tables).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, Migrator.MigrationError | SqlError, SqlClient.SqlClient | TablePrefix> = Layer
  .effectDiscard(run)
