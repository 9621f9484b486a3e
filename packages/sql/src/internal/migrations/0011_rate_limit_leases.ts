/**
 * Migration 11: the shared rate limiter hands out tokens in leases, each taken by one atomic
 * statement that also says how many it granted (`granted`, the last lease's size).
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the last grant to each bucket. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("rate_limits"))} ADD COLUMN granted double precision NOT NULL DEFAULT 0`
  })
