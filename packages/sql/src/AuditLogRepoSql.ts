/**
 * Core's `AuditLogRepo` port over SQL (`<prefix>audit_logs`): append-only, `details` as `jsonb`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Action, AuditLogRecord } from "@sightline/core/AuditLog"
import { AuditLogRepo, keyset } from "@sightline/core/AuditLogRepo"
import { ApiKeyId, AuditLogEntryId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import type * as Usage from "@sightline/core/Usage"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>audit_logs` ↔ an `AuditLogRecord`. Both drivers parse `jsonb` into a value, so
 * `details` arrives as an object; a NULL `actor_id` is an absent field (a `system` entry).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AuditLogFromRow = Schema.transform(
  Schema.Struct({
    ...AuditLogRecord.fields,
    actor_id: Schema.optionalWith(MemberId, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(AuditLogRecord),
  { strict: true, decode: (row) => new AuditLogRecord(row, true), encode: (record) => record }
)

/** What one page query of `list` needs. */
const ListRequest = Schema.Struct({
  organization_id: OrganizationId,
  action: Schema.optional(Action),
  actor_id: Schema.optional(MemberId),
  after_at: Schema.optional(Schema.DateFromSelf),
  after_id: Schema.optional(AuditLogEntryId),
  limit: Schema.Int
})

/**
 * The audit log repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<AuditLogRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const auditLogs = sql((yield* TablePrefix).name("audit_logs"))
    const names = [
      "id",
      "organization_id",
      "actor_id",
      "action",
      "resource_type",
      "resource_id",
      "details",
      "auth_method",
      "created_at"
    ]
    const columns = sql.literal(names.join(", "))

    const insert = SqlSchema.void({
      Request: AuditLogFromRow,
      execute: (row) => sql`INSERT INTO ${auditLogs} ${sql.insert(RowSql.values(row, names, ["details"]))}`
    })
    // Newest first. The row comparison `(created_at, id) < (…)` continues strictly after the cursor's
    // row and is an index condition on `(organization_id[, action | actor_id], created_at, id)`.
    const page = SqlSchema.findAll({
      Request: ListRequest,
      Result: AuditLogFromRow,
      execute: (request) =>
        sql`SELECT ${columns} FROM ${auditLogs} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            ...(request.action === undefined ? [] : [sql`action = ${request.action}`]),
            ...(request.actor_id === undefined ? [] : [sql`actor_id = ${request.actor_id}`]),
            ...(request.after_at === undefined || request.after_id === undefined
              ? []
              : [sql`(created_at, id) < (${request.after_at}::timestamptz, ${request.after_id}::uuid)`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })

    // The entries are ours, but their details are JSON: a count that is not a number counts as 0.
    const count = (field: string) =>
      sql.literal(
        `CASE WHEN jsonb_typeof(details->'${field}') = 'number' THEN (details->>'${field}')::float8 ELSE 0 END`
      )
    const calls = sql.literal(
      `CASE WHEN jsonb_typeof(details->'calls') = 'array' THEN jsonb_array_length(details->'calls') ELSE 0 END`
    )
    // Read through the `(organization_id, action, created_at, id)` index.
    const sums = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: Schema.String, from: Schema.DateFromSelf, to: Schema.DateFromSelf }),
      Result: Schema.Struct({
        actor_id: Schema.NullOr(MemberId),
        api_key_id: Schema.NullOr(Schema.String),
        model: Schema.NullOr(Schema.String),
        answers: Schema.Number,
        calls: Schema.Number,
        input: Schema.Number,
        output: Schema.Number
      }),
      execute: (request) =>
        sql`SELECT actor_id, details->>'api_key_id' AS api_key_id, details->>'model' AS model,
                   count(*)::float8 AS answers, sum(${calls})::float8 AS calls,
                   sum(${count("input")})::float8 AS input, sum(${count("output")})::float8 AS output
            FROM ${auditLogs}
            WHERE organization_id = ${request.organization_id} AND action = 'model.usage'
              AND created_at >= ${request.from}::timestamptz AND created_at < ${request.to}::timestamptz
            GROUP BY 1, 2, 3`
    })

    return AuditLogRepo.of({
      // A duplicate id violates the primary key: a defect, as the port says (ids are generated).
      append: Traced.fn("AuditLogRepoSql.append")((record) => Effect.orDie(insert(record))),
      list: Traced.fn("AuditLogRepoSql.list")((organizationId, options) =>
        KeysetPage.page(
          { after: options.after, limit: options.limit, id: KeysetPage.uuidId(AuditLogEntryId.make), keyset },
          (position) =>
            Effect.orDie(page({
              organization_id: organizationId,
              ...(options.action === undefined ? {} : { action: options.action }),
              ...(options.actorId === undefined ? {} : { actor_id: options.actorId }),
              ...position
            }))
        )
      ),
      usage: Traced.fn("AuditLogRepoSql.usage")((organizationId, period) =>
        Effect.map(
          Effect.orDie(sums({
            organization_id: organizationId,
            from: DateTime.toDateUtc(period.from),
            to: DateTime.toDateUtc(period.to)
          })),
          (rows) =>
            rows.map((row): Usage.Sums => ({
              ...(row.actor_id === null ? {} : { memberId: row.actor_id }),
              ...(row.api_key_id === null ? {} : { apiKeyId: ApiKeyId.make(row.api_key_id) }),
              model: row.model ?? "",
              answers: row.answers,
              calls: row.calls,
              input: row.input,
              output: row.output
            }))
        )
      )
    })
  }
)

/**
 * `AuditLogRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AuditLogRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  AuditLogRepo,
  make
)
