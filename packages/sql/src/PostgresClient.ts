/**
 * The PostgreSQL client: `@effect/sql-pg` over a `pg` connection pool. It provides the same
 * `SqlClient.SqlClient` as `PgliteClient`, so every repository runs unchanged on either.
 *
 * Statements with parameters are prepared: `@effect/sql-pg` sends every statement unnamed, so the
 * server parses and plans it every time; here each connection names a statement after its text's
 * hash and prepares it once (measured 4× for the two statements of an authenticated read). Turn it
 * off (`prepare: false`) behind a pooler in transaction mode, where a connection's prepared
 * statements do not follow the client.
 *
 * @since 0.1.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import * as Pg from "pg"
import * as PoolRead from "./internal/poolRead.js"
import * as Timestamptz from "./internal/timestamptz.js"

/**
 * How to reach the server.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostgresClientConfig {
  /** A connection URL (`postgres://user:password@host:5432/database`). */
  readonly url: Redacted.Redacted | string
  /** The pool size (default 10, `pg`'s default). */
  readonly maxConnections?: number | undefined
  /** How long to wait for the first connection (default 5 seconds). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Prepare statements with parameters once per connection (default true). */
  readonly prepare?: boolean | undefined
}

// Statement texts to their names; the texts are the repositories' own (a bounded set), but the map
// is cleared if it ever grows past this, rather than grow without end.
const MAX_NAMED = 10_000
const names = new Map<string, string>()

const nameOf = (text: string): string => {
  let name = names.get(text)
  if (name === undefined) {
    if (names.size >= MAX_NAMED) names.clear()
    name = `sl_${createHash("sha1").update(text).digest("base64url")}`
    names.set(text, name)
  }
  return name
}

/** A `pg` client that sends a statement with parameters as a named (prepared) statement. */
class PreparingClient extends Pg.Client {
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      // With a callback (as `@effect/sql-pg` and `pg-pool` call it), a query made from the text,
      // then named: handed a config object, `pg` would copy it through its property descriptors on
      // every call. Without one, the config, so that `pg` answers with its promise.
      return typeof callback === "function"
        ? super.query(Object.assign(new Pg.Query(config, values, callback), { name: nameOf(config) }))
        : super.query({ name: nameOf(config), text: config, values })
    }
    return super.query(config, values, callback)
  }
}

/**
 * A pool to the server at `url`, closed when the layer's scope closes. The hot reads run straight on
 * the pool (`PoolReads`, see `internal/poolRead.ts`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  config: PostgresClientConfig
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | PoolRead.PoolReads, SqlError> =>
  Layer.unwrapScoped(
    Effect.map(acquirePool(config), (pool) =>
      Layer.merge(
        // `acquirePool` closes the pool with this layer's scope; `PgClient` only uses it.
        PgClient.layerFromPool({ acquire: Effect.succeed(pool) }),
        Layer.succeed(PoolRead.PoolReads, PoolRead.fromPgPool(pool))
      ))
  )

const acquirePool = (config: PostgresClientConfig) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: Redacted.value(typeof config.url === "string" ? Redacted.make(config.url) : config.url),
        max: config.maxConnections,
        connectionTimeoutMillis: Duration.toMillis(connectTimeout(config)),
        application_name: "sightline",
        types: Timestamptz.types,
        Client: config.prepare === false ? Pg.Client : PreparingClient
      })
      // An idle connection that breaks is dropped by the pool; unheard, its error would end the process.
      pool.on("error", () => undefined)
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000))
  ).pipe(
    // As `PgClient.layer` does: a server that cannot be reached fails the layer, not the first query.
    Effect.tap((pool) =>
      Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: connectTimeout(config),
          onTimeout: () =>
            new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      )
    )
  )

const connectTimeout = (config: PostgresClientConfig) => config.connectTimeout ?? Duration.seconds(5)

/**
 * A pool to the server named by `DATABASE_URL`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  url: Config.Config<Redacted.Redacted> = Config.redacted("DATABASE_URL")
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, ConfigError.ConfigError | SqlError> =>
  PgClient.layerConfig({ url, applicationName: Config.succeed("sightline") })
