/**
 * The PostgreSQL client: `@effect/sql-pg` over a `pg` connection pool. It provides the same
 * `SqlClient.SqlClient` as `PgliteClient`, so every repository runs unchanged on either.
 *
 * @since 0.1.0
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import type * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"

/** How to reach the server. */
export interface PostgresClientConfig {
  /** A connection URL (`postgres://user:password@host:5432/database`). */
  readonly url: Redacted.Redacted | string
  /** The pool size (default 10, `pg`'s default). */
  readonly maxConnections?: number | undefined
  /** How long to wait for the first connection (default 5 seconds). */
  readonly connectTimeout?: Duration.DurationInput | undefined
}

const toPgConfig = (config: PostgresClientConfig): PgClient.PgClientConfig => ({
  url: typeof config.url === "string" ? Redacted.make(config.url) : config.url,
  maxConnections: config.maxConnections,
  connectTimeout: config.connectTimeout,
  applicationName: "sightline"
})

/** A pool to the server at `url`, closed when the layer's scope closes. */
export const layer = (config: PostgresClientConfig): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  PgClient.layer(toPgConfig(config))

/** A pool to the server named by `DATABASE_URL`. */
export const layerConfig = (
  url: Config.Config<Redacted.Redacted> = Config.redacted("DATABASE_URL")
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, ConfigError.ConfigError | SqlError> =>
  PgClient.layerConfig({ url, applicationName: Config.succeed("sightline") })
