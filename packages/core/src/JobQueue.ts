/**
 * The job queue port: durable background work (agent runs, playbook runs, webhook-triggered runs,
 * scheduled firings) that several server processes share.
 *
 * A job is claimed with a lease: while the lease runs, no other claimer sees it (in SQL a claim is a
 * `SELECT ... FOR UPDATE SKIP LOCKED` plus an update of the lease columns). A worker that dies simply
 * lets its lease run out and another worker picks the job up. The claimed job is the worker's token:
 * `complete`, `fail` and `renew` take it back and succeed only while the job is still that claim, so a
 * worker whose lease was taken over cannot overwrite the new holder's outcome.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Conflict } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { JobId, OrganizationId } from "./Ids.js"
import { Json } from "./Json.js"
import * as Traced from "./Traced.js"
import { MemoryState } from "./Transaction.js"

/**
 * Where a job is: `pending` (waiting for `run_at`), `running` (claimed under a lease), `completed`,
 * or `failed` (no attempts left, or failed for good). `completed` and `failed` are final.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobStatus = Schema.Literal("pending", "running", "completed", "failed")
export type JobStatus = typeof JobStatus.Type

/**
 * Attempts a job gets when `enqueue` does not say otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxAttempts = 5

/**
 * A job as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class Job extends Schema.Class<Job>("@sightline/core/JobQueue/Job")({
  id: JobId,
  organization_id: OrganizationId,
  /** What to run (`"playbook.run"`, `"agent.run"`, ...); workers claim by kind. */
  kind: Schema.NonEmptyTrimmedString,
  payload: Json,
  status: JobStatus,
  /** Makes `enqueue` idempotent per organization: a second enqueue with it returns the first job. */
  dedupe_key: Schema.optional(Schema.String),
  /** Not claimable before this time. */
  run_at: Schema.DateTimeUtc,
  /** Claims so far (a claim counts as an attempt even if its worker dies). */
  attempts: Schema.Int.pipe(Schema.nonNegative()),
  max_attempts: Schema.Int.pipe(Schema.positive()),
  /** The worker holding the job while `running`. */
  locked_by: Schema.optional(Schema.String),
  /** When the lease of a `running` job runs out and the job becomes claimable again. */
  locked_until: Schema.optional(Schema.DateTimeUtc),
  /** The error of the last failed attempt. */
  last_error: Schema.optional(Schema.String),
  /**
   * The W3C trace context of the span that queued it, when that span was exported: the job's own
   * trace links to it. Implementations record `Traced.traceparent` at `enqueue`.
   */
  traceparent: Schema.optional(Schema.String),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  /** When the job became `completed` or `failed`. */
  finished_at: Schema.optional(Schema.DateTimeUtc)
}) {}

/**
 * What to enqueue.
 *
 * @since 0.1.0
 * @category models
 */
export interface EnqueueOptions {
  readonly organizationId: OrganizationId
  readonly kind: string
  readonly payload: Json
  /** Not before this time; now when omitted. */
  readonly runAt?: DateTime.Utc | undefined
  /** Idempotency key, unique per organization (e.g. `playbook:<id>:<scheduled time>`). */
  readonly dedupeKey?: string | undefined
  /** Attempts before the job fails for good; `defaultMaxAttempts` when omitted. */
  readonly maxAttempts?: number | undefined
}

/**
 * Who claims what, and for how long.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClaimOptions {
  readonly workerId: string
  readonly kinds: Arr.NonEmptyReadonlyArray<string>
  readonly leaseMillis: number
}

/**
 * How an attempt failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface FailOptions {
  readonly error: string
  /** Retry at this time when attempts remain; without it the job fails for good. */
  readonly retryAt?: DateTime.Utc | undefined
}

/**
 * Durable jobs shared by every process over one store.
 *
 * @since 0.1.0
 * @category services
 */
export class JobQueue extends Context.Tag("@sightline/core/JobQueue")<JobQueue, JobQueue.Service>() {}

export declare namespace JobQueue {
  /** The queue. */
  export interface Service {
    /** Adds a `pending` job, or returns the organization's existing job with the same `dedupeKey`. */
    readonly enqueue: (options: EnqueueOptions) => Effect.Effect<Job>
    /**
     * Claims the due job of one of `kinds` with the earliest `run_at`: a `pending` job whose time has
     * come, or a `running` one whose lease ran out. The job comes back `running`, leased to `workerId`
     * for `leaseMillis`, with `attempts` counted. A job whose lease runs out on its last attempt is
     * failed instead of being claimed again.
     */
    readonly claim: (options: ClaimOptions) => Effect.Effect<Option.Option<Job>>
    /** Extends the lease of a claimed job by `leaseMillis` from now (long runs heartbeat with it). */
    readonly renew: (claimed: Job, leaseMillis: number) => Effect.Effect<Job, Conflict>
    /** Marks a claimed job `completed`. `Conflict` when the claim is no longer current. */
    readonly complete: (claimed: Job) => Effect.Effect<Job, Conflict>
    /**
     * Records a failed attempt of a claimed job: back to `pending` at `retryAt` when given and attempts
     * remain, otherwise `failed`. `Conflict` when the claim is no longer current.
     */
    readonly fail: (claimed: Job, options: FailOptions) => Effect.Effect<Job, Conflict>
    /** A job of the organization. */
    readonly get: (organizationId: OrganizationId, id: JobId) => Effect.Effect<Option.Option<Job>>
    /** The jobs due at `at` and waiting (`pending`, `run_at` passed), and how long the oldest has waited. */
    readonly backlog: (at: DateTime.Utc) => Effect.Effect<Backlog>
  }
}

/**
 * The queue's backlog: jobs due and not yet claimed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Backlog {
  readonly due: number
  /** Seconds since the oldest due job's `run_at`; 0 when none is due. */
  readonly oldestSeconds: number
}

/**
 * Is `job` still the claim `claimed` (same holder, same attempt, still running)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isSameClaim = (job: Job, claimed: Job): boolean =>
  job.status === "running" && job.locked_by === claimed.locked_by && job.attempts === claimed.attempts

/**
 * Claim order: earliest `run_at` first, then oldest, then by id.
 *
 * @since 0.1.0
 * @category constants
 */
export const claimOrder: Order.Order<Job> = Order.combineAll([
  Order.mapInput(DateTime.Order, (job: Job) => job.run_at),
  Order.mapInput(DateTime.Order, (job: Job) => job.created_at),
  Order.mapInput(Order.string, (job: Job) => job.id)
])

const lostClaim = (claimed: Job) =>
  new Conflict({ message: `job ${claimed.id} is no longer held by ${claimed.locked_by ?? "this worker"}` })

// Drops the lease fields (exactOptionalPropertyTypes forbids setting them to undefined).
const release = (job: Job) => {
  const { locked_by: _by, locked_until: _until, ...rest } = job
  return rest
}

/**
 * Jobs in memory, in `MemoryState` tables so that an enqueue inside a transaction rolls back with it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<JobQueue, never, MemoryState | IdGenerator> = Layer.effect(
  JobQueue,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const ids = yield* IdGenerator
    const table = yield* state.table(HashMap.empty<JobId, Job>())

    const save = (job: Job) => Effect.as(Ref.update(table, HashMap.set(job.id, job)), job)

    const current = (claimed: Job) =>
      Effect.flatMap(Ref.get(table), (rows) =>
        HashMap.get(rows, claimed.id).pipe(
          Option.filter((job) => isSameClaim(job, claimed)),
          Option.match({ onNone: () => Effect.fail(lostClaim(claimed)), onSome: Effect.succeed })
        ))

    const enqueue = Traced.fn("JobQueue.enqueue")(function*(options: EnqueueOptions) {
      const rows = yield* Ref.get(table)
      if (options.dedupeKey !== undefined) {
        const existing = Arr.findFirst(
          HashMap.values(rows),
          (job) => job.organization_id === options.organizationId && job.dedupe_key === options.dedupeKey
        )
        if (Option.isSome(existing)) return existing.value
      }
      const now = yield* DateTime.now
      const traceparent = yield* Traced.traceparent
      return yield* save(
        new Job({
          id: JobId.make(yield* ids.uuid),
          organization_id: options.organizationId,
          kind: options.kind,
          payload: options.payload,
          status: "pending",
          ...(options.dedupeKey === undefined ? {} : { dedupe_key: options.dedupeKey }),
          run_at: options.runAt ?? now,
          attempts: 0,
          max_attempts: options.maxAttempts ?? defaultMaxAttempts,
          ...(traceparent === undefined ? {} : { traceparent }),
          created_at: now,
          updated_at: now
        })
      )
    })

    const claim = Traced.fn("JobQueue.claim")(function*(options: ClaimOptions) {
      const now = yield* DateTime.now
      const rows = Arr.fromIterable(HashMap.values(yield* Ref.get(table)))
      const ofKind = (job: Job) => options.kinds.includes(job.kind)
      const leaseExpired = (job: Job) =>
        job.status === "running" && job.locked_until !== undefined && DateTime.lessThanOrEqualTo(job.locked_until, now)
      // A lease that ran out on the last attempt means the job keeps killing its workers: stop there.
      for (const job of rows) {
        if (ofKind(job) && leaseExpired(job) && job.attempts >= job.max_attempts) {
          yield* save(
            new Job({
              ...release(job),
              status: "failed",
              last_error: "lease expired on the last attempt",
              updated_at: now,
              finished_at: now
            })
          )
        }
      }
      const due = rows.filter((job) =>
        ofKind(job) && job.attempts < job.max_attempts &&
        ((job.status === "pending" && DateTime.lessThanOrEqualTo(job.run_at, now)) || leaseExpired(job))
      )
      return yield* Option.match(Arr.head(Arr.sort(due, claimOrder)), {
        onNone: () => Effect.succeedNone,
        onSome: (job) =>
          Effect.asSome(save(
            new Job({
              ...job,
              status: "running",
              attempts: job.attempts + 1,
              locked_by: options.workerId,
              locked_until: DateTime.add(now, { millis: options.leaseMillis }),
              updated_at: now
            })
          ))
      })
    })

    const renew = Traced.fn("JobQueue.renew")(function*(claimed: Job, leaseMillis: number) {
      const job = yield* current(claimed)
      const now = yield* DateTime.now
      return yield* save(new Job({ ...job, locked_until: DateTime.add(now, { millis: leaseMillis }), updated_at: now }))
    })

    const complete = Traced.fn("JobQueue.complete")(function*(claimed: Job) {
      const job = yield* current(claimed)
      const now = yield* DateTime.now
      return yield* save(new Job({ ...release(job), status: "completed", updated_at: now, finished_at: now }))
    })

    const fail = Traced.fn("JobQueue.fail")(function*(claimed: Job, options: FailOptions) {
      const job = yield* current(claimed)
      const now = yield* DateTime.now
      const outcome = options.retryAt !== undefined && job.attempts < job.max_attempts
        ? { status: "pending" as const, run_at: options.retryAt }
        : { status: "failed" as const, finished_at: now }
      return yield* save(new Job({ ...release(job), ...outcome, last_error: options.error, updated_at: now }))
    })

    return JobQueue.of({
      enqueue: (options) => state.run(enqueue(options)),
      claim: (options) => state.run(claim(options)),
      renew: (claimed, leaseMillis) => state.run(renew(claimed, leaseMillis)),
      complete: (claimed) => state.run(complete(claimed)),
      fail: (claimed, options) => state.run(fail(claimed, options)),
      get: (organizationId, id) =>
        state.run(Effect.map(
          Ref.get(table),
          (rows) => HashMap.get(rows, id).pipe(Option.filter((job) => job.organization_id === organizationId))
        )),
      backlog: (at) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const due = Array.from(HashMap.values(rows)).filter((job) =>
            job.status === "pending" && DateTime.lessThanOrEqualTo(job.run_at, at)
          )
          const oldest = Math.min(...due.map((job) => job.run_at.epochMillis))
          return { due: due.length, oldestSeconds: due.length === 0 ? 0 : (at.epochMillis - oldest) / 1000 }
        }))
    })
  })
)
