/**
 * The SQL job queue beyond core's contract: several processes sharing one queue. On PostgreSQL the
 * second "process" is a second connection pool over the same tables (what a second server would
 * have); on PGlite, which is one in-process session, it is a second store over the same client.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { OrganizationId } from "@sightline/core/Ids"
import { type Job, JobQueue } from "@sightline/core/JobQueue"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PostgresClient from "../src/PostgresClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase, postgresUrl, type StoreServices, type TestDatabase } from "./utils/databases.js"

/** The store of another process over the same database and prefix. */
const otherProcess = (database: TestDatabase, prefix: string): Layer.Layer<StoreServices, unknown> =>
  database.name === "postgres"
    ? SqlStore.layer.pipe(
      Layer.provideMerge(TablePrefix.layer(prefix)),
      Layer.provideMerge(PostgresClient.layer({ url: postgresUrl, maxConnections: 5 }))
    )
    : database.store(prefix)

/** Both processes' services, alive for the test's scope. */
const twoProcesses = (database: TestDatabase, prefix: string) =>
  Effect.gen(function*() {
    const a = yield* Layer.build(database.store(prefix))
    const b = yield* Layer.build(otherProcess(database, prefix))
    return { a, b, queueA: Context.get(a, JobQueue), queueB: Context.get(b, JobQueue) }
  })

const freshKind = () => `test.${Fixtures.uuid()}`

/** The stored rows of a kind, straight from the table. */
const rowsOf = (kind: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix.TablePrefix
    return yield* sql<{ id: string; status: string; attempts: number; locked_by: string | null }>`
      SELECT id, status, attempts, locked_by FROM ${sql(prefix.name("jobs"))} WHERE kind = ${kind}`
  })

forEachDatabase((database) =>
  describe(`JobQueueSql (${database.name})`, () => {
    const prefix = database.freshPrefix()

    it.live("two processes claiming at once take every one of many jobs exactly once", () =>
      Effect.gen(function*() {
        const { a, queueA, queueB } = yield* twoProcesses(database, prefix)
        const org = yield* Fixtures.organization().pipe(Effect.provide(a))
        const kind = freshKind()
        // Fewer on PGlite, whose single session serializes every statement anyway.
        const jobs = yield* Effect.forEach(
          Arr.range(1, database.name === "postgres" ? 300 : 60),
          (n) => queueA.enqueue({ organizationId: org.id, kind, payload: { n } }),
          { concurrency: 4 }
        )
        // Each worker claims and completes until the queue has nothing left for it.
        const worker = (queue: JobQueue.Service, workerId: string) =>
          Effect.gen(function*() {
            const got: Array<Job> = []
            while (true) {
              const job = yield* queue.claim({ workerId, kinds: [kind], leaseMillis: 60_000 })
              if (Option.isNone(job)) return got
              got.push(job.value)
              yield* queue.complete(job.value)
            }
          })
        const perWorker = yield* Effect.all(
          [
            ...["a1", "a2", "a3", "a4"].map((id) => worker(queueA, id)),
            ...["b1", "b2", "b3", "b4"].map((id) => worker(queueB, id))
          ],
          { concurrency: "unbounded" }
        )
        const claimed = perWorker.flat()
        expect(claimed).toHaveLength(jobs.length)
        expect(new Set(claimed.map((job) => job.id))).toEqual(new Set(jobs.map((job) => job.id)))
        expect(claimed.every((job) => job.attempts === 1)).toBe(true)
        const rows = yield* rowsOf(kind).pipe(Effect.provide(a))
        expect(rows).toHaveLength(jobs.length)
        expect(rows.every((row) => row.status === "completed" && row.attempts === 1)).toBe(true)
      }).pipe(Effect.scoped), 120_000)

    it.live("concurrent enqueues with one dedupe key from two processes store one job", () =>
      Effect.gen(function*() {
        const { a, queueA, queueB } = yield* twoProcesses(database, prefix)
        const org = yield* Fixtures.organization().pipe(Effect.provide(a))
        const kind = freshKind()
        const dedupeKey = `schedule:${Fixtures.uuid()}:2026-03-01T09:00:00.000Z`
        const jobs = yield* Effect.all(
          Arr.range(1, 24).map((n) =>
            (n % 2 === 0 ? queueA : queueB).enqueue({ organizationId: org.id, kind, payload: { n }, dedupeKey })
          ),
          { concurrency: "unbounded" }
        )
        expect(new Set(jobs.map((job) => job.id)).size).toBe(1)
        const rows = yield* rowsOf(kind).pipe(Effect.provide(a))
        expect(rows.map((row) => row.id)).toEqual([jobs[0]!.id])
      }).pipe(Effect.scoped), 120_000)

    it.live("a lease that runs out hands the job to the other process, and the first holder loses it", () =>
      Effect.gen(function*() {
        const { a, queueA, queueB } = yield* twoProcesses(database, prefix)
        const org = yield* Fixtures.organization().pipe(Effect.provide(a))
        const kind = freshKind()
        yield* queueA.enqueue({ organizationId: org.id, kind, payload: null })
        const first = Option.getOrThrow(yield* queueA.claim({ workerId: "a", kinds: [kind], leaseMillis: 300 }))
        expect(yield* queueB.claim({ workerId: "b", kinds: [kind], leaseMillis: 60_000 })).toEqual(Option.none())
        yield* Effect.sleep(450)
        const second = Option.getOrThrow(yield* queueB.claim({ workerId: "b", kinds: [kind], leaseMillis: 60_000 }))
        expect(second).toMatchObject({ id: first.id, attempts: 2, locked_by: "b", status: "running" })
        // The process that lost the lease (say it was only paused) can touch the job no more.
        expect((yield* Effect.flip(queueA.renew(first, 60_000)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(queueA.complete(first)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(queueA.fail(first, { error: "late" })))._tag).toBe("Conflict")
        const done = yield* queueB.complete(second)
        expect(yield* rowsOf(kind).pipe(Effect.provide(a))).toEqual([
          { id: first.id, status: "completed", attempts: 2, locked_by: null }
        ])
        expect(yield* queueA.get(org.id, first.id)).toEqual(Option.some(done))
      }).pipe(Effect.scoped), 60_000)

    it.live("a job reads back exactly as the queue returned it, timestamps as RFC 3339", () =>
      Effect.gen(function*() {
        const { a, queueA } = yield* twoProcesses(database, prefix)
        const org = yield* Fixtures.organization().pipe(Effect.provide(a))
        const kind = freshKind()
        const job = yield* queueA.enqueue({ organizationId: org.id, kind, payload: { a: [1, { b: "é😀" }] } })
        expect(yield* queueA.get(org.id, job.id)).toEqual(Option.some(job))
        const claimed = Option.getOrThrow(yield* queueA.claim({ workerId: "w", kinds: [kind], leaseMillis: 60_000 }))
        expect(yield* queueA.get(org.id, job.id)).toEqual(Option.some(claimed))
        expect(claimed.locked_until!.epochMillis - claimed.updated_at.epochMillis).toBe(60_000)
        expect(yield* queueA.get(OrganizationId.make(Fixtures.uuid()), job.id)).toEqual(Option.none())
      }).pipe(Effect.scoped), 60_000)

    // PGlite is a single session: a second claimer waits for the open transaction by construction, so
    // this test is registered for PostgreSQL only (not reported as skipped on PGlite).
    if (database.name === "postgres") {
      it.live(
        "a claim inside an open transaction neither blocks nor is seen by the other process's claims",
        () =>
          Effect.gen(function*() {
            const { a, queueA, queueB } = yield* twoProcesses(database, prefix)
            const org = yield* Fixtures.organization().pipe(Effect.provide(a))
            const kind = freshKind()
            const jobs = yield* Effect.forEach(
              [1, 2],
              (n) =>
                queueA.enqueue({ organizationId: org.id, kind, payload: { n } })
            )
            const heldInA = yield* Deferred.make<Job>()
            const claimedInB = yield* Deferred.make<Option.Option<Job>>()
            // A claims inside a transaction that stays open until B has claimed: its row stays locked.
            const inA = withTransaction(Effect.gen(function*() {
              const job = Option.getOrThrow(yield* queueA.claim({ workerId: "a", kinds: [kind], leaseMillis: 60_000 }))
              yield* Deferred.succeed(heldInA, job)
              yield* Deferred.await(claimedInB)
              return job
            })).pipe(Effect.provide(a))
            const inB = Effect.gen(function*() {
              yield* Deferred.await(heldInA)
              const job = yield* queueB.claim({ workerId: "b", kinds: [kind], leaseMillis: 60_000 }).pipe(
                Effect.timeoutFail({
                  duration: "5 seconds",
                  onTimeout: () =>
                    "B waited on A's lock"
                })
              )
              yield* Deferred.succeed(claimedInB, job)
              return job
            })
            const [jobA, jobB] = yield* Effect.all([inA, inB], { concurrency: "unbounded" })
            // The two jobs may be enqueued within one millisecond, and then which is due first is a tie:
            // A holds one of them, and B, not blocked, claims the other.
            const ids = jobs.map((job) =>
              job.id
            )
            expect(ids).toContain(jobA.id)
            expect(Option.map(jobB, (job) => job.id)).toEqual(Option.some(ids.find((id) => id !== jobA.id)))
          }).pipe(Effect.scoped),
        60_000
      )
    }
  })
)
