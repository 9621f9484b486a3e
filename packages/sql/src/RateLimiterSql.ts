/**
 * Core's `RateLimiter` over SQL: one row per bucket, so that every server process over one database
 * enforces one limit. Each `consume` is one transaction that locks the bucket's row, applies core's
 * pure `take` rule and writes the result back. The time is the database's (`clock_timestamp()`), one
 * clock for every process.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as RateLimiter from "@sightline/core/RateLimiter"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { TablePrefix } from "./TablePrefix.js"

interface Row {
  readonly tokens: number
  readonly updated_at_millis: number
  readonly now_millis: number
}

/** Builds the limiter over the `SqlClient` and table prefix in context. */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const table = sql((yield* TablePrefix).name("rate_limits"))

  const consume = (key: string, config: RateLimiter.BucketConfig, cost = 1) =>
    Effect.gen(function*() {
      yield* RateLimiter.checkArguments(config, cost)
      // A key never seen starts full, as of now: insert it so that there is a row to lock.
      yield* sql`INSERT INTO ${table} (key, tokens, updated_at_millis)
        VALUES (${key}, ${config.capacity}, extract(epoch from clock_timestamp()) * 1000)
        ON CONFLICT (key) DO NOTHING`
      const rows = yield* sql<Row>`SELECT tokens, updated_at_millis,
          (extract(epoch from clock_timestamp()) * 1000)::double precision AS now_millis
        FROM ${table} WHERE key = ${key} FOR UPDATE`
      const row = rows[0]!
      const { bucket, result } = RateLimiter.take(
        Option.some({ tokens: Number(row.tokens), updatedAtMillis: Number(row.updated_at_millis) }),
        Number(row.now_millis),
        config,
        cost
      )
      yield* sql`UPDATE ${table} SET tokens = ${bucket.tokens}, updated_at_millis = ${bucket.updatedAtMillis}
        WHERE key = ${key}`
      return result
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("RateLimiterSql.consume"))

  return RateLimiter.RateLimiter.of({ consume })
})

/** The limiter over the `SqlClient` and `TablePrefix` in context. */
export const layer: Layer.Layer<RateLimiter.RateLimiter, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  RateLimiter.RateLimiter,
  make
)
