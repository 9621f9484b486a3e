/**
 * SQL a caller writes, run on a connector it may use: read-only (the connector runtime runs every
 * statement in a read-only transaction, which the database enforces), one statement, bound to the
 * caller's client attributes (row-level security as the caller's key carries it), capped in rows and
 * time. The MCP server's `run_sql` tool runs through it.
 *
 * Who may: a caller with `chat:write` (running SQL is what asking a question does) on a connector it
 * may use; another organization's connector, or one not shared with the caller, is `InvalidRequest`
 * naming it, as for a chat's `connector_ids`. A key with client attributes runs SQL only on a
 * connector whose database enforces them (signed session metadata), as a chat's `run_sql` step.
 * An admin can turn it off for the organization (the `mcp_run_sql` setting): then nobody may.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import { enforce } from "./Decision.js"
import type { Unauthenticated } from "./Errors.js"
import { InvalidRequest, PermissionDenied } from "./Errors.js"
import { ConnectorId } from "./Ids.js"
import { requireUsable, writtenSqlRefusal } from "./internal/connectorUse.js"
import { OrganizationRepo } from "./OrganizationRepo.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * The most rows a statement answers (a larger `max_rows` is refused by the schema).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxRows = 1_000

/**
 * The rows a statement answers when `max_rows` is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPageRows = 100

/**
 * A statement to run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSqlRequest = Schema.Struct({
  connector_id: ConnectorId.annotations({ description: "The connector to run on" }),
  sql: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100_000)).annotations({
    description: "One read-only statement in the connector's dialect; `_svc.client_attributes_json.<field>` reads " +
      "the caller's client attributes"
  }),
  max_rows: Schema.optional(
    Schema.Int.pipe(Schema.between(1, maxRows)).annotations({
      description: `The rows to answer (a page): at most ${maxRows}; ${defaultPageRows} by default`
    })
  )
})
export type RunSqlRequest = typeof RunSqlRequest.Type

/**
 * What a statement answered.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSqlResult = Schema.Struct({
  columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })),
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  /** More rows exist than were answered. */
  truncated: Schema.Boolean
})
export type RunSqlResult = typeof RunSqlResult.Type

/**
 * Running SQL for callers.
 *
 * @since 0.1.0
 * @category services
 */
export class SqlQueries extends Context.Tag("@sightline/core/SqlQueries")<SqlQueries, SqlQueries.Service>() {}

export declare namespace SqlQueries {
  /** The operations. */
  export interface Service {
    /** Whether the caller's organization lets callers run SQL at all (its `mcp_run_sql` setting). */
    readonly enabled: (principal: Policy.Principal) => Effect.Effect<boolean>
    /**
     * Runs the statement and answers `max_rows` rows from `offset` (0 by default): a later page of
     * the same statement. Rows past `ConnectorRuntime.defaultMaxRows` are never answered.
     */
    readonly run: (
      principal: Policy.Principal,
      request: RunSqlRequest,
      offset?: number
    ) => Effect.Effect<RunSqlResult, Unauthenticated | PermissionDenied | InvalidRequest>
  }
}

/**
 * The use case over the connector repository and runtime in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const connectors = yield* ConnectorRepo
  const runtime = yield* ConnectorRuntime.ConnectorRuntime
  const organizations = yield* OrganizationRepo

  const enabled = (principal: Policy.Principal) =>
    Effect.map(organizations.settings(principal.organizationId), (settings) => settings.mcp_run_sql)

  const run = Traced.fn("SqlQueries.run")(function*(principal: Policy.Principal, request: RunSqlRequest, offset = 0) {
    yield* enforce(Policy.requirePermission(principal, "chat:write"))
    if (!(yield* enabled(principal))) {
      return yield* new PermissionDenied({ message: "run_sql is turned off for this organization by its admins" })
    }
    yield* requireUsable(connectors, principal, [request.connector_id], yield* DateTime.now, "connector_id")
    const connector = yield* connectors.get(principal.organizationId, request.connector_id)
    if (Option.isNone(connector)) {
      return yield* new InvalidRequest({ message: `connector_id: no connector ${request.connector_id}` })
    }
    // A key with client attributes writes SQL only where the database enforces them.
    const refusal = writtenSqlRefusal(principal, connector.value)
    if (refusal !== undefined) return yield* new InvalidRequest({ message: refusal })
    const window = {
      offset,
      rows: Math.min(request.max_rows ?? defaultPageRows, ConnectorRuntime.defaultMaxRows - offset)
    }
    if (window.rows <= 0) {
      return yield* new InvalidRequest({ message: `at most ${ConnectorRuntime.defaultMaxRows} rows can be paged` })
    }
    const result = yield* Effect.mapError(
      ConnectorRuntime.queryWindow(runtime, connector.value, {
        sql: request.sql,
        clientAttributesJson: Policy.clientAttributesJson(principal),
        maxRows: ConnectorRuntime.defaultMaxRows,
        timeoutMillis: ConnectorRuntime.defaultTimeoutMillis
      }, window),
      (error) => new InvalidRequest({ message: `query failed: ${error.message}` })
    )
    return {
      columns: result.columns.map((column) => ({ name: column.name, type: column.type })),
      rows: result.rows,
      truncated: result.truncated
    }
  })

  return SqlQueries.of({ enabled, run })
})

/**
 * The use case over `ConnectorRepo`, `ConnectorRuntime` and `OrganizationRepo` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  SqlQueries,
  never,
  ConnectorRepo | ConnectorRuntime.ConnectorRuntime | OrganizationRepo
> = Layer.effect(
  SqlQueries,
  make
)
