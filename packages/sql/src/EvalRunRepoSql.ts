/**
 * Core's `EvalRunRepo` port over SQL: `<prefix>eval_runs`, the case results as one `jsonb` array.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { CaseResult, EvalRun, keyset } from "@sightline/core/EvalRun"
import { EvalRunRepo } from "@sightline/core/EvalRunRepo"
import { ChangeId, EvalRunId, OrganizationId } from "@sightline/core/Ids"
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
 * A row of `<prefix>eval_runs` ↔ an `EvalRun`: both drivers parse `jsonb`; NULL columns are absent fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EvalRunFromRow = Schema.transform(
  Schema.Struct({
    ...EvalRun.fields,
    commit: RowSql.nullable(Schema.String),
    change_id: RowSql.nullable(ChangeId),
    results: Schema.Array(CaseResult),
    accuracy: RowSql.nullable(Schema.Number),
    regressions: RowSql.nullable(Schema.Array(Schema.String)),
    compared_with: RowSql.nullable(EvalRunId),
    error: RowSql.nullable(Schema.String),
    created_at: Schema.DateTimeUtcFromDate,
    started_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    finished_at: RowSql.nullable(Schema.DateTimeUtcFromDate)
  }),
  Schema.typeSchema(EvalRun),
  { strict: true, decode: (row) => new EvalRun(row, true), encode: (run) => run }
)

const Key = Schema.Struct({ organization_id: OrganizationId, id: EvalRunId })
const Written = Schema.Struct({ id: Schema.String })

const PageRequest = Schema.Struct({
  organization_id: OrganizationId,
  set: Schema.optional(Schema.String),
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(EvalRunId),
  limit: Schema.Int
})

const LastRequest = Schema.Struct({
  organization_id: OrganizationId,
  set: Schema.String,
  connector_id: Schema.Int,
  model: Schema.String,
  before: Schema.DateFromSelf
})

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<EvalRunRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const runs = sql(prefix.name("eval_runs"))
    const keyNames = ["id", "organization_id"]
    const fieldNames = [
      "set",
      "connector_id",
      "model",
      "commit",
      "change_id",
      "status",
      "created_by",
      "cases_total",
      "results",
      "accuracy",
      "regressions",
      "compared_with",
      "error",
      "created_at",
      "started_at",
      "finished_at"
    ]
    const columns = sql.literal([...keyNames, ...fieldNames].map((c) => `"${c}"`).join(", "))
    const values = (row: typeof EvalRunFromRow.Encoded, names: ReadonlyArray<string>) =>
      RowSql.values(row, names, ["results", "regressions"])

    const insert = SqlSchema.findOne({
      Request: EvalRunFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${runs} ${sql.insert(values(row, [...keyNames, ...fieldNames]))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const find = (lock: boolean) =>
      SqlSchema.findOne({
        Request: Key,
        Result: EvalRunFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${columns} FROM ${runs} WHERE organization_id = ${organization_id} AND id = ${id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const findById = find(false)
    const findForUpdate = find(true)
    // Newest first; the row comparison is an index condition on `(organization_id, created_at, id)`.
    const page = SqlSchema.findAll({
      Request: PageRequest,
      Result: EvalRunFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${runs} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...(request.set === undefined ? [] : [sql`"set" = ${request.set}`]),
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(created_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })
    const last = SqlSchema.findOne({
      Request: LastRequest,
      Result: EvalRunFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${runs}
            WHERE organization_id = ${request.organization_id} AND "set" = ${request.set}
              AND connector_id = ${request.connector_id} AND model = ${request.model} AND status = 'completed'
              AND change_id IS NULL AND created_at < ${request.before}::timestamptz
            ORDER BY created_at DESC, id DESC LIMIT 1`
    })
    const replace = SqlSchema.findOne({
      Request: EvalRunFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${runs} SET ${sql.update(values(row, fieldNames))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })
    const get = (lock: boolean) => (organizationId: OrganizationId, id: EvalRunId) =>
      Effect.orDie((lock ? findForUpdate : findById)({ organization_id: organizationId, id }))

    return EvalRunRepo.of({
      create: Traced.fn("EvalRunRepoSql.create")(function*(run) {
        if (Option.isNone(yield* Effect.orDie(insert(run)))) {
          return yield* new Conflict({ message: `an evaluation run with id ${run.id} already exists` })
        }
      }),
      get: Traced.fn("EvalRunRepoSql.get")(get(false)),
      getForUpdate: Traced.fn("EvalRunRepoSql.getForUpdate")(get(true)),
      list: Traced.fn("EvalRunRepoSql.list")((organizationId, request, set) =>
        KeysetPage.page(
          { after: request.after, limit: request.limit, id: KeysetPage.uuidId(EvalRunId.make), keyset },
          (position) => Effect.orDie(page({ organization_id: organizationId, set, ...position }))
        )
      ),
      lastCompleted: Traced.fn("EvalRunRepoSql.lastCompleted")((organizationId, key, before) =>
        Effect.orDie(last({
          organization_id: organizationId,
          set: key.set,
          connector_id: key.connectorId,
          model: key.model,
          before: DateTime.toDateUtc(before)
        }))
      ),
      update: Traced.fn("EvalRunRepoSql.update")(function*(run) {
        if (Option.isNone(yield* Effect.orDie(replace(run)))) return yield* new NotFound()
      })
    })
  }
)

/**
 * `EvalRunRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<EvalRunRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(EvalRunRepo, make)
