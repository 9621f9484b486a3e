/**
 * Core's `RoleRepo` port over SQL (`<prefix>roles`). Member assignments (`<prefix>member_roles`)
 * and group grants (`<prefix>group_roles`) go with a deleted role by `ON DELETE CASCADE`; a SCIM
 * group mapping that targets it makes the delete fail, which is the port's `Conflict`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { MemberId, ModelNumber, OrganizationId, RoleId } from "@sightline/core/Ids"
import { RoleRecord } from "@sightline/core/Role"
import { RoleRepo } from "@sightline/core/RoleRepo"
import * as Traced from "@sightline/core/Traced"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { heldRoleIds, isForeignKeyViolation, roleColumns } from "./internal/accessSql.js"
import { isUniqueViolation } from "./internal/sqlState.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>roles` ↔ a `RoleRecord`: `timestamptz` columns come back as `Date`s, and a NULL
 * model column is an absent optional field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RoleFromRow = Schema.transform(
  Schema.Struct({
    ...RoleRecord.fields,
    default_model_id: Schema.optionalWith(ModelNumber, { nullable: true }),
    allowed_model_ids: Schema.optionalWith(Schema.Array(ModelNumber), { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate,
    updated_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(RoleRecord),
  { strict: true, decode: (row) => TrustedSchema.make(RoleRecord, row), encode: (role) => role }
)

const RoleKey = Schema.Struct({ organization_id: OrganizationId, id: RoleId })

/**
 * The role repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RoleRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const roles = sql(prefix.name("roles"))
    const nameKey = prefix.name("roles_name_key")
    const mappingRoleKey = prefix.name("scim_group_mappings_role_fkey")
    const columns = sql.literal(roleColumns.join(", "))

    const insert = SqlSchema.void({
      Request: RoleFromRow,
      execute: (row) => sql`INSERT INTO ${roles} ${sql.insert(row)}`
    })
    // Every column is set, so that an optional field left out of the record becomes NULL.
    const replace = SqlSchema.findOne({
      Request: RoleFromRow,
      Result: Schema.Struct({ id: RoleId }),
      execute: (row) =>
        sql`UPDATE ${roles} SET
              name = ${row.name},
              description = ${row.description},
              is_system = ${row.is_system},
              is_scim_managed = ${row.is_scim_managed},
              permissions = ${row.permissions},
              default_model_id = ${row.default_model_id ?? null},
              allowed_model_ids = ${row.allowed_model_ids ?? null},
              allow_model_choice = ${row.allow_model_choice},
              created_at = ${row.created_at},
              updated_at = ${row.updated_at}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id}
            RETURNING id`
    })
    const findById = (lock: boolean) =>
      SqlSchema.findOne({
        Request: RoleKey,
        Result: RoleFromRow,
        execute: ({ id, organization_id }) =>
          sql`SELECT ${columns} FROM ${roles} WHERE organization_id = ${organization_id} AND id = ${id}${
            sql.literal(lock ? " FOR UPDATE" : "")
          }`
      })
    const get = findById(false)
    const getForUpdate = findById(true)
    // `lower(name)` on both sides matches the unique index, which therefore serves this lookup.
    const findByName = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, name: Schema.String }),
      Result: RoleFromRow,
      execute: ({ name, organization_id }) =>
        sql`SELECT ${columns} FROM ${roles} WHERE organization_id = ${organization_id} AND lower(name) = lower(${name})`
    })
    // Direct assignments and group grants in one statement, through their indexes, never the
    // organization's whole role list.
    const findHeld = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, member_id: MemberId }),
      Result: RoleFromRow,
      execute: ({ member_id, organization_id }) =>
        sql`SELECT ${columns} FROM ${roles}
            WHERE organization_id = ${organization_id}
              AND id IN (${heldRoleIds(sql, prefix, organization_id, member_id)})
            ORDER BY created_at, id`
    })
    const findAll = SqlSchema.findAll({
      Request: OrganizationId,
      Result: RoleFromRow,
      execute: (organizationId) =>
        sql`SELECT ${columns} FROM ${roles} WHERE organization_id = ${organizationId} ORDER BY created_at, id`
    })
    const remove = SqlSchema.findOne({
      Request: RoleKey,
      Result: Schema.Struct({ id: RoleId }),
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${roles} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })

    const nameTaken = (role: RoleRecord) => () => new Conflict({ message: `a role named ${role.name} already exists` })

    const orNotFound = <A>(option: Option.Option<A>) =>
      Option.match(option, { onNone: () => Effect.fail(new NotFound()), onSome: () => Effect.void })

    return RoleRepo.of({
      create: Traced.fn("RoleRepoSql.create")((role) =>
        insert(role).pipe(
          Effect.catchIf(isUniqueViolation(nameKey), nameTaken(role)),
          // A savepoint inside a caller's transaction: after a Conflict, PostgreSQL would otherwise
          // refuse every further statement of that transaction.
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      get: Traced.fn("RoleRepoSql.get")((organizationId, id) =>
        Effect.orDie(get({ organization_id: organizationId, id }))
      ),
      getForUpdate: Traced.fn("RoleRepoSql.getForUpdate")((organizationId, id) =>
        Effect.orDie(getForUpdate({ organization_id: organizationId, id }))
      ),
      findByName: Traced.fn("RoleRepoSql.findByName")((organizationId, name) =>
        Effect.orDie(findByName({ organization_id: organizationId, name }))
      ),
      list: Traced.fn("RoleRepoSql.list")((organizationId) => Effect.orDie(findAll(organizationId))),
      heldBy: Traced.fn("RoleRepoSql.heldBy")((organizationId, memberId) =>
        Effect.orDie(findHeld({ organization_id: organizationId, member_id: memberId }))
      ),
      update: Traced.fn("RoleRepoSql.update")((role) =>
        replace(role).pipe(
          Effect.catchIf(isUniqueViolation(nameKey), nameTaken(role)),
          Effect.flatMap(orNotFound),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      // One DELETE: the foreign key from SCIM group mappings refuses it while one targets the role,
      // even if that mapping is being created concurrently (no check-then-delete window).
      delete: Traced.fn("RoleRepoSql.delete")((organizationId, id) =>
        remove({ organization_id: organizationId, id }).pipe(
          Effect.catchIf(
            isForeignKeyViolation(mappingRoleKey),
            () => new Conflict({ message: "the role is the target of a SCIM group mapping" })
          ),
          Effect.flatMap(orNotFound),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      )
    })
  }
)

/**
 * `RoleRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RoleRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(RoleRepo, make)
