/**
 * Core's `MemberRepo` port over SQL: `<prefix>members`, and role assignments in
 * `<prefix>member_roles`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { MemberId, OrganizationId, RoleId } from "@sightline/core/Ids"
import { Member } from "@sightline/core/Member"
import { MemberRepo } from "@sightline/core/MemberRepo"
import * as Traced from "@sightline/core/Traced"
import * as TrustedSchema from "@sightline/core/TrustedSchema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { memberColumns } from "./internal/accessSql.js"
import { isUniqueViolation } from "./internal/sqlState.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>members` ↔ a `Member`: `timestamptz` columns come back as `Date`s, and a NULL
 * column is an absent optional field.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberFromRow = Schema.transform(
  Schema.Struct({
    ...Member.fields,
    description: Schema.optionalWith(Schema.String, { nullable: true }),
    deleted_at: Schema.optionalWith(Schema.DateTimeUtcFromDate, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(Member),
  { strict: true, decode: (row) => TrustedSchema.make(Member, row), encode: (member) => member }
)

const MemberKey = Schema.Struct({ organization_id: OrganizationId, id: MemberId })
const Assignment = Schema.Struct({ organization_id: OrganizationId, member_id: MemberId, role_id: RoleId })

/**
 * The member repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<MemberRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const members = sql(prefix.name("members"))
    const roles = sql(prefix.name("roles"))
    const memberRoles = sql(prefix.name("member_roles"))
    const emailKey = prefix.name("members_email_key")
    const columns = sql.literal(memberColumns.join(", "))

    const insert = SqlSchema.void({
      Request: MemberFromRow,
      execute: (row) => sql`INSERT INTO ${members} ${sql.insert(row)}`
    })
    const findById = SqlSchema.findOne({
      Request: MemberKey,
      Result: MemberFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${columns} FROM ${members} WHERE organization_id = ${organization_id} AND id = ${id}`
    })
    // `lower(email)` on both sides matches the unique index, which therefore serves this lookup.
    const findByEmail = SqlSchema.findOne({
      Request: Schema.Struct({ organization_id: OrganizationId, email: Schema.String }),
      Result: MemberFromRow,
      execute: ({ email, organization_id }) =>
        sql`SELECT ${columns} FROM ${members}
            WHERE organization_id = ${organization_id} AND lower(email) = lower(${email})`
    })
    // Served by the `lower(email)` index of migration 13 (the unique key leads with the organization).
    const findEverywhere = SqlSchema.findAll({
      Request: Schema.String,
      Result: MemberFromRow,
      execute: (email) =>
        sql`SELECT ${columns} FROM ${members} WHERE lower(email) = lower(${email}) ORDER BY created_at, id`
    })
    const findAll = SqlSchema.findAll({
      Request: Schema.Struct({
        organization_id: OrganizationId,
        includeDeleted: Schema.Boolean,
        isServiceAccount: Schema.optional(Schema.Boolean)
      }),
      Result: MemberFromRow,
      execute: ({ includeDeleted, isServiceAccount, organization_id }) =>
        sql`SELECT ${columns} FROM ${members} WHERE ${
          sql.and([
            sql`organization_id = ${organization_id}`,
            ...(includeDeleted ? [] : [sql`deleted_at IS NULL`]),
            ...(isServiceAccount === undefined ? [] : [sql`is_service_account = ${isServiceAccount}`])
          ])
        } ORDER BY created_at, id`
    })
    // `coalesce` keeps the first deletion time when a member is deleted twice.
    const markDeleted = SqlSchema.findOne({
      Request: Schema.Struct({ ...MemberKey.fields, at: Schema.DateTimeUtcFromDate }),
      Result: MemberFromRow,
      execute: ({ at, id, organization_id }) =>
        sql`UPDATE ${members} SET deleted_at = coalesce(deleted_at, ${at})
            WHERE organization_id = ${organization_id} AND id = ${id}
            RETURNING ${columns}`
    })
    // Role assignments (and every other row that hangs off a member) go with it by `ON DELETE CASCADE`.
    const remove = SqlSchema.findOne({
      Request: MemberKey,
      Result: Schema.Struct({ id: MemberId }),
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${members} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })
    // One statement: the pair is inserted only when both rows are the organization's, and the count
    // of such pairs tells `NotFound` apart from "already assigned".
    const assign = SqlSchema.single({
      Request: Assignment,
      Result: Schema.Struct({ found: Schema.Number }),
      execute: ({ member_id, organization_id, role_id }) =>
        sql`WITH target AS (
              SELECT m.organization_id, m.id AS member_id, r.id AS role_id
              FROM ${members} m JOIN ${roles} r ON r.organization_id = m.organization_id
              WHERE m.organization_id = ${organization_id} AND m.id = ${member_id} AND r.id = ${role_id}
            ), inserted AS (
              INSERT INTO ${memberRoles} (organization_id, member_id, role_id)
              SELECT organization_id, member_id, role_id FROM target
              ON CONFLICT DO NOTHING
            )
            SELECT count(*)::int AS found FROM target`
    })
    const unassign = SqlSchema.void({
      Request: Assignment,
      execute: ({ member_id, organization_id, role_id }) =>
        sql`DELETE FROM ${memberRoles}
            WHERE organization_id = ${organization_id} AND member_id = ${member_id} AND role_id = ${role_id}`
    })
    const rolesOf = SqlSchema.findAll({
      Request: MemberKey,
      Result: Schema.Struct({ role_id: RoleId }),
      execute: ({ id, organization_id }) =>
        sql`SELECT role_id FROM ${memberRoles}
            WHERE organization_id = ${organization_id} AND member_id = ${id} ORDER BY role_id`
    })
    const holdersOf = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, role_id: RoleId }),
      Result: Schema.Struct({ member_id: MemberId }),
      execute: ({ organization_id, role_id }) =>
        sql`SELECT member_id FROM ${memberRoles}
            WHERE organization_id = ${organization_id} AND role_id = ${role_id} ORDER BY member_id`
    })

    const orNotFound = <A>(option: Option.Option<A>) =>
      Option.match(option, {
        onNone: () => Effect.fail(new NotFound()),
        onSome: Effect.succeed
      })

    return MemberRepo.of({
      create: Traced.fn("MemberRepoSql.create")((member) =>
        insert(member).pipe(
          Effect.catchIf(
            isUniqueViolation(emailKey),
            () => new Conflict({ message: `a member with e-mail ${member.email} already exists` })
          ),
          // A savepoint inside a caller's transaction: after a Conflict, PostgreSQL would otherwise
          // refuse every further statement of that transaction, which the caller may want to go on with.
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      get: Traced.fn("MemberRepoSql.get")((organizationId, id) =>
        Effect.orDie(findById({ organization_id: organizationId, id }))
      ),
      findByEmail: Traced.fn("MemberRepoSql.findByEmail")((organizationId, email) =>
        Effect.orDie(findByEmail({ organization_id: organizationId, email }))
      ),
      findEverywhereByEmail: Traced.fn("MemberRepoSql.findEverywhereByEmail")((email) =>
        Effect.orDie(findEverywhere(email))
      ),
      list: Traced.fn("MemberRepoSql.list")((organizationId, options = {}) =>
        Effect.orDie(findAll({
          organization_id: organizationId,
          includeDeleted: options.includeDeleted === true,
          ...(options.isServiceAccount === undefined ? {} : { isServiceAccount: options.isServiceAccount })
        }))
      ),
      softDelete: Traced.fn("MemberRepoSql.softDelete")((organizationId, id, at) =>
        Effect.flatMap(Effect.orDie(markDeleted({ organization_id: organizationId, id, at })), orNotFound)
      ),
      hardDelete: Traced.fn("MemberRepoSql.hardDelete")((organizationId, id) =>
        Effect.asVoid(Effect.flatMap(Effect.orDie(remove({ organization_id: organizationId, id })), orNotFound))
      ),
      assignRole: Traced.fn("MemberRepoSql.assignRole")((organizationId, memberId, roleId) =>
        Effect.orDie(assign({ organization_id: organizationId, member_id: memberId, role_id: roleId })).pipe(
          Effect.filterOrFail(({ found }) => found > 0, () => new NotFound()),
          Effect.asVoid
        )
      ),
      unassignRole: Traced.fn("MemberRepoSql.unassignRole")((organizationId, memberId, roleId) =>
        Effect.orDie(unassign({ organization_id: organizationId, member_id: memberId, role_id: roleId }))
      ),
      roleIds: Traced.fn("MemberRepoSql.roleIds")((organizationId, memberId) =>
        Effect.map(
          Effect.orDie(rolesOf({ organization_id: organizationId, id: memberId })),
          (rows) => rows.map((row) => row.role_id)
        )
      ),
      membersWithRole: Traced.fn("MemberRepoSql.membersWithRole")((organizationId, roleId) =>
        Effect.map(
          Effect.orDie(holdersOf({ organization_id: organizationId, role_id: roleId })),
          (rows) => rows.map((row) => row.member_id)
        )
      )
    })
  }
)

/**
 * `MemberRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<MemberRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(MemberRepo, make)
