/**
 * The database of a FILES connector: uploaded files (CSV, TSV, Excel `.xlsx`, Parquet, JSON, NDJSON)
 * loaded into one DuckDB database file, a table per file (per sheet of a workbook), then opened
 * read-only to answer questions.
 *
 * - **Building** (`build`) reads each file with DuckDB's own readers (its CSV sniffer finds the
 *   delimiter, the header, the types and the dates) into a table named after the file. A file that
 *   does not read is a `FileError` naming it and, where DuckDB says, the line; nothing of a failed
 *   build is kept.
 * - **Querying** (`open`) opens the database file `READ_ONLY` with external access off, extension
 *   loading off, and the configuration locked: a statement can read the connector's own tables and
 *   nothing else (`read_csv('/etc/passwd')`, `COPY … TO`, `ATTACH`, `INSTALL`/`LOAD`, an `https://`
 *   URL are all refused by DuckDB itself), and cannot write. One statement per call, at most
 *   `maxRows` rows, interrupted at its timeout.
 *
 * @since 0.1.0
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import * as Connector from "@sightline/core/Connector"
import * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import { QueryError } from "@sightline/core/ConnectorRuntime"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs/promises"
import * as NodePath from "node:path"

// DuckDB (a native addon) and the workbook reader (exceljs and its zip libraries) load when a FILES
// connector is first built or queried, not when a server that may never have one starts.
const duckdb = () => import("@duckdb/node-api")
const xlsx = () => import("./internal/xlsx.js")

/**
 * The formats a FILES connector reads.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = Connector.FileFormat

/** The formats, as an error names them. */
const readable = "CSV, TSV, Excel .xlsx, Parquet, JSON or NDJSON"

/**
 * A table's name from its file's name: lower snake case of the name without its extension
 * (`Sales 2024.csv` → `sales_2024`), starting with a letter, at most 63 characters, made unique
 * among `taken` with a `_2`, `_3`… suffix.
 *
 * @since 0.1.0
 * @category utils
 */
export const tableName = (fileName: string, taken: ReadonlySet<string>): string => {
  const stem = fileName.replace(/\.[A-Za-z0-9]+$/, "").normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
  const snake = stem.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 56)
  const base = snake === "" ? "file" : /^[a-z]/.test(snake) ? snake : `t_${snake}`
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`
  return name
}

/**
 * A file to load.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourceFile {
  /** Where the bytes are (a temporary file of the upload). */
  readonly path: string
  /** The name it was uploaded with: the table's name comes from it, and errors name it. */
  readonly fileName: string
  /** The table to load it into (`tableName` when absent). */
  readonly table?: string | undefined
}

/**
 * A table as built.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuiltTable {
  readonly table: string
  readonly fileName: string
  readonly format: Format
  /** The sheet of a workbook it was loaded from. */
  readonly sheet?: string | undefined
  readonly rows: number
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  /** Its first rows, as JSON carries them. */
  readonly preview: ReadonlyArray<ReadonlyArray<unknown>>
}

/**
 * A file that could not be loaded, in words that name it.
 *
 * @since 0.1.0
 * @category errors
 */
export class FileError extends Data.TaggedError("FileError")<{
  readonly fileName: string
  readonly message: string
}> {}

const quoteIdentifier = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`
const quoteString = (text: string) => `'${text.replaceAll("'", "''")}'`

const reader = (format: Exclude<Format, "xlsx">, path: string): string => {
  const file = quoteString(path)
  switch (format) {
    case "csv":
      return `read_csv(${file}, auto_detect = true, strict_mode = true)`
    case "tsv":
      return `read_csv(${file}, auto_detect = true, delim = '\\t', strict_mode = true)`
    case "parquet":
      return `read_parquet(${file})`
    case "json":
      return `read_json(${file}, format = 'auto')`
    case "ndjson":
      return `read_json(${file}, format = 'newline_delimited')`
  }
}

/**
 * A CSV whose rows do not all have the header's fields makes DuckDB's sniffer give up on every
 * delimiter and read each line as one text column. When a one-column table's header holds a
 * delimiter, the file is read again with that delimiter and the header's fields, strictly, so that
 * the error names the first line that does not fit.
 */
const checkDelimited = async (connection: DuckDBConnection, table: string, path: string) => {
  const described = await connection.runAndReadAll(
    `SELECT column_name FROM information_schema.columns WHERE table_name = $1`,
    [table]
  )
  const header = described.getRowsJson().map(([name]) => String(name))
  if (header.length !== 1) return
  const delimiter = [",", ";", "\t", "|"].find((candidate) => header[0]!.includes(candidate))
  if (delimiter === undefined) return
  const fields = header[0]!.split(delimiter)
  const columns = fields.map((_, i) => `${quoteString(`c${i}`)}: 'VARCHAR'`).join(", ")
  await connection.run(
    `SELECT count(*) FROM read_csv(${quoteString(path)}, auto_detect = false, delim = ${
      quoteString(delimiter)
    }, header = true, columns = {${columns}}, strict_mode = true)`
  )
}

// How a query begins, after comments and parentheses: DuckDB's queries (`FROM t` alone is one) and
// a plan of one.
const queryStart =
  /^(?:\s+|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()*(?:select|with|from|values|table|explain|summarize|describe|pivot|unpivot)\b/i

// DuckDB names an error's kind in its message, not in a SQLSTATE: these kinds speak of the
// statement only (its syntax, its names), the others may quote a value (a failed cast).
const statementKinds = /^(Parser|Binder|Catalog|Not implemented|Permission|Interrupt) Error: /

/** The SQLSTATE class of a DuckDB error, as PostgreSQL would file it (`42000` or `22000`). */
const sqlStateOf = (error: unknown): string =>
  statementKinds.test(String(error instanceof Error ? error.message : error)) ? "42000" : "22000"

/** DuckDB's message without its class prefix and the server's paths. */
const describe = (error: unknown, path: string, fileName: string): string =>
  String(error instanceof Error ? error.message : error)
    .replaceAll(path, fileName)
    .replace(/^[A-Za-z ]+Error: /, "")
    .split("\n")
    .filter((line) => !/^Possible fix/.test(line))
    .slice(0, 3)
    .join("\n")

/**
 * What to start a build from: a database file to copy (never changed itself), and which of its
 * tables to drop.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuildOptions {
  readonly base?: string | undefined
  readonly drop?: ReadonlyArray<string> | undefined
}

/**
 * Loads `files` into a new database file at `target` (which must not exist), a table each (a table
 * per sheet of a workbook), on top of `options.base` when given: a file whose table the base has
 * already replaces it (a new version under the same name). On any failure the file is removed and
 * the error names the file that failed. Answers the tables loaded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (
  files: ReadonlyArray<SourceFile>,
  target: string,
  options: BuildOptions = {}
): Effect.Effect<ReadonlyArray<BuiltTable>, FileError> =>
  Effect.tryPromise({
    try: async () => {
      if (options.base !== undefined) await fs.copyFile(options.base, target)
      const { DuckDBConnection, DuckDBInstance } = await duckdb()
      // Bounded as a query is: a large file spills to disk rather than taking the server's memory.
      const instance = await DuckDBInstance.create(target, {
        enable_external_access: "true",
        autoload_known_extensions: "false",
        autoinstall_known_extensions: "false",
        threads: "2",
        memory_limit: "512MB"
      })
      const connection = await DuckDBConnection.create(instance)
      const built: Array<BuiltTable> = []
      const taken = new Set<string>()
      const scratch = await fs.mkdtemp(`${target}.sheets-`)
      const load = async (
        table: string,
        fileName: string,
        format: Exclude<Format, "xlsx">,
        path: string,
        sheet?: string
      ) => {
        try {
          await connection.run(
            `CREATE OR REPLACE TABLE ${quoteIdentifier(table)} AS SELECT * FROM ${reader(format, path)}`
          )
          if (format === "csv" || format === "tsv") await checkDelimited(connection, table, path)
        } catch (error) {
          const where = sheet === undefined ? fileName : `${fileName} (sheet ${sheet})`
          throw new FileError({ fileName, message: `${where}: ${describe(error, path, fileName)}` })
        }
        const described = await connection.runAndReadAll(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
          [table]
        )
        const count = await connection.runAndReadAll(`SELECT count(*)::DOUBLE FROM ${quoteIdentifier(table)}`)
        const first = await connection.runAndReadAll(
          `SELECT * FROM ${quoteIdentifier(table)} LIMIT ${Connector.FILE_PREVIEW_ROWS}`
        )
        const types = first.columnTypes().map(String)
        built.push({
          table,
          fileName,
          format: sheet === undefined ? format : "xlsx",
          ...(sheet === undefined ? {} : { sheet }),
          rows: Number(count.getRowsJson()[0]![0]),
          columns: described.getRowsJson().map(([name, type]) => ({ name: String(name), type: String(type) })),
          preview: first.getRowsJson().map((row) => row.map((value, i) => jsonValue(value, types[i] ?? "")))
        })
      }
      try {
        for (const table of options.drop ?? []) await connection.run(`DROP TABLE IF EXISTS ${quoteIdentifier(table)}`)
        for (const file of files) {
          const format = Connector.fileFormatOf(file.fileName)
          if (format === undefined) {
            throw new FileError({
              fileName: file.fileName,
              message: `${file.fileName}: not a file this connector reads (${readable})`
            })
          }
          if (format !== "xlsx") {
            const table = file.table ?? tableName(file.fileName, taken)
            taken.add(table)
            await load(table, file.fileName, format, file.path)
            continue
          }
          const directory = await fs.mkdtemp(NodePath.join(scratch, "book-"))
          const Xlsx = await xlsx()
          const sheets = await Xlsx.sheets(file.path, directory).catch((error) => {
            throw new FileError({
              fileName: file.fileName,
              message: `${file.fileName}: ${
                error instanceof Xlsx.WorkbookError ? error.message : describe(error, file.path, file.fileName)
              }`
            })
          })
          const stem = file.fileName.replace(/\.[A-Za-z0-9]+$/, "")
          for (const sheet of sheets) {
            // One sheet: the file's name; several: the file's and the sheet's.
            const table = tableName(sheets.length === 1 ? stem : `${stem} ${sheet.name}`, taken)
            taken.add(table)
            await load(table, file.fileName, "csv", sheet.path, sheet.name)
          }
        }
        await connection.run("CHECKPOINT")
        return built
      } finally {
        connection.closeSync()
        instance.closeSync()
        await fs.rm(scratch, { recursive: true, force: true })
      }
    },
    catch: (error) =>
      error instanceof FileError
        ? error
        : new FileError({ fileName: files[0]?.fileName ?? "", message: describe(error, target, "the database") })
  }).pipe(
    Effect.tapError(() =>
      Effect.promise(() => Promise.all([fs.rm(target, { force: true }), fs.rm(`${target}.wal`, { force: true })]))
    )
  )

/**
 * An open database.
 *
 * @since 0.1.0
 * @category models
 */
export interface Database {
  readonly query: (request: ConnectorRuntime.QueryRequest) => Effect.Effect<ConnectorRuntime.QueryResult, QueryError>
  readonly introspect: Effect.Effect<ConnectorRuntime.SchemaInfo, QueryError>
}

/**
 * Options of an open database.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  /** DuckDB's threads for one query (default 2). */
  readonly threads?: number | undefined
  /** DuckDB's memory limit, bytes (default `defaultMemoryBytes`); past it, large operators spill to disk or fail. */
  readonly memoryBytes?: number | undefined
}

/**
 * The memory limit of one open database: 512 MiB.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMemoryBytes = 512 * 1024 ** 2

const numericType =
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL)/

// DuckDB writes a point in time as `2025-03-01 23:30:00.123+00`.
const zonedText = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?$/

/**
 * A value as JSON carries it: numbers as numbers where DuckDB's JSON gives their text, and a point
 * in time in ISO 8601 UTC, as the other engines answer it.
 */
const jsonValue = (value: unknown, type: string): unknown => {
  if (typeof value === "string" && numericType.test(type)) {
    const n = Number(value)
    return Number.isFinite(n) ? n : value
  }
  if (typeof value === "string" && type === "TIMESTAMP WITH TIME ZONE") {
    const parts = zonedText.exec(value)
    const at = parts === null ? undefined : new Date(`${parts[1]}T${parts[2]}${parts[3]}:${parts[4] ?? "00"}`)
    return at === undefined || Number.isNaN(at.getTime()) ? value : at.toISOString()
  }
  return value
}

/**
 * Opens the database at `path` read-only, with nothing outside it reachable (closed with the scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (path: string, options: OpenOptions = {}): Effect.Effect<Database, QueryError, Scope.Scope> =>
  Effect.gen(function*() {
    const { DuckDBConnection, DuckDBInstance, StatementType } = yield* Effect.promise(duckdb)
    const instance = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          DuckDBInstance.create(path, {
            access_mode: "READ_ONLY",
            enable_external_access: "false",
            autoload_known_extensions: "false",
            autoinstall_known_extensions: "false",
            allow_community_extensions: "false",
            threads: String(options.threads ?? 2),
            memory_limit: `${Math.max(1, Math.floor((options.memoryBytes ?? defaultMemoryBytes) / 1024 ** 2))}MiB`,
            // A query that spills writes here: bounded, so no query fills the disk.
            max_temp_directory_size: "1GB",
            lock_configuration: "true"
          }),
        catch: (error) => new QueryError({ message: `the files could not be opened: ${describe(error, path, "")}` })
      }),
      (opened) => Effect.sync(() => opened.closeSync())
    )

    // A connection per query: DuckDB runs one statement at a time on a connection.
    const withConnection = <A>(f: (connection: DuckDBConnection) => Promise<A>, timeoutMillis: number) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: () => DuckDBConnection.create(instance),
          catch: (error) => new QueryError({ message: describe(error, path, "") })
        }),
        (connection) =>
          Effect.tryPromise({
            try: () => f(connection),
            catch: (error) =>
              error instanceof QueryError
                ? error
                : new QueryError({ message: describe(error, path, ""), sqlState: sqlStateOf(error) })
          }).pipe(
            Effect.timeoutFail({
              duration: timeoutMillis,
              onTimeout: () => new QueryError({ message: `the query ran past its ${timeoutMillis} ms limit` })
            }),
            // A query that is given up on (timeout, interruption) stops in DuckDB too.
            Effect.onInterrupt(() => Effect.sync(() => connection.interrupt())),
            Effect.tapErrorTag("QueryError", () => Effect.sync(() => connection.interrupt()))
          ),
        (connection) => Effect.sync(() => connection.closeSync())
      )

    const query = (request: ConnectorRuntime.QueryRequest) =>
      withConnection(async (connection) => {
        // A row filter's client attributes are bound as parameters after the statement's own, as
        // on every other engine, so a semantic model's `row_filter` holds on files too.
        const own = request.params ?? []
        const bound = ConnectorRuntime.bindClientAttributes(
          request.sql,
          request.clientAttributesJson,
          (n) => `$${n}`,
          own.length
        )
        const params = [...own, ...bound.params]
        const statements = await connection.extractStatements(bound.text)
        if (statements.count !== 1) {
          throw new QueryError({ message: "one statement per query" })
        }
        // Only queries: `COPY … TO` and `EXPORT DATABASE` write files (the temporary directory is
        // writable, and external access does not cover it), and nothing else has a place here. A
        // plan (a change's check) is a query's, never `EXPLAIN ANALYZE`, which runs it.
        // Preparing some statements already acts (`EXPORT DATABASE` makes its directory), so one
        // that does not begin as a query is refused before it is prepared.
        const kind = queryStart.test(bound.text) ? (await statements.prepare(0)).statementType : undefined
        const plan = kind === StatementType.EXPLAIN && /^\s*explain\s+select\b/i.test(bound.text)
        if (kind !== StatementType.SELECT && !plan) {
          throw new QueryError({ message: "only a query (SELECT) runs on files", sqlState: "42000" })
        }
        const reader = await connection.streamAndReadUntil(
          bound.text,
          request.maxRows + 1,
          params.length === 0 ? undefined : params
        )
        const rows = reader.getRowsJson()
        const names = reader.columnNames()
        const types = reader.columnTypes().map(String)
        const truncated = rows.length > request.maxRows || !reader.done
        return {
          columns: names.map((name, i) => ({ name, type: types[i] ?? "" })),
          rows: rows.slice(0, request.maxRows).map((row) => row.map((value, i) => jsonValue(value, types[i] ?? ""))),
          truncated
        } satisfies ConnectorRuntime.QueryResult
      }, request.timeoutMillis)

    const introspect = withConnection(async (connection) => {
      const columns = await connection.runAndReadAll(
        `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
         FROM information_schema.columns c
         JOIN information_schema.tables t USING (table_catalog, table_schema, table_name)
         WHERE t.table_schema = 'main' ORDER BY c.table_name, c.ordinal_position`
      )
      const counts = await connection.runAndReadAll(
        `SELECT table_name, estimated_size::DOUBLE FROM duckdb_tables() WHERE schema_name = 'main'`
      )
      const estimate = new Map(counts.getRowsJson().map(([name, size]) => [String(name), Number(size)]))
      const tables = new Map<string, Array<ConnectorRuntime.Column>>()
      for (const [table, name, type, nullable] of columns.getRowsJson()) {
        const list = tables.get(String(table)) ?? []
        list.push({ name: String(name), type: String(type), nullable: nullable === "YES", primaryKey: false })
        tables.set(String(table), list)
      }
      return {
        dialect: "duckdb",
        tables: [...tables].map(([name, list]) => ({ name, columns: list, rowEstimate: estimate.get(name) ?? 0 }))
      } satisfies ConnectorRuntime.SchemaInfo
    }, 30_000)

    return { query, introspect }
  })
