/**
 * A sandbox (the spec's "sandcastle"): a Python environment started by one member, with the Context
 * Library mounted into it. This module holds the stored record, its lifecycle, the wire shapes of
 * every Sandcastles operation (the runtime ones included) and the rule for file paths.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { PermissionDenied } from "./Errors.js"
import { ChatId, ConnectorId, MemberId, OrganizationId, SandboxId } from "./Ids.js"
import * as Pagination from "./Pagination.js"

// ---------------------------------------------------------------------------------------------
// Stored record and lifecycle
// ---------------------------------------------------------------------------------------------

/**
 * The status of a stored sandbox.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal("running", "stopped")
export type Status = typeof Status.Type

/**
 * The status shown in listings: a running sandbox whose heartbeat is late is `stale`, then `unknown`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListedStatus = Schema.Literal("running", "stale", "unknown", "stopped")
export type ListedStatus = typeof ListedStatus.Type

/**
 * A sandbox as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class Sandbox extends Schema.Class<Sandbox>("@sightline/core/Sandbox")({
  sandbox_id: SandboxId,
  organization_id: OrganizationId,
  /** The member who started it: its owner, the only one who may restart it. */
  member_id: MemberId,
  /**
   * The audience it was started in (`Audience`: the fingerprint of the starting key's client
   * attributes); absent or `""` without attributes. Only callers of that audience reach it.
   */
  audience: Schema.optional(Schema.String),
  chat_id: Schema.optional(ChatId),
  status: Status,
  /** When it last (re)started. */
  started_at: Schema.DateTimeUtc,
  /** When it was stopped; absent while running. */
  released_at: Schema.optional(Schema.DateTimeUtc),
  /** The runtime's last heartbeat; absent until the first one. */
  last_seen_at: Schema.optional(Schema.DateTimeUtc),
  /** The server process (sandbox runner) that runs it: its kernel and workspace live there only. */
  runner_id: Schema.optional(Schema.String),
  /** The library commit mounted at `library/` (its diffs and changes are made against it); absent: the empty library. */
  library_ref: Schema.optional(Schema.String),
  /** When it was last used (the idle timeout counts from it); absent: since its start. */
  last_used_at: Schema.optional(Schema.DateTimeUtc),
  /** Why it stopped when nobody asked it to (idle, or its server process went away). */
  stop_reason: Schema.optional(Schema.String)
}) {}

/**
 * A running sandbox without a heartbeat for longer than this is listed as `stale`.
 *
 * @since 0.1.0
 * @category constants
 */
export const STALE_AFTER: Duration.Duration = Duration.minutes(5)

/**
 * A running sandbox without a heartbeat for longer than this is listed as `unknown`.
 *
 * @since 0.1.0
 * @category constants
 */
export const UNKNOWN_AFTER: Duration.Duration = Duration.hours(1)

/**
 * The listed status of a sandbox at `now`. A sandbox that has never sent a heartbeat is judged from
 * its start, so a runtime that never came up drifts to `stale` and then `unknown` like one that died.
 *
 * @since 0.1.0
 * @category utils
 */
export const listedStatus = (sandbox: Sandbox, now: DateTime.Utc): ListedStatus => {
  if (sandbox.status === "stopped") return "stopped"
  // Signed on purpose: a heartbeat slightly in the future (clock skew between nodes) is fresh.
  const silenceMillis = DateTime.distance(sandbox.last_seen_at ?? sandbox.started_at, now)
  return silenceMillis <= Duration.toMillis(STALE_AFTER)
    ? "running"
    : silenceMillis <= Duration.toMillis(UNKNOWN_AFTER)
    ? "stale"
    : "unknown"
}

/**
 * A new running sandbox.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly sandboxId: SandboxId
  readonly organizationId: OrganizationId
  readonly memberId: MemberId
  /** The starter's audience (`Policy.audienceOf`); none when absent. */
  readonly audience?: string | undefined
  readonly chatId?: ChatId | undefined
  readonly runnerId?: string | undefined
  readonly libraryRef?: string | undefined
  readonly at: DateTime.Utc
}): Sandbox =>
  new Sandbox({
    sandbox_id: options.sandboxId,
    organization_id: options.organizationId,
    member_id: options.memberId,
    ...(options.audience === undefined || options.audience === "" ? {} : { audience: options.audience }),
    ...(options.chatId === undefined ? {} : { chat_id: options.chatId }),
    ...(options.runnerId === undefined ? {} : { runner_id: options.runnerId }),
    ...(options.libraryRef === undefined ? {} : { library_ref: options.libraryRef }),
    status: "running",
    started_at: options.at
  })

/**
 * Stops (releases) a sandbox. Stopping a stopped sandbox succeeds and changes nothing, so a retried
 * `DELETE` is harmless and the first `released_at` is kept.
 *
 * @since 0.1.0
 * @category utils
 */
export const stop = (sandbox: Sandbox, at: DateTime.Utc, reason?: string): Sandbox =>
  sandbox.status === "stopped" ? sandbox : new Sandbox({
    ...sandbox,
    status: "stopped",
    released_at: at,
    ...(reason === undefined ? {} : { stop_reason: reason })
  })

/**
 * Why a sandbox stopped when its server process went away: what was in its kernel and workspace is
 * lost (they live on that process's machine only), its executions stay listed.
 *
 * @since 0.1.0
 * @category constants
 */
export const RUNNER_GONE =
  "its server process stopped or died: the kernel's variables and the workspace files are lost (its executions stay listed)"

/**
 * Why a sandbox stopped when its server process was shut down (it drained).
 *
 * @since 0.1.0
 * @category constants
 */
export const RUNNER_SHUT_DOWN =
  "its server process was shut down: the kernel's variables and the workspace files are lost (its executions stay listed)"

/**
 * Restarts a stopped sandbox for its owner: a fresh `started_at`, no `released_at`, no heartbeat
 * yet. Restarting one's own running sandbox changes nothing; anyone else is denied.
 *
 * @since 0.1.0
 * @category utils
 */
export const restart = (
  sandbox: Sandbox,
  by: MemberId,
  at: DateTime.Utc,
  placement: { readonly runnerId: string; readonly libraryRef: string | undefined }
): Either.Either<Sandbox, PermissionDenied> => {
  if (sandbox.member_id !== by) {
    return Either.left(new PermissionDenied({ message: "only the member who started a sandbox can restart it" }))
  }
  if (sandbox.status === "running") return Either.right(sandbox)
  return Either.right(
    new Sandbox({
      ...Struct.omit(sandbox, "released_at", "last_seen_at", "last_used_at", "stop_reason", "runner_id", "library_ref"),
      status: "running",
      started_at: at,
      runner_id: placement.runnerId,
      ...(placement.libraryRef === undefined ? {} : { library_ref: placement.libraryRef })
    })
  )
}

/**
 * Records a heartbeat. A late heartbeat of a stopped sandbox is ignored: it must not look alive.
 *
 * @since 0.1.0
 * @category utils
 */
export const heartbeat = (sandbox: Sandbox, at: DateTime.Utc): Sandbox =>
  sandbox.status === "stopped" ? sandbox : new Sandbox({ ...sandbox, last_seen_at: at })

/**
 * The keyset position of a sandbox in listings (newest `started_at` first); adapters must match it.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (sandbox: Sandbox): Pagination.Keyset => ({
  at: DateTime.formatIso(sandbox.started_at),
  id: sandbox.sandbox_id
})

// ---------------------------------------------------------------------------------------------
// Wire shapes of the sandbox operations
// ---------------------------------------------------------------------------------------------

/**
 * The `status` filter of `GET /v2/sandcastles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusFilter = Schema.Literal("running", "stopped", "all")
export type StatusFilter = typeof StatusFilter.Type

/**
 * Query of `GET /v2/sandcastles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListParams = Schema.Struct({
  status: Schema.optionalWith(StatusFilter, { default: () => "running" as const }),
  limit: Pagination.limitParam(1, 200, 50),
  cursor: Schema.optional(Schema.String)
})
export type ListParams = typeof ListParams.Type

/**
 * A sandbox in a listing.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Summary = Schema.Struct({
  sandbox_id: SandboxId,
  status: ListedStatus,
  member_id: MemberId,
  chat_id: Schema.optional(ChatId),
  started_at: Schema.DateTimeUtc,
  released_at: Schema.optional(Schema.DateTimeUtc),
  /** Why it stopped when nobody asked it to: idle, or its server process went away. */
  stop_reason: Schema.optional(Schema.String)
}).annotations({ identifier: "SandboxSummary" })
export type Summary = typeof Summary.Type

/**
 * The listing entry of a stored sandbox at `now`.
 *
 * @since 0.1.0
 * @category utils
 */
export const summary = (sandbox: Sandbox, now: DateTime.Utc): Summary => ({
  sandbox_id: sandbox.sandbox_id,
  status: listedStatus(sandbox, now),
  member_id: sandbox.member_id,
  ...(sandbox.chat_id === undefined ? {} : { chat_id: sandbox.chat_id }),
  started_at: sandbox.started_at,
  ...(sandbox.released_at === undefined ? {} : { released_at: sandbox.released_at }),
  ...(sandbox.stop_reason === undefined ? {} : { stop_reason: sandbox.stop_reason })
})

/**
 * Response of `GET /v2/sandcastles`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  sandboxes: Schema.Array(Summary),
  next_cursor: Schema.optional(Schema.String)
})
export type ListResponse = typeof ListResponse.Type

/**
 * Body of `POST /v2/sandcastles`: with a `sandbox_id`, restart one's own stopped sandbox.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateRequest = Schema.Struct({
  sandbox_id: Schema.optional(SandboxId)
})
export type CreateRequest = typeof CreateRequest.Type

/**
 * Response of `POST /v2/sandcastles`; `created_at` is when this (re)start happened.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateResponse = Schema.Struct({
  sandbox_id: SandboxId,
  created_at: Schema.DateTimeUtc
})
export type CreateResponse = typeof CreateResponse.Type

/**
 * A dataframe held by a sandbox's kernel, with its memory footprint.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DataframeUsage = Schema.Struct({
  name: Schema.String,
  num_rows: Schema.NonNegativeInt,
  num_cols: Schema.NonNegativeInt,
  memory_usage_bytes: Schema.NonNegativeInt
})
export type DataframeUsage = typeof DataframeUsage.Type

/**
 * Response of `GET /v2/sandcastles/{id}`; the runtime fields are absent when it cannot be reached.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Detail = Schema.Struct({
  status: Status,
  /** Resident memory of the kernel in bytes. */
  memory_usage: Schema.optional(Schema.NonNegativeInt),
  dataframes: Schema.optional(Schema.Array(DataframeUsage)),
  /** Why it stopped when nobody asked it to, or why its runtime cannot be reached now. */
  message: Schema.optional(Schema.String)
}).annotations({ identifier: "SandboxDetail" })
export type Detail = typeof Detail.Type

/**
 * Response of `DELETE /v2/sandcastles/{id}` (and of deleting a file).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SuccessResponse = Schema.Struct({ success: Schema.Boolean })
export type SuccessResponse = typeof SuccessResponse.Type

// ---------------------------------------------------------------------------------------------
// File paths
// ---------------------------------------------------------------------------------------------

/**
 * The longest file path accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_PATH_LENGTH = 1024

// Control characters and backslashes have no business in a path and are how traversal hides.
const forbiddenCharacter = /[\u0000-\u001f\u007f\\]/

/**
 * Why a relative file path must be refused, or `undefined` when it is acceptable: no absolute
 * paths, no `.`/`..` or empty segments, no dotfiles anywhere on the path, and never an `OWNERS`
 * file (in any letter case, since some file systems fold it). A directory path may end with `/`.
 *
 * @since 0.1.0
 * @category utils
 */
export const filePathIssue = (path: string, kind: "file" | "directory" = "file"): string | undefined => {
  if (path.length === 0) return "a file path must not be empty"
  if (path.length > MAX_PATH_LENGTH) return `a file path is at most ${MAX_PATH_LENGTH} characters`
  if (forbiddenCharacter.test(path)) return "a file path must not contain backslashes or control characters"
  if (path.startsWith("/")) return "a file path must be relative"
  const segments = (kind === "directory" && path.endsWith("/") ? path.slice(0, -1) : path).split("/")
  for (const segment of segments) {
    if (segment === "") return "a file path must not contain empty segments"
    if (segment === "." || segment === "..") return "a file path must not contain . or .. segments"
    if (segment.startsWith(".")) return "dotfiles are not served"
  }
  if (kind === "file" && segments[segments.length - 1]!.toUpperCase() === "OWNERS") {
    return "OWNERS files are never served"
  }
  return undefined
}

/**
 * A relative file path inside a sandbox's file area (see `filePathIssue`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilePath = Schema.String.pipe(
  Schema.filter((path) => filePathIssue(path) ?? true, {
    identifier: "FilePath",
    description: "a relative path: no . or .. segments, no dotfiles, never an OWNERS file",
    arbitrary: () => (fc) => fc.constantFrom("report.csv", "charts/revenue.png", "queries/top.sql")
  })
)
export type FilePath = typeof FilePath.Type

/**
 * A relative directory path inside a sandbox's file area, optionally ending with `/`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DirectoryPath = Schema.String.pipe(
  Schema.filter((path) => filePathIssue(path, "directory") ?? true, {
    identifier: "DirectoryPath",
    description: "a relative directory path, optionally ending with /: no . or .. segments, no dotfiles",
    arbitrary: () => (fc) => fc.constantFrom("charts", "queries/")
  })
)

/**
 * A saved query: a `.sql` file, relative to the library root.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LibraryQueryPath = FilePath.pipe(
  Schema.filter((path) => path.endsWith(".sql") || "a library query path must name a .sql file", {
    identifier: "LibraryQueryPath",
    description: "a saved query: the path of a .sql file relative to the library root",
    jsonSchema: { pattern: "\\.sql$" },
    arbitrary: () => (fc) => fc.constantFrom("queries/top.sql", "revenue.sql")
  })
)

/**
 * The name of a dataframe in the kernel: it becomes a Python variable, so it must be an identifier.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DataframeName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, {
    identifier: "DataframeName",
    message: () => "a dataframe name must be a Python identifier of at most 128 characters"
  })
)

// ---------------------------------------------------------------------------------------------
// Runtime operations
// ---------------------------------------------------------------------------------------------

/**
 * Body of `POST /v2/sandcastles/{id}/execute`: Python for the persistent kernel.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecuteRequest = Schema.Struct({ code: Schema.String })
export type ExecuteRequest = typeof ExecuteRequest.Type

/**
 * A file produced by an execution.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GeneratedFile = Schema.Struct({
  name: Schema.String,
  url: Schema.String,
  mime_type: Schema.String
})
export type GeneratedFile = typeof GeneratedFile.Type

/**
 * A dataframe created or changed by an execution.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DataframeShape = Schema.Struct({
  name: Schema.String,
  num_rows: Schema.NonNegativeInt,
  num_cols: Schema.NonNegativeInt
})
export type DataframeShape = typeof DataframeShape.Type

/**
 * Response of `POST /v2/sandcastles/{id}/execute`; `output` is null when nothing was printed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecuteResponse = Schema.Struct({
  output: Schema.NullOr(Schema.Array(Schema.String)),
  error: Schema.optional(Schema.String),
  execution_time_ms: Schema.NonNegativeInt,
  files: Schema.Array(GeneratedFile),
  dataframes: Schema.Array(DataframeShape)
})
export type ExecuteResponse = typeof ExecuteResponse.Type

/**
 * What an execution made, as core knows it: the response without the files' URLs, which name a
 * route of the http package (which adds them) and mean nothing to the agent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Executed extends Omit<ExecuteResponse, "files"> {
  readonly files: ReadonlyArray<Omit<GeneratedFile, "url">>
}

/**
 * A value bound to a named parameter of a query: scalars only, so binding is never ambiguous.
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryParam = Schema.Union(Schema.String, Schema.Finite, Schema.Boolean, Schema.Null)
export type QueryParam = typeof QueryParam.Type

/**
 * The most rows a query may load into a dataframe.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_QUERY_ROWS = 1_000_000

/**
 * Body of `POST /v2/sandcastles/{id}/query`: SQL text or a saved library query, exactly one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryRequest = Schema.Struct({
  connector_id: ConnectorId,
  query: Schema.optional(Schema.NonEmptyTrimmedString),
  library_path: Schema.optional(LibraryQueryPath),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: QueryParam })),
  max_rows: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_QUERY_ROWS))),
  dataframe_name: Schema.optional(DataframeName)
}).pipe(
  Schema.filter((request) =>
    request.query !== undefined && request.library_path !== undefined
      ? "set exactly one of query and library_path, not both"
      : request.query === undefined && request.library_path === undefined
      ? "one of query or library_path is required"
      : true, {
    // Inside `allOf`: a `oneOf` of its own would replace the object's schema instead of adding to it.
    jsonSchema: { allOf: [{ oneOf: [{ required: ["query"] }, { required: ["library_path"] }] }] }
  })
)
export type QueryRequest = typeof QueryRequest.Type

/**
 * Response of `POST /v2/sandcastles/{id}/query`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryResponse = Schema.Struct({
  /** A text rendering of the first rows. */
  preview: Schema.String,
  dataframe_name: Schema.String,
  num_rows: Schema.NonNegativeInt,
  num_cols: Schema.NonNegativeInt
})
export type QueryResponse = typeof QueryResponse.Type

/**
 * Query of `GET /v2/sandcastles/{id}/files`: a directory, the file area's root when absent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListFilesParams = Schema.Struct({ path: Schema.optional(DirectoryPath) })
export type ListFilesParams = typeof ListFilesParams.Type

/**
 * An entry of a directory listing.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileEntry = Schema.Struct({
  name: Schema.String,
  size_bytes: Schema.NonNegativeInt,
  is_dir: Schema.Boolean,
  modified_at: Schema.DateTimeUtc
})
export type FileEntry = typeof FileEntry.Type

/**
 * Response of `GET /v2/sandcastles/{id}/files`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListFilesResponse = Schema.Struct({ files: Schema.Array(FileEntry) })
export type ListFilesResponse = typeof ListFilesResponse.Type

/**
 * Response of `POST /v2/sandcastles/{id}/files`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UploadResult = Schema.Struct({
  filename: Schema.String,
  size_bytes: Schema.NonNegativeInt
})
export type UploadResult = typeof UploadResult.Type

/**
 * The interpreter of a one-shot command.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecKind = Schema.Literal("bash", "python")
export type ExecKind = typeof ExecKind.Type

/**
 * An environment variable name as POSIX shells accept it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    identifier: "EnvName",
    message: () => "an environment variable name must be letters, digits and underscores, not starting with a digit"
  })
)

/**
 * Body of `POST /v2/sandcastles/{id}/exec`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecRequest = Schema.Struct({
  command: Schema.NonEmptyString,
  kind: Schema.optionalWith(ExecKind, { default: () => "bash" as const }),
  env: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.String }).pipe(
      // A refined record key would silently drop a bad name; reject it instead.
      Schema.filter((env) => {
        const bad = Object.keys(env).find((name) => !Schema.is(EnvName)(name))
        return bad === undefined || `invalid environment variable name: ${JSON.stringify(bad)}`
      })
    )
  )
})
export type ExecRequest = typeof ExecRequest.Type

/**
 * Response of `POST /v2/sandcastles/{id}/exec`. A non-zero exit is a result, not an error: `error`
 * is null when the command ran and says why when it could not run or was killed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecResponse = Schema.Struct({
  stdout: Schema.String,
  stderr: Schema.String,
  exit_code: Schema.Int,
  error: Schema.NullOr(Schema.String)
})
export type ExecResponse = typeof ExecResponse.Type
