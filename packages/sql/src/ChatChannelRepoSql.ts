/**
 * Core's `ChatChannelRepo` port over SQL (`<prefix>chat_channels`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { ChatChannelRecord } from "@sightline/core/ChatChannel"
import { ChatChannelRepo } from "@sightline/core/ChatChannelRepo"
import { Conflict } from "@sightline/core/Errors"
import { ChatChannelId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>chat_channels` ↔ a `ChatChannelRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatChannelFromRow = Schema.transform(
  Schema.Struct({ ...ChatChannelRecord.fields, created_at: Schema.DateTimeUtcFromDate }),
  Schema.typeSchema(ChatChannelRecord),
  { strict: true, decode: (row) => new ChatChannelRecord(row, true), encode: (record) => record }
)

const Key = Schema.Struct({ organization_id: OrganizationId, id: ChatChannelId })

/**
 * The repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ChatChannelRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const channels = sql(prefix.name("chat_channels"))
    const names = ["id", "organization_id", "name", "webhook_url", "created_by", "created_at"]
    const columns = sql.literal(names.join(", "))

    const insert = SqlSchema.findOne({
      Request: ChatChannelFromRow,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (row) =>
        sql`INSERT INTO ${channels} ${sql.insert(RowSql.values(row, names))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const find = SqlSchema.findOne({
      Request: Key,
      Result: ChatChannelFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${channels} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const findAll = SqlSchema.findAll({
      Request: OrganizationId,
      Result: ChatChannelFromRow,
      execute: (organizationId) =>
        sql`SELECT ${columns} FROM ${channels} WHERE organization_id = ${organizationId} ORDER BY created_at, id`
    })
    const remove = SqlSchema.findOne({
      Request: Key,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${channels} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    return ChatChannelRepo.of({
      create: Traced.fn("ChatChannelRepoSql.create")(function*(channel) {
        if (Option.isNone(yield* Effect.orDie(insert(channel)))) {
          return yield* new Conflict({ message: `a chat channel with id ${channel.id} already exists` })
        }
      }),
      get: Traced.fn("ChatChannelRepoSql.get")((organizationId, id) =>
        Effect.orDie(find({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("ChatChannelRepoSql.list")((organizationId) => Effect.orDie(findAll(organizationId))),
      delete: Traced.fn("ChatChannelRepoSql.delete")((organizationId, id) =>
        Effect.map(Effect.orDie(remove({ organization_id: organizationId, id })), Option.isSome)
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
export const layer: Layer.Layer<ChatChannelRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  ChatChannelRepo,
  make
)
