/**
 * The evaluation run repository port.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Conflict, NotFound } from "./Errors.js"
import { type EvalRun, keyset } from "./EvalRun.js"
import type { ConnectorId, EvalRunId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores evaluation runs.
 *
 * @since 0.1.0
 * @category services
 */
export class EvalRunRepo extends Context.Tag("@sightline/core/EvalRunRepo")<EvalRunRepo, EvalRunRepo.Service>() {}

export declare namespace EvalRunRepo {
  export interface Service {
    /** Stores a new run; an id that already exists is a `Conflict`. */
    readonly create: (run: EvalRun) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: EvalRunId) => Effect.Effect<Option.Option<EvalRun>>
    /** `get` that locks the row until the surrounding transaction ends (lifecycle moves). */
    readonly getForUpdate: (organizationId: OrganizationId, id: EvalRunId) => Effect.Effect<Option.Option<EvalRun>>
    /** A page of the organization's runs (of one set when given), newest `created_at` first, then id descending. */
    readonly list: (
      organizationId: OrganizationId,
      page: Pagination.PageRequest,
      set?: string | undefined
    ) => Effect.Effect<Pagination.Page<EvalRun>>
    /**
     * The latest completed run of a set on a connector with a model, created before `before`, not
     * counting the runs of change checks (they read a change's tree, not main).
     */
    readonly lastCompleted: (
      organizationId: OrganizationId,
      key: { readonly set: string; readonly connectorId: ConnectorId; readonly model: string },
      before: DateTime.Utc
    ) => Effect.Effect<Option.Option<EvalRun>>
    /** Replaces a stored run (matched by organization and id); `NotFound` when there is none. */
    readonly update: (run: EvalRun) => Effect.Effect<void, NotFound>
  }
}

/**
 * Runs in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<EvalRunRepo, never, MemoryState> = Layer.effect(
  EvalRunRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const runs = yield* state.table(HashMap.empty<EvalRunId, EvalRun>())
    const find = (organizationId: OrganizationId, id: EvalRunId) =>
      Effect.map(
        Ref.get(runs),
        (rows) => Option.filter(HashMap.get(rows, id), (r) => r.organization_id === organizationId)
      )
    const get = (organizationId: OrganizationId, id: EvalRunId) => state.run(find(organizationId, id))
    return EvalRunRepo.of({
      create: (run) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(runs), run.id)) {
            return yield* new Conflict({ message: `an evaluation run with id ${run.id} already exists` })
          }
          yield* Ref.update(runs, HashMap.set(run.id, run))
        })),
      get,
      getForUpdate: get,
      list: (organizationId, page, set) =>
        state.run(Effect.map(Ref.get(runs), (rows) => {
          const { after } = page
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId && (set === undefined || row.set === set) &&
            (after === undefined || Pagination.compareDesc(keyset(row), after) > 0)
          )
          matching.sort((a, b) => Pagination.compareDesc(keyset(a), keyset(b)))
          return Pagination.pageFromRows(matching.slice(0, page.limit + 1), page.limit, keyset)
        })),
      lastCompleted: (organizationId, key, before) =>
        state.run(Effect.map(Ref.get(runs), (rows) => {
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId && row.set === key.set && row.connector_id === key.connectorId &&
            row.model === key.model && row.status === "completed" && row.change_id === undefined &&
            DateTime.lessThan(row.created_at, before)
          )
          matching.sort((a, b) => Pagination.compareDesc(keyset(a), keyset(b)))
          return Option.fromNullable(matching[0])
        })),
      update: (run) =>
        state.run(Effect.gen(function*() {
          if (Option.isNone(yield* find(run.organization_id, run.id))) return yield* new NotFound()
          yield* Ref.update(runs, HashMap.set(run.id, run))
        }))
    })
  })
)
