/**
 * Core's `FeedbackRepo` port over SQL: `<prefix>feedback`, one row per member and message.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { FeedbackRecord, keyset } from "@sightline/core/Feedback"
import { FeedbackRepo } from "@sightline/core/FeedbackRepo"
import { ConnectorId, FeedbackId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>feedback` ↔ a `FeedbackRecord`: NULL columns are absent fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FeedbackFromRow = Schema.transform(
  Schema.Struct({
    ...FeedbackRecord.fields,
    comment: RowSql.nullable(Schema.String),
    audience: RowSql.nullable(Schema.String),
    connector_id: RowSql.nullable(ConnectorId),
    sql: RowSql.nullable(Schema.String),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(FeedbackRecord),
  { strict: true, decode: (row) => new FeedbackRecord(row, true), encode: (record) => record }
)

const PageRequest = Schema.Struct({
  organization_id: OrganizationId,
  rating: Schema.optional(Schema.String),
  connector_id: Schema.optional(Schema.Number),
  model: Schema.optional(Schema.String),
  audience: Schema.optional(Schema.String),
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(FeedbackId),
  limit: Schema.Int
})

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<FeedbackRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const table = sql(prefix.name("feedback"))
    const names = [
      "id",
      "organization_id",
      "audience",
      "chat_id",
      "message_id",
      "member_id",
      "rating",
      "comment",
      "question",
      "answer",
      "model",
      "connector_id",
      "sql",
      "created_at",
      "updated_at"
    ]
    const columns = sql.literal(RowSql.selectList(names))
    // A second rating of a message by its member replaces the first, keeping its id and creation.
    const upsert = SqlSchema.single({
      Request: FeedbackFromRow,
      Result: FeedbackFromRow,
      execute: (row) =>
        sql`INSERT INTO ${table} ${sql.insert({ ...RowSql.values(row, names), audience: row.audience ?? "" })}
            ON CONFLICT (organization_id, message_id, member_id) DO UPDATE SET
              rating = EXCLUDED.rating, comment = EXCLUDED.comment, question = EXCLUDED.question,
              answer = EXCLUDED.answer, model = EXCLUDED.model, connector_id = EXCLUDED.connector_id,
              sql = EXCLUDED.sql, updated_at = EXCLUDED.updated_at
            RETURNING ${columns}`
    })
    const byId = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, id: FeedbackId }),
      Result: FeedbackFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${table} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const page = SqlSchema.findAll({
      Request: PageRequest,
      Result: FeedbackFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${table} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...(request.rating === undefined ? [] : [sql`rating = ${request.rating}`]),
            ...(request.connector_id === undefined ? [] : [sql`connector_id = ${request.connector_id}`]),
            ...(request.model === undefined ? [] : [sql`model = ${request.model}`]),
            ...(request.audience === undefined ? [] : [sql`audience = ${request.audience}`]),
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(updated_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY updated_at DESC, id DESC LIMIT ${request.limit}`
    })
    return FeedbackRepo.of({
      upsert: Traced.fn("FeedbackRepoSql.upsert")((record) => Effect.orDie(upsert(record))),
      get: Traced.fn("FeedbackRepoSql.get")((organizationId, id) =>
        Effect.orDie(byId({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("FeedbackRepoSql.list")((organizationId, filters, request) =>
        KeysetPage.page(
          { after: request.after, limit: request.limit, id: KeysetPage.uuidId(FeedbackId.make), keyset },
          (position) =>
            Effect.orDie(page({
              organization_id: organizationId,
              rating: filters.rating,
              connector_id: filters.connectorId,
              model: filters.model,
              audience: filters.audience,
              ...position
            }))
        )
      )
    })
  }
)

/**
 * `FeedbackRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FeedbackRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  FeedbackRepo,
  make
)
