/**
 * Core's `RunnerRepo` port over SQL (`<prefix>sandbox_runners`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { RunnerRepo } from "@sightline/core/RunnerRepo"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TablePrefix } from "./TablePrefix.js"

const RunnerRow = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  draining: Schema.Boolean,
  last_seen_at: Schema.DateTimeUtcFromDate
})

const toRunner = (row: typeof RunnerRow.Type) => ({
  id: row.id,
  url: row.url,
  draining: row.draining,
  lastSeenAt: row.last_seen_at
})

/**
 * The runner registry over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RunnerRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const runners = sql(prefix.name("sandbox_runners"))
    const sandboxes = sql(prefix.name("sandboxes"))

    const byId = SqlSchema.findOne({
      Request: Schema.String,
      Result: RunnerRow,
      execute: (id) => sql`SELECT id, url, draining, last_seen_at FROM ${runners} WHERE id = ${id}`
    })
    // The fewest running sandboxes first; among equals, any (so that starts spread out).
    const leastLoaded = SqlSchema.findOne({
      Request: Schema.DateTimeUtc,
      Result: RunnerRow,
      execute: (seenSince) =>
        sql`SELECT r.id, r.url, r.draining, r.last_seen_at FROM ${runners} r
            WHERE NOT r.draining AND r.last_seen_at >= ${seenSince}::timestamptz
            ORDER BY (SELECT count(*) FROM ${sandboxes} s WHERE s.runner_id = r.id AND s.status = 'running'),
              random()
            LIMIT 1`
    })
    const upsert = SqlSchema.void({
      Request: RunnerRow,
      execute: (row) =>
        sql`INSERT INTO ${runners} ${sql.insert(row)}
            ON CONFLICT (id) DO UPDATE SET url = excluded.url, draining = excluded.draining,
              last_seen_at = excluded.last_seen_at`
    })

    return RunnerRepo.of({
      heartbeat: (runner, at) =>
        Effect.orDie(upsert({ id: runner.id, url: runner.url, draining: runner.draining, last_seen_at: at })),
      get: (id) => Effect.map(Effect.orDie(byId(id)), (found) => found.pipe(Option.map(toRunner))),
      leastLoaded: (seenSince) => Effect.map(Effect.orDie(leastLoaded(seenSince)), Option.map(toRunner)),
      remove: (id) => Effect.asVoid(Effect.orDie(sql`DELETE FROM ${runners} WHERE id = ${id}`))
    })
  }
)

/**
 * `RunnerRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RunnerRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(RunnerRepo, make)
