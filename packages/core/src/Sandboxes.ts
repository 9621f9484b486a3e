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
 * themselves. The mounted commit is remembered with the running sandbox (in this process, like the
 * sandbox itself), so diffs and changes are made against it.
 *
 * Lifecycle: a running sandbox sends a heartbeat every `heartbeatMillis`, stops after
 * `idleTimeoutMillis` without use, and sandboxes whose runtime is gone (their server stopped) are
 * marked stopped: at once when the layer starts with `releaseOnStart: "all"` (one server process, as
 * on PGlite), else once their heartbeat is three intervals old.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
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
import { type ChatId, ExecutionId, type MemberId, type OrganizationId, SandboxId } from "./Ids.js"
import * as connectorUse from "./internal/connectorUse.js"
import { Library } from "./Library.js"
import * as LibraryContext from "./LibraryContext.js"
import { LibraryStore } from "./LibraryStore.js"
import * as Owners from "./Owners.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as Sandbox from "./Sandbox.js"
import { SandboxRepo } from "./SandboxRepo.js"
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
  /** Sandboxes one member may have running on this process at once (default 3). */
  readonly maxRunningPerMember?: number | undefined
  /** Sandboxes one organization may have running on this process at once (default 10). */
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

const encodeView = Schema.encodeSync(Execution.View)
const decodeView = Schema.decodeSync(Execution.View)

/**
 * The dataframe name of a query without one.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultDataframeName = "df"

interface Local {
  readonly organizationId: OrganizationId
  /** The member who started it and the chat it serves, for `forChat`. */
  readonly memberId: MemberId
  readonly chatId: ChatId | undefined
  /** The library commit mounted; none for the empty library. */
  baseRef: Option.Option<string>
  lastUsed: number
}

/** Taking a running slot for a start: the sandbox held one already, took one, or was refused one. */
type Slot =
  | { readonly _tag: "Held" }
  | { readonly _tag: "Added" }
  | { readonly _tag: "Refused"; readonly message: string }

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
    const runtime = yield* Runtime.SandboxRuntime
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

    // The sandboxes this process runs: what was mounted, and when each was last used.
    const local = yield* Ref.make(HashMap.empty<SandboxId, Local>())

    const touch = (id: SandboxId) =>
      Effect.flatMap(DateTime.now, (now) =>
        Ref.update(local, HashMap.modify(id, (entry) => ({ ...entry, lastUsed: DateTime.toEpochMillis(now) }))))

    /** The stored sandbox, if the caller may see it (its owner; `organization:read` for `admin` lookups). */
    const visible = (principal: Policy.Principal, id: SandboxId, admins: boolean) =>
      Effect.flatMap(sandboxes.get(principal.organizationId, id), (found) =>
        Option.isSome(found) &&
          (found.value.member_id === principal.memberId || (admins && seesAll(principal)))
          ? Effect.succeed(found.value)
          : Effect.fail(new NotFound()))

    const notRunning = (id: SandboxId, message?: string) =>
      new Conflict({
        message: message ??
          `sandbox ${id} is not running; restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
      })

    /** The caller's own running sandbox, for work in it. */
    const owned = (principal: Policy.Principal, id: SandboxId, permission: "sandbox:read" | "sandbox:write") =>
      Effect.gen(function*() {
        yield* enforce(Policy.requirePermission(principal, permission))
        const sandbox = yield* visible(principal, id, false)
        if (sandbox.status !== "running") {
          return yield* notRunning(id)
        }
        yield* touch(id)
        return sandbox
      })

    // The runtime's "not running" (it runs on another process, or was lost) reads as a conflict.
    const inRuntime = <A, E>(id: SandboxId, effect: Effect.Effect<A, E | Runtime.SandboxNotRunning>) =>
      Effect.catchIf(
        effect,
        (e): e is Runtime.SandboxNotRunning =>
          e instanceof Runtime.SandboxNotRunning,
        (e) =>
          Effect.fail(notRunning(
            id,
            e.message === "Sandbox is not running"
              ? `sandbox ${id} is not running on this server process; restart it with POST /v2/sandcastles {"sandbox_id": "${id}"}`
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
        files: HashMap.filter(view.files, (_, path) => !Owners.isOwnersFile(path))
      }))

    const list = Traced.fn("Sandboxes.list")(function*(principal: Policy.Principal, params: Sandbox.ListParams) {
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

    const start = Traced.fn("Sandboxes.start")(function*(
      principal: Policy.Principal,
      body: Sandbox.CreateRequest,
      startOptions?: { readonly chatId?: ChatId | undefined }
    ) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:write"))
      const mount = yield* mountable(principal)
      const now = yield* DateTime.now
      const id = body.sandbox_id ?? SandboxId.make(yield* ids.uuid)
      // A slot is taken before anything starts (sandboxes live in this process's memory and on its
      // machine): one member cannot hold every sandbox of the process, nor one organization.
      const slot = yield* Ref.modify(local, (map): readonly [Slot, HashMap.HashMap<SandboxId, Local>] => {
        if (HashMap.has(map, id)) return [{ _tag: "Held" }, map]
        const others = Array.from(HashMap.values(map)).filter((entry) =>
          entry.organizationId === principal.organizationId
        )
        const mine = others.filter((entry) => entry.memberId === principal.memberId).length
        if (mine >= maxRunningPerMember) {
          return [{
            _tag: "Refused",
            message: `you have ${mine} sandboxes running, the most a member may: stop one first`
          }, map]
        }
        if (others.length >= maxRunningPerOrganization) {
          return [{
            _tag: "Refused",
            message: `the organization has ${others.length} sandboxes running, the most it may: stop one first`
          }, map]
        }
        return [
          { _tag: "Added" },
          HashMap.set(map, id, {
            organizationId: principal.organizationId,
            memberId: principal.memberId,
            chatId: startOptions?.chatId,
            baseRef: mount.ref,
            lastUsed: DateTime.toEpochMillis(now)
          })
        ]
      })
      if (slot._tag === "Refused") return yield* new Conflict({ message: slot.message })
      const launch = runtime.start({
        sandboxId: id,
        organizationId: principal.organizationId,
        libraryFiles: mount.files
      })
      const started = yield* tx.withTransaction(Effect.gen(function*() {
        if (body.sandbox_id === undefined) {
          const created = Sandbox.make({
            sandboxId: id,
            organizationId: principal.organizationId,
            memberId: principal.memberId,
            chatId: startOptions?.chatId,
            at: now
          })
          // A fresh uuid: a clash is a broken generator.
          yield* Effect.orDie(sandboxes.create(created))
          yield* launch
          return created
        }
        const stored = yield* sandboxes.getForUpdate(principal.organizationId, id)
        // Someone else's sandbox is invisible, except to admins, who are told only its owner restarts it.
        if (Option.isNone(stored) || (stored.value.member_id !== principal.memberId && !seesAll(principal))) {
          return yield* new NotFound()
        }
        const restarted = yield* Sandbox.restart(stored.value, principal.memberId, now)
        // Running already and alive here: nothing to do. Stored as running but gone from this process
        // (a restarted server): started again.
        if (stored.value.status === "running" && (yield* runtime.status(id)).status === "running") return restarted
        yield* sandboxes.update(restarted).pipe(Effect.orDie)
        yield* launch
        return restarted
      })).pipe(
        // A start that failed gives its slot back.
        Effect.tapErrorCause(() => slot._tag === "Added" ? Ref.update(local, HashMap.remove(id)) : Effect.void)
      )
      yield* Ref.update(
        local,
        HashMap.set(id, {
          organizationId: principal.organizationId,
          memberId: principal.memberId,
          chatId: started.chat_id,
          baseRef: mount.ref,
          lastUsed: DateTime.toEpochMillis(now)
        })
      )
      return { sandbox_id: id, created_at: started.started_at }
    })

    const forChat = Traced.fn("Sandboxes.forChat")(function*(principal: Policy.Principal, chatId: ChatId) {
      const existing = Arr.findFirst(
        HashMap.toEntries(yield* Ref.get(local)),
        ([, entry]) =>
          entry.chatId === chatId && entry.memberId === principal.memberId &&
          entry.organizationId === principal.organizationId
      )
      if (Option.isSome(existing)) {
        const [id] = existing.value
        if ((yield* runtime.status(id)).status === "running") {
          yield* touch(id)
          return id
        }
      }
      return (yield* start(principal, {}, { chatId })).sandbox_id
    })

    const loadDataframe = Traced.fn("Sandboxes.loadDataframe")(
      function*(principal: Policy.Principal, id: SandboxId, rows: Runtime.DataframeRows) {
        yield* owned(principal, id, "sandbox:write")
        return yield* inRuntime(id, runtime.loadDataframe(id, rows))
      }
    )

    const status = Traced.fn("Sandboxes.status")(function*(principal: Policy.Principal, id: SandboxId) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:read"))
      const sandbox = yield* visible(principal, id, true)
      if (sandbox.status === "stopped") return { status: "stopped" as const }
      const live = yield* runtime.status(id)
      if (live.status === "stopped") return { status: "running" as const }
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

    /** Marks a sandbox stopped and discards it in the runtime (both idempotent). */
    const release = (organizationId: OrganizationId, id: SandboxId) =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        yield* tx.withTransaction(Effect.gen(function*() {
          const current = yield* sandboxes.getForUpdate(organizationId, id)
          if (Option.isSome(current)) yield* Effect.orDie(sandboxes.update(Sandbox.stop(current.value, now)))
        }))
        yield* runtime.stop(id)
        yield* Ref.update(local, HashMap.remove(id))
      })

    const stop = Traced.fn("Sandboxes.stop")(function*(principal: Policy.Principal, id: SandboxId) {
      yield* enforce(Policy.requirePermission(principal, "sandbox:write"))
      const sandbox = yield* visible(principal, id, Policy.hasPermission(principal, "organization:write"))
      yield* release(sandbox.organization_id, sandbox.sandbox_id)
      return { success: true }
    })

    const execute = Traced.fn("Sandboxes.execute")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Sandbox.ExecuteRequest,
      source: Execution.Source = "platform_api"
    ) {
      const sandbox = yield* owned(principal, id, "sandbox:write")
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
      const sandbox = yield* owned(principal, id, "sandbox:write")
      const now = yield* DateTime.now
      yield* connectorUse.requireUsable(connectors, principal, [body.connector_id], now, "connector_id")
      const connector = yield* Effect.flatMap(
        connectors.get(principal.organizationId, body.connector_id),
        Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed })
      )
      if (body.library_path === undefined) {
        const refusal = connectorUse.rawSqlRefusal(principal, connector)
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
      const sandbox = yield* owned(principal, id, "sandbox:write")
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
        yield* owned(principal, id, "sandbox:read")
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
        yield* owned(principal, id, "sandbox:read")
        yield* ownersRefused(path)
        const bytes = yield* inRuntime(id, runtime.readFile(id, path))
        if (Option.isNone(bytes)) return yield* new NotFound({ message: "no such file" })
        const name = path.split("/").pop()!
        return { name, bytes: bytes.value, mimeType: Runtime.mimeTypeOf(name) }
      }
    )

    const writeFile = Traced.fn("Sandboxes.writeFile")(
      function*(principal: Policy.Principal, id: SandboxId, path: string, bytes: Uint8Array) {
        yield* owned(principal, id, "sandbox:write")
        yield* ownersRefused(path)
        yield* inRuntime(id, runtime.writeFile(id, path, bytes))
        return { filename: path, size_bytes: bytes.length }
      }
    )

    const deleteFile = Traced.fn("Sandboxes.deleteFile")(
      function*(principal: Policy.Principal, id: SandboxId, path: string) {
        yield* owned(principal, id, "sandbox:write")
        yield* ownersRefused(path)
        const deleted = yield* inRuntime(id, runtime.deleteFile(id, path))
        if (!deleted) return yield* new NotFound({ message: "no such file" })
        return { success: true }
      }
    )

    const baseOf = (id: SandboxId) =>
      Effect.map(Ref.get(local), (all) =>
        Option.match(HashMap.get(all, id), {
          onNone: () => Option.none<string>(),
          onSome: (entry) => entry.baseRef
        }))

    const staged = (id: SandboxId) =>
      Effect.gen(function*() {
        const found = yield* inRuntime(id, runtime.libraryChanges(id))
        return { found, edits: Runtime.toEdits(found), baseRef: yield* baseOf(id) }
      })

    const libraryDiff = Traced.fn("Sandboxes.libraryDiff")(function*(principal: Policy.Principal, id: SandboxId) {
      yield* owned(principal, id, "sandbox:read")
      const { baseRef, edits } = yield* staged(id)
      return yield* library.diff(principal, baseRef, edits)
    })

    /** Mounts `files` as the new snapshot (at `ref`), then writes `extra` over it as edits. */
    const remount = (
      id: SandboxId,
      ref: Option.Option<string>,
      files: Runtime.LibraryFiles,
      extra: ReadonlyArray<readonly [string, Option.Option<Uint8Array>]>
    ) =>
      inRuntime(
        id,
        Effect.gen(function*() {
          yield* runtime.mountLibrary(id, files)
          for (const [path, content] of extra) {
            const target = `${Runtime.libraryDir}/${path}`
            yield* Option.match(content, {
              onNone: () => Effect.asVoid(runtime.deleteFile(id, target)),
              onSome: (bytes) => runtime.writeFile(id, target, bytes)
            }).pipe(Effect.catchTag("InvalidRequest", () => Effect.void))
          }
          yield* Ref.update(local, HashMap.modify(id, (entry) => ({ ...entry, baseRef: ref })))
        })
      )

    const fileChange = Traced.fn("Sandboxes.fileChange")(function*(
      principal: Policy.Principal,
      id: SandboxId,
      body: Change.CreateLibraryChange,
      fileOptions?: { readonly aiGenerated?: boolean | undefined }
    ) {
      const sandbox = yield* owned(principal, id, "sandbox:write")
      const { baseRef, edits, found } = yield* staged(id)
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
          yield* remount(id, main.ref, main.files, [])
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
          yield* remount(id, main.ref, main.files, extra)
        }
      }
      return result
    })

    // Heartbeats and the idle timeout of the sandboxes this process runs.
    const tick = Effect.gen(function*() {
      const now = yield* DateTime.now
      for (const [id, entry] of yield* Ref.get(local)) {
        if (DateTime.toEpochMillis(now) - entry.lastUsed > idleTimeoutMillis) {
          yield* release(entry.organizationId, id)
          continue
        }
        // One read under the row lock: a stop that lands meanwhile is seen, and never undone.
        const alive = yield* tx.withTransaction(Effect.gen(function*() {
          const current = yield* sandboxes.getForUpdate(entry.organizationId, id)
          if (Option.isNone(current) || current.value.status === "stopped") return false
          yield* Effect.ignore(sandboxes.update(Sandbox.heartbeat(current.value, now)))
          return true
        }))
        if (!alive) {
          // Stopped by another process (or deleted): let it go here too.
          yield* runtime.stop(id)
          yield* Ref.update(local, HashMap.remove(id))
        }
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
      available: runtime.available,
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
