/**
 * What the AuditLogRepo contract cannot show: keyset pages, unfiltered or filtered by action or
 * actor, are served by indexes (EXPLAIN of the statements the repository actually runs, on a table
 * with thousands of entries); `details` survive `jsonb` exactly.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { AuditLogRecord } from "@sightline/core/AuditLog"
import { AuditLogRepo } from "@sightline/core/AuditLogRepo"
import { AuditLogEntryId } from "@sightline/core/Ids"
import * as Pagination from "@sightline/core/Pagination"
import { Fixtures } from "@sightline/core/testing"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { forEachDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

forEachDatabase((database) =>
  describe(`AuditLogRepoSql (${database.name})`, () => {
    it.effect("details round-trip through jsonb: unicode, nesting, numbers, keys that need quoting", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const org = yield* Fixtures.organization()
        const record = new AuditLogRecord({
          id: AuditLogEntryId.make(Fixtures.uuid()),
          organization_id: org.id,
          action: "role.update",
          resource_type: "role",
          resource_id: "r'1\"; DROP TABLE x; --",
          details: {
            "quote \" and \\ backslash": "line\nbreak\ttab \u0001",
            emoji: "📈 ünïcode",
            big: 9007199254740991,
            small: -1.5e-7,
            list: [1, "two", null, false, { three: [3] }]
          },
          auth_method: "system",
          created_at: DateTime.unsafeMake("2026-03-04T05:06:07.089Z")
        })
        yield* repo.append(record)
        expect((yield* repo.list(org.id, { limit: 5 })).items).toEqual([record])
      }).pipe(Effect.provide(database.shared)))

    describe("indexes (EXPLAIN of the repository's own statements, thousands of entries)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      /** 20 organizations of 5 members with 60 entries each (6 000 entries over 4 actions), one busy actor. */
      const populate = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* Effect.forEach(Arr.range(1, 20), () => Fixtures.organization())
        const members = yield* Effect.forEach(orgs, (org) =>
          Effect.forEach(Arr.range(1, 5), () => Fixtures.member(org.id)))
        const auditLogs = sql(`${prefix}audit_logs`)
        yield* sql`INSERT INTO ${auditLogs} (id, organization_id, actor_id, action, resource_type, resource_id, details,
            auth_method, created_at)
          SELECT gen_random_uuid(), m.organization_id, CASE WHEN g % 7 = 0 THEN NULL ELSE m.id END,
            (ARRAY['api_key.create', 'api_key.revoke', 'role.update', 'member.invite'])[1 + g % 4],
            'role', g::text, '{}'::jsonb, 'jwt', timestamptz '2025-01-01T00:00:00Z' + g * interval '1 minute'
          FROM ${sql(`${prefix}members`)} m, generate_series(1, 60) g
          WHERE m.organization_id IN ${
          sql.in(orgs.map((org) => org.id))
        }`
        // One busy actor (an admin, a scheduler): a few entries per actor may well be read by a bitmap scan
        // and sorted, which is cheap; thousands must be read in index order.
        const busy = members[11]![4]!
        yield* sql`INSERT INTO ${auditLogs} (id, organization_id, actor_id, action, resource_type, resource_id, details,
            auth_method, created_at)
          SELECT gen_random_uuid(), ${orgs[11]!.id}, ${busy.id}, 'role.update', 'role', g::text, '{}'::jsonb,
            'api_key', timestamptz '2025-02-01T00:00:00Z' + g * interval '1 second'
          FROM generate_series(1, 3000) g`
        yield* sql`ANALYZE ${auditLogs}`
        return { org: orgs[11]!, members: members[11]!, busy }
      })

      const indexes = ["audit_logs_created_idx", "audit_logs_action_created_idx", "audit_logs_actor_created_idx"]
      const indexScan = (plan: string) =>
        indexes.some((index) => new RegExp(`Index (Only )?Scan( Backward)? using ${prefix}${index}\\b`).test(plan))

      it.live("keyset pages read an index in order, with or without filters: no sequential scan, no sort", () =>
        Effect.gen(function*() {
          const repo = yield* AuditLogRepo
          const { busy, members, org } = yield* populate
          const first = yield* capturePlans(repo.list(org.id, { limit: 25 }))
          expect(first.result.items).toHaveLength(25)
          const after = yield* Pagination.decodeCursor(first.result.nextCursor!)
          const runs = [
            first,
            yield* capturePlans(repo.list(org.id, { limit: 25, after })),
            yield* capturePlans(repo.list(org.id, { limit: 25, action: "api_key.revoke" })),
            yield* capturePlans(repo.list(org.id, { limit: 25, action: "api_key.revoke", after })),
            yield* capturePlans(repo.list(org.id, { limit: 25, actorId: busy.id })),
            yield* capturePlans(repo.list(org.id, { limit: 25, actorId: busy.id, after }))
          ]
          for (const { plans, result } of runs) {
            expect(result.items.length).toBeGreaterThan(0)
            expect(plans).toHaveLength(1)
            expect(indexScan(plans[0]!.plan), plans[0]!.plan).toBe(true)
            expect(plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
          }
          // The cursor is an index condition, not a filter applied after reading from the start.
          expect(runs[1]!.plans[0]!.plan).toMatch(/Index Cond: .*created_at/)
          // A quiet actor, or both filters at once: still an index, never the whole table.
          const quiet = yield* capturePlans(repo.list(org.id, { limit: 25, actorId: members[1]!.id }))
          expect(quiet.plans[0]!.plan).toMatch(new RegExp(`Index (Only )?Scan.* (using|on) ${prefix}audit_logs_`))
          expect(quiet.plans[0]!.plan).not.toMatch(/Seq Scan/)
          const both = yield* capturePlans(
            repo.list(org.id, { limit: 25, action: "api_key.create", actorId: members[0]!.id })
          )
          expect(both.plans[0]!.plan).toMatch(new RegExp(`Index (Only )?Scan.* (using|on) ${prefix}audit_logs_`))
          expect(both.plans[0]!.plan).not.toMatch(/Seq Scan/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)
