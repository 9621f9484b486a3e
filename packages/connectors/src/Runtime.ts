/**
 * Core's `ConnectorRuntime` over real databases:
 * - POSTGRES through `pg`, one bounded pool per connector (rebuilt when the connector changes);
 * - MYSQL (MySQL and MariaDB) through `mysql2`, likewise;
 * - FILES on the DuckDB database of its uploaded files, where the host provides
 *   `FilesConnector.FilesDatabases` (read-only, nothing outside its tables reachable);
 * - DEMO on an embedded PGlite holding the generated `retail` dataset, in a worker thread so that
 *   none of its statements holds the event loop, started on first use (loaded from
 *   `Options.demoCache` when that holds it, and kept there once built) and shared by every
 *   organization, so it is always read-only whatever the connector's flags say. Its statements
 *   stop at the query's timeout or interruption by the end of the worker (`demoWorker.ts`).
 *
 * A POSTGRES or MYSQL connector reaches only what `Options.access` allows: by default public
 * addresses (checked at every connection, after DNS resolution) and no superuser role (checked at
 * a pool's first connection).
 *
 * Each query runs as one statement in its own transaction: READ ONLY unless the connector allows
 * writes (the database refuses a write, not a parser), with a statement timeout, at most `maxRows`
 * rows fetched through a cursor, and the caller's attributes bound as parameters. An interrupted
 * query is cancelled on the server (`pg_cancel_backend`) and its connection discarded.
 * Introspection is cached per connector version for `introspectionTtl`.
 *
 * @since 0.1.0
 */
import * as Connector from "@sightline/core/Connector"
import { unconfiguredMessage } from "@sightline/core/ConnectorFiles"
import { ConnectorRuntime, defaultTimeoutMillis, QueryError } from "@sightline/core/ConnectorRuntime"
import type * as CoreRuntime from "@sightline/core/ConnectorRuntime"
import * as NetworkAccess from "@sightline/core/NetworkAccess"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { Pool as MysqlPool, PoolConnection as MysqlConnection } from "mysql2"
import pg from "pg"
import * as DemoDataset from "./DemoDataset.js"
import * as FilesConnector from "./FilesConnector.js"
import type * as FilesDatabase from "./FilesDatabase.js"
import * as Access from "./internal/access.js"
import * as DemoCache from "./internal/demoCache.js"
import * as DemoWorker from "./internal/demoWorker.js"
import * as Mysql from "./internal/mysql.js"
import * as PgliteSession from "./internal/pgliteSession.js"
import * as PgSession from "./internal/pgSession.js"
import * as Dialect from "./internal/postgresDialect.js"
import * as StatementText from "./internal/statementText.js"

/**
 * Options of the runtime.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How long an introspected schema is reused (default 5 minutes). */
  readonly introspectionTtl: Duration.DurationInput
  /** Connections per POSTGRES connector (default 5). */
  readonly poolSize: number
  /** How long to wait for a connection (default 10 s). */
  readonly connectTimeoutMillis: number
  /**
   * A directory where the DEMO database is kept once built (`buildDemoCache`), so that a process
   * loads it in about 2 s instead of building it for about 9 s; absent, every process builds it.
   */
  readonly demoCache?: string | undefined
  /** What connectors may reach and log in as beyond the defaults (public addresses, no superuser). */
  readonly access?: ConnectorAccess | undefined
}

/**
 * What the operator lets POSTGRES and MYSQL connectors reach and log in as.
 *
 * @since 0.1.0
 * @category models
 */
export type ConnectorAccess = Access.Access

/**
 * The default access: the public internet only, and no superuser roles.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultAccess: ConnectorAccess = Access.defaults

/**
 * The defaults.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = {
  introspectionTtl: Duration.minutes(5),
  poolSize: 5,
  connectTimeoutMillis: 10_000
}

// `date` stays text: pg would turn it into a JavaScript Date at local midnight.
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser:
    ((oid: number, format?: string) =>
      oid === 1082 ? (value: string) => value : pg.types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig[
        "getTypeParser"
      ]
}

/**
 * libpq's `sslmode` as `pg` understands it. `pg` cannot fall back from TLS to plain text, so
 * `allow` and `prefer` connect without TLS; `require` encrypts without checking the certificate;
 * `verify-ca` and `verify-full` check it (the host name too, for `verify-full`).
 *
 * @since 0.1.0
 * @category utils
 */
export const sslOf = (mode: Connector.SslMode): pg.ClientConfig["ssl"] => {
  switch (mode) {
    case "disable":
    case "allow":
    case "prefer":
      return false
    case "require":
      return { rejectUnauthorized: false }
    case "verify-ca":
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined }
    case "verify-full":
      return { rejectUnauthorized: true }
  }
}

/**
 * The `pg` configuration of POSTGRES settings, its socket under the network policy.
 *
 * @since 0.1.0
 * @category utils
 */
export const clientConfig = (
  settings: Connector.PostgresSettings,
  connectTimeoutMillis: number,
  network: NetworkAccess.Policy = NetworkAccess.publicOnly
): pg.ClientConfig => ({
  host: settings.host,
  port: settings.port,
  user: settings.user,
  password: Redacted.value(settings.password),
  database: settings.database,
  ssl: sslOf(settings.ssl_mode),
  connectionTimeoutMillis: connectTimeoutMillis,
  types: typeParsers,
  application_name: "sightline",
  stream: Access.pgStream(network)
})

const queryError = (error: unknown) => {
  const sqlState = Dialect.sqlStateOf(error)
  return new QueryError({ message: Dialect.errorMessage(error), ...(sqlState === undefined ? {} : { sqlState }) })
}

// A connection's failure, where a refusal of the network rule says how the operator lifts it.
const connectError = (host: string) => (error: unknown) =>
  NetworkAccess.isRefusal(error) ? new QueryError({ message: Access.refusedMessage(host) }) : queryError(error)

// The dataset's two years end with the last one, so "last year" always has data.
const demoScript = () => DemoDataset.retail(new Date().getUTCFullYear() - 1)

/**
 * The DEMO database's first opening: loaded from `cache` when it holds the current one, else built,
 * with the cache file it is still to be written to, and the snapshot later workers open from.
 */
interface DemoOpening {
  readonly worker: DemoWorker.DemoWorker
  readonly snapshot?: Blob
  readonly toCache?: string
}

const openDemo = async (cache: string | undefined): Promise<DemoOpening> => {
  const script = demoScript()
  if (cache === undefined) return { worker: await DemoWorker.start({ statements: script.statements }) }
  const file = DemoCache.fileOf(cache, "retail", script.statements)
  const tarball = await DemoCache.read(file)
  if (tarball !== undefined) {
    // A damaged file is built again and replaced.
    const loaded = await DemoWorker.start({ load: tarball }).catch(() => undefined)
    if (loaded !== undefined) return { worker: loaded, snapshot: tarball }
  }
  return { worker: await DemoWorker.start({ statements: script.statements }), toCache: file }
}

/**
 * Builds the current DEMO database into `directory` (see `Options.demoCache`) unless it is there
 * already: what a server's build step runs, so that even its first question loads it.
 *
 * @since 0.1.0
 * @category utils
 */
export const buildDemoCache = (directory: string): Effect.Effect<void, QueryError> =>
  Effect.tryPromise({
    try: async () => {
      const script = demoScript()
      const file = DemoCache.fileOf(directory, "retail", script.statements)
      if (await DemoCache.exists(file)) return
      const worker = await DemoWorker.start({ statements: script.statements })
      try {
        await DemoCache.write(file, await worker.dump())
      } finally {
        await worker.close()
      }
    },
    catch: queryError
  })

/**
 * The runtime over the given options (scoped: pools and the demo database close with the scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const access = options.access ?? Access.defaults
    // `vetted`: the pool's role was checked for superuser powers (at its first connection).
    const pools = new Map<number, { readonly version: string; readonly pool: pg.Pool; vetted: boolean }>()
    const mysqlPools = new Map<number, { readonly version: string; readonly pool: MysqlPool; vetted: boolean }>()
    const schemas = new Map<string, { readonly at: number; readonly schema: CoreRuntime.SchemaInfo }>()
    const ttl = Duration.toMillis(options.introspectionTtl)
    // The databases of FILES connectors, where the host provides them (`FilesConnector.layer`).
    const filesDatabases = yield* Effect.serviceOption(FilesConnector.FilesDatabases)
    const onFilesDatabase = <A>(
      settings: Connector.FilesSettings,
      f: (database: FilesDatabase.Database) => Effect.Effect<A, QueryError>
    ) =>
      Option.match(filesDatabases, {
        onNone: () => Effect.fail(new QueryError({ message: unconfiguredMessage })),
        onSome: (databases) => databases.use(settings, f)
      })
    // The worker holding the DEMO database (`demoWorker.ts`), and what a new one opens from once a
    // worker was stopped: the snapshot, or, before there is one, the first opening again.
    let demo: Promise<DemoWorker.DemoWorker> | undefined
    let demoSnapshot: Blob | undefined
    // The cache file a demo database built by this process is still to be written to.
    let demoToCache: string | undefined
    // PGlite is a single session: one transaction at a time.
    const demoLock = yield* Effect.makeSemaphore(1)
    const scope = yield* Effect.scope

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        await Promise.allSettled([...pools.values()].map(({ pool }) => pool.end()))
        await Promise.allSettled([...mysqlPools.values()].map(({ pool }) => pool.promise().end()))
        if (demo !== undefined) await demo.then((worker) => worker.close()).catch(() => undefined)
      })
    )

    const version = (connector: Connector.ConnectorRecord) =>
      `${connector.id}:${String(connector.updated_at.epochMillis)}`

    const poolOf = (connector: Connector.ConnectorRecord, settings: Connector.PostgresSettings) => {
      const existing = pools.get(connector.id)
      if (existing !== undefined && existing.version === version(connector)) return existing
      // The connector changed (host, password, ...): its old connections must not be reused.
      if (existing !== undefined) existing.pool.end().catch(() => undefined)
      const pool = new pg.Pool({
        ...clientConfig(settings, options.connectTimeoutMillis, access.network),
        max: options.poolSize
      })
      // An idle connection that the server drops must not crash the process.
      pool.on("error", () => undefined)
      const entry = { version: version(connector), pool, vetted: access.allowSuperuser }
      pools.set(connector.id, entry)
      return entry
    }

    const mysqlPoolOf = (connector: Connector.ConnectorRecord, settings: Connector.MysqlSettings) =>
      Effect.map(Effect.promise(Mysql.driver), (mysql) => {
        const existing = mysqlPools.get(connector.id)
        if (existing !== undefined && existing.version === version(connector)) return existing
        if (existing !== undefined) existing.pool.end(() => undefined)
        const pool = mysql.createPool({
          ...Mysql.poolOptions(settings, options.connectTimeoutMillis, access.network),
          connectionLimit: options.poolSize
        })
        pool.on("connection", (connection) => connection.on("error", () => undefined))
        const entry = { version: version(connector), pool, vetted: access.allowSuperuser }
        mysqlPools.set(connector.id, entry)
        return entry
      })

    // A pool's role is checked once, at its first connection; a powerful role is refused every time.
    const vet = (entry: { vetted: boolean }, user: string, powerful: () => Promise<boolean>) =>
      entry.vetted ? Promise.resolve() : powerful().then((refused) => {
        if (refused) throw new QueryError({ message: Access.superuserMessage(user) })
        entry.vetted = true
      })

    // A pooled MySQL connection for one statement: an interrupted query is killed on the server.
    const withMysqlConnection = <A>(
      entry: { readonly pool: MysqlPool; vetted: boolean },
      settings: Connector.MysqlSettings,
      task: (connection: MysqlConnection, lost: () => void) => Promise<A>
    ) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: () =>
            new Promise<MysqlConnection>((resolve, reject) =>
              entry.pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection)))
            ),
          catch: connectError(settings.host)
        }).pipe(Effect.map((connection) => ({ connection, lost: false }))),
        (held) =>
          Effect.tryPromise({
            try: () =>
              vet(entry, settings.user, () => Mysql.powerful(held.connection)).then(() =>
                task(held.connection, () => {
                  held.lost = true
                })
              ),
            catch: (error) => error instanceof QueryError ? error : queryError(error)
          }).pipe(
            Effect.onInterrupt(() =>
              Effect.promise(() =>
                new Promise<void>((resolve) =>
                  entry.pool.query("KILL QUERY ?", [held.connection.threadId], () => resolve())
                )
              )
            )
          ),
        (held, exit) =>
          Effect.sync(() => {
            if (held.lost) return
            if (Exit.isSuccess(exit)) held.connection.release()
            else held.connection.destroy()
          })
      )

    // Written a moment after the first query that needed it (whose answer it would otherwise hold
    // up for the 1.5 s of the dump), under the session's lock; once begun it finishes, as the
    // database closes only after it. It is also the snapshot a stopped worker's successor opens
    // from. A cache that cannot be written only costs the next process time.
    const cacheDemo = (worker: DemoWorker.DemoWorker, file: string) =>
      Effect.sleep(Duration.seconds(1)).pipe(
        Effect.zipRight(
          demoLock.withPermits(1)(
            Effect.tryPromise(async () => {
              const tarball = await worker.dump()
              demoSnapshot = tarball
              await DemoCache.write(file, tarball)
            })
          ).pipe(
            Effect.uninterruptible
          )
        ),
        Effect.catchAll((error) => Effect.logWarning(`The DEMO database could not be cached in ${file}`, error.cause)),
        Effect.forkIn(scope)
      )

    const demoDatabase = (dataset: string) => {
      if (!(DemoDataset.datasets as ReadonlyArray<string>).includes(dataset)) {
        return Effect.fail(
          new QueryError({ message: `unknown demo dataset ${dataset} (available: ${DemoDataset.datasets.join(", ")})` })
        )
      }
      return Effect.tryPromise({
        try: () => {
          demo ??= (demoSnapshot === undefined
            ? openDemo(options.demoCache)
            : DemoWorker.start({ load: demoSnapshot }).then((worker): DemoOpening => ({ worker }))).then((opened) => {
              if (opened.snapshot !== undefined) demoSnapshot = opened.snapshot
              demoToCache = opened.toCache
              return opened.worker
            }).catch((error) => {
              // The next query tries again rather than failing forever.
              demo = undefined
              throw error
            })
          return demo
        },
        catch: queryError
      }).pipe(Effect.tap((worker) => {
        const file = demoToCache
        if (file === undefined) return Effect.void
        demoToCache = undefined
        return cacheDemo(worker, file)
      }))
    }

    // A pooled client for one task: on interruption the server-side query is cancelled and the
    // connection discarded rather than returned mid-statement.
    const withPgClient = <A>(
      entry: { readonly pool: pg.Pool; vetted: boolean },
      settings: Connector.PostgresSettings,
      task: (session: Dialect.Session) => Promise<A>
    ) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({ try: () => entry.pool.connect(), catch: connectError(settings.host) }),
        (client) =>
          Effect.tryPromise({
            try: () =>
              vet(
                entry,
                settings.user,
                () => client.query(Access.postgresPowerQuery).then((result) => result.rows[0]?.powerful === true)
              ).then(() => task(PgSession.make(client))),
            catch: (error) => error instanceof QueryError ? error : queryError(error)
          }).pipe(
            Effect.onInterrupt(() => {
              const pid = (client as unknown as { processID?: number }).processID
              return pid === undefined
                ? Effect.void
                : Effect.promise(() => entry.pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => undefined))
            })
          ),
        (client, exit) => Effect.sync(() => client.release(Exit.isSuccess(exit) ? undefined : true))
      )

    // A worker that was stopped (past a deadline, interrupted) or grew too large is let go: the next
    // session opens a fresh one.
    const retireDemo = (worker: DemoWorker.DemoWorker, opened: Promise<DemoWorker.DemoWorker>) =>
      Effect.promise(async () => {
        if (!worker.stopped() && !worker.oversized()) return
        if (demo === opened) demo = undefined
        await worker.close()
      })

    // A PostgreSQL session: a pooled `pg` client, or the demo's worker, whose statements share one
    // deadline of `timeoutMillis` (its own clock: PGlite cannot time a statement out itself).
    const withSession = <A>(
      connector: Connector.ConnectorRecord,
      config: Connector.ConnectorConfig & { readonly connector_type: "POSTGRES" | "DEMO" },
      timeoutMillis: number,
      task: (session: Dialect.Session) => Promise<A>
    ) =>
      config.connector_type === "POSTGRES"
        ? withPgClient(poolOf(connector, config.postgres), config.postgres, task)
        : demoLock.withPermits(1)(
          Effect.flatMap(demoDatabase(config.demo.dataset), (worker) => {
            const opened = demo!
            return Effect.tryPromise({
              try: (signal) => task(PgliteSession.make(worker, timeoutMillis, signal)),
              catch: queryError
            }).pipe(Effect.ensuring(retireDemo(worker, opened)))
          })
        )

    const introspect = (connector: Connector.ConnectorRecord) =>
      Effect.gen(function*() {
        const key = version(connector)
        const now = yield* Clock.currentTimeMillis
        const cached = schemas.get(key)
        if (cached !== undefined && now - cached.at < ttl) return cached.schema
        const config = connector.config
        const schema = config.connector_type === "FILES"
          ? yield* onFilesDatabase(config.files, (database) => database.introspect)
          : config.connector_type === "MYSQL"
          ? yield* Effect.flatMap(mysqlPoolOf(connector, config.mysql), (entry) =>
            withMysqlConnection(
              entry,
              config.mysql,
              (connection) => Mysql.introspect(connection, config.mysql.database)
            ))
          : yield* withSession(
            connector,
            config,
            defaultTimeoutMillis,
            (session) =>
              Dialect.introspect(session, config.connector_type === "POSTGRES" ? config.postgres.schemas : undefined)
          )
        schemas.set(key, { at: now, schema })
        return schema
      }).pipe(Effect.withSpan("ConnectorRuntime.introspect", { attributes: { connector_id: connector.id } }))

    const query = (connector: Connector.ConnectorRecord, request: CoreRuntime.QueryRequest) => {
      const config = connector.config
      const isDemo = config.connector_type === "DEMO"
      const run = config.connector_type === "FILES"
        // Read-only whatever the flags say: the database is opened read-only.
        ? onFilesDatabase(config.files, (database) => database.query(request))
        : config.connector_type === "MYSQL"
        ? Effect.flatMap(mysqlPoolOf(connector, config.mysql), (entry) =>
          withMysqlConnection(entry, config.mysql, (connection, lost) =>
            Mysql.run(connection, request, {
              readOnly: !connector.allow_sql_write_operations,
              sessionMetadata: connector.include_db_session_metadata
            }, lost)))
        : withSession(connector, config, request.timeoutMillis, (session) =>
          Dialect.run(session, request, {
            readOnly: isDemo || !connector.allow_sql_write_operations,
            sessionMetadata: !isDemo && connector.include_db_session_metadata,
            attributesSecret: Connector.clientAttributesSecret(config),
            statementTimeout: !isDemo
          }))
      // The statement's shape, never its values (literals become `?`; parameters are never recorded),
      // worked out only for a span that is exported.
      const describe = Effect.flatMap(Effect.currentSpan, (span) => {
        if (!span.sampled) {
          return Effect.void
        }
        const mysql = config.connector_type === "MYSQL"
        const system = mysql ? "mysql" : config.connector_type === "FILES" ? "duckdb" : "postgresql"
        const operation = StatementText.operationOf(request.sql)
        return Effect.annotateCurrentSpan({
          "db.system.name": system,
          "db.query.text": StatementText.withoutValues(request.sql, { doubleQuotedStrings: mysql }),
          ...(operation === undefined ? {} : { "db.operation.name": operation })
        })
      }).pipe(Effect.ignore)
      // A failure is described by its SQLSTATE (what the exporter records of the failure itself is
      // the tracer's to decide: the standalone server's records no message, which can quote a row).
      return Effect.zipRight(describe, run).pipe(
        Effect.tapError((error) =>
          Effect.annotateCurrentSpan({
            "error.type": error.sqlState ?? "QueryError",
            ...(error.sqlState === undefined ? {} : { "db.response.status_code": error.sqlState })
          })
        ),
        Effect.withSpan("ConnectorRuntime.query", { kind: "client", attributes: { connector_id: connector.id } })
      )
    }

    return ConnectorRuntime.of({ introspect, query })
  })

/**
 * The runtime with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ConnectorRuntime> = Layer.scoped(ConnectorRuntime, makeWith(defaultOptions))

/**
 * The runtime with other options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<ConnectorRuntime> =>
  Layer.scoped(ConnectorRuntime, makeWith(options))
