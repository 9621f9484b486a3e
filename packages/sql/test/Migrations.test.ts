import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Migrations from "../src/Migrations.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase, harnessPrefixPattern } from "./utils/databases.js"

/** Every table Sightline creates today, without its prefix. */
const expectedTables = [
  "agent_runs",
  "agents",
  "api_keys",
  "apps",
  "asset_objects",
  "audit_logs",
  "change_approvals",
  "change_counters",
  "change_revisions",
  "changes",
  "chat_assets",
  "chat_cells",
  "chat_channels",
  "chat_counts",
  "chat_events",
  "chat_messages",
  "chat_watchers",
  "chats",
  "connector_grants",
  "connectors",
  "eval_runs",
  "executions",
  "feedback",
  "group_members",
  "group_roles",
  "groups",
  "jobs",
  "library_blobs",
  "library_commit_files",
  "library_commits",
  "library_refs",
  "member_passwords",
  "member_roles",
  "members",
  "migrations",
  "oauth_clients",
  "organizations",
  "outbound_events",
  "playbook_reports",
  "playbooks",
  "rate_limits",
  "roles",
  "sandbox_runners",
  "sandboxes",
  "scim_group_mapping_members",
  "scim_group_mappings",
  "server_keys",
  "sessions",
  "sign_in_links",
  "spent_refresh_hashes",
  "webhook_attempts",
  "webhook_endpoints"
]

/** Every bundled migration, as the Migrator reports those it applies: `[id, name]`, in order. */
const expectedMigrations = Object.keys(Migrations.migrations(TablePrefix.fromPrefix(TablePrefix.defaultPrefix)))
  .sort()
  .map((key) => [Number(key.slice(0, key.indexOf("_"))), key.slice(key.indexOf("_") + 1)] as const)
const expectedMigrationRows = expectedMigrations.map(([id]) => ({ migration_id: id }))

const tableNames = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ tablename: string }>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
    (rows) => rows.map((row) => row.tablename)
  ))

forEachDatabase((database) =>
  describe(`Migrations (${database.name})`, () => {
    it.effect("creates every table under the prefix and nothing else", () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const before = new Set(yield* tableNames)
        const applied = yield* Migrations.run.pipe(Effect.provide(TablePrefix.layer(prefix)))
        expect(applied).toEqual(expectedMigrations)

        const created = (yield* tableNames).filter((name) => !before.has(name))
        // Other runs may create their own prefixed tables meanwhile on a shared server.
        const ours = created.filter((name) => !harnessPrefixPattern.test(name) || name.startsWith(prefix))
        expect(ours).toEqual(expectedTables.map((name) => `${prefix}${name}`))

        const sql = yield* SqlClient.SqlClient
        const indexes = yield* sql<{ indexname: string }>`
          SELECT indexname FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename IN ${sql.in(ours)}`
        expect(indexes.length).toBeGreaterThan(ours.length)
        expect(indexes.filter((index) => !index.indexname.startsWith(prefix))).toEqual([])
      }).pipe(Effect.provide(database.client)))

    it.effect("running the migrations again applies nothing and keeps the data", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        expect(yield* Migrations.run).toEqual([])
        expect(yield* (yield* OrganizationRepo).get(org.id)).toEqual(Option.some(org))
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix.TablePrefix
        const rows = yield* sql<{ migration_id: number }>`SELECT migration_id FROM ${
          sql(prefix.name("migrations"))
        } ORDER BY migration_id`
        expect(rows).toEqual(expectedMigrationRows)
      }).pipe(Effect.provide(database.shared)))

    it.effect("concurrent runs on a fresh prefix apply each migration once", () =>
      Effect.gen(function*() {
        const runs = yield* Effect.all(Array.from({ length: 3 }, () => Migrations.run), { concurrency: "unbounded" })
        expect(runs.flat()).toEqual(expectedMigrations)
        expect(yield* Migrations.run).toEqual([])
      }).pipe(Effect.provide(Layer.merge(TablePrefix.layer(database.freshPrefix()), database.client))))

    it.effect("drop removes the prefix's tables and functions, and no other store's", () =>
      Effect.gen(function*() {
        const [gone, kept] = [database.freshPrefix(), database.freshPrefix()]
        for (const prefix of [gone, kept]) yield* Migrations.run.pipe(Effect.provide(TablePrefix.layer(prefix)))
        yield* Migrations.drop.pipe(Effect.provide(TablePrefix.layer(gone)))
        const sql = yield* SqlClient.SqlClient
        const left = (prefix: string) =>
          sql<{ tables: number; functions: number }>`SELECT
            (SELECT count(*)::int FROM pg_tables
             WHERE schemaname = current_schema() AND starts_with(tablename, ${prefix})) AS tables,
            (SELECT count(*)::int FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = current_schema() AND starts_with(p.proname, ${prefix})) AS functions`
        expect(yield* left(gone)).toEqual([{ tables: 0, functions: 0 }])
        const [other] = yield* left(kept)
        expect(other).toMatchObject({ tables: expectedTables.length })
        expect(other!.functions).toBeGreaterThan(0)
      }).pipe(Effect.provide(database.client)))

    it.effect("a second prefix in the same database is an independent store", () =>
      Effect.gen(function*() {
        const [a, b] = [database.freshPrefix(), database.freshPrefix()]
        const org = yield* Fixtures.organization().pipe(Effect.provide(database.store(a)))
        const inB = yield* Effect.gen(function*() {
          const repo = yield* OrganizationRepo
          return { get: yield* repo.get(org.id), list: yield* repo.list }
        }).pipe(Effect.provide(database.store(b)))
        expect(inB).toEqual({ get: Option.none(), list: [] })
        // Each prefix has its own record of applied migrations.
        const sql = yield* SqlClient.SqlClient
        for (const prefix of [a, b]) {
          const rows = yield* sql`SELECT migration_id FROM ${sql(`${prefix}migrations`)} ORDER BY migration_id`
          expect(rows).toEqual(expectedMigrationRows)
        }
      }).pipe(Effect.provide(database.client)))
  })
)
