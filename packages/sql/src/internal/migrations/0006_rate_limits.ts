/**
 * Migration 6: the token buckets of the shared rate limiter (`RateLimiterSql`), one row per key.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Creates the table of `RateLimiterSql`. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const name = (n: string) => sql(prefix.name(n))
    // Milliseconds as double precision: the same number type on PostgreSQL and PGlite, exact for
    // epoch milliseconds, and what the bucket arithmetic works in.
    yield* sql`CREATE TABLE ${name("rate_limits")} (
      key text NOT NULL,
      tokens double precision NOT NULL,
      updated_at_millis double precision NOT NULL,
      CONSTRAINT ${name("rate_limits_pkey")} PRIMARY KEY (key)
    )`
  })
