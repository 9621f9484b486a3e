/**
 * Runs the evaluation checks of library changes (`ChangeEvaluation`), queued by `Changes` with the
 * filing: any process's worker runs them (`execute`, for a `change.evaluate` job).
 *
 * A check acts as the change's author's session, with the organization's default model as the
 * author may use it, and asks, for every set the change's tree holds:
 * - an `evals/*.yaml` file on the connector it names (`connector:`);
 * - a semantic model's verified queries on each connector the model governs in that tree;
 *
 * once with the change merged into main as main is now (the change's own tree when they conflict),
 * and once with main, each a run of `Evals` marked with the change (`GET /v2/evals/runs/{id}` shows
 * every case). A new revision makes the check stale: it stops at the next set, and its result is
 * dropped.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Auth } from "./Auth.js"
import * as Change from "./Change.js"
import * as ChangeEvaluation from "./ChangeEvaluation.js"
import { ChangeRepo } from "./ChangeRepo.js"
import type * as Chats from "./Chats.js"
import type * as Connector from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import type * as EvalRun from "./EvalRun.js"
import { Evals } from "./Evals.js"
import * as EvalSet from "./EvalSet.js"
import { unusable } from "./internal/connectorUse.js"
import * as Utf8 from "./internal/utf8.js"
import { Library } from "./Library.js"
import type * as LibraryDiff from "./LibraryDiff.js"
import { LibraryStore } from "./LibraryStore.js"
import { ModelCatalogue } from "./Model.js"
import * as Models from "./Models.js"
import type * as Policy from "./Policy.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as SemanticModel from "./SemanticModel.js"
import { Transaction } from "./Transaction.js"

/**
 * The most set-and-connector pairs one check asks (each is two runs).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPairs = 10

/**
 * Queues and runs the evaluation checks of changes.
 *
 * @since 0.1.0
 * @category services
 */
export class ChangeEvaluations extends Context.Tag("@sightline/core/ChangeEvaluations")<
  ChangeEvaluations,
  ChangeEvaluations.Service
>() {}

export declare namespace ChangeEvaluations {
  export interface Service {
    /** Runs a queued check (the worker's, for a `change.evaluate` job). */
    readonly execute: (payload: ChangeEvaluation.JobPayload, sign: Chats.SignAssetUrl) => Effect.Effect<void>
  }
}

/** A set to ask on a connector. */
interface Pair {
  readonly set: string
  readonly connectorId: Connector.ConnectorRecord["id"]
}

/**
 * What a check asks of a tree: each set on its connectors, and what it could not ask (a set that
 * names no connector the author may use) or could not read (a set file with problems).
 *
 * @since 0.1.0
 * @category utils
 */
export const pairsOf = (
  files: LibraryDiff.Files,
  connectors: ReadonlyArray<Connector.ConnectorRecord>
): {
  readonly pairs: ReadonlyArray<Pair>
  readonly notes: ReadonlyArray<string>
  readonly problems: ReadonlyArray<string>
} => {
  const pairs: Array<Pair> = []
  const notes: Array<string> = []
  const problems: Array<string> = []
  const models = SemanticLayer.libraryModels(files)
  for (const path of [...HashMap.keys(files)].sort()) {
    if (EvalSet.isSetPath(path)) {
      const parsed = EvalSet.parse(path, Utf8.decodeText(HashMap.unsafeGet(files, path)))
      if (Either.isLeft(parsed)) {
        problems.push(...parsed.left.map(SemanticModel.formatProblem))
        continue
      }
      const named = parsed.right.connector
      const connector = named === undefined ? undefined : connectors.find((c) => c.config.name === named)
      if (named === undefined) {
        notes.push(`${path} names no connector: add connector: <name> to ask it on changes`)
      } else if (connector === undefined) {
        notes.push(`${path} names connector ${named}, which the author may not use or which does not exist`)
      } else {
        pairs.push({ set: path, connectorId: connector.id })
      }
    } else if (SemanticModel.isModelPath(path)) {
      const model = models.models.find((m) => m.path === path)
      if (model === undefined || EvalSet.ofModel(model).cases.length === 0) continue
      for (const connector of connectors) {
        if (SemanticLayer.governingModel(models, connector) === model) {
          pairs.push({ set: path, connectorId: connector.id })
        }
      }
    }
  }
  return { pairs, notes, problems }
}

/**
 * Builds the service over the stores, the library and `Evals` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* ChangeRepo
  const tx = yield* Transaction
  const auth = yield* Auth
  const library = yield* Library
  const store = yield* LibraryStore
  const connectorRepo = yield* ConnectorRepo
  const catalogues = yield* ModelCatalogue
  const evals = yield* Evals

  // Moves the check of a revision under the change's row lock; none once the change moved on to
  // another revision (the check is stale).
  const moveFor =
    (payload: ChangeEvaluation.JobPayload) =>
    (next: (evaluation: ChangeEvaluation.Evaluation, at: DateTime.Utc) => ChangeEvaluation.Evaluation) =>
      tx.withTransaction(Effect.gen(function*() {
        const change = yield* repo.getForUpdate(payload.organizationId, payload.changeId)
        if (Option.isNone(change)) return Option.none<ChangeEvaluation.Evaluation>()
        const evaluation = change.value.evaluation
        if (change.value.revision !== payload.revision || evaluation?.revision !== payload.revision) {
          return Option.none()
        }
        const moved = next(evaluation, yield* DateTime.now)
        yield* repo.update(Change.recordEvaluation(change.value, moved))
        return Option.some(moved)
      }))

  const execute = (payload: ChangeEvaluation.JobPayload, sign: Chats.SignAssetUrl) => {
    const move = moveFor(payload)
    return Effect.gen(function*() {
      const { changeId, organizationId, revision } = payload
      const found = yield* repo.get(organizationId, changeId)
      if (Option.isNone(found) || found.value.evaluation?.revision !== revision) return
      // `running` here means its process died on the way: it starts over.
      if (found.value.evaluation.status !== "queued" && found.value.evaluation.status !== "running") return
      const change = found.value
      const started = yield* move((evaluation, at) =>
        new ChangeEvaluation.Evaluation({ ...evaluation, status: "running", sets: [], messages: [], updated_at: at })
      )
      if (Option.isNone(started)) return
      const skip = (message: string) => move((evaluation, at) => ChangeEvaluation.skipped(evaluation, message, at))
      // Nothing is left to decide about a change that merged or was denied: its check stops there.
      const settled = Effect.map(
        repo.get(organizationId, changeId),
        (now) =>
          Option.isSome(now) && (now.value.status === "approved" || now.value.status === "denied")
            ? Option.some(now.value.status === "approved" ? "merged" : "denied")
            : Option.none<string>()
      )
      const settledBefore = yield* settled
      if (Option.isSome(settledBefore)) {
        return yield* skip(`the change was ${settledBefore.value} before its check ran`)
      }

      const principal = yield* Effect.either(auth.sessionPrincipal(organizationId, change.author_id))
      if (Either.isLeft(principal)) return yield* skip("the author is no longer a member of the organization")
      const author: Policy.Principal = principal.right
      const catalogue = yield* catalogues.catalogue(organizationId)
      const model = Models.modelsFor(author, catalogue).models.find((m) => m.default)
      if (model === undefined) return yield* skip("no model is allowed to the author")

      // What would land: the change merged into main as it is now.
      const main = yield* library.main(organizationId)
      const merge = yield* Effect.orDie(
        store.merge(organizationId, Option.fromNullable(change.base_ref), main.head, change.git_ref)
      )
      const commit = merge._tag === "Clean"
        ? yield* Effect.orDie(store.commit(organizationId, {
          ...(Option.isSome(main.head) ? { parent: main.head.value } : {}),
          message: `Evaluate change ${change.number} revision ${revision}`,
          author: change.author_id,
          files: merge.files
        }))
        : change.git_ref
      const files = (yield* Effect.orDie(library.snapshotFor(author, commit))).files
      const mainFiles = Option.isSome(main.head)
        ? (yield* Effect.orDie(library.snapshotFor(author, main.head.value))).files
        : HashMap.empty<string, Uint8Array>()

      const all = yield* connectorRepo.list(organizationId)
      const denied = new Set(yield* unusable(connectorRepo, author, all.map((c) => c.id), yield* DateTime.now))
      const { notes, pairs, problems } = pairsOf(files, all.filter((c) => !denied.has(c.id)))
      if (pairs.length === 0 && problems.length === 0) {
        return yield* skip(["the change's tree has no evaluation set to ask", ...notes].join("; "))
      }
      yield* move((evaluation, at) =>
        new ChangeEvaluation.Evaluation({
          ...evaluation,
          model: model.id,
          commit,
          ...(Option.isSome(main.head) ? { main_commit: main.head.value } : {}),
          messages: [
            ...notes,
            ...(pairs.length > maxPairs ? [`only the first ${maxPairs} of ${pairs.length} sets were asked`] : [])
          ],
          updated_at: at
        })
      )

      // Checked before each run: a change that settled meanwhile is not worth the tokens.
      const stop = Effect.flatMap(
        settled,
        Option.match({
          onNone: () => Effect.succeed(false),
          onSome: (how) => Effect.as(skip(`the change was ${how} before its check finished`), true)
        })
      )
      const sets: Array<ChangeEvaluation.SetResult> = []
      for (const pair of pairs.slice(0, maxPairs)) {
        const run = (at: string) =>
          evals.runForChange(author, {
            set: pair.set,
            connectorId: pair.connectorId,
            model: model.id,
            commit: at,
            changeId: change.id
          }, sign)
        if (yield* stop) return
        const withChange = yield* run(commit)
        if (yield* stop) return
        const withMain: EvalRun.EvalRun | undefined = Option.isSome(main.head) && HashMap.has(mainFiles, pair.set)
          ? yield* run(main.head.value)
          : undefined
        sets.push(ChangeEvaluation.setResult(withChange, withMain))
        // Progress shows as each set is judged; a stale check stops here.
        const progressed = yield* move((evaluation, at) =>
          new ChangeEvaluation.Evaluation({ ...evaluation, sets: [...sets], updated_at: at })
        )
        if (Option.isNone(progressed)) return
      }
      yield* move((evaluation, at) => ChangeEvaluation.finish(evaluation, sets, problems, at))
    }).pipe(
      // Whatever broke, the check ends failed, saying so, never left running.
      Effect.catchAllCause((cause) =>
        Effect.ignore(
          move((evaluation, at) =>
            ChangeEvaluation.finish(
              evaluation,
              evaluation.sets,
              [`the check failed: ${String(cause).split("\n")[0]}`],
              at
            )
          )
        )
      ),
      Effect.asVoid
    )
  }

  return ChangeEvaluations.of({ execute })
})

/**
 * The service over the stores, the library and `Evals` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(ChangeEvaluations, make)
