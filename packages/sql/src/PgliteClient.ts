/**
 * An `@effect/sql` client over PGlite: PostgreSQL compiled to WebAssembly, running in this process.
 *
 * It speaks the same dialect as `@effect/sql-pg` (it reuses its statement compiler), so every query
 * and migration written for PostgreSQL runs unchanged on it.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { PGlite } from "@electric-sql/pglite"
import type { Results } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as DirLock from "./internal/dirLock.js"
import * as PoolRead from "./internal/poolRead.js"
import * as Template from "./internal/template.js"

/**
 * A `SqlClient` backed by PGlite, with access to the PGlite instance.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgliteClient extends SqlClient.SqlClient {
  readonly pglite: PGlite
  /** One statement outside any transaction, once no transaction holds the session (`PoolReads`). */
  readonly direct: PoolRead.Pool
}

/**
 * The PGlite client (also provided as `SqlClient.SqlClient`, and its direct reads as `PoolReads`).
 *
 * @since 0.1.0
 * @category constants
 */
export const PgliteClient = Context.GenericTag<PgliteClient>("@sightline/sql/PgliteClient")

/**
 * Where PGlite keeps its data.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgliteClientConfig {
  /** A directory on disk; omitted: in memory, lost when the scope closes. */
  readonly dataDir?: string | undefined
  /**
   * A tarball of a prepared cluster (`dumpTemplate`) that a new data directory, or a database in
   * memory, starts from, instead of creating a cluster (seconds of `initdb`) and migrating it. An
   * existing directory ignores it, and so does everything when the file is missing.
   */
  readonly template?: string | undefined
}

/** Whether a data directory holds no cluster yet (missing or empty). */
const isFresh = (dataDir: string): boolean =>
  !NodeFs.existsSync(dataDir) ||
  NodeFs.readdirSync(dataDir).filter((name) => name !== DirLock.lockFileName && !name.startsWith(".")).length === 0

/**
 * Settings PGlite starts with. PostgreSQL's default 128 MB of shared buffers is allocated and touched
 * inside PGlite's WebAssembly memory at every start: 16 MB holds an embedded store's working set, and
 * saves about 130 MB of resident memory and a third of a reopen (measured in `pnpm bench:start`).
 *
 * @since 0.1.0
 * @category constants
 */
export const postgresqlConf: ReadonlyArray<string> = ["shared_buffers = 16MB"]

const statementFailed = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

/**
 * A parameter as an SQL literal, for `EXECUTE`: a quoted string whose type the prepared statement
 * decides, as the text `query` would send for it. Only values whose text form is unambiguous
 * (strings without NUL, finite numbers, booleans, valid dates, null); `undefined` for anything else. With
 * `standard_conforming_strings` (always on since PostgreSQL 9.1), a doubled quote is the only
 * escape inside '…'.
 *
 * @since 0.1.0
 * @category utils
 */
export const literalOf = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
      return value.includes("\u0000") ? undefined : `'${value.replaceAll("'", "''")}'`
    case "number":
      return Number.isFinite(value) ? `'${value}'` : undefined
    case "boolean":
      return value ? "'true'" : "'false'"
    case "object":
      if (value === null) return "NULL"
      // PGlite's `query` sends a date as its ISO form; an invalid date has none (and fails there).
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : `'${value.toISOString()}'`
      return undefined
    default:
      return undefined
  }
}

// The statements `PREPARE` takes.
const preparable = /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE|VALUES)\b/i

// Statement texts are the repositories' own, a bounded set; past this many, the rest run unprepared.
const MAX_PREPARED = 1_000

/**
 * Opens PGlite, and closes it when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: PgliteClientConfig = {}
): Effect.Effect<PgliteClient, SqlError, Reactivity.Reactivity | Scope.Scope> =>
  Effect.gen(function*() {
    const dataDir = config.dataDir
    if (dataDir !== undefined) {
      // Before opening: a second process on the same files would lose writes (see `DirLock`).
      yield* Effect.acquireRelease(
        Effect.try({
          try: () => DirLock.acquire(dataDir),
          catch: (cause) => new SqlError({ cause, message: `Failed to lock the data directory ${dataDir}` })
        }).pipe(Effect.flatMap((lock) =>
          "heldBy" in lock
            ? Effect.fail(
              new SqlError({
                cause: lock,
                message: `the data directory ${dataDir} is in use by process ${lock.heldBy} (a running server?): ` +
                  "stop it first, or set DATABASE_URL to share a PostgreSQL server between processes"
              })
            )
            : Effect.succeed(lock)
        )),
        (lock) => Effect.sync(() => lock.release())
      )
    }
    if (dataDir !== undefined) {
      const { template } = config
      yield* Effect.tryPromise({
        try: async () => {
          if (Template.interrupted(dataDir)) Template.finish(dataDir)
          else if (template !== undefined && NodeFs.existsSync(template) && isFresh(dataDir)) {
            await Template.unpack(template, dataDir)
          }
        },
        catch: (cause) => new SqlError({ cause, message: `Failed to unpack the PGlite template into ${dataDir}` })
      })
    }
    // In memory, PGlite unpacks the template itself (`loadDataDir`): a second or two instead of the
    // three to five of `initdb` and the migrations, and half the resident memory of a new cluster.
    const memoryTemplate = dataDir === undefined && config.template !== undefined && NodeFs.existsSync(config.template)
      ? config.template
      : undefined
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          PGlite.create({
            postgresqlconf: [...postgresqlConf],
            ...(dataDir === undefined ? {} : { dataDir }),
            ...(memoryTemplate === undefined ? {} : { loadDataDir: new Blob([NodeFs.readFileSync(memoryTemplate)]) })
          }),
        catch: (cause) => new SqlError({ cause, message: "Failed to open PGlite" })
      }),
      (db) => Effect.promise(() => db.close())
    )

    const run = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: statementFailed })

    // PGlite's `query` has no named statements: it parses and plans its statement on every call, in
    // six calls into WebAssembly. A statement with parameters is instead prepared once (`PREPARE`,
    // named after its text) and run with `EXECUTE` through `exec`, one call, its parameters as
    // literals: authentication's statement took 1.06 ms, now 0.27 ms. Prepared statements belong to
    // the session (a rollback keeps them), and PostgreSQL plans them again when a table changes.
    const prepared = new Map<string, string>()
    // The `EXECUTE` of a statement and its name, or none when it is not one to prepare.
    const executeOf = (sql: string, params: ReadonlyArray<unknown>) => {
      const name = prepared.get(sql) ??
        (prepared.size < MAX_PREPARED && preparable.test(sql)
          ? `sl_${NodeCrypto.createHash("sha1").update(sql).digest("hex")}`
          : undefined)
      if (name === undefined) return undefined
      const literals: Array<string> = []
      for (const param of params) {
        const literal = literalOf(param)
        if (literal === undefined) return undefined
        literals.push(literal)
      }
      return { name, text: `EXECUTE ${name}(${literals.join(", ")})` }
    }
    const runPrepared = async (sql: string, execute: { readonly name: string; readonly text: string }) => {
      if (!prepared.has(sql)) {
        await pglite.exec(`PREPARE ${execute.name} AS ${sql}`)
        prepared.set(sql, execute.name)
      }
      const [result] = await pglite.exec(execute.text)
      return result!.rows as ReadonlyArray<any>
    }

    // `query` uses the extended protocol, which takes one statement only; parameterless SQL goes
    // through `exec` (the simple protocol) so that migrations may hold several statements.
    const rowsOf = (sql: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<any>, SqlError> => {
      if (params.length === 0) {
        return run(() => pglite.exec(sql)).pipe(Effect.map((results: Array<Results>) =>
          // The shape `@effect/sql-pg` gives: the rows of a single statement, else one array per statement.
          results.length === 1 ? results[0].rows : results.map((result) => result.rows)
        ))
      }
      const execute = executeOf(sql, params)
      return execute === undefined
        ? run(() => pglite.query(sql, params as Array<unknown>)).pipe(Effect.map((result) => result.rows))
        : run(() => runPrepared(sql, execute))
    }

    const connection: Connection = {
      execute: (sql, params, transformRows) =>
        transformRows === undefined ? rowsOf(sql, params) : Effect.map(rowsOf(sql, params), transformRows),
      executeRaw: (sql, params) => run(() => pglite.query(sql, params as Array<unknown>)),
      executeValues: (sql, params) =>
        run(() => pglite.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" })).pipe(
          Effect.map((result) => result.rows)
        ),
      executeUnprepared: (sql, params, transformRows) => connection.execute(sql, params, transformRows),
      // PGlite has no cursors: the result is read at once, then streamed.
      executeStream: (sql, params, transformRows) =>
        Stream.flatMap(
          Stream.fromEffect(connection.execute(sql, params, transformRows)),
          Stream.fromIterable
        )
    }

    // PGlite is one session: a transaction owns it from BEGIN to COMMIT/ROLLBACK, and a statement
    // outside a transaction must not land in the middle of somebody else's. Every acquisition
    // (one statement, or one whole transaction) therefore holds the single permit for its scope.
    const session = yield* Effect.makeSemaphore(1)
    const acquire = Effect.as(
      Effect.acquireRelease(session.take(1), () => session.release(1)),
      connection
    )

    const client = yield* SqlClient.make({
      acquirer: acquire,
      transactionAcquirer: acquire,
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", "pglite"]]
    })
    // The hot reads and the event log's writes (`PoolReads`) skip the client's span, scope and
    // compiling, as on PostgreSQL, and take the same permit as any statement.
    const direct: PoolRead.Pool = { query: (sql, params) => session.withPermits(1)(rowsOf(sql, params)) }
    return Object.assign(client, { pglite, direct })
  })

/**
 * PGlite with its data in a directory (created on first use, reopened afterwards), or in memory when
 * `dataDir` is omitted; either may start from a `template`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: PgliteClientConfig
): Layer.Layer<PgliteClient | SqlClient.SqlClient | PoolRead.PoolReads, SqlError> =>
  Layer.scopedContext(
    Effect.map(
      make(config),
      (client) =>
        Context.make(PgliteClient, client).pipe(
          Context.add(SqlClient.SqlClient, client),
          Context.add(PoolRead.PoolReads, client.direct)
        )
    )
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Writes `client`'s cluster as a gzipped tarball to `file`: a template new data directories start
 * from (see `PgliteClientConfig.template`). Take it from a freshly migrated, otherwise empty store.
 *
 * @since 0.1.0
 * @category utils
 */
export const dumpTemplate = (file: string): Effect.Effect<void, SqlError, PgliteClient> =>
  Effect.flatMap(PgliteClient, (client) =>
    Effect.tryPromise({
      try: async () => {
        const dump = await client.pglite.dumpDataDir("gzip")
        NodeFs.writeFileSync(file, new Uint8Array(await dump.arrayBuffer()))
      },
      catch: (cause) => new SqlError({ cause, message: `Failed to write the PGlite template ${file}` })
    }))

/**
 * PGlite in memory: a fresh, empty database per layer build. Real PostgreSQL that keeps nothing: for
 * tests, the template build, and a host that asks for no data directory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<PgliteClient | SqlClient.SqlClient | PoolRead.PoolReads, SqlError> = layer({})
