/**
 * Migration 26: a job keeps the W3C trace context of whatever queued it (`jobs.traceparent`), so the
 * trace of its run links back to the request, run or delivery that asked for it.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the column; jobs queued before have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("jobs"))} ADD COLUMN traceparent text`
  })
