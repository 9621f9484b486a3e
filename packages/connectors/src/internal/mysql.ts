/**
 * MySQL and MariaDB through `mysql2`: introspection from `information_schema`, and one statement in
 * its own transaction (`START TRANSACTION READ ONLY` unless writes are allowed), with a statement
 * timeout, the caller's attributes bound as `?` parameters, and at most `maxRows` rows read from the
 * row stream (the connection is dropped past the cap, which stops the query on the server).
 *
 * @internal
 */
import type * as Connector from "@sightline/core/Connector"
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import type * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Redacted from "effect/Redacted"
import type mysql2 from "mysql2"
import type { Connection, FieldPacket, Pool, PoolConnection, PoolOptions } from "mysql2"
import * as Access from "./access.js"

type Driver = typeof mysql2
let driverLoaded: Promise<Driver> | undefined
// `mysql2`'s `Types` maps codes to names (and, in some versions, names to codes as well); filled
// when the driver loads, which every statement waits for.
const typeNames = new Map<number, string>()

/**
 * The driver, imported with the first MYSQL connector used: a server that has none does not hold
 * it (about 3 MB of heap).
 */
export const driver = (): Promise<Driver> =>
  driverLoaded ??= import("mysql2").then(({ default: mysql }) => {
    for (const [key, value] of Object.entries(mysql.Types as unknown as Record<string, string | number>)) {
      if (typeof value === "number") typeNames.set(value, key.toLowerCase())
      else if (/^\d+$/.test(key)) typeNames.set(Number(key), value.toLowerCase())
    }
    return mysql
  })

/** The name of a column type code (`long`, `newdecimal`, `var_string`, ...). */
export const typeName = (code: number | undefined): string =>
  code === undefined ? "unknown" : typeNames.get(code) ?? `type ${code}`

/** The `mysql2` options of MYSQL settings, its socket under the network policy. */
export const poolOptions = (
  settings: Connector.MysqlSettings,
  connectTimeoutMillis: number,
  network: NetworkAccess.Policy
): PoolOptions => ({
  host: settings.host,
  port: settings.port,
  user: settings.user,
  password: Redacted.value(settings.password),
  database: settings.database,
  connectTimeout: connectTimeoutMillis,
  // One statement per call is the protocol's rule, not a parser's.
  multipleStatements: false,
  dateStrings: true,
  decimalNumbers: true,
  supportBigNumbers: true,
  stream: Access.mysqlStream(network, settings.host, settings.port),
  ...(settings.ssl_mode === "require"
    ? { ssl: { rejectUnauthorized: false } }
    : settings.ssl_mode === "verify-ca" || settings.ssl_mode === "verify-full"
    ? { ssl: { rejectUnauthorized: true } }
    : {})
})

const query = <A>(connection: PoolConnection | Pool | Connection, sql: string, values: ReadonlyArray<unknown> = []) =>
  new Promise<A>((resolve, reject) =>
    connection.query({ sql, values: [...values] }, (error, rows) => (error ? reject(error) : resolve(rows as A)))
  )

interface TableRow {
  readonly TABLE_NAME: string
  readonly TABLE_ROWS: number | null
  readonly TABLE_COMMENT: string
}
interface ColumnRow {
  readonly TABLE_NAME: string
  readonly COLUMN_NAME: string
  readonly COLUMN_TYPE: string
  readonly IS_NULLABLE: string
  readonly COLUMN_KEY: string
  readonly COLUMN_COMMENT: string
}
interface KeyRow {
  readonly TABLE_NAME: string
  readonly COLUMN_NAME: string
  readonly REFERENCED_TABLE_NAME: string
  readonly REFERENCED_COLUMN_NAME: string
}

/** The tables of the connector's database, with columns, keys, comments and row estimates. */
export const introspect = async (
  pool: Pool | PoolConnection,
  database: string
): Promise<ConnectorRuntime.SchemaInfo> => {
  const tables = await query<Array<TableRow>>(
    pool,
    "SELECT TABLE_NAME, TABLE_ROWS, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
    [database]
  )
  const columns = await query<Array<ColumnRow>>(
    pool,
    `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY, COLUMN_COMMENT
     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [database]
  )
  const keys = await query<Array<KeyRow>>(
    pool,
    `SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
     FROM information_schema.KEY_COLUMN_USAGE
     WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL AND REFERENCED_TABLE_SCHEMA = TABLE_SCHEMA`,
    [database]
  )
  const references = new Map(keys.map((k) => [`${k.TABLE_NAME}.${k.COLUMN_NAME}`, k]))
  return {
    dialect: "mysql",
    tables: tables.map((table) => ({
      name: `${database}.${table.TABLE_NAME}`,
      rowEstimate: Number(table.TABLE_ROWS ?? 0),
      ...(table.TABLE_COMMENT === "" ? {} : { comment: table.TABLE_COMMENT }),
      columns: columns.filter((c) => c.TABLE_NAME === table.TABLE_NAME).map((c) => {
        const reference = references.get(`${c.TABLE_NAME}.${c.COLUMN_NAME}`)
        return {
          name: c.COLUMN_NAME,
          type: c.COLUMN_TYPE,
          nullable: c.IS_NULLABLE === "YES",
          primaryKey: c.COLUMN_KEY === "PRI",
          ...(reference === undefined
            ? {}
            : {
              references: {
                table: `${database}.${reference.REFERENCED_TABLE_NAME}`,
                column: reference.REFERENCED_COLUMN_NAME
              }
            }),
          ...(c.COLUMN_COMMENT === "" ? {} : { comment: c.COLUMN_COMMENT })
        }
      })
    }))
  }
}

/**
 * `$n` placeholders (a saved query's bound parameters) as MySQL's positional `?`, with the values
 * in the order the placeholders appear.
 */
export const positional = (
  sql: string,
  params: ReadonlyArray<unknown>
): { readonly text: string; readonly values: Array<unknown> } => {
  const values: Array<unknown> = []
  const text = sql.replace(/\$(\d+)/g, (match, n: string) => {
    const index = Number(n) - 1
    if (index < 0 || index >= params.length) return match
    values.push(params[index])
    return "?"
  })
  return { text, values }
}

const jsonValue = (value: unknown): unknown =>
  value === null || value === undefined
    ? null
    : typeof value === "bigint"
    ? Number(value)
    : value instanceof Date
    ? value.toISOString()
    : Buffer.isBuffer(value)
    ? `0x${value.toString("hex")}`
    : value

/** How a statement runs. */
export interface RunOptions {
  readonly readOnly: boolean
  /** Set `@svc_client_attributes_json` for the session of this statement (for the database's own views). */
  readonly sessionMetadata: boolean
}

/** Runs one statement in its own transaction on a connection of its own; the connection is not reusable after. */
export const run = async (
  connection: PoolConnection,
  request: ConnectorRuntime.QueryRequest,
  options: RunOptions,
  onConnectionLost: () => void
): Promise<ConnectorRuntime.QueryResult> => {
  // MariaDB calls it max_statement_time (seconds), MySQL max_execution_time (milliseconds).
  await query(connection, "SET SESSION max_statement_time = ?", [request.timeoutMillis / 1000]).catch(() =>
    query(connection, "SET SESSION max_execution_time = ?", [request.timeoutMillis]).catch(() => undefined)
  )
  if (options.sessionMetadata) {
    await query(connection, "SET @svc_client_attributes_json = ?", [request.clientAttributesJson])
  }
  // Attributes become `$n` after the saved query's own parameters, then every `$n` becomes a `?`
  // in the order it appears in the text, which is the order MySQL binds them.
  const own = request.params ?? []
  const attributes = ConnectorRuntime.bindClientAttributes(
    request.sql,
    request.clientAttributesJson,
    (n) => `$${n}`,
    own.length
  )
  const bound = positional(attributes.text, [...own, ...attributes.params])
  await query(connection, options.readOnly ? "START TRANSACTION READ ONLY" : "START TRANSACTION")
  try {
    const result = await new Promise<ConnectorRuntime.QueryResult>((resolve, reject) => {
      const rows: Array<ReadonlyArray<unknown>> = []
      let fields: ReadonlyArray<FieldPacket> = []
      let affectedRows: number | undefined
      let settled = false
      let bytes = 0
      const maxBytes = request.maxBytes ?? ConnectorRuntime.maxResultBytes
      const stream = connection.query({
        sql: bound.text,
        values: bound.values,
        rowsAsArray: true,
        timeout: request.timeoutMillis
      })
      // A statement without a result set (UPDATE) reports its fields as undefined.
      stream.on("fields", (received: ReadonlyArray<FieldPacket> | undefined) => {
        fields = received ?? []
      })
      stream.on("result", (row: unknown) => {
        if (settled) return
        if (Array.isArray(row)) {
          bytes += ConnectorRuntime.approximateBytes(row)
          if (rows.length === request.maxRows || bytes > maxBytes) {
            // Past the cap: stop reading and drop the connection, which ends the query on the server.
            settled = true
            onConnectionLost()
            connection.destroy()
            resolve({ columns: fields.map((f) => ({ name: f.name, type: typeName(f.type) })), rows, truncated: true })
            return
          }
          rows.push(row.map(jsonValue))
        } else if (typeof row === "object" && row !== null && "affectedRows" in row) {
          affectedRows = Number((row as { affectedRows: number }).affectedRows)
        }
      })
      stream.on("error", (error) => {
        if (!settled) {
          settled = true
          reject(error)
        }
      })
      stream.on("end", () => {
        if (settled) return
        settled = true
        resolve({
          columns: fields.map((f) => ({ name: f.name, type: typeName(f.type) })),
          rows,
          truncated: false,
          ...(fields.length === 0 && affectedRows !== undefined ? { affectedRows } : {})
        })
      })
    })
    if (!result.truncated) await query(connection, options.readOnly ? "ROLLBACK" : "COMMIT")
    return result
  } catch (error) {
    await query(connection, "ROLLBACK").catch(() => undefined)
    throw error
  }
}

/** Tries a connection; the error, when it fails. */
/** Does the connection's account hold `SUPER` or `FILE`? */
export const powerful = async (connection: PoolConnection | Connection): Promise<boolean> => {
  const rows = await query<ReadonlyArray<{ readonly powerful: number | string }>>(connection, Access.mysqlPowerQuery)
  return Number(rows[0]?.powerful ?? 0) > 0
}

/**
 * Connects once and answers the failure (`undefined` when it connected), or `"powerful"` when the
 * account holds `SUPER` or `FILE` and `allowSuperuser` is off.
 */
export const probe = async (
  settings: Connector.MysqlSettings,
  connectTimeoutMillis: number,
  access: Access.Access
): Promise<unknown> => {
  const mysql = await driver()
  const connection = mysql.createConnection(poolOptions(settings, connectTimeoutMillis, access.network))
  connection.on("error", () => undefined)
  try {
    await query(connection, "SELECT 1")
    return !access.allowSuperuser && await powerful(connection) ? "powerful" : undefined
  } catch (error) {
    return error
  } finally {
    connection.destroy()
  }
}
