/**
 * The shared rate limiter: core's contract on both databases, and one limit across processes (two
 * separate connection pools over the same PostgreSQL tables stand in for two server processes).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as RateLimiter from "@sightline/core/RateLimiter"
import { RateLimiterContract } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PostgresClient from "../src/PostgresClient.js"
import * as RateLimiterSql from "../src/RateLimiterSql.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { dropPrefix, forEachDatabase, postgresUrl, runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => RateLimiterContract.rateLimiterContract(name, layer))

forEachDatabase((database) => {
  if (database.name !== "postgres") return
  describe("RateLimiterSql: postgres, two processes", () => {
    it.live("shares one bucket: exactly `capacity` of many concurrent calls are allowed", () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        // Migrate the prefix once, through the store of the harness.
        yield* Effect.scoped(Layer.build(database.store(prefix)))
        const process = () =>
          RateLimiterSql.layer.pipe(
            Layer.provide(PostgresClient.layer({ url: postgresUrl, maxConnections: 5 })),
            Layer.provide(TablePrefix.layer(prefix))
          )
        const key = `org:${crypto.randomUUID()}`
        const config = { capacity: 7, refillPerMinute: 1 }
        const burst = (n: number) =>
          Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
            Effect.forEach(Array.from({ length: n }), () =>
              limiter.consume(key, config), { concurrency: "unbounded" }))
        const [a, b] = yield* Effect.all([
          burst(10).pipe(Effect.provide(process())),
          burst(10).pipe(Effect.provide(process()))
        ], { concurrency: 2 })
        const allowed = [...a, ...b].filter((result) =>
          result.allowed
        ).length
        expect(allowed).toBe(7)
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`${prefix}rate_limits`)}`).pipe(
            Effect.provide(database.client)
          )
        expect(rows[0]!.n).toBe(1)
        yield* dropPrefix(prefix).pipe(Effect.provide(database.client))
      }))

    it.live(
      "leases: three processes under a burst of 10× the limit let the organization have the limit ±5%",
      () =>
        Effect.gen(function*() {
          const prefix = database.freshPrefix()
          yield* Effect.scoped(Layer.build(database.store(prefix)))
          const process = () =>
            RateLimiterSql.layer.pipe(
              Layer.provide(PostgresClient.layer({ url: postgresUrl, maxConnections: 4 })),
              Layer.provide(TablePrefix.layer(prefix))
            )
          const key = `org:${crypto.randomUUID()}`
          // A slow refill, so that the burst measures the limit itself.
          const config = { capacity: 600, refillPerMinute: 1 }
          const burst = Effect.flatMap(RateLimiter.RateLimiter, (limiter) =>
            Effect.forEach(Array.from({ length: 2_000 }), () =>
              limiter.consume(key, config), { concurrency: 16 }))
          const results = (yield* Effect.all([
            burst.pipe(Effect.provide(process())),
            burst.pipe(Effect.provide(process())),
            burst.pipe(Effect.provide(process()))
          ], { concurrency: 3 })).flat()
          const allowed = results.filter((result) =>
            result.allowed
          ).length
          expect(allowed).toBeGreaterThanOrEqual(570)
          expect(allowed).toBeLessThanOrEqual(630)
          const refused = results.find((result) => !result.allowed)!
          expect(refused.retryAfterMillis).toBeGreaterThan(0)
          yield* dropPrefix(prefix).pipe(Effect.provide(database.client))
        }),
      60_000
    )
  })
})
