/**
 * Core's `ConnectorRepo` port over SQL: `<prefix>connectors`, with the access grants of each
 * connector in `<prefix>connector_grants`.
 *
 * The configuration is stored as its encoded JSON, so a password is stored as the plain string a
 * connector needs to log in with (it cannot be hashed: the sandbox must present it to the data
 * source). It is not encrypted here: a key would have to come from the deployment's configuration,
 * next to `DATABASE_URL`, where it protects against little that disk or PostgreSQL-level encryption
 * does not. Passwords stay write-only above this layer: core redacts them from every response.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { AccessGrant, ConnectorAccess, ConnectorConfig, ConnectorRecord } from "@sightline/core/Connector"
import { ConnectorRepo } from "@sightline/core/ConnectorRepo"
import { NotFound } from "@sightline/core/Errors"
import { ConnectorId, OrganizationId } from "@sightline/core/Ids"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>connectors` ↔ a `ConnectorRecord` (`config` is JSON, decoded by the driver).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectorFromRow = Schema.transform(
  Schema.Struct({
    ...ConnectorRecord.fields,
    config: ConnectorConfig,
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(ConnectorRecord),
  { strict: true, decode: (row) => new ConnectorRecord(row, true), encode: (connector) => connector }
)

const NewConnectorRow = Schema.Struct({
  ...ConnectorFromRow.from.fields,
  is_public: Schema.Boolean
}).pipe(Schema.omit("id"))

const ConnectorKey = Schema.Struct({ organization_id: OrganizationId, id: ConnectorId })

/** The access of a connector as one row: the flag and the grants, aggregated to JSON in order. */
const AccessRow = Schema.Struct({
  is_public: Schema.Boolean,
  grants: Schema.Array(AccessGrant)
})

/** A grant row of `<prefix>connector_grants`. */
const GrantRow = Schema.Struct({
  organization_id: OrganizationId,
  connector_id: ConnectorId,
  position: Schema.Int,
  member_id: Schema.NullOr(Schema.String),
  role_id: Schema.NullOr(Schema.String),
  access_type: Schema.String,
  granted_by: Schema.String,
  expires_at: Schema.NullOr(Schema.DateFromSelf)
})

/**
 * The connector repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ConnectorRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const connectors = sql(prefix.name("connectors"))
    const grants = sql(prefix.name("connector_grants"))
    const columns = sql.literal(
      "id, organization_id, owner_id, config, allow_sql_write_operations, include_db_session_metadata, " +
        "created_at, updated_at"
    )

    const insertConnector = SqlSchema.single({
      Request: NewConnectorRow,
      Result: Schema.Struct({ id: ConnectorId }),
      execute: (row) =>
        sql`INSERT INTO ${connectors} ${sql.insert({ ...row, config: JSON.stringify(row.config) })} RETURNING id`
    })
    const findConnector = (lock: "" | "FOR UPDATE") =>
      SqlSchema.findOne({
        Request: ConnectorKey,
        Result: ConnectorFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${columns} FROM ${connectors}
              WHERE organization_id = ${organization_id} AND id = ${id} ${sql.literal(lock)}`
      })
    const findById = findConnector("")
    const findForUpdate = findConnector("FOR UPDATE")
    const findAll = SqlSchema.findAll({
      Request: OrganizationId,
      Result: ConnectorFromRow,
      execute: (organizationId) =>
        sql`SELECT ${columns} FROM ${connectors} WHERE organization_id = ${organizationId} ORDER BY id`
    })
    const replace = SqlSchema.findOne({
      Request: ConnectorFromRow,
      Result: Schema.Struct({ id: ConnectorId }),
      execute: (row) =>
        sql`UPDATE ${connectors} SET owner_id = ${row.owner_id}, config = ${JSON.stringify(row.config)}::jsonb,
              allow_sql_write_operations = ${row.allow_sql_write_operations},
              include_db_session_metadata = ${row.include_db_session_metadata},
              created_at = ${row.created_at}, updated_at = ${row.updated_at}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id} RETURNING id`
    })
    // Grants go with their connector by `ON DELETE CASCADE`.
    const remove = SqlSchema.findOne({
      Request: ConnectorKey,
      Result: Schema.Struct({ id: ConnectorId }),
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${connectors} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })
    // The grants of connector `c`, in order, as one JSON array. Timestamps are written as RFC 3339 in
    // UTC whatever the session's time zone; absent fields are dropped rather than null.
    const grantsOfC = sql`coalesce(
      (SELECT json_agg(json_strip_nulls(json_build_object(
          'member_id', g.member_id, 'role_id', g.role_id, 'access_type', g.access_type,
          'granted_by', g.granted_by,
          'expires_at', to_char(g.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        )) ORDER BY g.position)
       FROM ${grants} g WHERE g.organization_id = c.organization_id AND g.connector_id = c.id),
      '[]'::json)`
    // One statement, hence one snapshot: a reader never pairs the flag of one `setAccess` with the
    // grants of another.
    const findAccess = SqlSchema.findOne({
      Request: ConnectorKey,
      Result: AccessRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT c.is_public, ${grantsOfC} AS grants
            FROM ${connectors} c WHERE c.organization_id = ${organization_id} AND c.id = ${id}`
    })
    const findAllWithAccess = SqlSchema.findAll({
      Request: OrganizationId,
      Result: Schema.Struct({ ...ConnectorFromRow.from.fields, ...AccessRow.fields }),
      execute: (organizationId) =>
        sql`SELECT ${columns}, c.is_public, ${grantsOfC} AS grants
            FROM ${connectors} c WHERE c.organization_id = ${organizationId} ORDER BY c.id`
    })
    // Locks the connector: concurrent `setAccess` calls on it run one after the other.
    const setPublic = SqlSchema.findOne({
      Request: Schema.Struct({ ...ConnectorKey.fields, is_public: Schema.Boolean }),
      Result: Schema.Struct({ id: ConnectorId }),
      execute: ({ id, is_public, organization_id }) =>
        sql`UPDATE ${connectors} SET is_public = ${is_public}
            WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })
    const clearGrants = SqlSchema.void({
      Request: ConnectorKey,
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${grants} WHERE organization_id = ${organization_id} AND connector_id = ${id}`
    })
    const insertGrants = SqlSchema.void({
      Request: Schema.Array(GrantRow),
      execute: (rows) => sql`INSERT INTO ${grants} ${sql.insert(rows)}`
    })

    const writeGrants = (organizationId: OrganizationId, id: ConnectorId, access: ConnectorAccess) =>
      access.grants.length === 0 ? Effect.void : insertGrants(access.grants.map((grant, position) => ({
        organization_id: organizationId,
        connector_id: id,
        position,
        member_id: grant.member_id ?? null,
        role_id: grant.role_id ?? null,
        access_type: grant.access_type,
        granted_by: grant.granted_by,
        expires_at: grant.expires_at === undefined ? null : new Date(grant.expires_at.epochMillis)
      })))

    const notFound = (id: ConnectorId) => new NotFound({ message: `connector ${id} not found` })
    const orNotFound = (id: ConnectorId) =>
      Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: () => Effect.void })

    return ConnectorRepo.of({
      // The connector and its access in one transaction (a savepoint inside a caller's).
      create: Traced.fn("ConnectorRepoSql.create")((connector, access) =>
        Effect.gen(function*() {
          const { id } = yield* insertConnector({ ...connector, is_public: access.is_public })
          yield* writeGrants(connector.organization_id, id, access)
          return new ConnectorRecord({ ...connector, id }, true)
        }).pipe(sql.withTransaction, Effect.orDie)
      ),
      get: Traced.fn("ConnectorRepoSql.get")((organizationId, id) =>
        Effect.orDie(findById({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("ConnectorRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(findForUpdate({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("ConnectorRepoSql.list")((organizationId) => Effect.orDie(findAll(organizationId))),
      listWithAccess: Traced.fn("ConnectorRepoSql.listWithAccess")((organizationId) =>
        Effect.map(
          Effect.orDie(findAllWithAccess(organizationId)),
          (rows) =>
            rows.map(({ grants, is_public, ...connector }) => ({
              connector: new ConnectorRecord(connector, true),
              access: new ConnectorAccess({ is_public, grants }, true)
            }))
        )
      ),
      update: Traced.fn("ConnectorRepoSql.update")((connector) =>
        Effect.flatMap(Effect.orDie(replace(connector)), orNotFound(connector.id))
      ),
      delete: Traced.fn("ConnectorRepoSql.delete")((organizationId, id) =>
        Effect.flatMap(Effect.orDie(remove({ organization_id: organizationId, id })), orNotFound(id))
      ),
      getAccess: Traced.fn("ConnectorRepoSql.getAccess")((organizationId, id) =>
        Effect.map(
          Effect.orDie(findAccess({ organization_id: organizationId, id })),
          Option.map((row) => new ConnectorAccess(row, true))
        )
      ),
      setAccess: Traced.fn("ConnectorRepoSql.setAccess")((organizationId, id, access) =>
        Effect.gen(function*() {
          const found = yield* Effect.orDie(
            setPublic({ organization_id: organizationId, id, is_public: access.is_public })
          )
          if (Option.isNone(found)) return yield* Effect.fail(notFound(id))
          yield* Effect.orDie(clearGrants({ organization_id: organizationId, id }))
          yield* Effect.orDie(writeGrants(organizationId, id, access))
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
      )
    })
  }
)

/**
 * `ConnectorRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ConnectorRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(
  ConnectorRepo,
  make
)
