/**
 * Core's `AuditLogRepo` port over SQL (`<prefix>audit_logs`): append-only, `details` as `jsonb`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Action, AuditLogRecord } from "@sightline/core/AuditLog"
import { AuditLogRepo, keyset } from "@sightline/core/AuditLogRepo"
import { AuditLogEntryId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as KeysetPage from "./internal/keysetPage.js"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>audit_logs` ↔ an `AuditLogRecord`. Both drivers parse `jsonb` into a value, so
 * `details` arrives as an object; a NULL `actor_id` is an absent field (a `system` entry).
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

/** The audit log repository over the `SqlClient` in context. */
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
      )
    })
  }
)

/** `AuditLogRepo` over the `SqlClient` in context. */
export const layer: Layer.Layer<AuditLogRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  AuditLogRepo,
  make
)
