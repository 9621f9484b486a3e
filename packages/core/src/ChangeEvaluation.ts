/**
 * The evaluation check of a library change: the organization's evaluation sets asked of its
 * default model with the library as the change would make it, against the same sets asked with
 * main, before the change merges.
 *
 * - **When.** A revision that touches `semantic/` or `evals/` (definitions, verified queries,
 *   evaluation sets) is queued for one (`queued → running → passed | failed | skipped`). A new
 *   revision queues a new one; the check of an older revision is then stale and its result dropped.
 * - **How it is judged.** It fails when a case the change's tree asks fails where main passed it
 *   (a regression), when a case main does not have fails (a new failure), or when a set could not
 *   be judged. Cases that fail on both sides inform but do not fail it: the change did not cause them.
 * - **What it blocks.** Nothing, unless an OWNERS rule governing a touched path says
 *   `checks=evaluations` (`Approval.requiredChecks`): then the change merges only once the check of
 *   its current revision passed.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import type * as EvalRun from "./EvalRun.js"
import { ChangeId, ConnectorId, EvalRunId, OrganizationId } from "./Ids.js"
import type * as JobQueue from "./JobQueue.js"

/**
 * Where the check is. `skipped` says why in `messages`, and blocks nothing.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal("queued", "running", "passed", "failed", "skipped")
export type Status = typeof Status.Type

/**
 * One set asked on one connector, at the change and at main.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SetResult = Schema.Struct({
  /** The set's library path (`evals/*.yaml`, or a semantic model for its verified queries). */
  set: Schema.String,
  connector_id: ConnectorId,
  /** The run with the change's tree (`GET /v2/evals/runs/{id}` has each case and its difference). */
  run_id: EvalRunId,
  /** The run with main, when main has the set. */
  main_run_id: Schema.optional(EvalRunId),
  passed: Schema.NonNegativeInt,
  failed: Schema.NonNegativeInt,
  /** Questions main passed and the change fails. */
  regressions: Schema.Array(Schema.String),
  /** Questions the change fails that main does not ask. */
  new_failures: Schema.Array(Schema.String),
  /** Why the set could not be judged. */
  error: Schema.optional(Schema.String)
}).annotations({ identifier: "ChangeEvaluationSet" })
export type SetResult = typeof SetResult.Type

/**
 * The evaluation check of a change's revision.
 *
 * @since 0.1.0
 * @category models
 */
export class Evaluation extends Schema.Class<Evaluation>("@sightline/core/ChangeEvaluation/Evaluation")({
  /** The revision it checks; a newer revision queues a new check. */
  revision: Schema.Int.pipe(Schema.positive()),
  status: Status,
  /** The catalogue model asked: the organization's default. */
  model: Schema.optional(Schema.String),
  /** The library commit asked: the change merged with main, or the change's own when they conflict. */
  commit: Schema.optional(Schema.String),
  /** Main's commit it was compared with. */
  main_commit: Schema.optional(Schema.String),
  sets: Schema.Array(SetResult),
  /** Why it was skipped, and what it could not ask (a set that names no connector). */
  messages: Schema.Array(Schema.String),
  /** Whether an OWNERS rule requires it to pass before the change merges, as main's rules say now. */
  required: Schema.Boolean,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * Whether a path's edit can change what the evaluations find.
 *
 * @since 0.1.0
 * @category utils
 */
export const evaluates = (path: string): boolean => path.startsWith("semantic/") || path.startsWith("evals/")

/**
 * The job kind of a queued check.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobKind = "change.evaluate"

/**
 * The payload of a `change.evaluate` job: the change and the revision to check.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobPayload = Schema.Struct({
  organizationId: OrganizationId,
  changeId: ChangeId,
  revision: Schema.Int
})
export type JobPayload = typeof JobPayload.Type

/**
 * The job that runs the check of a change's revision, queued in the filing's transaction. One
 * attempt more when its process dies: the check then starts over.
 *
 * @since 0.1.0
 * @category utils
 */
export const job = (change: {
  readonly organization_id: OrganizationId
  readonly id: ChangeId
  readonly revision: number
}): JobQueue.EnqueueOptions => ({
  organizationId: change.organization_id,
  kind: jobKind,
  payload: {
    organizationId: change.organization_id,
    changeId: change.id,
    revision: change.revision
  } satisfies JobPayload,
  dedupeKey: `${jobKind}:${change.id}:${change.revision}`,
  maxAttempts: 2
})

/**
 * A check queued for a revision.
 *
 * @since 0.1.0
 * @category utils
 */
export const queued = (revision: number, required: boolean, at: DateTime.Utc): Evaluation =>
  new Evaluation({ revision, status: "queued", sets: [], messages: [], required, updated_at: at })

/**
 * A check that could not run, saying why.
 *
 * @since 0.1.0
 * @category utils
 */
export const skipped = (evaluation: Evaluation, message: string, at: DateTime.Utc): Evaluation =>
  new Evaluation({ ...evaluation, status: "skipped", messages: [...evaluation.messages, message], updated_at: at })

/**
 * One set's outcome: its run with the change, against its run with main (none when main lacks the set).
 *
 * @since 0.1.0
 * @category utils
 */
export const setResult = (change: EvalRun.EvalRun, main: EvalRun.EvalRun | undefined): SetResult => {
  const passedOnMain = new Set(main?.results.filter((r) => r.passed).map((r) => r.question) ?? [])
  const askedOnMain = new Set(main?.results.map((r) => r.question) ?? [])
  const failed = change.results.filter((r) => !r.passed).map((r) => r.question)
  const error = change.status !== "completed"
    ? `the run with the change ${change.status}${change.error === undefined ? "" : `: ${change.error}`}`
    : main !== undefined && main.status !== "completed"
    ? `the run with main ${main.status}${main.error === undefined ? "" : `: ${main.error}`}`
    : undefined
  return {
    set: change.set,
    connector_id: change.connector_id,
    run_id: change.id,
    ...(main === undefined ? {} : { main_run_id: main.id }),
    passed: change.results.length - failed.length,
    failed: failed.length,
    regressions: failed.filter((q) => passedOnMain.has(q)),
    new_failures: failed.filter((q) => !askedOnMain.has(q)),
    ...(error === undefined ? {} : { error })
  }
}

/**
 * The finished check: failed on a regression, a new failure, a set not judged or a problem (a set
 * file that does not read); else passed.
 *
 * @since 0.1.0
 * @category utils
 */
export const finish = (
  evaluation: Evaluation,
  sets: ReadonlyArray<SetResult>,
  problems: ReadonlyArray<string>,
  at: DateTime.Utc
): Evaluation =>
  new Evaluation({
    ...evaluation,
    status: problems.length > 0 ||
        sets.some((s) => s.error !== undefined || s.regressions.length > 0 || s.new_failures.length > 0)
      ? "failed"
      : "passed",
    sets,
    messages: [...problems, ...evaluation.messages],
    updated_at: at
  })

/**
 * Whether the check lets the change merge: it passed, on this revision.
 *
 * @since 0.1.0
 * @category utils
 */
export const passes = (evaluation: Evaluation | undefined, revision: number): boolean =>
  evaluation !== undefined && evaluation.revision === revision && evaluation.status === "passed"

/**
 * Why a change whose rules require the check does not merge yet.
 *
 * @since 0.1.0
 * @category utils
 */
export const blockedMessage = (evaluation: Evaluation | undefined): string =>
  evaluation === undefined
    ? "an OWNERS rule requires the evaluation check, and none ran on this revision"
    : evaluation.status === "queued" || evaluation.status === "running"
    ? "an OWNERS rule requires the evaluation check to pass, and it is still running"
    : `an OWNERS rule requires the evaluation check to pass, and it ${evaluation.status}`
