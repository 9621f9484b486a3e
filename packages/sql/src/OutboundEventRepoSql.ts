/**
 * Core's `OutboundEventRepo` port over SQL (`<prefix>outbound_events`, `<prefix>webhook_attempts`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { OrganizationId, OutboundEventId, WebhookEndpointId } from "@sightline/core/Ids"
import { AttemptRecord, EventRecord } from "@sightline/core/OutboundEvent"
import { OutboundEventRepo } from "@sightline/core/OutboundEventRepo"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>outbound_events` ↔ an `EventRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventFromRow = Schema.transform(
  Schema.Struct({ ...EventRecord.fields, created_at: Schema.DateTimeUtcFromDate }),
  Schema.typeSchema(EventRecord),
  { strict: true, decode: (row) => new EventRecord(row, true), encode: (record) => record }
)

/**
 * A row of `<prefix>webhook_attempts` ↔ an `AttemptRecord`: NULL columns are absent fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AttemptFromRow = Schema.transform(
  Schema.Struct({
    ...AttemptRecord.fields,
    response_status: RowSql.nullable(Schema.Int),
    error: RowSql.nullable(Schema.String),
    next_attempt_at: RowSql.nullable(Schema.DateTimeUtcFromDate),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(AttemptRecord),
  { strict: true, decode: (row) => new AttemptRecord(row, true), encode: (record) => record }
)

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OutboundEventRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const events = sql(prefix.name("outbound_events"))
    const attempts = sql(prefix.name("webhook_attempts"))
    const eventNames = ["id", "organization_id", "type", "body", "created_at"]
    const attemptNames = [
      "id",
      "organization_id",
      "endpoint_id",
      "event_id",
      "event_type",
      "attempt",
      "succeeded",
      "response_status",
      "latency_ms",
      "error",
      "next_attempt_at",
      "created_at"
    ]

    const insertEvent = SqlSchema.void({
      Request: EventFromRow,
      execute: (row) => sql`INSERT INTO ${events} ${sql.insert(RowSql.values(row, eventNames))}`
    })
    const findEvent = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, id: OutboundEventId }),
      Result: EventFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${sql.literal(eventNames.join(", "))} FROM ${events}
            WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const insertAttempt = SqlSchema.void({
      Request: AttemptFromRow,
      execute: (row) => sql`INSERT INTO ${attempts} ${sql.insert(RowSql.values(row, attemptNames))}`
    })
    const findAttempts = SqlSchema.findAll({
      Request: Schema.Struct({
        organization_id: OrganizationId,
        endpoint_id: WebhookEndpointId,
        event_id: Schema.optional(OutboundEventId),
        limit: Schema.Int
      }),
      Result: AttemptFromRow,
      execute: (request) =>
        sql`SELECT ${sql.literal(attemptNames.join(", "))} FROM ${attempts} WHERE ${
          sql.and([
            sql`organization_id = ${request.organization_id}`,
            sql`endpoint_id = ${request.endpoint_id}`,
            ...(request.event_id === undefined ? [] : [sql`event_id = ${request.event_id}`])
          ])
        } ORDER BY created_at DESC, id DESC LIMIT ${request.limit}`
    })

    return OutboundEventRepo.of({
      createEvent: Traced.fn("OutboundEventRepoSql.createEvent")((event) => Effect.orDie(insertEvent(event))),
      getEvent: Traced.fn("OutboundEventRepoSql.getEvent")((organizationId, id) =>
        Effect.orDie(findEvent({ organization_id: organizationId, id }))
      ),
      recordAttempt: Traced.fn("OutboundEventRepoSql.recordAttempt")((attempt) => Effect.orDie(insertAttempt(attempt))),
      listAttempts: Traced.fn("OutboundEventRepoSql.listAttempts")((organizationId, endpointId, query) =>
        Effect.orDie(findAttempts({
          organization_id: organizationId,
          endpoint_id: endpointId,
          ...(query.eventId === undefined ? {} : { event_id: query.eventId }),
          limit: query.limit
        }))
      )
    })
  }
)

/**
 * The repository layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<OutboundEventRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  OutboundEventRepo,
  make
)
