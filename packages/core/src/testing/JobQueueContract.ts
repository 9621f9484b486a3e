/**
 * The contract every `JobQueue` implementation satisfies.
 *
 * Every test enqueues jobs of a fresh random kind and claims only that kind, so the suite runs on a
 * shared queue that other tests (or a live server) also use. Lease expiry is exercised on real time
 * (`it.live`) with leases of a few hundred milliseconds, since a SQL queue may compare against its own clock.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { JobId } from "../Ids.js"
import { type EnqueueOptions, type Job, JobQueue } from "../JobQueue.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Fixtures from "./Fixtures.js"

// Short enough to keep the suite quick, long enough that a claim right after still falls inside it
// on a slow shared database.
const shortly = 300
const afterShortly = 450

const freshKind = () => `contract.${Fixtures.uuid()}`

const claimOnce = (kind: string, workerId = "worker-a", leaseMillis = 60_000) =>
  Effect.flatMap(JobQueue, (queue) => queue.claim({ workerId, kinds: [kind], leaseMillis }))

const claimSome = (kind: string, workerId = "worker-a", leaseMillis = 60_000) =>
  Effect.flatMap(
    claimOnce(kind, workerId, leaseMillis),
    (job) =>
      Option.match(job, {
        onNone: () => Effect.dieMessage(`expected a claimable job of ${kind}`),
        onSome: Effect.succeed
      })
  )

/** Creates an organization and returns a helper that enqueues jobs of a fresh kind for it. */
const setup = Effect.gen(function*() {
  const queue = yield* JobQueue
  const org = yield* Fixtures.organization()
  const kind = freshKind()
  const enqueue = (options: Partial<EnqueueOptions> = {}) =>
    queue.enqueue({ organizationId: org.id, kind, payload: { n: 1 }, ...options })
  return { queue, org, kind, enqueue }
})

/**
 * Registers the `JobQueue` contract suite; the layer must also provide `OrganizationRepo` (jobs reference organizations).
 *
 * @since 0.1.0
 * @category utils
 */
export const jobQueueContract = (name: string, layer: Layer.Layer<JobQueue | OrganizationRepo, unknown>): void => {
  describe(`JobQueue contract: ${name}`, () => {
    it.live("counts the backlog: due pending jobs, and how long the oldest has waited", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        // Run times in the year 2000, which no other test's jobs have: the count is this test's.
        const at = (iso: string) => DateTime.unsafeMake(iso)
        yield* enqueue({ runAt: at("2000-01-01T00:00:00.000Z") })
        yield* enqueue({ runAt: at("2000-01-01T00:00:30.000Z") })
        yield* enqueue({ runAt: at("2000-01-01T00:05:00.000Z") })
        expect(yield* queue.backlog(at("2000-01-01T00:01:00.000Z"))).toEqual({ due: 2, oldestSeconds: 60 })
        expect(yield* queue.backlog(at("1999-12-31T23:00:00.000Z"))).toEqual({ due: 0, oldestSeconds: 0 })
        // A claimed job is no longer waiting.
        yield* claimSome(kind)
        expect((yield* queue.backlog(at("2000-01-01T00:01:00.000Z"))).due).toBe(1)
      }).pipe(Effect.provide(layer)))

    it.live("enqueues a pending job that only its organization can read", () =>
      Effect.gen(function*() {
        const { enqueue, kind, org, queue } = yield* setup
        const other = yield* Fixtures.organization()
        const payload = { playbook: "p", nested: { list: [1, "two", null, true] } }
        const job = yield* enqueue({ payload })
        expect(job).toMatchObject({ organization_id: org.id, kind, status: "pending", attempts: 0, payload })
        expect(job.max_attempts).toBeGreaterThan(0)
        const read = yield* queue.get(org.id, job.id)
        expect(Option.map(read, (j) => [j.id, j.payload])).toEqual(Option.some([job.id, payload]))
        expect(yield* queue.get(other.id, job.id)).toEqual(Option.none())
        expect(yield* queue.get(org.id, JobId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.live("leases a claimed job: running, attempt counted, invisible to other claimers", () =>
      Effect.gen(function*() {
        const { enqueue, kind, org, queue } = yield* setup
        const job = yield* enqueue()
        const claimed = yield* claimSome(kind, "worker-a")
        expect(claimed).toMatchObject({ id: job.id, status: "running", attempts: 1, locked_by: "worker-a" })
        expect(claimed.locked_until).toBeDefined()
        expect(yield* claimOnce(kind, "worker-b")).toEqual(Option.none())
        expect(Option.map(yield* queue.get(org.id, job.id), (j) => j.status)).toEqual(Option.some("running"))
      }).pipe(Effect.provide(layer)))

    it.live("claims only the requested kinds, earliest run_at first", () =>
      Effect.gen(function*() {
        const { enqueue, kind } = yield* setup
        const now = yield* DateTime.now
        const later = yield* enqueue({ runAt: DateTime.subtract(now, { minutes: 1 }) })
        const earlier = yield* enqueue({ runAt: DateTime.subtract(now, { minutes: 2 }) })
        expect(yield* claimOnce(freshKind())).toEqual(Option.none())
        expect((yield* claimSome(kind)).id).toBe(earlier.id)
        expect((yield* claimSome(kind)).id).toBe(later.id)
      }).pipe(Effect.provide(layer)))

    it.live("claims a job of any of several kinds, earliest run_at first", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        const now = yield* DateTime.now
        const other = freshKind()
        const first = yield* enqueue({ runAt: DateTime.subtract(now, { minutes: 3 }) })
        const second = yield* queue.enqueue({
          organizationId: first.organization_id,
          kind: other,
          payload: { n: 2 },
          runAt: DateTime.subtract(now, { minutes: 2 })
        })
        const claim = queue.claim({ workerId: "worker-a", kinds: [kind, other], leaseMillis: 60_000 })
        expect(Option.map(yield* claim, (job) => job.id)).toEqual(Option.some(first.id))
        expect(Option.map(yield* claim, (job) => job.id)).toEqual(Option.some(second.id))
        expect(yield* claim).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.live("never hands the same job to two concurrent claimers", () =>
      Effect.gen(function*() {
        const { enqueue, kind } = yield* setup
        const jobs = yield* Effect.forEach(Array.from({ length: 12 }), () => enqueue())
        const worker = (workerId: string) =>
          Effect.gen(function*() {
            const got: Array<Job> = []
            while (true) {
              const job = yield* claimOnce(kind, workerId)
              if (Option.isNone(job)) return got
              got.push(job.value)
            }
          })
        const perWorker = yield* Effect.all(["w1", "w2", "w3", "w4"].map(worker), { concurrency: "unbounded" })
        const claimedIds = perWorker.flat().map((job) => job.id)
        expect(claimedIds).toHaveLength(12)
        expect(new Set(claimedIds)).toEqual(new Set(jobs.map((job) => job.id)))
      }).pipe(Effect.provide(layer)))

    it.live("makes enqueue idempotent per organization with a dedupe key", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        const dedupeKey = `schedule:${Fixtures.uuid()}`
        const [a, b, c] = yield* Effect.all([enqueue({ dedupeKey }), enqueue({ dedupeKey }), enqueue({ dedupeKey })], {
          concurrency: "unbounded"
        })
        expect(b!.id).toBe(a!.id)
        expect(c!.id).toBe(a!.id)
        expect(a!.dedupe_key).toBe(dedupeKey)
        const claimed = yield* claimSome(kind)
        yield* queue.complete(claimed)
        // Still the same job once it ran: a schedule fires once, however many processes enqueue it.
        expect((yield* enqueue({ dedupeKey })).id).toBe(a!.id)
        expect(yield* claimOnce(kind)).toEqual(Option.none())
        const otherOrg = yield* Fixtures.organization()
        const elsewhere = yield* queue.enqueue({ organizationId: otherOrg.id, kind, payload: null, dedupeKey })
        expect(elsewhere.id).not.toBe(a!.id)
      }).pipe(Effect.provide(layer)))

    it.live("does not hand out a job before its run_at", () =>
      Effect.gen(function*() {
        const { enqueue, kind } = yield* setup
        yield* enqueue({ runAt: DateTime.add(yield* DateTime.now, { hours: 1 }) })
        expect(yield* claimOnce(kind)).toEqual(Option.none())
        const soon = yield* enqueue({ runAt: DateTime.add(yield* DateTime.now, { millis: shortly }) })
        expect(yield* claimOnce(kind)).toEqual(Option.none())
        yield* Effect.sleep(afterShortly)
        expect((yield* claimSome(kind)).id).toBe(soon.id)
      }).pipe(Effect.provide(layer)))

    it.live("makes a job claimable again when its lease expires, and the old claim loses it", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        yield* enqueue()
        const first = yield* claimSome(kind, "worker-a", shortly)
        expect(yield* claimOnce(kind, "worker-b")).toEqual(Option.none())
        yield* Effect.sleep(afterShortly)
        const second = yield* claimSome(kind, "worker-b")
        expect(second).toMatchObject({ id: first.id, attempts: 2, locked_by: "worker-b" })
        expect((yield* Effect.flip(queue.complete(first)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(queue.fail(first, { error: "late" })))._tag).toBe("Conflict")
        expect((yield* Effect.flip(queue.renew(first, 60_000)))._tag).toBe("Conflict")
        expect((yield* queue.complete(second)).status).toBe("completed")
      }).pipe(Effect.provide(layer)))

    it.live("renewing a lease keeps the job from other claimers", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        yield* enqueue()
        const claimed = yield* claimSome(kind, "worker-a", shortly)
        const renewed = yield* queue.renew(claimed, 60_000)
        expect(renewed.locked_by).toBe("worker-a")
        yield* Effect.sleep(afterShortly)
        expect(yield* claimOnce(kind, "worker-b")).toEqual(Option.none())
        expect((yield* queue.complete(renewed)).status).toBe("completed")
      }).pipe(Effect.provide(layer)))

    it.live("completion is final", () =>
      Effect.gen(function*() {
        const { enqueue, kind, org, queue } = yield* setup
        const job = yield* enqueue()
        const claimed = yield* claimSome(kind)
        const done = yield* queue.complete(claimed)
        expect(done.status).toBe("completed")
        expect(done.finished_at).toBeDefined()
        expect(done.locked_by).toBeUndefined()
        expect(yield* claimOnce(kind)).toEqual(Option.none())
        expect((yield* Effect.flip(queue.complete(claimed)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(queue.fail(claimed, { error: "x", retryAt: yield* DateTime.now })))._tag).toBe(
          "Conflict"
        )
        expect(Option.map(yield* queue.get(org.id, job.id), (j) => j.status)).toEqual(Option.some("completed"))
      }).pipe(Effect.provide(layer)))

    it.live("retries a failed attempt at retryAt, keeping the count and the error", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        yield* enqueue()
        const first = yield* claimSome(kind)
        const retried = yield* queue.fail(first, {
          error: "model unavailable",
          retryAt: DateTime.add(yield* DateTime.now, { millis: shortly })
        })
        expect(retried).toMatchObject({ status: "pending", attempts: 1, last_error: "model unavailable" })
        expect(retried.locked_by).toBeUndefined()
        expect(yield* claimOnce(kind)).toEqual(Option.none())
        yield* Effect.sleep(afterShortly)
        expect(yield* claimSome(kind)).toMatchObject({ id: first.id, attempts: 2 })
      }).pipe(Effect.provide(layer)))

    it.live("fails a job for good without retryAt", () =>
      Effect.gen(function*() {
        const { enqueue, kind, queue } = yield* setup
        yield* enqueue()
        const failed = yield* queue.fail(yield* claimSome(kind), { error: "invalid payload" })
        expect(failed).toMatchObject({ status: "failed", last_error: "invalid payload" })
        expect(failed.finished_at).toBeDefined()
        expect(yield* claimOnce(kind)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.live("stops after max_attempts, whether the last attempt fails or its lease expires", () =>
      Effect.gen(function*() {
        const { enqueue, kind, org, queue } = yield* setup
        const now = yield* DateTime.now
        yield* enqueue({ maxAttempts: 1 })
        const failed = yield* queue.fail(yield* claimSome(kind), { error: "boom", retryAt: now })
        expect(failed.status).toBe("failed")
        expect(yield* claimOnce(kind)).toEqual(Option.none())

        const crashing = yield* enqueue({ maxAttempts: 1 })
        yield* claimSome(kind, "worker-a", shortly)
        yield* Effect.sleep(afterShortly)
        expect(yield* claimOnce(kind, "worker-b")).toEqual(Option.none())
        expect(Option.map(yield* queue.get(org.id, crashing.id), (j) => j.status)).toEqual(Option.some("failed"))
      }).pipe(Effect.provide(layer)))
  })
}
