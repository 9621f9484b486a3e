/**
 * The sandcastle use cases (`/v2/sandcastles`): start, status, stop, Python in the persistent kernel,
 * connector rows into a DataFrame, one-shot commands, workspace files, and the Context Library
 * mounted at `library/` with its edits diffed and filed as changes. Every run of code or SQL is
 * recorded as an execution.
 *
 * Visibility: a sandbox belongs to the member who started it. `sandbox:read` lists and reads one's
 * own; `organization:read` (admins) also sees everyone's in listings, their status and executions,
 * and `organization:write` may stop them. Running code, files and library changes are the owner's
 * alone. Any other caller gets `NotFound` for a sandbox that is not theirs.
 *
 * The library is mounted pruned to what the owner may read under OWNERS, and without the OWNERS files
 * themselves. The mounted commit is stored with the sandbox, so diffs and changes are made against it.
 *
 * Placement: a sandbox runs on one server process, its runner (`SandboxRunners`), chosen at start;
 * every operation goes to that runner's runtime, from whichever process serves the request.
 *
 * Lifecycle: the sandboxes of a runner send a heartbeat every `heartbeatMillis`, a sandbox stops after
 * `idleTimeoutMillis` without use (by any process), and sandboxes whose runtime is gone (their server
 * stopped) are marked stopped: at once when the layer starts with `releaseOnStart: "all"` (one server
 * process, as on PGlite), else once their heartbeat is three intervals old.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import * as Change from "./Change.js"
import { Changes } from "./Changes.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import { enforce } from "./Decision.js"
import { PermissionDenied, type Unauthenticated } from "./Errors.js"
import { Conflict, ExecutionFailed, InvalidRequest, NotFound } from "./Errors.js"
import * as Execution from "./Execution.js"
import { ExecutionRepo } from "./ExecutionRepo.js"
import { IdGenerator } from "./IdGenerator.js"
import { type ChatId, ExecutionId, SandboxId } from "./Ids.js"
import * as connectorUse from "./internal/connectorUse.js"
import { Library } from "./Library.js"
import * as LibraryContext from "./LibraryContext.js"
import { LibraryStore } from "./LibraryStore.js"
import * as Owners from "./Owners.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Sandbox from "./Sandbox.js"
import { SandboxRepo } from "./SandboxRepo.js"
import { layerLocal as localRunners, SandboxRunners } from "./SandboxRunners.js"
import * as Runtime from "./SandboxRuntime.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * The sandcastle use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Sandboxes extends Context.Tag("@sightline/core/Sandboxes")<Sandboxes, Sandboxes.Service>() {}

/**
 * A workspace file as served: its bytes, name and type.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileContent {
  readonly name: string
  readonly bytes: Uint8Array
  readonly mimeType: string
}

type Denied = Unauthenticated | PermissionDenied | NotFound

export declare namespace Sandboxes {
  /** The operations of `/v2/sandcastles`. The caller comes first; lookups are scoped to its organization. */
  export interface Service {
    /** Whether sandboxes can start on this server (the agent offers `run_python` only then). */
    readonly available: boolean
    /**
     * The caller's sandbox for a chat on this process, started (with the chat's id) on first use and
     * reused by the chat's later runs: the agent's `run_python` keeps its variables across a chat.
     */
    readonly forChat: (principal: Policy.Principal, chatId: ChatId) => Effect.Effect<SandboxId, Denied | Conflict>
    /** Hands rows to the kernel of the caller's sandbox as a DataFrame (the agent's last query result). */
    readonly loadDataframe: (
      principal: Policy.Principal,
      id: SandboxId,
      rows: Runtime.DataframeRows
    ) => Effect.Effect<Runtime.LoadResult, Denied | Conflict>
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
    ) => Effect.Effect<Execution.ListResponse, Denied | InvalidRequest>
    /**
     * `POST /v2/sandcastles` (`sandbox:write`): a new sandbox, or the restart of the caller's own
     * stopped one (`sandbox_id`). `Conflict` when the runtime cannot start it (and says why).
     */
    readonly start: (
      principal: Policy.Principal,
      body: Sandbox.CreateRequest,
      options?: { readonly chatId?: ChatId | undefined }
    ) => Effect.Effect<Sandbox.CreateResponse, Denied | Conflict>
    /** `GET /v2/sandcastles/{id}`: its status, and the kernel's memory and dataframes while it runs here. */
    readonly status: (principal: Policy.Principal, id: SandboxId) => Effect.Effect<Sandbox.Detail, Denied>
    /** `DELETE /v2/sandcastles/{id}`: stops it and discards its workspace; stopping a stopped one succeeds. */
    readonly stop: (principal: Policy.Principal, id: SandboxId) => Effect.Effect<Sandbox.SuccessResponse, Denied>
    /** `POST /v2/sandcastles/{id}/execute`: Python in the persistent kernel; an exception is a result. */
    readonly execute: (
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.ExecuteRequest,
      source?: Execution.Source
    ) => Effect.Effect<Sandbox.Executed, Denied | Conflict>
    /**
     * `POST /v2/sandcastles/{id}/query`: runs SQL (or a saved library query) on a connector with the
     * chat's rules (read-only unless allowed, the caller's client metadata bound) and hands the rows
     * to the kernel as a DataFrame. A failed query is `InvalidRequest` with the database's words.
     */
    readonly query: (
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.QueryRequest,
      source?: Execution.Source
    ) => Effect.Effect<Sandbox.QueryResponse, Denied | Conflict | InvalidRequest | ExecutionFailed>
    /** `POST /v2/sandcastles/{id}/exec`: a one-shot command; a non-zero exit is a result. */
    readonly exec: (
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.ExecRequest,
      source?: Execution.Source
    ) => Effect.Effect<Sandbox.ExecResponse, Denied | Conflict>
    /** `GET /v2/sandcastles/{id}/files`: a directory's entries (dotfiles hidden); `NotFound` for no directory. */
    readonly listFiles: (
      principal: Policy.Principal,
      id: SandboxId,
      params: Sandbox.ListFilesParams
    ) => Effect.Effect<Sandbox.ListFilesResponse, Denied | Conflict | InvalidRequest>
    /** `GET /v2/sandcastles/{id}/files/{path}`: a file's bytes; OWNERS files and dotfiles are never served. */
    readonly readFile: (
      principal: Policy.Principal,
      id: SandboxId,
      path: string
    ) => Effect.Effect<FileContent, Denied | Conflict | InvalidRequest>
    /** `POST /v2/sandcastles/{id}/files`: writes an uploaded file (never an OWNERS file). */
    readonly writeFile: (
      principal: Policy.Principal,
      id: SandboxId,
      path: string,
      bytes: Uint8Array
    ) => Effect.Effect<Sandbox.UploadResult, Denied | Conflict | InvalidRequest>
    /** `DELETE /v2/sandcastles/{id}/files/{path}`: deletes a file or directory; `NotFound` when there is none. */
    readonly deleteFile: (
      principal: Policy.Principal,
      id: SandboxId,
      path: string
    ) => Effect.Effect<Sandbox.SuccessResponse, Denied | Conflict | InvalidRequest>
    /** `GET /v2/sandcastles/{id}/library/diff`: the library edits against the mounted snapshot. */
    readonly libraryDiff: (
      principal: Policy.Principal,
      id: SandboxId
    ) => Effect.Effect<Change.LibraryDiff, Denied | Conflict | InvalidRequest>
    /**
     * `POST /v2/sandcastles/{id}/library/changes`: files the edits as a change (or a revision). With
     * conflicts, `library/` is re-materialised on main with conflict markers and `.rej` files; when
     * the change merged at once, `library/` is remounted on the new main.
     */
    readonly fileChange: (
      principal: Policy.Principal,
      id: SandboxId,
      body: Change.CreateLibraryChange,
      options?: { readonly aiGenerated?: boolean | undefined }
    ) => Effect.Effect<Change.LibraryChangeResult, Denied | Conflict | InvalidRequest>
  }
}

/**
 * How sandboxes show they are alive and when they are let go.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How often a running sandbox's heartbeat is written (default 60 s). */
  readonly heartbeatMillis?: number | undefined
  /** A sandbox unused for this long is stopped (default 30 minutes). */
  readonly idleTimeoutMillis?: number | undefined
  /**
   * On start: `all` stops every sandbox stored as running (this process is the only one, as on
   * PGlite); `stale` (default) only those whose heartbeat is three intervals old.
   */
  readonly releaseOnStart?: "all" | "stale" | undefined
  /** Sandboxes one member may have running at once (default 3). */
  readonly maxRunningPerMember?: number | undefined
  /** Sandboxes one organization may have running at once (default 10). */
  readonly maxRunningPerOrganization?: number | undefined
}

/**
 * The defaults of `Options`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions = {
  heartbeatMillis: 60_000,
  idleTimeoutMillis: 30 * 60_000,
  maxRunningPerMember: 3,
  maxRunningPerOrganization: 10
} as const

/** Does the caller see every member's sandboxes? */
const seesAll = (principal: Policy.Principal): boolean => Policy.hasPermission(principal, "organization:read")

// A sandbox of the caller's audience only (`Audience`), and its own, or with `admins` any member's
// for a caller who sees them all.
const reachable = (principal: Policy.Principal, sandbox: Sandbox.Sandbox, admins: boolean): boolean =>
  Policy.inAudience(principal, sandbox.audience) &&
  (sandbox.member_id === principal.memberId || (admins && seesAll(principal)))

const encodeView = Schema.encodeSync(Execution.View)
const decodeView = Schema.decodeSync(Execution.View)

/**
 * The dataframe name of a query without one.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultDataframeName = "df"

/**
 * Builds the use cases over the repositories, the runtime, the library and the change use cases in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options = {}) =>
  Effect.gen(function*() {
    const sandboxes = yield* SandboxRepo
    const executions = yield* ExecutionRepo
    // A deployment of several processes provides its runners; otherwise this process runs its own.
    const runners = yield* Effect.serviceOption(SandboxRunners).pipe(Effect.flatMap(Option.match({
      onSome: Effect.succeed,
      onNone: () => Effect.provide(SandboxRunners, localRunners)
    })))
    const library = yield* Library
    const store = yield* LibraryStore
    const changes = yield* Changes
    const connectors = yield* ConnectorRepo
    const connectorRuntime = yield* ConnectorRuntime.ConnectorRuntime
    const ids = yield* IdGenerator
    const tx = yield* Transaction
    const heartbeatMillis = options.heartbeatMillis ?? defaultOptions.heartbeatMillis
    const idleTimeoutMillis = options.idleTimeoutMillis ?? defaultOptions.idleTimeoutMillis
    const maxRunningPerMember = options.maxRunningPerMember ?? defaultOptions.maxRunningPerMember
    const maxRunningPerOrganization = options.maxRunningPerOrganization ?? defaultOptions.maxRunningPerOrganization

    const touch = (sandbox: Sandbox.Sandbox) =>
      Effect.flatMap(DateTime.now, (now) => sandboxes.touch(sandbox.organization_id, sandbox.sandbox_id, now))

    /** The stored sandbox, if the caller may see it (its owner; `organization:read` for `admin` lookups). */
    const visible = (principal: Policy.Principal, id: SandboxId, admins: boolean) =>
      Effect.flatMap(sandboxes.get(principal.organizationId, id), (found) =>
        Option.isSome(found) && reachable(principal, found.value, admins)
          ? Effect.succeed(found.value)
          : Effect.fail(new NotFound()))

    const notRunning = (id: SandboxId, message?: string) =>
      new Conflict({
        message: message ??
          `sandbox ${id} is not running; restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
      })

    /** The caller's own running sandbox, for work in it, and the runtime of its runner. */
    const owned = (principal: Policy.Principal, id: SandboxId, permission: "sandbox:read" | "sandbox:write") =>
      Effect.gen(function*() {
        yield* enforce(Policy.requirePermission(principal, permission))
        const sandbox = yield* visible(principal, id, false)
        if (sandbox.status !== "running") {
          return yield* notRunning(id)
        }
        yield* touch(sandbox)
        return { sandbox, runtime: yield* runners.runtime(sandbox.runner_id) }
      })

    // The runtime's "not running" (its runner lost it, or cannot be reached) reads as a conflict.
    const inRuntime = <A, E>(id: SandboxId, effect: Effect.Effect<A, E | Runtime.SandboxNotRunning>) =>
      Effect.catchIf(
        effect,
        (e): e is Runtime.SandboxNotRunning =>
          e instanceof Runtime.SandboxNotRunning,
        (e) =>
          Effect.fail(notRunning(
            id,
            e.message === "Sandbox is not running"
              ? `sandbox ${id} is no longer running on its server process (it restarted); restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
              : e.message
          ))
      ) as Effect.Effect<A, Exclude<E, Runtime.SandboxNotRunning> | Conflict>

    const record = (
      sandbox: Sandbox.Sandbox,
      entry: {
        readonly kind: Execution.Kind
        readonly source: Execution.Source
        readonly input: string
        readonly output: string
        readonly error?: string | undefined
        readonly durationMs: number
      }
    ) =>
      Effect.gen(function*() {
        const execution = new Execution.Execution({
          id: ExecutionId.make(yield* ids.uuid),
          organization_id: sandbox.organization_id,
          sandbox_id: sandbox.sandbox_id,
          kind: entry.kind,
          source: entry.source,
          // The input may be a model's code that carries a NUL.
          input: Runtime.storableText(entry.input),
          output_preview: Execution.preview(entry.output),
          ...(entry.error === undefined ? {} : { error: entry.error }),
          duration_ms: Math.max(0, Math.round(entry.durationMs)),
          created_at: yield* DateTime.now
        })
        // Ids are fresh uuids: a clash is a broken generator.
        yield* Effect.orDie(executions.record(execution))
      })

    /** The library as the owner may read it, without the OWNERS files (they are never mounted). */
    const mountable = (principal: Policy.Principal) =>
      Effect.map(library.snapshotFor(principal), (view) => ({
        ref: view.ref,
        files: HashMap.filter(view.files, (_, path) =>
          !Owners.isOwnersFile(path))
      }))

    const list = Traced.fn("Sandboxes.list")(function*(principal: Policy.Principal, params: Sandbox.ListParams) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
      const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor, Schema.UUID)
      const page = yield* sandboxes.list(principal.organizationId, {
        status: params.status,
        limit: params.limit,
        after,
        ...(seesAll(principal) ? {} : { memberId: principal.memberId }),
        audience: Policy.audienceOf(principal)
      })
      const now = yield* DateTime.now
      return {
        sandboxes: page.items.map((sandbox) => Sandbox.summary(sandbox, now)),
        ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
      }
    })

    const listExecutions = Traced.fn("Sandboxes.executions")(
      function*(principal: Policy.Principal, id: SandboxId, params: Execution.ListParams) {
        yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
        yield* visible(principal, id, true)
        const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor)
        const page = yield* executions.list(principal.organizationId, id, { limit: params.limit, after })
        return {
          // Through the view schema: the stored row's organization and sandbox never reach the wire.
          executions: page.items.map((execution) => decodeView(encodeView(execution))),
          ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
        }
      }
    )

    /** Refuses a new running sandbox past the member's or the organization's limit (counted in every process). */
    const slotFor = (principal: Policy.Principal) =>
      Effect.gen(function*() {
        const counted = yield* sandboxes.countRunning(principal.organizationId, principal.memberId)
        if (counted.member >= maxRunningPerMember) {
          return yield* new Conflict({
            message: `you have ${counted.member} sandboxes running, the most a member may: stop one first`
          })
        }
        if (counted.organization >= maxRunningPerOrganization) {
          return yield* new Conflict({
            message: `the organization has ${counted.organization} sandboxes running, the most it may: stop one first`
          })
        }
      })

    const start = Traced.fn("Sandboxes.start")(function*(
      principal: Policy.Principal,
      body: Sandbox.CreateRequest,
      startOptions?: { readonly chatId?: ChatId | undefined }
    ) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:write"))
      const mount = yield* mountable(principal)
      const now = yield* DateTime.now
      const id = body.sandbox_id ?? SandboxId.make(yield* ids.uuid)
      const launch = (runnerId: string) =>
        Effect.flatMap(runners.runtime(runnerId), (runtime) =>
          runtime.start({
            sandboxId: id,
            organizationId: principal.organizationId,
            libraryFiles: mount.files
          }))
      const libraryRef = Option.getOrUndefined(mount.ref)
      const started = yield* tx.withTransaction(Effect.gen(function*() {
        if (body.sandbox_id === undefined) {
          yield* slotFor(principal)
          const created = Sandbox.make({
            sandboxId: id,
            organizationId: principal.organizationId,
            memberId: principal.memberId,
            audience: Policy.audienceOf(principal),
            chatId: startOptions?.chatId,
            runnerId: yield* runners.place,
            libraryRef,
            at: now
          })
          // A fresh uuid: a clash is a broken generator.
          yield* Effect.orDie(sandboxes.create(created))
          yield* launch(created.runner_id!)
          return created
        }
        const stored = yield* sandboxes.getForUpdate(principal.organizationId, id)
        // Someone else's sandbox is invisible, except to admins, who are told only its owner restarts it.
        if (Option.isNone(stored) || !reachable(principal, stored.value, true)) {
          return yield* new NotFound()
        }
        // Running already and alive on its runner: nothing to do. Stored as running but gone from its
        // runner (a restarted or lost process): started again, wherever there is room.
        if (stored.value.status === "running") {
          const runtime = yield* runners.runtime(stored.value.runner_id)
          // Restarting one's own running sandbox is the sandbox as it is; anyone else's is denied.
          if ((yield* runtime.status(id)).status === "running") {
            return yield* Sandbox.restart(stored.value, principal.memberId, now, {
              runnerId: stored.value.runner_id ?? runners.self,
              libraryRef: stored.value.library_ref
            })
          }
        } else {
          yield* slotFor(principal)
        }
        const restarted = yield* Sandbox.restart(
          Sandbox.stop(stored.value, now),
          principal.memberId,
          now,
          { runnerId: yield* runners.place, libraryRef }
        )
        yield* sandboxes.update(restarted).pipe(Effect.orDie)
        yield* launch(restarted.runner_id!)
        return restarted
      }))
      return { sandbox_id: id, created_at: started.started_at }
    })

    const forChat = Traced.fn("Sandboxes.forChat")(function*(principal: Policy.Principal, chatId: ChatId) {
      const existing = yield* sandboxes.findForChat(principal.organizationId, principal.memberId, chatId)
      if (Option.isSome(existing)) {
        const runtime = yield* runners.runtime(existing.value.runner_id)
        if ((yield* runtime.status(existing.value.sandbox_id)).status === "running") {
          yield* touch(existing.value)
          return existing.value.sandbox_id
        }
        yield* release(existing.value, Sandbox.RUNNER_GONE)
      }
      return (yield* start(principal, {}, { chatId })).sandbox_id
    })

    const loadDataframe = Traced.fn("Sandboxes.loadDataframe")(
      function*(principal: Policy.Principal, id: SandboxId, rows: Runtime.DataframeRows) {
        const { runtime } = yield* owned(principal, id, "sandbox:write")
        return yield* inRuntime(id, runtime.loadDataframe(id, rows))
      }
    )

    const status = Traced.fn("Sandboxes.status")(function*(principal: Policy.Principal, id: SandboxId) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
      const sandbox = yield* visible(principal, id, true)
      if (sandbox.status === "stopped") {
        return {
          status: "stopped" as const,
          ...(sandbox.stop_reason === undefined ? {} : { message: sandbox.stop_reason })
        }
      }
      const live = yield* Effect.flatMap(runners.runtime(sandbox.runner_id), (runtime) => runtime.status(id))
      // Stored as running, gone from its runner (it restarted, died or cannot be reached now): not
      // written as stopped here, since a runner out of reach for a moment still has it.
      if (live.status === "stopped") {
        return {
          status: "stopped" as const,
          message:
            `its server process does not run it (it stopped, died or cannot be reached); restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
        }
      }
      return {
        status: "running" as const,
        ...(live.memoryUsageBytes === undefined ? {} : { memory_usage: live.memoryUsageBytes }),
        dataframes: live.dataframes.map((df) => ({
          name: df.name,
          num_rows: df.numRows,
          num_cols: df.numCols,
          memory_usage_bytes: df.memoryUsageBytes
        }))
      }
    })

    /** Marks a sandbox stopped and discards it on its runner (both idempotent); `reason` when nobody asked. */
    const release = (sandbox: Sandbox.Sandbox, reason?: string) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const current = yield* tx.withTransaction(Effect.gen(function*() {
          const current = yield* sandboxes.getForUpdate(sandbox.organization_id, sandbox.sandbox_id)
          if (Option.isSome(current)) yield* Effect.orDie(sandboxes.update(Sandbox.stop(current.value, now, reason)))
          return current
        }))
        const runnerId = Option.match(current, { onNone: () => sandbox.runner_id, onSome: (row) => row.runner_id })
        yield* Effect.flatMap(runners.runtime(runnerId), (runtime) => runtime.stop(sandbox.sandbox_id))
      })

    const stop = Traced.fn("Sandboxes.stop")(function*(principal: Policy.Principal, id: SandboxId) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:write"))
      const sandbox = yield* visible(principal, id, Policy.hasPermission(principal, "organization:write"))
      yield* release(sandbox)
      return { success: true }
    })

    const execute = Traced.fn("Sandboxes.execute")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.ExecuteRequest,
      source: Execution.Source = "platform_api"
    ) {
      const { runtime, sandbox } = yield* owned(principal, id, "sandbox:write")
      const result = yield* inRuntime(id, runtime.execute(id, body.code))
      yield* record(sandbox, {
        kind: "python",
        source,
        input: body.code,
        output: (result.output ?? []).join("\n"),
        error: result.error,
        durationMs: result.executionTimeMs
      })
      return {
        output: result.output,
        ...(result.error === undefined ? {} : { error: result.error }),
        execution_time_ms: Math.max(0, Math.round(result.executionTimeMs)),
        files: result.files.map((file) => ({ name: file.name, mime_type: file.mimeType })),
        dataframes: result.dataframes.map((df) => ({ name: df.name, num_rows: df.numRows, num_cols: df.numCols }))
      }
    })

    const query = Traced.fn("Sandboxes.query")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.QueryRequest,
      source: Execution.Source = "platform_api"
    ) {
      const { runtime, sandbox } = yield* owned(principal, id, "sandbox:write")
      const now = yield* DateTime.now
      yield* connectorUse.requireUsable(connectors, principal, [body.connector_id], now, "connector_id")
      const connector = yield* Effect.flatMap(
        connectors.get(principal.organizationId, body.connector_id),
        Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed })
      )
      if (body.library_path === undefined) {
        const refusal = connectorUse.writtenSqlRefusal(principal, connector)
        if (refusal !== undefined) return yield* new PermissionDenied({ message: `permission denied: ${refusal}` })
      }
      let text = body.query ?? ""
      if (body.library_path !== undefined) {
        // Only what the caller may read: a hidden saved query reads as missing.
        const view = yield* library.snapshotFor(principal)
        const saved = LibraryContext.savedQueries(view.files).find((q) => q.path === body.library_path)
        if (saved === undefined) {
          return yield* new InvalidRequest({ message: `library_path: no saved query ${body.library_path}` })
        }
        text = saved.sql
      }
      const bound = body.params === undefined && body.library_path === undefined
        ? { text, params: [], missing: [] }
        : LibraryContext.bindNamedParams(text, body.params ?? {})
      if (bound.missing.length > 0) {
        return yield* new InvalidRequest({ message: `params: missing values for ${bound.missing.join(", ")}` })
      }
      const input = body.library_path ?? text
      const kind = body.library_path === undefined ? "sql" as const : "query" as const
      const started = Date.now()
      const result = yield* Effect.either(connectorRuntime.query(connector, {
        sql: bound.text,
        params: bound.params,
        clientAttributesJson: Policy.clientAttributesJson(principal),
        maxRows: body.max_rows ?? ConnectorRuntime.defaultMaxRows,
        timeoutMillis: ConnectorRuntime.defaultTimeoutMillis
      }))
      if (Either.isLeft(result)) {
        yield* record(sandbox, {
          kind,
          source,
          input,
          output: "",
          error: result.left.message,
          durationMs: Date.now() - started
        })
        return yield* new InvalidRequest({ message: `query failed: ${result.left.message}` })
      }
      const name = body.dataframe_name ?? defaultDataframeName
      const loaded = yield* inRuntime(
        id,
        runtime.loadDataframe(id, {
          name,
          columns: result.right.columns.map((c) => c.name),
          rows: result.right.rows
        })
      )
      const summary = `${loaded.numRows} rows into ${name}${result.right.truncated ? " (truncated at max_rows)" : ""}`
      yield* record(sandbox, {
        kind,
        source,
        input,
        output: loaded.error === undefined ? `${summary}\n${loaded.preview}` : "",
        error: loaded.error,
        durationMs: Date.now() - started
      })
      if (loaded.error !== undefined) return yield* new ExecutionFailed({ message: loaded.error })
      return { preview: loaded.preview, dataframe_name: name, num_rows: loaded.numRows, num_cols: loaded.numCols }
    })

    const exec = Traced.fn("Sandboxes.exec")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.ExecRequest,
      source: Execution.Source = "platform_api"
    ) {
      const { runtime, sandbox } = yield* owned(principal, id, "sandbox:write")
      const started = Date.now()
      const result = yield* inRuntime(id, runtime.exec(id, { command: body.command, kind: body.kind, env: body.env }))
      yield* record(sandbox, {
        kind: body.kind,
        source,
        input: body.command,
        output: result.stderr === "" ? result.stdout : `${result.stdout}${result.stderr}`,
        error: result.error ?? (result.exitCode === 0 ? undefined : `exit code ${result.exitCode}`),
        durationMs: Date.now() - started
      })
      return { stdout: result.stdout, stderr: result.stderr, exit_code: result.exitCode, error: result.error ?? null }
    })

    const ownersRefused = (path: string) =>
      Owners.isOwnersFile(path)
        ? Effect.fail(
          new InvalidRequest({ message: `invalid path ${JSON.stringify(path)}: OWNERS files are never served` })
        )
        : Effect.void

    const listFiles = Traced.fn("Sandboxes.listFiles")(
      function*(principal: Policy.Principal, id: SandboxId, params: Sandbox.ListFilesParams) {
        const { runtime } = yield* owned(principal, id, "sandbox:read")
        const entries = yield* inRuntime(id, runtime.listFiles(id, params.path))
        if (Option.isNone(entries)) return yield* new NotFound({ message: "no such directory" })
        return {
          files: entries.value
            .filter((entry) => entry.isDir || !Owners.isOwnersFile(entry.name))
            .map((entry) => ({
              name: entry.name,
              size_bytes: entry.sizeBytes,
              is_dir: entry.isDir,
              modified_at: entry.modifiedAt
            }))
        }
      }
    )

    const readFile = Traced.fn("Sandboxes.readFile")(
      function*(principal: Policy.Principal, id: SandboxId, path: string) {
        const { runtime } = yield* owned(principal, id, "sandbox:read")
        yield* ownersRefused(path)
        const bytes = yield* inRuntime(id, runtime.readFile(id, path))
        if (Option.isNone(bytes)) return yield* new NotFound({ message: "no such file" })
        const name = path.split("/").pop()!
        return { name, bytes: bytes.value, mimeType: Runtime.mimeTypeOf(name) }
      }
    )

    const writeFile = Traced.fn("Sandboxes.writeFile")(
      function*(principal: Policy.Principal, id: SandboxId, path: string, bytes: Uint8Array) {
        const { runtime } = yield* owned(principal, id, "sandbox:write")
        yield* ownersRefused(path)
        yield* inRuntime(id, runtime.writeFile(id, path, bytes))
        return { filename: path, size_bytes: bytes.length }
      }
    )

    const deleteFile = Traced.fn("Sandboxes.deleteFile")(
      function*(principal: Policy.Principal, id: SandboxId, path: string) {
        const { runtime } = yield* owned(principal, id, "sandbox:write")
        yield* ownersRefused(path)
        const deleted = yield* inRuntime(id, runtime.deleteFile(id, path))
        if (!deleted) return yield* new NotFound({ message: "no such file" })
        return { success: true }
      }
    )

    const staged = (sandbox: Sandbox.Sandbox, runtime: Runtime.SandboxRuntime.Service) =>
      Effect.gen(function*() {
        const found = yield* inRuntime(sandbox.sandbox_id, runtime.libraryChanges(sandbox.sandbox_id))
        return { found, edits: Runtime.toEdits(found), baseRef: Option.fromNullable(sandbox.library_ref) }
      })

    const libraryDiff = Traced.fn("Sandboxes.libraryDiff")(function*(principal: Policy.Principal, id: SandboxId) {
      const { runtime, sandbox } = yield* owned(principal, id, "sandbox:read")
      const { baseRef, edits } = yield* staged(sandbox, runtime)
      return yield* library.diff(principal, baseRef, edits)
    })

    /** Mounts `files` as the new snapshot (at `ref`), then writes `extra` over it as edits. */
    const remount = (
      sandbox: Sandbox.Sandbox,
      runtime: Runtime.SandboxRuntime.Service,
      ref: Option.Option<string>,
      files: Runtime.LibraryFiles,
      extra: ReadonlyArray<readonly [string, Option.Option<Uint8Array>]>
    ) =>
      inRuntime(
        sandbox.sandbox_id,
        Effect.gen(function*() {
          const id = sandbox.sandbox_id
          yield* runtime.mountLibrary(id, files)
          for (const [path, content] of extra) {
            const target = `${Runtime.libraryDir}/${path}`
            yield* Option.match(content, {
              onNone: () => Effect.asVoid(runtime.deleteFile(id, target)),
              onSome: (bytes) => runtime.writeFile(id, target, bytes)
            }).pipe(Effect.catchTag("InvalidRequest", () => Effect.void))
          }
          yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* sandboxes.getForUpdate(sandbox.organization_id, id)
            if (Option.isSome(current)) {
              yield* Effect.orDie(sandboxes.update(
                new Sandbox.Sandbox({
                  ...Struct.omit(current.value, "library_ref"),
                  ...Option.match(ref, { onNone: () => ({}), onSome: (library_ref) => ({ library_ref }) })
                })
              ))
            }
          }))
        })
      )

    const fileChange = Traced.fn("Sandboxes.fileChange")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Change.CreateLibraryChange,
      fileOptions?: { readonly aiGenerated?: boolean | undefined }
    ) {
      const { runtime, sandbox } = yield* owned(principal, id, "sandbox:write")
      const { baseRef, edits, found } = yield* staged(sandbox, runtime)
      const result = yield* changes.create(principal, {
        body,
        baseRef,
        edits,
        chatId: sandbox.chat_id,
        aiGenerated: fileOptions?.aiGenerated
      })
      if (result.status === "approved" || result.has_conflicts) {
        const main = yield* mountable(principal)
        if (result.status === "approved") {
          yield* remount(sandbox, runtime, main.ref, main.files, [])
        } else {
          // Re-materialised on main: the edits that merge apply as they are, the conflicting files
          // carry their markers, and each has a `.rej` with the hunks that could not be applied.
          const merge = yield* Effect.orDie(store.merge(principal.organizationId, baseRef, main.ref, result.git_ref))
          const conflicts = merge._tag === "Conflicted" ? merge.conflicts : []
          const conflicted = new Set(conflicts.map((c) => c.path))
          const encoder = new TextEncoder()
          const extra: Array<readonly [string, Option.Option<Uint8Array>]> = [
            ...found.filter((c) => !conflicted.has(c.path)).map((c) =>
              [c.path, Option.fromNullable(c.content)] as const
            ),
            ...conflicts.flatMap((c) => [
              ...(c.markers === "" ? [] : [[c.path, Option.some(encoder.encode(c.markers))] as const]),
              [`${c.path}.rej`, Option.some(encoder.encode(c.rej))] as const
            ])
          ]
          yield* remount(sandbox, runtime, main.ref, main.files, extra)
        }
      }
      return result
    })

    // Heartbeats of the sandboxes this process runs, and the idle timeout and the release of lost
    // sandboxes everywhere (every process does it; both are idempotent).
    const tick = Effect.gen(function*() {
      const now = yield* DateTime.now
      yield* sandboxes.heartbeatRunner(runners.self, now)
      for (const sandbox of yield* sandboxes.idle(DateTime.subtract(now, { millis: idleTimeoutMillis }))) {
        yield* release(sandbox, `unused for ${Duration.format(Duration.millis(idleTimeoutMillis))}`)
      }
      yield* sandboxes.releaseStale(DateTime.subtract(now, { millis: 3 * heartbeatMillis }), now)
    })

    const now = yield* DateTime.now
    yield* sandboxes.releaseStale(
      options.releaseOnStart === "all"
        ? DateTime.add(now, { days: 1 })
        : DateTime.subtract(now, { millis: 3 * heartbeatMillis }),
      now
    )
    yield* Effect.forkScoped(
      Effect.repeat(Effect.catchAllCause(tick, Effect.logWarning), {
        schedule: Schedule.spaced(Duration.millis(heartbeatMillis))
      })
    )

    return Sandboxes.of({
      available: runners.available,
      forChat,
      loadDataframe,
      list,
      executions: listExecutions,
      start,
      status,
      stop,
      execute,
      query,
      exec,
      listFiles,
      readFile,
      writeFile,
      deleteFile,
      libraryDiff,
      fileChange
    })
  })

/**
 * The use cases with their defaults (heartbeat every 60 s, idle stop after 30 minutes).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = makeWith()

/**
 * The sandcastle use cases with `options`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options) => Layer.scoped(Sandboxes, makeWith(options))

/**
 * The sandcastle use cases over their ports in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = layerWith({})
