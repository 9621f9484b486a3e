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
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
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

    return {
      create: Traced.fn("OrganizationRepoSql.create")((organization) => Effect.orDie(insert(organization))),
      get: Traced.fn("OrganizationRepoSql.get")((id) => Effect.orDie(findById(id))),
      list: Effect.orDie(findAll(undefined)).pipe(Effect.withSpan("OrganizationRepoSql.list"))
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
