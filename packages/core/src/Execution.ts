/**
 * An execution recorded by a sandbox: one run of Python, bash, SQL or a saved query, with its input
 * in full and a bounded preview of its output. Executions stay listable after the sandbox stops and
 * are purged after `RETENTION`.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import { ExecutionId, OrganizationId, SandboxId } from "./Ids.js"
import * as utf8 from "./internal/utf8.js"
import * as Pagination from "./Pagination.js"

/**
 * What ran: Python, bash, SQL, or a saved library query.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal("python", "bash", "sql", "query")
export type Kind = typeof Kind.Type

/**
 * Where the execution came from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Source = Schema.Literal("platform_api", "chat", "playbook", "agent", "internal")
export type Source = typeof Source.Type

const fields = {
  id: ExecutionId,
  kind: Kind,
  source: Source,
  /** The code, command or query, stored in full. */
  input: Schema.String,
  /** At most `PREVIEW_MAX_BYTES` of output (see `preview`); never generated files or dataframes. */
  output_preview: Schema.String,
  error: Schema.optional(Schema.String),
  duration_ms: Schema.NonNegativeInt,
  created_at: Schema.DateTimeUtc
}

/**
 * An execution as stored: the listed fields plus its organization and sandbox.
 *
 * @since 0.1.0
 * @category models
 */
export class Execution extends Schema.Class<Execution>("@sightline/core/Execution")({
  ...fields,
  organization_id: OrganizationId,
  sandbox_id: SandboxId
}) {}

/**
 * An execution as listed; encoding a stored `Execution` with it leaves the internal fields out.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct(fields).annotations({ identifier: "Execution" })
export type View = typeof View.Type

/**
 * How long execution records are kept.
 *
 * @since 0.1.0
 * @category constants
 */
export const RETENTION: Duration.Duration = Duration.days(30)

/**
 * Records created strictly before this instant are past retention at `now`.
 *
 * @since 0.1.0
 * @category utils
 */
export const retentionCutoff = (now: DateTime.Utc): DateTime.Utc => DateTime.subtractDuration(now, RETENTION)

/**
 * The largest `output_preview`, in UTF-8 bytes, marker included.
 *
 * @since 0.1.0
 * @category constants
 */
export const PREVIEW_MAX_BYTES = 16 * 1024

/**
 * The end of a preview that was cut.
 *
 * @since 0.1.0
 * @category constants
 */
export const TRUNCATION_MARKER = "…[truncated]"

const markerBytes = utf8.byteLength(TRUNCATION_MARKER)

/**
 * The output preview of an execution: the output itself when it fits in `PREVIEW_MAX_BYTES` of
 * UTF-8, else its longest prefix that fits together with `TRUNCATION_MARKER`. The cut falls between
 * code points, so a multi-byte character or a surrogate pair is never split. Only the first 16 KB
 * of a large output are scanned.
 *
 * @since 0.1.0
 * @category utils
 */
export const preview = (output: string): string => {
  const budget = PREVIEW_MAX_BYTES - markerBytes
  let bytes = 0
  let index = 0
  let cut = -1
  for (const character of output) {
    bytes += utf8.codePointBytes(character.codePointAt(0)!)
    if (cut < 0 && bytes > budget) cut = index
    if (bytes > PREVIEW_MAX_BYTES) return output.slice(0, cut) + TRUNCATION_MARKER
    index += character.length
  }
  return output
}

/**
 * The keyset position of an execution in listings (newest first); adapters must match it.
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (execution: Execution): Pagination.Keyset => ({
  at: DateTime.formatIso(execution.created_at),
  id: execution.id
})

/**
 * Query of `GET /v2/sandcastles/{id}/executions`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListParams = Schema.Struct({
  limit: Pagination.limitParam(1, 200, 50),
  cursor: Schema.optional(Schema.String)
})
export type ListParams = typeof ListParams.Type

/**
 * Response of `GET /v2/sandcastles/{id}/executions`, newest first; no `next_cursor` on the last page.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  executions: Schema.Array(View),
  next_cursor: Schema.optional(Schema.String)
})
export type ListResponse = typeof ListResponse.Type
