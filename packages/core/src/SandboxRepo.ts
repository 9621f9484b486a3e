/**
 * The sandbox repository port.
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
import type { ChatId, MemberId, OrganizationId, SandboxId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { heartbeat, keyset, RUNNER_GONE, Sandbox, type StatusFilter, stop } from "./Sandbox.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores sandboxes.
 *
 * @since 0.1.0
 * @category services
 */
export class SandboxRepo extends Context.Tag("@sightline/core/SandboxRepo")<SandboxRepo, SandboxRepo.Service>() {}

export declare namespace SandboxRepo {
  /** Which sandboxes of an organization a listing returns, and which page of them. */
  export interface ListOptions extends Pagination.PageRequest {
    /** `running` also covers sandboxes listed as `stale` or `unknown` (they are stored as running). */
    readonly status: StatusFilter
    /** Only the sandboxes started by this member; omitted: every member's. */
    readonly memberId?: MemberId | undefined
    /** Only the sandboxes started in this audience (`Audience`; `""` is the audience without attributes). */
    readonly audience?: string | undefined
  }

  /** Sandbox storage. Sandbox ids are unique across every organization. */
  export interface Service {
    /** Stores a new sandbox; an id that already exists is a `Conflict`. */
    readonly create: (sandbox: Sandbox) => Effect.Effect<void, Conflict>
    readonly get: (organizationId: OrganizationId, id: SandboxId) => Effect.Effect<Option.Option<Sandbox>>
    /** `get` that locks the row until the surrounding transaction ends (stop, restart). */
    readonly getForUpdate: (organizationId: OrganizationId, id: SandboxId) => Effect.Effect<Option.Option<Sandbox>>
    /** A page of the organization's sandboxes, newest `started_at` first, then id descending. */
    readonly list: (organizationId: OrganizationId, options: ListOptions) => Effect.Effect<Pagination.Page<Sandbox>>
    /** Replaces a stored sandbox (matched by organization and id); `NotFound` when there is none. */
    readonly update: (sandbox: Sandbox) => Effect.Effect<void, NotFound>
    /**
     * Stops, in every organization, the running sandboxes last seen (heartbeat, else start) before
     * `seenBefore`: their runtime is gone (a server that stopped or died). Returns how many.
     */
    readonly releaseStale: (seenBefore: DateTime.Utc, at: DateTime.Utc) => Effect.Effect<number>
    /** Records that a running sandbox was used at `at` (the idle timeout counts from it). */
    readonly touch: (organizationId: OrganizationId, id: SandboxId, at: DateTime.Utc) => Effect.Effect<void>
    /** The member's running sandbox of a chat (the newest), which the agent's `run_python` reuses. */
    readonly findForChat: (
      organizationId: OrganizationId,
      memberId: MemberId,
      chatId: ChatId
    ) => Effect.Effect<Option.Option<Sandbox>>
    /** How many sandboxes run in the organization, and how many of them the member started. */
    readonly countRunning: (
      organizationId: OrganizationId,
      memberId: MemberId
    ) => Effect.Effect<{ readonly organization: number; readonly member: number }>
    /** The running sandboxes, in every organization, unused (else unstarted) since `before`. */
    readonly idle: (before: DateTime.Utc) => Effect.Effect<ReadonlyArray<Sandbox>>
    /** Records a heartbeat for every running sandbox of a runner. */
    readonly heartbeatRunner: (runnerId: string, at: DateTime.Utc) => Effect.Effect<void>
    /** Stops every running sandbox of a runner (it drains or went away), saying why. Returns how many. */
    readonly releaseRunner: (runnerId: string, at: DateTime.Utc, reason: string) => Effect.Effect<number>
  }
}

const running = (rows: HashMap.HashMap<SandboxId, Sandbox>): Array<Sandbox> =>
  Array.from(HashMap.values(rows)).filter((row) => row.status === "running")

/**
 * Sandboxes in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SandboxRepo, never, MemoryState> = Layer.effect(
  SandboxRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const table = yield* state.table(HashMap.empty<SandboxId, Sandbox>())

    const get = (organizationId: OrganizationId, id: SandboxId) =>
      state.run(Effect.map(
        Ref.get(table),
        (rows) => HashMap.get(rows, id).pipe(Option.filter((row) => row.organization_id === organizationId))
      ))

    return SandboxRepo.of({
      create: (sandbox) =>
        state.run(Effect.gen(function*() {
          if (HashMap.has(yield* Ref.get(table), sandbox.sandbox_id)) {
            return yield* new Conflict({ message: `a sandbox with id ${sandbox.sandbox_id} already exists` })
          }
          yield* Ref.update(table, HashMap.set(sandbox.sandbox_id, sandbox))
        })),
      get,
      getForUpdate: get,
      list: (organizationId, options) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const matching = Array.from(HashMap.values(rows)).filter((row) =>
            row.organization_id === organizationId &&
            (options.status === "all" || row.status === options.status) &&
            (options.memberId === undefined || row.member_id === options.memberId) &&
            (options.audience === undefined || (row.audience ?? "") === options.audience)
          )
          return Pagination.pageInMemory(matching, options, keyset)
        })),
      update: (sandbox) =>
        state.run(Effect.gen(function*() {
          const existing = HashMap.get(yield* Ref.get(table), sandbox.sandbox_id)
          if (!Option.exists(existing, (row) => row.organization_id === sandbox.organization_id)) {
            return yield* new NotFound()
          }
          yield* Ref.update(table, HashMap.set(sandbox.sandbox_id, sandbox))
        })),
      releaseStale: (seenBefore, at) =>
        state.run(Effect.gen(function*() {
          const stale = Array.from(HashMap.values(yield* Ref.get(table))).filter((row) =>
            row.status === "running" && DateTime.lessThan(row.last_seen_at ?? row.started_at, seenBefore)
          )
          for (const row of stale) yield* Ref.update(table, HashMap.set(row.sandbox_id, stop(row, at, RUNNER_GONE)))
          return stale.length
        })),
      touch: (organizationId, id, at) =>
        state.run(
          Ref.update(table, (rows) =>
            HashMap.modify(rows, id, (row) =>
              row.organization_id === organizationId && row.status === "running"
                ? new Sandbox({ ...row, last_used_at: at })
                : row))
        ),
      findForChat: (organizationId, memberId, chatId) =>
        state.run(Effect.map(Ref.get(table), (rows) =>
          Option.fromNullable(
            running(rows)
              .filter((row) =>
                row.organization_id === organizationId && row.member_id === memberId && row.chat_id === chatId
              )
              .sort((a, b) => DateTime.toEpochMillis(b.started_at) - DateTime.toEpochMillis(a.started_at))[0]
          ))),
      countRunning: (organizationId, memberId) =>
        state.run(Effect.map(Ref.get(table), (rows) => {
          const organization = running(rows).filter((row) => row.organization_id === organizationId)
          return {
            organization: organization.length,
            member: organization.filter((row) => row.member_id === memberId).length
          }
        })),
      idle: (before) =>
        state.run(
          Effect.map(Ref.get(table), (rows) =>
            running(rows).filter((row) => DateTime.lessThan(row.last_used_at ?? row.started_at, before)))
        ),
      heartbeatRunner: (runnerId, at) =>
        state.run(Ref.update(table, HashMap.map((row) => row.runner_id === runnerId ? heartbeat(row, at) : row))),
      releaseRunner: (runnerId, at, reason) =>
        state.run(Effect.gen(function*() {
          const held = running(yield* Ref.get(table)).filter((row) => row.runner_id === runnerId)
          for (const row of held) yield* Ref.update(table, HashMap.set(row.sandbox_id, stop(row, at, reason)))
          return held.length
        }))
    })
  })
)
