/**
 * The sandbox read use cases (`GET /v2/sandcastles`, `GET /v2/sandcastles/{id}/executions`): what
 * the store already knows, without a sandbox runtime. Starting, executing and stopping arrive with the
 * runtime.
 *
 * Visibility: a sandbox belongs to the member who started it. `sandbox:read` lists and reads one's
 * own; `organization:read` (admins) also sees everyone's, as the listing's `member_id` suggests. Any
 * other caller gets `NotFound` for a sandbox that is not theirs.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { enforce } from "./Decision.js"
import type { InvalidRequest, PermissionDenied, Unauthenticated } from "./Errors.js"
import { NotFound } from "./Errors.js"
import * as Execution from "./Execution.js"
import { ExecutionRepo } from "./ExecutionRepo.js"
import type { SandboxId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Sandbox from "./Sandbox.js"
import { SandboxRepo } from "./SandboxRepo.js"

/** The sandbox read use cases. */
export class Sandboxes extends Context.Tag("@sightline/core/Sandboxes")<Sandboxes, Sandboxes.Service>() {}

export declare namespace Sandboxes {
  /** The reads of `/v2/sandcastles`. The caller comes first; lookups are scoped to its organization. */
  export interface Service {
    /**
     * `GET /v2/sandcastles` (`sandbox:read`): newest first by cursor; the caller's own sandboxes, or
     * every member's for a caller with `organization:read`. A foreign cursor is `InvalidRequest`.
     */
    readonly list: (
      principal: Policy.Principal,
      params: Sandbox.ListParams
    ) => Effect.Effect<Sandbox.ListResponse, Unauthenticated | PermissionDenied | InvalidRequest>
    /**
     * `GET /v2/sandcastles/{id}/executions` (`sandbox:read` on a sandbox the caller can see): newest
     * first by cursor, readable after the sandbox stopped.
     */
    readonly executions: (
      principal: Policy.Principal,
      id: SandboxId,
      params: Execution.ListParams
    ) => Effect.Effect<Execution.ListResponse, Unauthenticated | PermissionDenied | NotFound | InvalidRequest>
  }
}

/** Does the caller see every member's sandboxes? */
const seesAll = (principal: Policy.Principal): boolean => Policy.hasPermission(principal, "organization:read")

const encodeView = Schema.encodeSync(Execution.View)
const decodeView = Schema.decodeSync(Execution.View)

/** Builds the use cases over the sandbox and execution repositories in context. */
export const make = Effect.gen(function*() {
  const sandboxes = yield* SandboxRepo
  const executions = yield* ExecutionRepo

  const list = Effect.fn("Sandboxes.list")(function*(principal: Policy.Principal, params: Sandbox.ListParams) {
    yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
    const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor, Schema.UUID)
    const page = yield* sandboxes.list(principal.organizationId, {
      status: params.status,
      limit: params.limit,
      after,
      ...(seesAll(principal) ? {} : { memberId: principal.memberId })
    })
    const now = yield* DateTime.now
    return {
      sandboxes: page.items.map((sandbox) => Sandbox.summary(sandbox, now)),
      ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
    }
  })

  const listExecutions = Effect.fn("Sandboxes.executions")(
    function*(principal: Policy.Principal, id: SandboxId, params: Execution.ListParams) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
      const sandbox = yield* sandboxes.get(principal.organizationId, id)
      if (Option.isNone(sandbox) || (sandbox.value.member_id !== principal.memberId && !seesAll(principal))) {
        return yield* new NotFound()
      }
      const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor)
      const page = yield* executions.list(principal.organizationId, id, { limit: params.limit, after })
      return {
        // Through the view schema: the stored row's organization and sandbox never reach the wire.
        executions: page.items.map((execution) => decodeView(encodeView(execution))),
        ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
      }
    }
  )

  return Sandboxes.of({ list, executions: listExecutions })
})

/** The sandbox read use cases over `SandboxRepo` and `ExecutionRepo` in context. */
export const layer = Layer.effect(Sandboxes, make)
