/**
 * What PostgreSQL and PGlite share: introspection from the catalogs, and one statement run in its
 * own transaction (READ ONLY unless writes are allowed) with a statement timeout, the caller's
 * attributes bound as parameters and, when asked, set for the transaction.
 *
 * @internal
 */
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import pg from "pg"
import * as ClientAttributes from "../ClientAttributes.js"

/** A field of a result. */
export interface Field {
  readonly name: string
  readonly dataTypeID: number
}

/** A result with rows as arrays. */
export interface Rows {
  readonly fields: ReadonlyArray<Field>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  readonly truncated: boolean
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  readonly affectedRows?: number | undefined
}

/** One database session. */
export interface Session {
  /** Runs a statement and returns every row. */
  readonly query: (text: string, params: ReadonlyArray<unknown>) => Promise<Rows>
  /** Runs one statement (the extended protocol refuses several) and fetches at most `max` rows. */
  /** At most `max` rows and about `maxBytes` of them (`ConnectorRuntime.approximateBytes`). */
  readonly queryCapped: (
    text: string,
    params: ReadonlyArray<unknown>,
    max: number,
    maxBytes: number
  ) => Promise<Rows>
}

const typeNames = new Map<number, string>(
  Object.entries(pg.types.builtins).map(([name, oid]) => [oid as number, name.toLowerCase()])
)

/** The name of a type OID (`int4`, `numeric`, `timestamptz`, ...). */
export const typeName = (oid: number): string => typeNames.get(oid) ?? `oid ${oid}`

const numeric = new Set([20, 21, 23, 26, 700, 701, 1700])

/** A value as JSON carries it: numbers as numbers where exact enough, dates as ISO text. */
export const jsonValue = (value: unknown, oid: number): unknown => {
  if (value === null || value === undefined) return null
  if (numeric.has(oid) && typeof value === "string") {
    const n = Number(value)
    return Number.isFinite(n) ? n : value
  }
  if (typeof value === "bigint") return Number(value)
  if (value instanceof Date) return oid === 1082 ? value.toISOString().slice(0, 10) : value.toISOString()
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString("hex")}`
  return value
}

const catalogSql = `
SELECT n.nspname AS schema_name, c.relname AS table_name, c.reltuples::float8 AS estimate,
       obj_description(c.oid, 'pg_class') AS table_comment,
       a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS column_type,
       NOT a.attnotnull AS nullable, col_description(c.oid, a.attnum) AS column_comment
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname, a.attnum`

const keysSql = `
SELECT con.contype::text AS kind, n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
       fn.nspname AS foreign_schema, fc.relname AS foreign_table, fa.attname AS foreign_column,
       array_length(con.conkey, 1) AS width
FROM pg_catalog.pg_constraint con
JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, con.confkey) AS k(attnum, fattnum)
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
LEFT JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
LEFT JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = k.fattnum
WHERE con.contype IN ('p', 'f')
  AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))`

const text = (value: unknown): string | undefined => typeof value === "string" && value !== "" ? value : undefined

/** The tables, columns, keys, comments and row estimates the session's user may read. */
export const introspect = async (
  session: Session,
  schemas: ReadonlyArray<string> | undefined
): Promise<ConnectorRuntime.SchemaInfo> => {
  const filter = schemas === undefined || schemas.length === 0 ? null : [...schemas]
  const [catalog, keys] = [await session.query(catalogSql, [filter]), await session.query(keysSql, [filter])]
  const primary = new Set<string>()
  const references = new Map<string, ConnectorRuntime.Reference>()
  for (const [kind, schema, table, column, fschema, ftable, fcolumn, width] of keys.rows) {
    const key = `${schema}.${table}.${column}`
    if (kind === "p") primary.add(key)
    // Only single-column foreign keys name a column a join can follow on its own.
    else if (Number(width) === 1) references.set(key, { table: `${fschema}.${ftable}`, column: String(fcolumn) })
  }
  const tables = new Map<
    string,
    { name: string; rowEstimate: number; comment?: string; columns: Array<ConnectorRuntime.Column> }
  >()
  for (const [schema, table, estimate, tableComment, column, type, nullable, columnComment] of catalog.rows) {
    const name = `${schema}.${table}`
    let entry = tables.get(name)
    if (entry === undefined) {
      const comment = text(tableComment)
      entry = {
        name,
        rowEstimate: Math.max(0, Number(estimate)),
        columns: [],
        ...(comment === undefined ? {} : { comment })
      }
      tables.set(name, entry)
    }
    const key = `${name}.${column}`
    const comment = text(columnComment)
    const reference = references.get(key)
    entry.columns.push({
      name: String(column),
      type: String(type),
      nullable: nullable === true,
      primaryKey: primary.has(key),
      ...(reference === undefined ? {} : { references: reference }),
      ...(comment === undefined ? {} : { comment })
    })
  }
  return { dialect: "postgres", tables: [...tables.values()] }
}

/** How a statement runs. */
export interface RunOptions {
  readonly readOnly: boolean
  /** Set `svc.client_attributes_json` for the transaction (the connector's `include_db_session_metadata`). */
  readonly sessionMetadata: boolean
  /** With `sessionMetadata`, sign the attributes under this key (`ClientAttributes`); empty: unsigned. */
  readonly attributesSecret: string
  /** Whether the session honours `statement_timeout` (PGlite has no timer to enforce it). */
  readonly statementTimeout: boolean
}

/** Runs one statement in its own transaction. */
export const run = async (
  session: Session,
  request: ConnectorRuntime.QueryRequest,
  options: RunOptions
): Promise<ConnectorRuntime.QueryResult> => {
  await session.query(options.readOnly ? "BEGIN TRANSACTION READ ONLY" : "BEGIN", [])
  try {
    if (options.statementTimeout) {
      await session.query("SELECT set_config('statement_timeout', $1, true)", [String(request.timeoutMillis)])
    }
    if (options.sessionMetadata) {
      await session.query("SELECT set_config('svc.client_attributes_json', $1, true)", [request.clientAttributesJson])
      if (options.attributesSecret !== "") {
        await session.query(`SELECT set_config('${ClientAttributes.signatureSetting}', $1, true)`, [
          ClientAttributes.signature(request.clientAttributesJson, options.attributesSecret)
        ])
      }
    }
    const own = request.params ?? []
    const bound = ConnectorRuntime.bindClientAttributes(
      request.sql,
      request.clientAttributesJson,
      (n) => `$${n}`,
      own.length
    )
    const result = await session.queryCapped(
      bound.text,
      [...own, ...bound.params],
      request.maxRows,
      request.maxBytes ?? ConnectorRuntime.maxResultBytes
    )
    await session.query(options.readOnly ? "ROLLBACK" : "COMMIT", [])
    return {
      columns: result.fields.map((f) => ({ name: f.name, type: typeName(f.dataTypeID) })),
      rows: result.rows.map((row) => row.map((value, i) => jsonValue(value, result.fields[i]!.dataTypeID))),
      truncated: result.truncated,
      ...(result.fields.length === 0 && result.affectedRows !== undefined ? { affectedRows: result.affectedRows } : {})
    }
  } catch (error) {
    await session.query("ROLLBACK", []).catch(() => undefined)
    throw error
  }
}

/** The SQLSTATE of a database error (five characters), when the driver carries one. */
export const sqlStateOf = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  // `pg` and PGlite answer it as `code`; `mysql2` as `sqlState` (its `code` is a name, `ER_…`).
  const e = error as { readonly code?: unknown; readonly sqlState?: unknown }
  const state = typeof e.sqlState === "string" ? e.sqlState : e.code
  return typeof state === "string" && /^[0-9A-Z]{5}$/.test(state) ? state : undefined
}

/** The message of a database error, without anything that could carry a secret. */
export const errorMessage = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error) {
    const e = error as { message: unknown; code?: unknown }
    return String(e.message)
  }
  return String(error)
}
