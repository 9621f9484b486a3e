/**
 * Migration 26: trace context kept across processes. A job keeps the W3C trace context of whatever
 * queued it (`jobs.traceparent`), so the trace of its run links back to the request, run or delivery
 * that asked for it; a chat keeps the one of the request that started its latest run
 * (`chats.run_traceparent`), so the requests that follow or resume the run link to it.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { TablePrefix } from "../../TablePrefix.js"

/** Adds the columns; jobs and runs from before have none. */
export const migration = (prefix: TablePrefix.Service): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE ${sql(prefix.name("jobs"))} ADD COLUMN traceparent text`
    yield* sql`ALTER TABLE ${sql(prefix.name("chats"))} ADD COLUMN run_traceparent text`
  })
