/**
 * Core's `OrganizationRepo` port over SQL (`<prefix>organizations`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { OrganizationId } from "@sightline/core/Ids"
import { Organization } from "@sightline/core/Organization"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import * as OrganizationSettings from "@sightline/core/OrganizationSettings"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as RowSql from "./internal/rowSql.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>organizations` (drivers return `timestamptz` as a `Date`) ↔ an `Organization`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OrganizationFromRow = Schema.transform(
  Schema.Struct({ ...Organization.fields, created_at: Schema.DateTimeUtcFromDate }),
  Schema.typeSchema(Organization),
  { strict: true, decode: (row) => new Organization(row, true), encode: (organization) => organization }
)

/**
 * The organization repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<OrganizationRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const organizations = sql((yield* TablePrefix).name("organizations"))

    const insert = SqlSchema.void({
      Request: OrganizationFromRow,
      execute: (row) => sql`INSERT INTO ${organizations} ${sql.insert(row)}`
    })
    const findById = SqlSchema.findOne({
      Request: OrganizationId,
      Result: OrganizationFromRow,
      execute: (id) => sql`SELECT id, name, created_at FROM ${organizations} WHERE id = ${id}`
    })
    const findAll = SqlSchema.findAll({
      Request: Schema.Void,
      Result: OrganizationFromRow,
      execute: () => sql`SELECT id, name, created_at FROM ${organizations} ORDER BY created_at, id`
    })
    // `||` merges the change into what is stored in one statement: concurrent changes of different
    // settings both land. Both drivers parse `jsonb`, so `settings` arrives as an object.
    const settings = (id: OrganizationId) =>
      Effect.map(
        sql<{ settings: unknown }>`SELECT settings FROM ${organizations} WHERE id = ${id}`,
        (rows) => OrganizationSettings.fromStored(rows[0]?.settings)
      )
    const updateSettings = (id: OrganizationId, update: OrganizationSettings.UpdateOrganizationSettings) =>
      Effect.map(
        sql<{ settings: unknown }>`UPDATE ${organizations} SET settings = settings || ${
          RowSql.jsonText(update)
        }::jsonb WHERE id = ${id} RETURNING settings`,
        (rows) => OrganizationSettings.fromStored(rows[0]?.settings)
      )

    return {
      create: Traced.fn("OrganizationRepoSql.create")((organization) => Effect.orDie(insert(organization))),
      get: Traced.fn("OrganizationRepoSql.get")((id) => Effect.orDie(findById(id))),
      list: Effect.orDie(findAll(undefined)).pipe(Effect.withSpan("OrganizationRepoSql.list")),
      settings: Traced.fn("OrganizationRepoSql.settings")((id) => Effect.orDie(settings(id))),
      updateSettings: Traced.fn("OrganizationRepoSql.updateSettings")((id, update) =>
        Effect.orDie(updateSettings(id, update))
      )
    }
  }
)

/**
 * `OrganizationRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<OrganizationRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  OrganizationRepo,
  make
)
