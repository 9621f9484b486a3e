/**
 * Core's `ExecutionRepo` port over SQL (`<prefix>executions`), with the purge of expired records.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict } from "@sightline/core/Errors"
import { Execution, keyset } from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import { ExecutionId, OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>executions` ↔ an `Execution`: `created_at` comes back as a `Date`, and a NULL
 * `error` is an absent field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExecutionFromRow = Schema.transform(
  Schema.Struct({
    ...Execution.fields,
    error: Schema.optionalWith(Schema.String, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(Execution),
  { strict: true, decode: (row) => new Execution(row, true), encode: (execution) => execution }
)

/** What one page query of `list` needs. */
const ListRequest = Schema.Struct({
  organization_id: OrganizationId,
  sandbox_id: SandboxId,
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(Schema.String),
  limit: Schema.Int
})

/**
 * Rows deleted per purge statement. Outside a transaction each batch commits on its own, so a large
 * backlog never holds one long lock or one huge transaction; the purge stays exact and idempotent
 * because every batch deletes only rows past the cutoff.
 *
 * @since 0.1.0
 * @category constants
 */
export const purgeBatchSize = 5_000

/**
 * The execution repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ExecutionRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const executions = sql((yield* TablePrefix).name("executions"))
    const names = [
      "id",
      "organization_id",
      "sandbox_id",
      "kind",
      "source",
      "input",
      "output_preview",
      "error",
      "duration_ms",
      "created_at"
    ]
    const columns = sql.literal(names.join(", "))

    // `ON CONFLICT DO NOTHING`: a taken id is a `Conflict` without an error that would abort the
    // caller's transaction.
    const insert = SqlSchema.findOne({
      Request: ExecutionFromRow,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) =>
        sql`INSERT INTO ${executions} ${sql.insert(RowSql.values(row, names))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    // Newest first. The column is `COLLATE "C"`, so `id` compares bytewise as core's cursors do, and
    // the row comparison is an index condition on `(organization_id, sandbox_id, created_at, id)`.
    const page = SqlSchema.findAll({
      Request: ListRequest,
      Result: ExecutionFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${executions} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            sql`sandbox_id = ${request.sandbox_id}`,
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(created_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::text)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })
    // One batch of expired rows, found through the BRIN index on `created_at`. In no particular
    // order: ordering would read and sort every expired row for each batch. `SKIP LOCKED` makes
    // concurrent purges (every process runs the schedule) split the rows instead of queueing on
    // each other's, and a batch short of the limit means that no unclaimed expired row is left.
    const purgeBatch = SqlSchema.single({
      Request: Schema.Struct({ cutoff: Schema.DateFromSelf, limit: Schema.Int }),
      Result: Schema.Struct({ deleted: Schema.Number }),
      execute: ({ cutoff, limit }) =>
        sql`WITH doomed AS (
              SELECT id FROM ${executions} WHERE created_at < ${cutoff}::timestamptz LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            ), deleted AS (
              DELETE FROM ${executions} e USING doomed WHERE e.id = doomed.id RETURNING 1
            )
            SELECT count(*)::int AS deleted FROM deleted`
    })

    return ExecutionRepo.of({
      record: Traced.fn("ExecutionRepoSql.record")(function*(execution) {
        if (Option.isNone(yield* Effect.orDie(insert(execution)))) {
          return yield* new Conflict({ message: `an execution with id ${execution.id} already exists` })
        }
      }),
      list: Traced.fn("ExecutionRepoSql.list")((organizationId, sandboxId, request) =>
        KeysetPage.page(
          { after: request.after, limit: request.limit, id: Schema.decodeOption(ExecutionId), keyset },
          (position) => Effect.orDie(page({ organization_id: organizationId, sandbox_id: sandboxId, ...position }))
        )
      ),
      purgeOlderThan: Traced.fn("ExecutionRepoSql.purgeOlderThan")(function*(cutoff) {
        const at = DateTime.toDateUtc(cutoff)
        let total = 0
        while (true) {
          const { deleted } = yield* Effect.orDie(purgeBatch({ cutoff: at, limit: purgeBatchSize }))
          total += deleted
          if (deleted < purgeBatchSize) return total
        }
      })
    })
  }
)

/**
 * `ExecutionRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ExecutionRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  ExecutionRepo,
  make
)
