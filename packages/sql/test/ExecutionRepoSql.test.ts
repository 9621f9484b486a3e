/**
 * The SQL execution repository beyond core's contract: the purge (exact at the cutoff, idempotent,
 * batched, safe to run from several processes at once), the scheduled purge layer, and the index
 * that serves keyset pages.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Execution from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import { ExecutionId, type OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Pagination from "@sightline/core/Pagination"
import * as Sandbox from "@sightline/core/Sandbox"
import { SandboxRepo } from "@sightline/core/SandboxRepo"
import { Fixtures } from "@sightline/core/testing"
import * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as ExecutionPurge from "../src/ExecutionPurge.js"
import { purgeBatchSize } from "../src/ExecutionRepoSql.js"
import * as PostgresClient from "../src/PostgresClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase, postgresUrl } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

/** A new organization with a member and a sandbox. */
const sandboxOf = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const sandbox = Sandbox.make({
    sandboxId: SandboxId.make(Fixtures.uuid()),
    organizationId: org.id,
    memberId: member.id,
    at: at("2026-03-01T09:00:00.000Z")
  })
  yield* Effect.orDie((yield* SandboxRepo).create(sandbox))
  return { org, sandboxId: sandbox.sandbox_id }
})

const record = (organizationId: OrganizationId, sandboxId: SandboxId, createdAt: DateTime.Utc) =>
  Effect.gen(function*() {
    const execution = new Execution.Execution({
      id: ExecutionId.make(`exec-${Fixtures.uuid()}`),
      organization_id: organizationId,
      sandbox_id: sandboxId,
      kind: "bash",
      source: "internal",
      input: "true",
      output_preview: "",
      duration_ms: 1,
      created_at: createdAt
    })
    yield* Effect.orDie((yield* ExecutionRepo).record(execution))
    return execution
  })

/** `count` executions in one statement, one second apart, the newest a second before `before`. */
const bulkInsert = (organizationId: OrganizationId, sandboxId: SandboxId, count: number, before: DateTime.Utc) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix.TablePrefix
    yield* sql`INSERT INTO ${sql(prefix.name("executions"))}
        (id, organization_id, sandbox_id, kind, source, input, output_preview, duration_ms, created_at)
      SELECT 'bulk-' || gen_random_uuid(), ${organizationId}::uuid, ${sandboxId}::uuid, 'python', 'internal',
        'print(' || g || ')', g::text, g, ${DateTime.toDateUtc(before)}::timestamptz - g * interval '1 second'
      FROM generate_series(1, ${count}) g`
  })

const ids = (page: Pagination.Page<Execution.Execution>) => page.items.map((execution) => execution.id)

/**
 * Polls `check` until it holds, for up to 10 seconds, waiting on real time between polls (the test
 * clock stands still). Only the waits are live: `check` may read the test clock.
 */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>) =>
  Effect.gen(function*() {
    for (let poll = 0; poll < 400; poll++) {
      if (yield* check) return
      yield* TestServices.provideLive(Effect.sleep("25 millis"))
    }
    return yield* Effect.dieMessage("the condition did not hold within 10 seconds")
  })

forEachDatabase((database) =>
  describe(`ExecutionRepoSql (${database.name})`, () => {
    it.effect("purges exactly the rows strictly older than the cutoff, in batches, and then nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const cutoff = at("2026-01-01T00:00:00.000Z")
        yield* bulkInsert(org.id, sandboxId, purgeBatchSize * 2 + 17, cutoff)
        const justBefore = yield* record(org.id, sandboxId, DateTime.subtract(cutoff, { millis: 1 }))
        const atCutoff = yield* record(org.id, sandboxId, cutoff)
        const justAfter = yield* record(org.id, sandboxId, DateTime.add(cutoff, { millis: 1 }))

        expect(yield* repo.purgeOlderThan(cutoff)).toBe(purgeBatchSize * 2 + 17 + 1)
        expect(yield* repo.purgeOlderThan(cutoff)).toBe(0)
        const left = ids(yield* repo.list(org.id, sandboxId, { limit: 10 }))
        expect(left).toEqual([justAfter.id, atCutoff.id])
        expect(left).not.toContain(justBefore.id)
      }).pipe(Effect.provide(database.store(database.freshPrefix()))), 120_000)

    it.live("two processes purging at once delete every expired row once between them", () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const a = yield* Layer.build(database.store(prefix))
        const b = yield* Layer.build(
          database.name === "postgres"
            ? SqlStore.layer.pipe(
              Layer.provideMerge(TablePrefix.layer(prefix)),
              Layer.provideMerge(PostgresClient.layer({ url: postgresUrl, maxConnections: 2 }))
            )
            : database.store(prefix)
        )
        const cutoff = at("2026-01-01T00:00:00.000Z")
        const { kept, org, sandboxId } = yield* Effect.gen(function*() {
          const { org, sandboxId } = yield* sandboxOf
          yield* bulkInsert(org.id, sandboxId, purgeBatchSize * 3, cutoff)
          const kept = yield* record(org.id, sandboxId, cutoff)
          return { kept, org, sandboxId }
        }).pipe(Effect.provide(a))
        const [byA, byB] = yield* Effect.all(
          [a, b].map((context) =>
            Context.get(context, ExecutionRepo).purgeOlderThan(cutoff)
          ),
          { concurrency: "unbounded" }
        )
        expect(byA! + byB!).toBe(purgeBatchSize * 3)
        const left = yield* Context.get(a, ExecutionRepo).list(org.id, sandboxId, { limit: 10 })
        expect(ids(left)).toEqual([kept.id])
      }).pipe(Effect.scoped), 120_000)

    it.effect("purgeExpired keeps 30 days by the clock: one millisecond older goes, the cutoff stays", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-04-01T12:00:00.000Z"))
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const cutoff = at("2026-03-02T12:00:00.000Z")
        expect(Execution.retentionCutoff(yield* DateTime.now)).toEqual(cutoff)
        yield* record(org.id, sandboxId, DateTime.subtract(cutoff, { millis: 1 }))
        const kept = yield* record(org.id, sandboxId, cutoff)
        expect(yield* ExecutionPurge.purgeExpired).toBe(1)
        expect(yield* ExecutionPurge.purgeExpired).toBe(0)
        expect(ids(yield* repo.list(org.id, sandboxId, { limit: 10 }))).toEqual([kept.id])
      }).pipe(Effect.provide(database.store(database.freshPrefix()))), 120_000)

    it.effect("layerSchedule purges at start-up, then every hour, and stops with its scope", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-04-01T12:00:00.000Z"))
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const old = () =>
          record(org.id, sandboxId, at("2026-01-01T00:00:00.000Z"))
        const stored = Effect.map(repo.list(org.id, sandboxId, { limit: 10 }), ids)
        const gone = (id: ExecutionId) =>
          Effect.map(stored, (left) =>
            !left.includes(id))
        // The schedule sleeps on the test clock once a run is over: wait for that before moving it.
        const asleep = eventually(Effect.map(TestClock.sleeps(), Chunk.isNonEmpty))

        const first = yield* old()
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(ExecutionPurge.layerSchedule, scope)
        yield* eventually(gone(first.id))
        yield* asleep

        const second = yield* old()
        yield* TestClock.adjust("59 minutes")
        yield* TestServices.provideLive(Effect.sleep("200 millis"))
        expect(yield* stored).toContain(second.id)
        yield* TestClock.adjust("1 minute")
        yield* eventually(gone(second.id))
        yield* asleep

        yield* Scope.close(scope, Exit.void)
        const third = yield* old()
        yield* TestClock.adjust("3 hours")
        yield* TestServices.provideLive(Effect.sleep("200 millis"))
        expect(yield* stored).toContain(third.id)
      }).pipe(Effect.provide(database.store(database.freshPrefix()))), 120_000)

    describe("indexes (EXPLAIN of the repository's own statements, thousands of executions)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      it.live("a keyset page reads the sandbox index in order: no sequential scan, no sort", () =>
        Effect.gen(function*() {
          const repo = yield* ExecutionRepo
          const sandboxes = yield* Effect.forEach(Arr.range(1, 12), () =>
            sandboxOf)
          // As in life, each sandbox runs in its own stretch of time.
          yield* Effect.forEach(sandboxes, ({ org, sandboxId }, i) =>
            bulkInsert(org.id, sandboxId, 500, DateTime.subtract(at("2026-03-01T00:00:00.000Z"), { hours: i })))
          const sql = yield* SqlClient.SqlClient
          yield* sql`ANALYZE ${sql(`${prefix}executions`)}`
          const { org, sandboxId } = sandboxes[5]!

          const first = yield* capturePlans(repo.list(org.id, sandboxId, { limit: 50 }))
          expect(first.result.items).toHaveLength(50)
          const after = yield* Pagination.decodeCursor(first.result.nextCursor!)
          const next = yield* capturePlans(repo.list(org.id, sandboxId, { limit: 50, after }))
          expect(next.result.items).toHaveLength(50)
          expect(
            Pagination.compareDesc(Execution.keyset(first.result.items[49]!), Execution.keyset(next.result.items[0]!))
          )
            .toBeLessThan(0)

          for (const { plans } of [first, next]) {
            expect(plans).toHaveLength(1)
            expect(plans[0]!.plan).toMatch(
              new RegExp(`Index (Only )?Scan( Backward)? using ${prefix}executions_sandbox_created_idx\\b`)
            )
            expect(plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
          }
          // The cursor is an index condition, not a filter applied after reading from the start.
          expect(next.plans[0]!.plan).toMatch(/Index Cond: .*created_at/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)
