/**
 * Core's `WebhookEndpointRepo` port over SQL (`<prefix>webhook_endpoints`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict } from "@sightline/core/Errors"
import { OrganizationId, WebhookEndpointId } from "@sightline/core/Ids"
import { EventType } from "@sightline/core/OutboundEvent"
import * as Traced from "@sightline/core/Traced"
import { WebhookEndpointRecord } from "@sightline/core/WebhookEndpoint"
import { WebhookEndpointRepo } from "@sightline/core/WebhookEndpointRepo"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>webhook_endpoints` ↔ a `WebhookEndpointRecord`: NULL columns are absent fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookEndpointFromRow = Schema.transform(
  Schema.Struct({
    ...WebhookEndpointRecord.fields,
    description: RowSql.nullable(Schema.String),
    previous_secret: RowSql.nullable(Schema.String),
    previous_secret_expires_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    disabled_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    disabled_reason: RowSql.nullable(Schema.String),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(WebhookEndpointRecord),
  { strict: true, decode: (row) => new WebhookEndpointRecord(row, true), encode: (record) => record }
)

const Key = Schema.Struct({ organization_id: OrganizationId, id: WebhookEndpointId })
const Written = Schema.Struct({ id: Schema.String })

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<WebhookEndpointRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect
  .gen(function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const endpoints = sql(prefix.name("webhook_endpoints"))
    const fields = [
      "url",
      "description",
      "event_types",
      "secret",
      "previous_secret",
      "previous_secret_expires_at",
      "disabled_at",
      "disabled_reason",
      "created_by",
      "created_at",
      "updated_at"
    ]
    const names = ["id", "organization_id", ...fields]
    const columns = sql.literal(names.join(", "))

    const insert = SqlSchema.findOne({
      Request: WebhookEndpointFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${endpoints} ${sql.insert(RowSql.values(row, names))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const find = SqlSchema.findOne({
      Request: Key,
      Result: WebhookEndpointFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${endpoints} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const findAll = SqlSchema.findAll({
      Request: OrganizationId,
      Result: WebhookEndpointFromRow,
      execute: (organizationId) =>
        sql`SELECT ${columns} FROM ${endpoints} WHERE organization_id = ${organizationId} ORDER BY created_at, id`
    })
    const findSubscribed = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, type: EventType }),
      Result: WebhookEndpointFromRow,
      execute: ({ organization_id, type }) =>
        sql`SELECT ${columns} FROM ${endpoints}
            WHERE organization_id = ${organization_id} AND disabled_at IS NULL AND ${type} = ANY(event_types)
            ORDER BY created_at, id`
    })
    // Every column but the key is replaced, so a field that became absent becomes NULL.
    const replace = SqlSchema.findOne({
      Request: WebhookEndpointFromRow,
      Result: Written,
      execute: (row) =>
        sql`UPDATE ${endpoints} SET ${sql.update(RowSql.values(row, fields))}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })
    // Its attempts go with it by `ON DELETE CASCADE`.
    const remove = SqlSchema.findOne({
      Request: Key,
      Result: Written,
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${endpoints} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    return WebhookEndpointRepo.of({
      create: Traced.fn("WebhookEndpointRepoSql.create")(function*(endpoint) {
        if (Option.isNone(yield* Effect.orDie(insert(endpoint)))) {
          return yield* new Conflict({ message: `a webhook endpoint with id ${endpoint.id} already exists` })
        }
      }),
      get: Traced.fn("WebhookEndpointRepoSql.get")((organizationId, id) =>
        Effect.orDie(find({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("WebhookEndpointRepoSql.list")((organizationId) => Effect.orDie(findAll(organizationId))),
      listSubscribed: Traced.fn("WebhookEndpointRepoSql.listSubscribed")((organizationId, type) =>
        Effect.orDie(findSubscribed({ organization_id: organizationId, type }))
      ),
      update: Traced.fn("WebhookEndpointRepoSql.update")((endpoint) =>
        Effect.map(Effect.orDie(replace(endpoint)), Option.isSome)
      ),
      delete: Traced.fn("WebhookEndpointRepoSql.delete")((organizationId, id) =>
        Effect.map(Effect.orDie(remove({ organization_id: organizationId, id })), Option.isSome)
      )
    })
  })

/**
 * The repository layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<WebhookEndpointRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  WebhookEndpointRepo,
  make
)
