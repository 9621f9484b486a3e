/**
 * Core's `AppRepo` port over SQL (`<prefix>apps`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { App } from "@sightline/core/App"
import { AppRepo } from "@sightline/core/AppRepo"
import { Conflict } from "@sightline/core/Errors"
import { AppId, ChatId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>apps` ↔ an `App`. Both drivers parse `jsonb`, so `files` arrives as an object; a
 * NULL `chat_id` is an absent field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AppFromRow = Schema.transform(
  Schema.Struct({
    ...App.fields,
    chat_id: Schema.optionalWith(ChatId, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(App),
  { strict: true, decode: (row) => new App(row, true), encode: (app) => app }
)

const AppKey = Schema.Struct({ organization_id: OrganizationId, id: AppId })
const Written = Schema.Struct({ id: AppId })

/**
 * The app repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<AppRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const apps = sql((yield* TablePrefix).name("apps"))
    const names = [
      "id",
      "organization_id",
      "owner_id",
      "name",
      "description",
      "code",
      "files",
      "data_sources",
      "chat_id",
      "created_at",
      "updated_at"
    ]
    const columns = sql.literal(names.join(", "))

    // `ON CONFLICT DO NOTHING`: a taken id is a `Conflict` without an error that would abort the
    // caller's transaction.
    const insert = SqlSchema.findOne({
      Request: AppFromRow,
      Result: Written,
      execute: (row) =>
        sql`INSERT INTO ${apps} ${sql.insert(RowSql.values(row, names, ["files"]))}
            ON CONFLICT (id) DO NOTHING RETURNING id`
    })
    const findById = SqlSchema.findOne({
      Request: AppKey,
      Result: AppFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${apps} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    const findAll = SqlSchema.findAll({
      Request: OrganizationId,
      Result: AppFromRow,
      execute: (organizationId) =>
        sql`SELECT ${columns} FROM ${apps} WHERE organization_id = ${organizationId}
            ORDER BY created_at DESC, id DESC`
    })
    const remove = SqlSchema.findOne({
      Request: AppKey,
      Result: Written,
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${apps} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    return AppRepo.of({
      create: Traced.fn("AppRepoSql.create")(function*(app) {
        if (Option.isNone(yield* Effect.orDie(insert(app)))) {
          return yield* new Conflict({ message: `an app with id ${app.id} already exists` })
        }
      }),
      get: Traced.fn("AppRepoSql.get")((organizationId, id) =>
        Effect.orDie(findById({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("AppRepoSql.list")((organizationId) => Effect.orDie(findAll(organizationId))),
      delete: Traced.fn("AppRepoSql.delete")((organizationId, id) =>
        Effect.map(Effect.orDie(remove({ organization_id: organizationId, id })), Option.isSome)
      )
    })
  }
)

/**
 * `AppRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AppRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(AppRepo, make)
