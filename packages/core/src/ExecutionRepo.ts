/**
 * The execution repository port: the record of what ran in each sandbox, kept for
 * `Execution.RETENTION` and purged across organizations by a periodic job.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { Conflict } from "./Errors.js"
import { type Execution, keyset } from "./Execution.js"
import type { ExecutionId, OrganizationId, SandboxId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores executions.
 *
 * @since 0.1.0
 * @category services
 */
export class ExecutionRepo extends Context.Tag("@sightline/core/ExecutionRepo")<
  ExecutionRepo,
  ExecutionRepo.Service
>() {}

export declare namespace ExecutionRepo {
  /** Execution storage. Execution ids are unique across every organization. */
  export interface Service {
    /** Stores a new execution; an id that already exists is a `Conflict`. */
    readonly record: (execution: Execution) => Effect.Effect<void, Conflict>
    /** A page of a sandbox's executions, newest `created_at` first, then id descending. */
    readonly list: (
      organizationId: OrganizationId,
      sandboxId: SandboxId,
      page: Pagination.PageRequest
    ) => Effect.Effect<Pagination.Page<Execution>>
    /**
     * Deletes every execution, of every organization, created strictly before `cutoff` (one at the
     * cutoff is kept) and returns how many were deleted; running it again deletes nothing more.
     */
    readonly purgeOlderThan: (cutoff: DateTime.Utc) => Effect.Effect<number>
  }
}

/**
 * Executions in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<ExecutionRepo, never, MemoryState> = Layer.effect(
  ExecutionRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<ExecutionId, Execution>())

    return ExecutionRepo.of({
      record: (execution) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), execution.id)) {
            return yield* new Conflict({ message: `an execution with id ${execution.id} already exists` })
          }
          yield* Ref.update(table, HashMap.set(execution.id, execution))
        })),
      list: (organizationId, sandboxId, page) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId && row.sandbox_id === sandboxId
          )
          return Pagination.pageInMemory(matching, page, keyset)
        })),
      purgeOlderThan: (cutoff) =>
        state.run(Ref.modify(table, (rows) => {
          const kept = HashMap.filter(rows, (row) => !DateTime.lessThan(row.created_at, cutoff))
          return [HashMap.size(rows) - HashMap.size(kept), kept]
        }))
    })
  })
)
