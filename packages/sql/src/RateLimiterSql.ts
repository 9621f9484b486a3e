/**
 * Core's `RateLimiter` over SQL, shared by every server process over one database, without a round
 * trip per call: each process spends tokens it leased (`RateLimiter.makeLeased`), and a lease is one
 * atomic statement on the bucket's row (an upsert that refills, grants and records the grant), never a
 * transaction holding a lock. The statement applies core's `grant` rule; the time is the database's
 * (`statement_timestamp()`), one clock for every process.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TablePrefix } from "./TablePrefix.js"

interface Row {
  readonly granted: number
  readonly tokens: number
}

/**
 * Builds the limiter over the `SqlClient` and table prefix in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table = sql((yield* TablePrefix).name("rate_limits"))
  const now = sql.literal("(extract(epoch from statement_timestamp()) * 1000)::double precision")

  const lease = (key: string, config: RateLimiter.BucketConfig, want: number) => {
    const capacity = config.capacity
    // `grant` in SQL: on conflict every expression sees the row as it was, so `refilled` is the
    // bucket before this lease; a new key starts full.
    const refilled = sql`least(${capacity}::double precision, b.tokens +
      greatest(0, ${now} - b.updated_at_millis) * ${config.refillPerMinute}::double precision / 60000)`
    const granted = sql`least(${want}::double precision, floor(${refilled} + 1e-9))`
    return sql<Row>`INSERT INTO ${table} AS b (key, tokens, updated_at_millis, granted)
      VALUES (${key}, ${capacity - Math.min(want, capacity)}, ${now}, ${Math.min(want, capacity)})
      ON CONFLICT (key) DO UPDATE SET
        granted = ${granted},
        tokens = greatest(0, ${refilled} - ${granted}),
        updated_at_millis = greatest(${now}, b.updated_at_millis)
      RETURNING granted, tokens`.pipe(
      Effect.map((rows) => ({ granted: Number(rows[0]!.granted), tokens: Number(rows[0]!.tokens) })),
      Effect.orDie
    )
  }

  return RateLimiter.makeLeased(lease)
})

/**
 * The limiter over the `SqlClient` and `TablePrefix` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RateLimiter.RateLimiter, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  RateLimiter.RateLimiter,
  make
)
