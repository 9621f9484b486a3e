/**
 * The service's own metrics, in Effect's metric registry (which an exporter reads: OTLP, or the
 * Prometheus text of `GET /metrics`). Recorded where the event happens, off the hot path: a run's
 * end, a model's tokens, a rate-limit refusal, a sandbox's start and stop. Labels hold ids and
 * names of a bounded set, never a secret or a client attribute.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { JobQueue } from "./JobQueue.js"

/**
 * Answers' runs that ended, by how (`completed`, `failed`).
 *
 * @since 0.1.0
 * @category constants
 */
export const runs = Metric.counter("sightline_runs_total", {
  description: "Answer runs that ended, by status",
  incremental: true
})

/**
 * Tokens the models used, by model, organization and direction (`input`, `output`).
 *
 * @since 0.1.0
 * @category constants
 */
export const tokens = Metric.counter("gen_ai_client_token_usage_total", {
  description: "Model tokens used, by model, organization and type (input, output)",
  incremental: true
})

/**
 * Requests refused by an organization's rate limit.
 *
 * @since 0.1.0
 * @category constants
 */
export const rateLimitRefusals = Metric.counter("sightline_rate_limit_refusals_total", {
  description: "Requests refused by an organization's rate limit",
  incremental: true
})

/**
 * Sandboxes running in this process.
 *
 * @since 0.1.0
 * @category constants
 */
export const sandboxesRunning = Metric.gauge("sightline_sandboxes_running", {
  description: "Sandboxes running in this process"
})

/**
 * Records a run's end.
 *
 * @since 0.1.0
 * @category utils
 */
export const runEnded = (status: "completed" | "failed"): Effect.Effect<void> =>
  Metric.increment(Metric.tagged(runs, "status", status))

/**
 * Records a generation's tokens.
 *
 * @since 0.1.0
 * @category utils
 */
export const tokensUsed = (
  model: string,
  organizationId: string,
  usage: { readonly inputTokens: number; readonly outputTokens: number }
): Effect.Effect<void> => {
  const of = Metric.tagged(Metric.tagged(tokens, "model", model), "organization_id", organizationId)
  return Effect.zipRight(
    Metric.incrementBy(Metric.tagged(of, "type", "input"), usage.inputTokens),
    Metric.incrementBy(Metric.tagged(of, "type", "output"), usage.outputTokens)
  )
}

/**
 * Jobs due and waiting for a worker.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobsDue = Metric.gauge("sightline_jobs_due", { description: "Jobs due and waiting for a worker" })

/**
 * How long the oldest due job has waited, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobsOldestDueSeconds = Metric.gauge("sightline_jobs_oldest_due_seconds", {
  description: "How long the oldest due job has waited, in seconds"
})

/**
 * Reads the queue's backlog into its gauges (run on a schedule where metrics are read).
 *
 * @since 0.1.0
 * @category utils
 */
export const readBacklog: Effect.Effect<void, never, JobQueue> = Effect.gen(function*() {
  const backlog = yield* (yield* JobQueue).backlog(yield* DateTime.now)
  yield* Metric.set(jobsDue, backlog.due)
  yield* Metric.set(jobsOldestDueSeconds, backlog.oldestSeconds)
})
