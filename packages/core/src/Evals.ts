/**
 * Evaluations: an evaluation set of the library (`EvalSet`) asked of a model on a connector, each
 * case as a fresh chat, and the answers' rows compared with the right ones (`EvalCompare`).
 *
 * - **Who.** Starting, reading and cancelling runs takes `connector:write` (an administrator's: a
 *   run reads the connector's data for its right answers and spends the model's tokens), and the
 *   run's connector must be usable by the caller: a run on any other is not found (its cases hold
 *   that connector's rows and SQL). A run acts as its starter's session: a key bound to client
 *   attributes neither starts nor reads one, since its rows do not keep to them.
 * - **Where.** A run is queued with its job in one transaction (`eval.run`); any process's worker
 *   takes it (`execute`), so it survives a process that stops: a run found `running` when its job is
 *   claimed again is failed, never left running.
 * - **Progress.** Each case's result is stored as it is judged, and a cancel (from any process) is
 *   seen before the next case.
 * - **Regressions.** A completed run is compared with the last completed run of the same set,
 *   connector and model: the questions that passed there and fail now.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Answers from "./Answers.js"
import { Auditor } from "./Auditor.js"
import { Auth } from "./Auth.js"
import { ChatRepo } from "./ChatRepo.js"
import type * as Chats from "./Chats.js"
import type * as Connector from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { ConnectorRuntime } from "./ConnectorRuntime.js"
import { enforce } from "./Decision.js"
import { type Conflict, InvalidRequest, NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as EvalCompare from "./EvalCompare.js"
import * as EvalRun from "./EvalRun.js"
import { EvalRunRepo } from "./EvalRunRepo.js"
import * as EvalSet from "./EvalSet.js"
import { IdGenerator } from "./IdGenerator.js"
import { EvalRunId, type OrganizationId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import { JobQueue } from "./JobQueue.js"
import { Library } from "./Library.js"
import { ModelCatalogue } from "./Model.js"
import * as Models from "./Models.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as SemanticModel from "./SemanticModel.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The error of a run whose process stopped while it ran.
 *
 * @since 0.1.0
 * @category constants
 */
export const abandonedMessage = "the server process running it stopped before it finished"

/** The most rows a right answer's SQL reads. */
const expectedRowLimit = 10_000

/**
 * The evaluation use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Evals extends Context.Tag("@sightline/core/Evals")<Evals, Evals.Service>() {}

export declare namespace Evals {
  export interface Service {
    /** `POST /v2/evals/runs`: reads the set, and queues the run. */
    readonly start: (
      principal: Policy.Principal,
      request: EvalRun.StartRequest
    ) => Effect.Effect<EvalRun.View, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
    /** `GET /v2/evals/runs/{id}`. */
    readonly get: (
      principal: Policy.Principal,
      id: EvalRunId
    ) => Effect.Effect<EvalRun.View, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/evals/runs`: newest first. */
    readonly list: (
      principal: Policy.Principal,
      params: EvalRun.ListParams
    ) => Effect.Effect<EvalRun.ListResponse, Unauthenticated | PermissionDenied | InvalidRequest>
    /** `GET /v2/evals/compare`: two runs side by side (typically one set with two models). */
    readonly compare: (
      principal: Policy.Principal,
      params: EvalRun.CompareParams
    ) => Effect.Effect<EvalRun.CompareResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `POST /v2/evals/runs/{id}/cancel`: a finished run is a `Conflict`. */
    readonly cancel: (
      principal: Policy.Principal,
      id: EvalRunId
    ) => Effect.Effect<EvalRun.View, Unauthenticated | PermissionDenied | NotFound | Conflict>
    /** Runs a queued run (the worker's, for an `eval.run` job). */
    readonly execute: (payload: EvalRun.JobPayload, sign: Chats.SignAssetUrl) => Effect.Effect<void>
    /**
     * Runs a set here and now for a change's evaluation check, as `principal` (the change's
     * author), and returns the finished run. Trusted: the caller chose the set, connector, model
     * and commit; whatever goes wrong is the run's `failed` status and error.
     */
    readonly runForChange: (
      principal: Policy.Principal,
      request: ChangeRunRequest,
      sign: Chats.SignAssetUrl
    ) => Effect.Effect<EvalRun.EvalRun>
  }
}

/**
 * What a change's evaluation check runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChangeRunRequest {
  readonly set: string
  readonly connectorId: EvalRun.EvalRun["connector_id"]
  readonly model: string
  readonly commit: string
  readonly changeId: NonNullable<EvalRun.EvalRun["change_id"]>
}

/**
 * The set at a path of the library's files: an `evals/*.yaml` file, or a semantic model's verified queries.
 *
 * @since 0.1.0
 * @category utils
 */
export const setAt = (
  files: HashMap.HashMap<string, Uint8Array>,
  path: string
): Either.Either<{ readonly set: EvalSet.EvalSet; readonly model?: SemanticModel.SemanticModel }, string> => {
  const model = /^semantic\/[^/]+\.ya?ml$/.test(path)
  if (!EvalSet.isSetPath(path) && !model) {
    return Either.left(
      `${path} is no evaluation set: sets are evals/<name>.yaml, or a semantic model's verified queries`
    )
  }
  const bytes = HashMap.get(files, path)
  if (Option.isNone(bytes)) return Either.left(`the library has no file ${path}`)
  const text = new TextDecoder().decode(bytes.value)
  if (!model) {
    return Either.mapBoth(EvalSet.parse(path, text), {
      onLeft: (problems) => problems.map(SemanticModel.formatProblem).join("; "),
      onRight: (set) => ({ set })
    })
  }
  return Either.mapBoth(SemanticModel.parse(path, text), {
    onLeft: (problems) => problems.map(SemanticModel.formatProblem).join("; "),
    onRight: (model) => ({ set: EvalSet.ofModel(model), model })
  })
}

/**
 * Builds the use cases over the services in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* EvalRunRepo
  const connectors = yield* ConnectorRepo
  const runtime = yield* ConnectorRuntime
  const library = yield* Library
  const catalogues = yield* ModelCatalogue
  const answers = yield* Answers.Answers
  const chatRepo = yield* ChatRepo
  const auth = yield* Auth
  const jobs = yield* JobQueue
  const tx = yield* Transaction
  const ids = yield* IdGenerator
  const auditor = yield* Auditor
  const events = yield* OutboundEvents

  const admit = (principal: Policy.Principal) =>
    Effect.zipRight(
      enforce(Policy.requirePermission(principal, "connector:write")),
      Policy.clientAttributesJson(principal) === "{}" ? Effect.void : Effect.fail(
        new PermissionDenied({
          message: "permission denied: an evaluation run acts as its starter's session, and a key bound to " +
            "client attributes neither starts nor reads one (its rows would not keep to them)"
        })
      )
    )

  // The runs whose connector the caller may use: the others hold rows and SQL it may not see.
  const readable = (principal: Policy.Principal, runs: ReadonlyArray<EvalRun.EvalRun>) =>
    Effect.gen(function*() {
      const ids = [...new Set(runs.map((run) => run.connector_id))]
      const hidden = new Set(yield* ConnectorUse.unusable(connectors, principal, ids, yield* DateTime.now))
      return runs.filter((run) => !hidden.has(run.connector_id))
    })

  const notFound = (id: EvalRunId) => new NotFound({ message: `evaluation run ${id} not found` })

  const load = (principal: Policy.Principal, id: EvalRunId, forUpdate = false) =>
    Effect.gen(function*() {
      const found = yield* (forUpdate ? repo.getForUpdate : repo.get)(principal.organizationId, id)
      if (Option.isNone(found)) return yield* notFound(id)
      const [run] = yield* readable(principal, [found.value])
      return run === undefined ? yield* notFound(id) : run
    })

  const start = Traced.fn("Evals.start")(function*(principal: Policy.Principal, request: EvalRun.StartRequest) {
    yield* admit(principal)
    yield* ConnectorUse.requireUsable(
      connectors,
      principal,
      [request.connector_id],
      yield* DateTime.now,
      "connector_id"
    )
    const catalogue = yield* catalogues.catalogue(principal.organizationId)
    const allowed = Models.modelsFor(principal, catalogue).models
    const model = request.model === undefined
      ? allowed.find((m) => m.default)
      : allowed.find((m) => m.id === request.model)
    if (model === undefined) {
      return yield* new InvalidRequest({
        message: request.model === undefined
          ? "no model is allowed to you: name one of GET /v2/models in model"
          : `model ${request.model} is not one you may use: see GET /v2/models`
      })
    }
    const view = yield* Effect.catchTag(
      library.snapshotFor(principal, request.commit),
      "NotFound",
      () => new InvalidRequest({ message: `commit ${request.commit} is not a commit of the library` })
    )
    const found = setAt(view.files, request.set)
    if (Either.isLeft(found)) return yield* new InvalidRequest({ message: found.left })
    if (found.right.set.cases.length === 0) {
      return yield* new InvalidRequest({ message: `${request.set} has no case to ask` })
    }
    const run = yield* tx.withTransaction(Effect.gen(function*() {
      const run = EvalRun.make({
        id: EvalRunId.make(yield* ids.uuid),
        organizationId: principal.organizationId,
        set: request.set,
        connectorId: request.connector_id,
        model: model.id,
        commit: Option.getOrUndefined(view.ref),
        createdBy: principal.memberId,
        casesTotal: found.right.set.cases.length,
        at: yield* DateTime.now
      })
      // A fresh id cannot clash; if it did, the store is broken.
      yield* Effect.orDie(repo.create(run))
      const payload: EvalRun.JobPayload = { evalRunId: run.id, organizationId: run.organization_id }
      // One attempt more when its process dies; a run that failed is not retried (it found why).
      yield* jobs.enqueue({
        organizationId: run.organization_id,
        kind: EvalRun.jobKind,
        payload,
        dedupeKey: `${EvalRun.jobKind}:${run.id}`,
        maxAttempts: 2
      })
      yield* auditor.recordBy(principal, {
        action: "eval.run",
        resourceType: "eval_run",
        resourceId: run.id,
        details: { set: run.set, connector_id: run.connector_id, model: run.model }
      })
      return run
    }))
    return EvalRun.toView(run)
  })

  const get = Traced.fn("Evals.get")(function*(principal: Policy.Principal, id: EvalRunId) {
    yield* admit(principal)
    return EvalRun.toView(yield* load(principal, id))
  })

  const compare = Traced.fn("Evals.compare")(function*(principal: Policy.Principal, params: EvalRun.CompareParams) {
    yield* admit(principal)
    return EvalRun.compare(yield* load(principal, params.left), yield* load(principal, params.right))
  })

  const list = Traced.fn("Evals.list")(function*(principal: Policy.Principal, params: EvalRun.ListParams) {
    yield* admit(principal)
    const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor, Schema.UUID)
    const found = yield* repo.list(principal.organizationId, { limit: params.limit, after }, params.set)
    // A page may come out shorter than asked, where runs on other connectors were left out; its
    // cursor still goes on from the last run read.
    return {
      runs: (yield* readable(principal, found.items)).map(EvalRun.toView),
      ...(found.nextCursor === undefined ? {} : { next_cursor: found.nextCursor })
    }
  })

  // Moves a run under a row lock; none when it is gone or the move does not apply.
  const setRun = (
    organizationId: OrganizationId,
    id: EvalRunId,
    move: (run: EvalRun.EvalRun) => Either.Either<EvalRun.EvalRun, unknown>
  ) =>
    tx.withTransaction(Effect.gen(function*() {
      const run = yield* repo.getForUpdate(organizationId, id)
      if (Option.isNone(run)) return Option.none<EvalRun.EvalRun>()
      const moved = move(run.value)
      if (Either.isLeft(moved)) return Option.none<EvalRun.EvalRun>()
      yield* Effect.orDie(repo.update(moved.right))
      // Told once, in the transaction that completes it.
      if (moved.right.status === "completed" && run.value.status !== "completed") {
        yield* events.publish(organizationId, "eval.run.completed", { eval_run_id: id })
      }
      return Option.some(moved.right)
    }))

  const cancel = Traced.fn("Evals.cancel")(function*(principal: Policy.Principal, id: EvalRunId) {
    yield* admit(principal)
    const now = yield* DateTime.now
    return yield* tx.withTransaction(Effect.gen(function*() {
      const run = yield* load(principal, id, true)
      const cancelled = yield* EvalRun.cancel(run, now)
      yield* Effect.orDie(repo.update(cancelled))
      return EvalRun.toView(cancelled)
    }))
  })

  // Asks one question as a fresh chat, and gathers its last table and that table's SQL.
  const ask = (principal: Policy.Principal, run: EvalRun.EvalRun, question: string, sign: Chats.SignAssetUrl) =>
    Effect.gen(function*() {
      const handle = yield* answers.ask(
        principal,
        { question, connector_ids: [run.connector_id], model: run.model },
        sign,
        // The answer reads the library at the run's commit, as the set was read.
        { source: "eval", commit: run.commit }
      )
      const answered = yield* Answers.answered(handle)
      // The tokens the answer spent, from its provenance (stored with it before its end).
      const provenance = (yield* chatRepo.listMessages(principal.organizationId, handle.metadata.chat_id))
        .find((m) => m.id === handle.metadata.id)?.provenance
      const tokens = provenance?.input_tokens === undefined
        ? {}
        : { input_tokens: provenance.input_tokens, output_tokens: provenance.output_tokens ?? 0 }
      return { answered, chatId: handle.metadata.chat_id, tokens }
    })

  // The right answer's rows, and whether they are in an order that counts.
  const expectedOf = (
    principal: Policy.Principal,
    connector: Connector.ConnectorRecord,
    testCase: EvalSet.Case,
    model: SemanticModel.SemanticModel | undefined
  ) =>
    Effect.gen(function*() {
      const expected = testCase.expected
      if (expected.kind === "rows") return { rows: expected.rows, ordered: false }
      // A verified query's SQL reads logical tables: the compiler writes it out, with its defaults,
      // as the member who started the run would have it planned (the set's model governs here).
      const query = expected.kind === "verified_query"
        ? model?.verifiedQueries.find((q) => q.name === expected.name)
        : undefined
      const { params, sql }: { readonly sql: string; readonly params: ReadonlyArray<SemanticCompiler.Param> } =
        expected.kind === "sql"
          ? { sql: expected.sql, params: [] }
          : model === undefined || query === undefined
          ? yield* Effect.fail(`no verified query ${expected.name}`)
          : yield* Either.mapLeft(
            SemanticLayer.plan(principal, connector, {
              model,
              dialect: SemanticLayer.dialectOf(connector),
              source: { kind: "library", model: model.file.name }
            }, { _tag: "Verified", name: query.name, params: {} }),
            (error) => error._tag === "PlanRefused" ? error.reason : error.message
          )
      const result = yield* Effect.mapError(
        runtime.query(connector, {
          sql,
          params,
          clientAttributesJson: "{}",
          maxRows: expectedRowLimit,
          timeoutMillis: 60_000
        }),
        (error) => `the right answer's SQL failed: ${error.message}`
      )
      return { rows: result.rows, ordered: EvalCompare.orders(sql) }
    })

  const execute = (payload: EvalRun.JobPayload, sign: Chats.SignAssetUrl) =>
    Effect.gen(function*() {
      const { evalRunId: id, organizationId } = payload
      const found = yield* repo.get(organizationId, id)
      if (Option.isNone(found)) return
      const now = yield* DateTime.now
      if (found.value.status === "running") {
        // Claimed again: the process that ran it died.
        yield* setRun(organizationId, id, (run) => EvalRun.fail(run, abandonedMessage, now))
        return
      }
      if (found.value.status !== "queued") return
      const fail = (message: string) =>
        Effect.flatMap(DateTime.now, (at) => setRun(organizationId, id, (run) => EvalRun.fail(run, message, at)))
      const started = yield* setRun(organizationId, id, (run) => EvalRun.start(run, now))
      if (Option.isNone(started)) return
      const run = started.value
      const principal = yield* Effect.either(auth.sessionPrincipal(organizationId, run.created_by))
      if (Either.isLeft(principal)) return yield* fail("the member who started it is no longer a member")
      const connector = yield* connectors.get(organizationId, run.connector_id)
      if (Option.isNone(connector)) return yield* fail("the connector was deleted")
      const view = yield* Effect.either(library.snapshotFor(principal.right, run.commit))
      if (Either.isLeft(view)) return yield* fail(`the library could not be read at ${run.commit ?? "main"}`)
      const read = setAt(view.right.files, run.set)
      if (Either.isLeft(read)) return yield* fail(read.left)
      const { model, set } = read.right
      for (const testCase of set.cases) {
        // A cancel from any process shows in the store.
        const current = yield* repo.get(organizationId, id)
        if (Option.isNone(current) || current.value.status !== "running") return
        const began = yield* Clock.currentTimeMillis
        const expected = yield* Effect.either(expectedOf(principal.right, connector.value, testCase, model))
        const asked = yield* Effect.either(ask(principal.right, run, testCase.question, sign))
        const latency = (yield* Clock.currentTimeMillis) - began
        const result: EvalRun.CaseResult = Either.isLeft(asked)
          ? {
            question: testCase.question,
            tags: testCase.tags,
            passed: false,
            error: `the question could not be asked: ${asked.left.message}`,
            latency_ms: latency
          }
          : Either.isLeft(expected)
          ? {
            question: testCase.question,
            tags: testCase.tags,
            passed: false,
            error: expected.left,
            latency_ms: latency,
            chat_id: asked.right.chatId
          }
          : judge(testCase, expected.right, asked.right.answered, latency, asked.right.chatId)
        const withTokens = Either.isRight(asked) ? { ...result, ...asked.right.tokens } : result
        yield* setRun(organizationId, id, (r) => EvalRun.addResult(r, withTokens))
      }
      const at = yield* DateTime.now
      const previous = yield* repo.lastCompleted(
        organizationId,
        { set: run.set, connectorId: run.connector_id, model: run.model },
        run.created_at
      )
      yield* setRun(organizationId, id, (r) => EvalRun.complete(r, at, Option.getOrUndefined(previous)))
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.flatMap(DateTime.now, (at) =>
          Effect.ignore(setRun(
            payload.organizationId,
            payload.evalRunId,
            (run) => EvalRun.fail(run, `the run failed: ${String(cause).split("\n")[0]}`, at)
          )))
      ),
      Effect.asVoid
    )

  const runForChange = (principal: Policy.Principal, request: ChangeRunRequest, sign: Chats.SignAssetUrl) =>
    Effect.gen(function*() {
      const view = yield* Effect.either(library.snapshotFor(principal, request.commit))
      const found = Either.flatMap(Either.mapLeft(view, () => ""), (v) => setAt(v.files, request.set))
      const run = EvalRun.make({
        id: EvalRunId.make(yield* ids.uuid),
        organizationId: principal.organizationId,
        set: request.set,
        connectorId: request.connectorId,
        model: request.model,
        commit: request.commit,
        changeId: request.changeId,
        createdBy: principal.memberId,
        casesTotal: Either.match(found, { onLeft: () => 0, onRight: (read) => read.set.cases.length }),
        at: yield* DateTime.now
      })
      // A fresh id cannot clash; if it did, the store is broken.
      yield* Effect.orDie(repo.create(run))
      yield* execute({ evalRunId: run.id, organizationId: run.organization_id }, sign)
      return Option.getOrElse(yield* repo.get(run.organization_id, run.id), () => run)
    })

  return Evals.of({ start, get, list, compare, cancel, execute, runForChange })
})

/** How one case went: its answer's rows against the right ones. */
const judge = (
  testCase: EvalSet.Case,
  expected: { readonly rows: ReadonlyArray<ReadonlyArray<unknown>>; readonly ordered: boolean },
  answered: Answers.Answered,
  latency: number,
  chatId: EvalRun.CaseResult["chat_id"]
): EvalRun.CaseResult => {
  const comparison = answered.done?.status === "completed"
    ? EvalCompare.compare(expected.rows, answered.rows, { ordered: expected.ordered })
    : { passed: false, difference: `the answer failed: ${answered.done?.error ?? "it ended without an answer"}` }
  return {
    question: testCase.question,
    tags: testCase.tags,
    passed: comparison.passed,
    ...(answered.sql === undefined ? {} : { sql: answered.sql }),
    expected: EvalRun.kept(expected.rows),
    ...(answered.rows === undefined ? {} : { got: EvalRun.kept(answered.rows) }),
    ...(comparison.difference === undefined ? {} : { difference: comparison.difference }),
    latency_ms: latency,
    ...(chatId === undefined ? {} : { chat_id: chatId })
  }
}

/**
 * The evaluation use cases over the services in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Evals, make)

/**
 * What the use cases need.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Layer.Layer.Context<typeof layer>
