/**
 * The connector runtime port: what the agent asks of a live data connector. It describes the
 * connector's schema (tables, columns, keys, comments, row estimates) and runs one SQL statement.
 *
 * Safety lives in the adapter and the database, never in parsing the model's SQL: a query runs in a
 * READ ONLY transaction unless the connector allows writes, as one statement, under a statement
 * timeout, fetching at most `maxRows` rows. The caller's client metadata reaches the query only as
 * bound parameters (`bindClientAttributes`) and, where the connector asks for it, as a setting of
 * the transaction that the customer's own row-level security policies can read.
 *
 * Drivers live in `@sightline/connectors`; `layerMemory` here serves fixed tables for unit tests.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ConnectorRecord } from "./Connector.js"

/**
 * A foreign key of a column.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reference {
  readonly table: string
  readonly column: string
}

/**
 * A column as introspected.
 *
 * @since 0.1.0
 * @category models
 */
export interface Column {
  readonly name: string
  /** The database's own type name (`integer`, `numeric`, `timestamp with time zone`, ...). */
  readonly type: string
  readonly nullable: boolean
  readonly primaryKey: boolean
  readonly references?: Reference | undefined
  readonly comment?: string | undefined
}

/**
 * A table (or view) as introspected; `name` is qualified by its schema where the database has schemas.
 *
 * @since 0.1.0
 * @category models
 */
export interface Table {
  readonly name: string
  readonly columns: ReadonlyArray<Column>
  /** The database's estimate of its row count (statistics, not `count(*)`). */
  readonly rowEstimate: number
  readonly comment?: string | undefined
}

/**
 * The SQL a connector speaks: PostgreSQL (and the DEMO's PGlite), MySQL and MariaDB, or DuckDB
 * (a FILES connector's uploaded files).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DialectName = Schema.Literal("postgres", "mysql", "duckdb")
export type DialectName = typeof DialectName.Type

/**
 * A connector's schema.
 *
 * @since 0.1.0
 * @category models
 */
export interface SchemaInfo {
  readonly dialect: DialectName
  readonly tables: ReadonlyArray<Table>
}

/**
 * A result column.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResultColumn {
  readonly name: string
  readonly type: string
}

/**
 * What a query returned: at most `maxRows` rows, values as JSON-safe scalars.
 *
 * @since 0.1.0
 * @category models
 */
export interface QueryResult {
  readonly columns: ReadonlyArray<ResultColumn>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  /** More rows existed than were fetched. */
  readonly truncated: boolean
  /** Rows changed by a write (only when writes are allowed). */
  readonly affectedRows?: number | undefined
}

/**
 * A query request.
 *
 * @since 0.1.0
 * @category models
 */
export interface QueryRequest {
  /** One statement; `$1..$n` refer to `params` (a saved query's bound `:names`). */
  readonly sql: string
  readonly params?: ReadonlyArray<string | number | boolean | null> | undefined
  /** The caller's client metadata as a JSON object text (`Policy.clientAttributesJson`). */
  readonly clientAttributesJson: string
  /** The most rows to fetch. */
  readonly maxRows: number
  /** The most bytes of rows to fetch (`approximateBytes`); `maxResultBytes` when absent. */
  readonly maxBytes?: number | undefined
  /** The statement timeout, in milliseconds. */
  readonly timeoutMillis: number
}

/**
 * The most rows a query fetches (the rest are reported as `truncated`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxRows = 10_000

/**
 * A page of a result: the rows from `offset`, at most `rows` of them. A caller pages a large result
 * by running its statement again with the next offset (nothing is kept between pages, so any
 * process serves any page); the rows stay in place only when the statement orders them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Window {
  readonly offset: number
  readonly rows: number
}

/**
 * The most bytes of rows one query holds in the server's memory, whatever its row cap: wide rows
 * under a large `max_rows` would otherwise fill the heap of the process every organization shares.
 * Past it the result is `truncated`.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResultBytes = 64 * 1024 * 1024

/**
 * About how many bytes a fetched row holds in memory: characters of its text, 8 for any other
 * value. Cheap enough to run on every row.
 *
 * @since 0.1.0
 * @category utils
 */
export const approximateBytes = (row: ReadonlyArray<unknown>): number => {
  let total = 16
  for (const value of row) {
    total += typeof value === "string" ? 2 * value.length : value instanceof Uint8Array ? value.length : 8
  }
  return total
}

/**
 * The rows a result preview shows.
 *
 * @since 0.1.0
 * @category constants
 */
export const previewRows = 50

/**
 * The statement timeout of agent queries.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTimeoutMillis = 30_000

/**
 * Why a query or an introspection failed, in the database's words: it goes back to the model as the
 * tool's result (so it can correct its SQL) and into the cell's `error`. Never carries a password.
 *
 * @since 0.1.0
 * @category errors
 */
export class QueryError extends Schema.TaggedError<QueryError>()("QueryError", {
  message: Schema.String,
  /** The database's SQLSTATE, when it answered one (`42703`, `22P02`): its class says what kind of failure. */
  sqlState: Schema.optional(Schema.String)
}) {}

// SQLSTATE classes whose messages speak of the statement only (its syntax, the names it uses, a
// feature, a cancellation or timeout), never of a value read from a row. Data exceptions (`22`),
// constraint violations (`23`) and raised errors (`P0`) can carry row values into their text.
const statementClasses = new Set(["0A", "3F", "42", "57"])

/**
 * The error's text where it cannot hold data, else only that it failed, with its SQLSTATE: for what
 * readers who may not see the rows read (a change's checks, traces). A value cast into an error
 * (`SELECT secret::int`) would otherwise show in the message.
 *
 * @since 0.1.0
 * @category utils
 */
export const messageWithoutData = (error: QueryError): string =>
  error.sqlState !== undefined && statementClasses.has(error.sqlState.slice(0, 2))
    ? error.message
    : `the database refused it (${
      error.sqlState === undefined ? "no SQLSTATE" : `SQLSTATE ${error.sqlState}`
    }; its message is not shown, as it could hold data)`

/**
 * Runs queries on live connectors.
 *
 * @since 0.1.0
 * @category services
 */
export class ConnectorRuntime extends Context.Tag("@sightline/core/ConnectorRuntime")<
  ConnectorRuntime,
  ConnectorRuntime.Service
>() {}

export declare namespace ConnectorRuntime {
  /** Query and introspection. */
  export interface Service {
    /** The connector's schema (cached by the adapter with a TTL). */
    readonly introspect: (connector: ConnectorRecord) => Effect.Effect<SchemaInfo, QueryError>
    /** Runs one statement, read-only unless `connector.allow_sql_write_operations`. */
    readonly query: (connector: ConnectorRecord, request: QueryRequest) => Effect.Effect<QueryResult, QueryError>
  }
}

/**
 * Runs a statement whole (`maxRows` as the request caps it), or only a window's page of it: the
 * statement fetches up to the page's end (within `maxRows`), and its `truncated` still says whether
 * rows follow the page.
 *
 * @since 0.1.0
 * @category utils
 */
export const queryWindow = (
  runtime: ConnectorRuntime.Service,
  connector: ConnectorRecord,
  request: QueryRequest,
  window: Window | undefined
): Effect.Effect<QueryResult, QueryError> =>
  window === undefined
    ? runtime.query(connector, request)
    : Effect.map(
      runtime.query(connector, { ...request, maxRows: Math.min(request.maxRows, window.offset + window.rows) }),
      (result) => ({ ...result, rows: result.rows.slice(window.offset, window.offset + window.rows) })
    )

// ---------------------------------------------------------------------------------------------
// Client attributes
// ---------------------------------------------------------------------------------------------

const attributeReference = /_svc\.client_attributes_json\.([A-Za-z_][A-Za-z0-9_]*)/g

/**
 * A statement with the client attributes it names turned into bound parameters.
 *
 * @since 0.1.0
 * @category models
 */
export interface BoundStatement {
  readonly text: string
  readonly params: ReadonlyArray<string | null>
}

/**
 * Replaces every `_svc.client_attributes_json.<field>` in `sql` with a placeholder bound to that
 * field's value (as text; `null` when the key has no such field, so an RLS filter matches nothing).
 * The value is never spliced into the SQL text. `placeholder(n)` writes the n-th (1-based)
 * placeholder of the dialect: `$n` for PostgreSQL, `?` for MySQL (one per occurrence), after the
 * `offset` placeholders the statement already uses.
 *
 * @since 0.1.0
 * @category utils
 */
export const bindClientAttributes = (
  sql: string,
  clientAttributesJson: string,
  placeholder: (n: number) => string,
  /** Placeholders already taken by other parameters (the attributes are numbered after them). */
  offset = 0
): BoundStatement => {
  let attributes: Record<string, unknown> = {}
  try {
    const parsed = JSON.parse(clientAttributesJson)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) attributes = parsed
  } catch {
    // A key's clientId is validated as a JSON object when it is minted; anything else binds nulls.
  }
  const params: Array<string | null> = []
  const text = sql.replace(attributeReference, (_, field: string) => {
    const value = Object.hasOwn(attributes, field) ? attributes[field] : undefined
    params.push(
      value === undefined || value === null ? null : typeof value === "string" ? value : JSON.stringify(value)
    )
    return placeholder(offset + params.length)
  })
  return { text, params }
}

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------

/**
 * A table of the memory runtime: its description and its rows (objects keyed by column name).
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryTable {
  readonly table: Table
  readonly rows: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/**
 * A runtime for unit tests: every connector has the given tables, and a query answers with the
 * rows of the table named by `select * from <table>` (comments aside; any other SQL fails with
 * `QueryError`, so a test states exactly which query it expects).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (tables: ReadonlyArray<MemoryTable>): Layer.Layer<ConnectorRuntime> =>
  Layer.succeed(
    ConnectorRuntime,
    ConnectorRuntime.of({
      introspect: () => Effect.succeed({ dialect: "postgres", tables: tables.map((t) => t.table) }),
      query: (_, request) => {
        const statement = request.sql.replace(/--[^\n]*/g, "")
        const match = /^\s*select \* from ([A-Za-z_.]+)\s*;?\s*$/i.exec(statement)
        const found = match === null ? undefined : tables.find((t) => t.table.name === match[1])
        if (found === undefined) {
          return Effect.fail(new QueryError({ message: `memory runtime: cannot run ${request.sql}` }))
        }
        const rows = found.rows.slice(0, request.maxRows)
        return Effect.succeed({
          columns: found.table.columns.map((c) => ({ name: c.name, type: c.type })),
          rows: rows.map((row) => found.table.columns.map((c) => row[c.name] ?? null)),
          truncated: found.rows.length > rows.length
        })
      }
    })
  )
