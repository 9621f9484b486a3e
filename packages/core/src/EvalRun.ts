/**
 * One run of an evaluation set: each case asked as a fresh chat of the chosen model on the chosen
 * connector, its answer's rows compared with the right ones (`EvalCompare`). Its lifecycle is an
 * agent run's: `queued → running → completed | failed | cancelled`, and `queued → cancelled`.
 * Results are added case by case, so a run shows its progress.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { Conflict } from "./Errors.js"
import { ChangeId, ChatId, ConnectorId, EvalRunId, MemberId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"

/**
 * Where a run is in its lifecycle.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal("queued", "running", "completed", "failed", "cancelled")
export type Status = typeof Status.Type

const Cell = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
/**
 * Rows of JSON cells, as a case's sides and a re-run's are kept.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rows = Schema.Array(Schema.Array(Cell))

/**
 * The most rows of each side a case result keeps.
 *
 * @since 0.1.0
 * @category constants
 */
export const keptRows = 20

const cellValue = (value: unknown): string | number | boolean | null =>
  value === null || value === undefined
    ? null
    : typeof value === "number" || typeof value === "boolean" || typeof value === "string"
    ? value
    : typeof value === "bigint"
    ? Number(value)
    : value instanceof Date
    ? value.toISOString()
    : JSON.stringify(value)

/**
 * The first rows of a result as JSON cells (a case's sides, a re-run's): what is kept to be shown.
 *
 * @since 0.1.0
 * @category utils
 */
export const kept = (
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): ReadonlyArray<ReadonlyArray<Schema.Schema.Type<typeof Cell>>> =>
  rows.slice(0, keptRows).map((row) => row.map(cellValue))

/**
 * How one case went.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CaseResult = Schema.Struct({
  question: Schema.String,
  tags: Schema.Array(Schema.String),
  passed: Schema.Boolean,
  /** The SQL of the answer's last table. */
  sql: Schema.optional(Schema.String),
  /** The first rows of the right answer and of the answer. */
  expected: Schema.optional(Rows),
  got: Schema.optional(Rows),
  /** What differs, when it failed. */
  difference: Schema.optional(Schema.String),
  /** Why the case could not be judged (the right answer's SQL failed, the run failed). */
  error: Schema.optional(Schema.String),
  latency_ms: Schema.Number,
  /** The tokens the answer spent, as its provider reported them (absent when it did not). */
  input_tokens: Schema.optional(Schema.NonNegativeInt),
  output_tokens: Schema.optional(Schema.NonNegativeInt),
  /** The chat the case was asked in. */
  chat_id: Schema.optional(ChatId)
}).annotations({ identifier: "EvalCaseResult" })
export type CaseResult = typeof CaseResult.Type

const fields = {
  id: EvalRunId,
  /** The library path of the set: `evals/*.yaml`, or a semantic model (its verified queries). */
  set: Schema.String,
  connector_id: ConnectorId,
  /** The catalogue id of the model asked. */
  model: Schema.String,
  /** The library commit the set was read at, and the answers read. */
  commit: Schema.optional(Schema.String),
  /** The change whose evaluation check asked for the run; such runs are compared with no other. */
  change_id: Schema.optional(ChangeId),
  status: Status,
  created_by: MemberId,
  cases_total: Schema.Int,
  results: Schema.Array(CaseResult),
  /** Passed cases over all cases, once the run completed. */
  accuracy: Schema.optional(Schema.Number),
  /** The questions the last completed run of the same set, connector and model passed and this one failed. */
  regressions: Schema.optional(Schema.Array(Schema.String)),
  /** That last run. */
  compared_with: Schema.optional(EvalRunId),
  error: Schema.optional(Schema.String),
  created_at: Schema.DateTimeUtc,
  started_at: Schema.optional(Schema.DateTimeUtc),
  finished_at: Schema.optional(Schema.DateTimeUtc)
}

/**
 * A run as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class EvalRun extends Schema.Class<EvalRun>("@sightline/core/EvalRun")({
  ...fields,
  organization_id: OrganizationId
}) {}

/**
 * A run as served.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct({
  ...fields,
  passed: Schema.Int,
  failed: Schema.Int
}).annotations({ identifier: "EvalRun" })
export type View = typeof View.Type

/**
 * The served form of a stored run, with its counts.
 *
 * @since 0.1.0
 * @category utils
 */
export const toView = (run: EvalRun): View => ({
  ...Struct.omit(run, "organization_id"),
  passed: run.results.filter((r) => r.passed).length,
  failed: run.results.filter((r) => !r.passed).length
})

/**
 * The job kind of a queued run.
 *
 * @since 0.1.0
 * @category constants
 */
export const jobKind = "eval.run"

/**
 * The payload of an `eval.run` job: ids only (the worker loads the run).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JobPayload = Schema.Struct({ evalRunId: EvalRunId, organizationId: OrganizationId })
export type JobPayload = typeof JobPayload.Type

/**
 * A new queued run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: EvalRunId
  readonly organizationId: OrganizationId
  readonly set: string
  readonly connectorId: ConnectorId
  readonly model: string
  readonly commit?: string | undefined
  readonly changeId?: ChangeId | undefined
  readonly createdBy: MemberId
  readonly casesTotal: number
  readonly at: DateTime.Utc
}): EvalRun =>
  new EvalRun({
    id: options.id,
    organization_id: options.organizationId,
    set: options.set,
    connector_id: options.connectorId,
    model: options.model,
    ...(options.commit === undefined ? {} : { commit: options.commit }),
    ...(options.changeId === undefined ? {} : { change_id: options.changeId }),
    status: "queued",
    created_by: options.createdBy,
    cases_total: options.casesTotal,
    results: [],
    created_at: options.at
  })

/**
 * The statuses a run may move to from each status.
 *
 * @since 0.1.0
 * @category constants
 */
export const transitions: { readonly [S in Status]: ReadonlyArray<Status> } = {
  queued: ["running", "cancelled"],
  running: ["completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: []
}

const move = (run: EvalRun, to: Status, verb: string, changes: Partial<EvalRun>): Either.Either<EvalRun, Conflict> =>
  transitions[run.status].includes(to)
    ? Either.right(new EvalRun({ ...run, ...changes, status: to }))
    : Either.left(new Conflict({ message: `cannot ${verb} evaluation run ${run.id}: it is ${run.status}` }))

/**
 * `queued → running`.
 *
 * @since 0.1.0
 * @category utils
 */
export const start = (run: EvalRun, at: DateTime.Utc) => move(run, "running", "start", { started_at: at })

/**
 * A case's result, added to a running run.
 *
 * @since 0.1.0
 * @category utils
 */
export const addResult = (run: EvalRun, result: CaseResult): Either.Either<EvalRun, Conflict> =>
  run.status === "running"
    ? Either.right(new EvalRun({ ...run, results: [...run.results, result] }))
    : Either.left(new Conflict({ message: `evaluation run ${run.id} is ${run.status}` }))

/**
 * `running → completed`, with its accuracy and its regressions against `previous` (the last
 * completed run of the same set, connector and model), when there is one.
 *
 * @since 0.1.0
 * @category utils
 */
export const complete = (run: EvalRun, at: DateTime.Utc, previous?: EvalRun) => {
  const passedBefore = new Set(previous?.results.filter((r) => r.passed).map((r) => r.question) ?? [])
  return move(run, "completed", "complete", {
    finished_at: at,
    accuracy: run.results.length === 0 ? 0 : run.results.filter((r) => r.passed).length / run.results.length,
    ...(previous === undefined ? {} : {
      compared_with: previous.id,
      regressions: run.results.filter((r) => !r.passed && passedBefore.has(r.question)).map((r) => r.question)
    })
  })
}

/**
 * `running → failed`, with the reason.
 *
 * @since 0.1.0
 * @category utils
 */
export const fail = (run: EvalRun, error: string, at: DateTime.Utc) =>
  move(run, "failed", "fail", { error, finished_at: at })

/**
 * `queued | running → cancelled`.
 *
 * @since 0.1.0
 * @category utils
 */
export const cancel = (run: EvalRun, at: DateTime.Utc) => move(run, "cancelled", "cancel", { finished_at: at })

/**
 * The keyset position of a run in listings (newest first); adapters must match it.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (run: EvalRun): Pagination.Keyset => ({ at: DateTime.formatIso(run.created_at), id: run.id })

// A set is a library path; a model id and a commit are short names. Longer values are refused by
// the schema, so that no error echoes them.
const setMaxLength = 1024
const nameMaxLength = 200

/**
 * The body of `POST /v2/evals/runs`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StartRequest = Schema.Struct({
  /** The set's library path: `evals/<name>.yaml`, or a semantic model file for its verified queries. */
  set: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(setMaxLength)),
  connector_id: ConnectorId,
  /** The catalogue's model; the organization's default when absent. */
  model: Schema.optional(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(nameMaxLength))),
  /** The library commit to read the set at; main when absent. */
  commit: Schema.optional(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(nameMaxLength)))
}).annotations({ identifier: "StartEvalRunRequest" })
export type StartRequest = typeof StartRequest.Type

/**
 * Query of `GET /v2/evals/runs`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListParams = Schema.Struct({
  limit: Pagination.limitParam(1, 200, 50),
  cursor: Schema.optional(Schema.String),
  /** Only the runs of this set. */
  set: Schema.optional(Schema.String)
})
export type ListParams = typeof ListParams.Type

/**
 * Response of `GET /v2/evals/runs`, newest first; no `next_cursor` on the last page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  runs: Schema.Array(View),
  next_cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "EvalRunList" })
export type ListResponse = typeof ListResponse.Type

/**
 * Query of `GET /v2/evals/compare`: two runs, typically of one set with two models.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CompareParams = Schema.Struct({ left: EvalRunId, right: EvalRunId })
export type CompareParams = typeof CompareParams.Type

const Side = Schema.Struct({
  id: EvalRunId,
  set: Schema.String,
  model: Schema.String,
  connector_id: ConnectorId,
  status: Status,
  accuracy: Schema.optional(Schema.Number),
  passed: Schema.Int,
  failed: Schema.Int
})

/**
 * Response of `GET /v2/evals/compare`: each run's figures, and each question's outcome in both.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CompareResponse = Schema.Struct({
  left: Side,
  right: Side,
  /** Every question of either run, in the left run's order then the right's; absent where a run lacks it. */
  cases: Schema.Array(Schema.Struct({
    question: Schema.String,
    left: Schema.optional(Schema.Boolean),
    right: Schema.optional(Schema.Boolean)
  }))
}).annotations({ identifier: "EvalComparison" })
export type CompareResponse = typeof CompareResponse.Type

/**
 * Two runs side by side.
 *
 * @since 0.1.0
 * @category utils
 */
export const compare = (left: EvalRun, right: EvalRun): CompareResponse => {
  const side = (run: EvalRun) => {
    const view = toView(run)
    return {
      id: run.id,
      set: run.set,
      model: run.model,
      connector_id: run.connector_id,
      status: run.status,
      ...(run.accuracy === undefined ? {} : { accuracy: run.accuracy }),
      passed: view.passed,
      failed: view.failed
    }
  }
  const questions = [...new Set([...left.results, ...right.results].map((r) => r.question))]
  const outcome = (run: EvalRun, question: string) => run.results.find((r) => r.question === question)?.passed
  return {
    left: side(left),
    right: side(right),
    cases: questions.map((question) => {
      const [l, r] = [outcome(left, question), outcome(right, question)]
      return { question, ...(l === undefined ? {} : { left: l }), ...(r === undefined ? {} : { right: r }) }
    })
  }
}
