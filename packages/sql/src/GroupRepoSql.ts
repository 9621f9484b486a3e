/**
 * Core's `GroupRepo` port over SQL: groups (`<prefix>groups`, their members in
 * `<prefix>group_members`, their roles in `<prefix>group_roles`) and SCIM group mappings
 * (`<prefix>scim_group_mappings`, the members last pushed for them in
 * `<prefix>scim_group_mapping_members`).
 *
 * Member and role sets are rows with composite foreign keys `(organization_id, …)`: a reference to
 * anything outside the organization violates a key, which is the port's `NotFound`, and a deleted
 * member or role leaves every set by cascade. Every multi-statement write runs in one savepoint, so
 * a refused write leaves nothing behind and the caller's transaction stays usable.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { Group } from "@sightline/core/Group"
import { GroupRepo } from "@sightline/core/GroupRepo"
import { GroupId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "@sightline/core/Ids"
import { ScimGroupMappingRecord, TargetMode } from "@sightline/core/ScimGroupMapping"
import * as Traced from "@sightline/core/Traced"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { idSet, isForeignKeyViolation } from "./internal/accessSql.js"
import * as RowSql from "./internal/rowSql.js"
import { isUniqueViolation } from "./internal/sqlState.js"
import { TablePrefix } from "./TablePrefix.js"

/**
 * A row of `<prefix>groups` with its member and role ids aggregated ↔ a `Group`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GroupFromRow = Schema.transform(
  Schema.Struct({
    ...Group.fields,
    display_name: Schema.optionalWith(Schema.String, { nullable: true }),
    created_at: Schema.DateTimeUtcFromDate
  }),
  Schema.typeSchema(Group),
  { strict: true, decode: (row) => new Group(row, true), encode: (group) => group }
)

/**
 * A row of `<prefix>scim_group_mappings` (snake_case columns) with its member ids aggregated ↔ a
 * `ScimGroupMappingRecord` (camelCase fields, as the RPC surface has them).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScimGroupMappingFromRow = Schema.transform(
  Schema.Struct({
    id: ScimGroupMappingId,
    organization_id: OrganizationId,
    display_name: Schema.String,
    external_id: Schema.String,
    target_mode: TargetMode,
    role_id: Schema.optionalWith(RoleId, { nullable: true }),
    group_id: Schema.optionalWith(GroupId, { nullable: true }),
    member_ids: Schema.Array(MemberId)
  }),
  Schema.typeSchema(ScimGroupMappingRecord),
  {
    strict: true,
    decode: (row) =>
      new ScimGroupMappingRecord({
        id: row.id,
        organization_id: row.organization_id,
        displayName: row.display_name,
        externalId: row.external_id,
        ...(row.role_id === undefined ? {} : { roleId: row.role_id }),
        ...(row.group_id === undefined ? {} : { groupId: row.group_id }),
        targetMode: row.target_mode,
        member_ids: row.member_ids
      }, true),
    encode: (mapping) => ({
      id: mapping.id,
      organization_id: mapping.organization_id,
      display_name: mapping.displayName,
      external_id: mapping.externalId,
      target_mode: mapping.targetMode,
      ...(mapping.roleId === undefined ? {} : { role_id: mapping.roleId }),
      ...(mapping.groupId === undefined ? {} : { group_id: mapping.groupId }),
      member_ids: mapping.member_ids
    })
  }
)

const GroupKey = Schema.Struct({ organization_id: OrganizationId, id: GroupId })
const MappingKey = Schema.Struct({ organization_id: OrganizationId, id: ScimGroupMappingId })

/**
 * The group repository over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<GroupRepo.Service, never, SqlClient.SqlClient | TablePrefix> = Effect.gen(
  function*() {
    // Without the client's name transforms: columns are snake_case like the record fields.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const prefix = yield* TablePrefix
    const groups = sql(prefix.name("groups"))
    const groupMembers = sql(prefix.name("group_members"))
    const groupRoles = sql(prefix.name("group_roles"))
    const mappings = sql(prefix.name("scim_group_mappings"))
    const mappingMembers = sql(prefix.name("scim_group_mapping_members"))
    const outsideMember = isForeignKeyViolation(
      prefix.name("group_members_member_fkey"),
      prefix.name("scim_group_mapping_members_member_fkey")
    )
    const outsideRole = isForeignKeyViolation(prefix.name("group_roles_role_fkey"))
    const outsideTarget = isForeignKeyViolation(
      prefix.name("scim_group_mappings_role_fkey"),
      prefix.name("scim_group_mappings_group_fkey")
    )
    const mappedGroup = isForeignKeyViolation(prefix.name("scim_group_mappings_group_fkey"))
    const externalIdKey = prefix.name("scim_group_mappings_external_id_key")

    // Sets are aggregated in the query, sorted by id: a uuid sorts bytewise, as core's lowercase
    // strings do. `text[]` parses to strings on both drivers.
    const groupColumns = sql`g.id, g.organization_id, g.name, g.display_name, g.created_at,
      ARRAY(SELECT gm.member_id::text FROM ${groupMembers} gm
            WHERE gm.organization_id = g.organization_id AND gm.group_id = g.id ORDER BY gm.member_id) AS member_ids,
      ARRAY(SELECT gr.role_id::text FROM ${groupRoles} gr
            WHERE gr.organization_id = g.organization_id AND gr.group_id = g.id ORDER BY gr.role_id) AS role_ids`
    const mappingColumns = sql`m.id, m.organization_id, m.display_name, m.external_id, m.target_mode, m.role_id,
      m.group_id,
      ARRAY(SELECT mm.member_id::text FROM ${mappingMembers} mm
            WHERE mm.organization_id = m.organization_id AND mm.mapping_id = m.id ORDER BY mm.member_id) AS member_ids`

    const findGroup = SqlSchema.findOne({
      Request: GroupKey,
      Result: GroupFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${groupColumns} FROM ${groups} g WHERE g.organization_id = ${organization_id} AND g.id = ${id}`
    })
    const findGroups = SqlSchema.findAll({
      Request: OrganizationId,
      Result: GroupFromRow,
      execute: (organizationId) =>
        sql`SELECT ${groupColumns} FROM ${groups} g WHERE g.organization_id = ${organizationId}
            ORDER BY g.created_at, g.id`
    })
    // Locks the group row, so that two replacements of one set queue up instead of interleaving.
    const lockGroup = SqlSchema.findOne({
      Request: GroupKey,
      Result: Schema.Struct({ id: GroupId }),
      execute: ({ id, organization_id }) =>
        sql`SELECT id FROM ${groups} WHERE organization_id = ${organization_id} AND id = ${id} FOR UPDATE`
    })
    const insertGroup = SqlSchema.void({
      Request: GroupFromRow,
      execute: (row) =>
        sql`INSERT INTO ${groups} ${
          sql.insert(RowSql.values(row, ["id", "organization_id", "name", "display_name", "created_at"]))
        }`
    })
    const removeGroup = SqlSchema.findOne({
      Request: GroupKey,
      Result: Schema.Struct({ id: GroupId }),
      execute: ({ id, organization_id }) =>
        sql`DELETE FROM ${groups} WHERE organization_id = ${organization_id} AND id = ${id} RETURNING id`
    })
    const roleIdsOfMember = SqlSchema.findAll({
      Request: Schema.Struct({ organization_id: OrganizationId, member_id: MemberId }),
      Result: Schema.Struct({ role_id: RoleId }),
      execute: ({ member_id, organization_id }) =>
        sql`SELECT DISTINCT gr.role_id FROM ${groupMembers} gm
            JOIN ${groupRoles} gr ON gr.organization_id = gm.organization_id AND gr.group_id = gm.group_id
            WHERE gm.organization_id = ${organization_id} AND gm.member_id = ${member_id}
            ORDER BY gr.role_id`
    })

    const findMapping = SqlSchema.findOne({
      Request: MappingKey,
      Result: ScimGroupMappingFromRow,
      execute: ({ id, organization_id }) =>
        sql`SELECT ${mappingColumns} FROM ${mappings} m WHERE m.organization_id = ${organization_id} AND m.id = ${id}`
    })
    // Byte order of the display name (`COLLATE "C"`), as core's `mappingOrder` compares strings.
    const findMappings = (lock: boolean) =>
      SqlSchema.findAll({
        Request: OrganizationId,
        Result: ScimGroupMappingFromRow,
        execute: (organizationId) =>
          sql`SELECT ${mappingColumns} FROM ${mappings} m WHERE m.organization_id = ${organizationId}
              ORDER BY m.display_name COLLATE "C", m.id${sql.literal(lock ? " FOR UPDATE OF m" : "")}`
      })
    const listMappings = findMappings(false)
    const listMappingsForUpdate = findMappings(true)
    const insertMapping = SqlSchema.void({
      Request: ScimGroupMappingFromRow,
      execute: (row) =>
        sql`INSERT INTO ${mappings} ${
          sql.insert(RowSql.values(row, [
            "id",
            "organization_id",
            "display_name",
            "external_id",
            "target_mode",
            "role_id",
            "group_id"
          ]))
        }`
    })
    const replaceMapping = SqlSchema.findOne({
      Request: ScimGroupMappingFromRow,
      Result: Schema.Struct({ id: ScimGroupMappingId }),
      execute: (row) =>
        sql`UPDATE ${mappings} SET display_name = ${row.display_name}, external_id = ${row.external_id},
              target_mode = ${row.target_mode}, role_id = ${row.role_id ?? null}, group_id = ${row.group_id ?? null}
            WHERE organization_id = ${row.organization_id} AND id = ${row.id}
            RETURNING id`
    })

    /** Replaces the rows of one set (`table` keyed by `owner` column) with `ids`. */
    const replaceSet = (
      table: typeof groups,
      ownerColumn: string,
      column: string,
      organizationId: OrganizationId,
      ownerId: string,
      ids: Iterable<string>
    ): Effect.Effect<void, SqlError> =>
      Effect.zipRight(
        sql`DELETE FROM ${table} WHERE organization_id = ${organizationId} AND ${sql(ownerColumn)} = ${ownerId}`,
        insertSet(table, ownerColumn, column, organizationId, ownerId, ids)
      )
    const insertSet = (
      table: typeof groups,
      ownerColumn: string,
      column: string,
      organizationId: OrganizationId,
      ownerId: string,
      ids: Iterable<string>
    ): Effect.Effect<void, SqlError> => {
      const values = idSet(ids)
      // `text[]` parameters, cast in SQL: both drivers serialize a string array as `text[]`.
      return values.length === 0 ? Effect.void : Effect.asVoid(
        sql`INSERT INTO ${table} (organization_id, ${sql(ownerColumn)}, ${sql(column)})
            SELECT ${organizationId}::uuid, ${ownerId}::uuid, unnest(${values}::text[]::uuid[])`
      )
    }

    const notFound = () => new NotFound()

    const readGroup = (organizationId: OrganizationId, id: GroupId) =>
      Effect.flatMap(
        findGroup({ organization_id: organizationId, id }),
        Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed })
      )

    /** Replaces one set of a group (`column` in `table`) and returns the group. */
    const setOfGroup = (
      table: typeof groups,
      column: string,
      organizationId: OrganizationId,
      id: GroupId,
      ids: Iterable<string>
    ) =>
      Effect.gen(function*() {
        if (Option.isNone(yield* lockGroup({ organization_id: organizationId, id }))) return yield* new NotFound()
        yield* replaceSet(table, "group_id", column, organizationId, id, ids)
        return yield* readGroup(organizationId, id)
      }).pipe(
        Effect.catchIf((error) => outsideMember(error) || outsideRole(error), notFound),
        sql.withTransaction,
        Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
      )

    return GroupRepo.of({
      create: Traced.fn("GroupRepoSql.create")((group) =>
        Effect.gen(function*() {
          yield* insertGroup(group)
          yield* insertSet(groupMembers, "group_id", "member_id", group.organization_id, group.id, group.member_ids)
          yield* insertSet(groupRoles, "group_id", "role_id", group.organization_id, group.id, group.role_ids)
        }).pipe(
          Effect.catchIf((error) => outsideMember(error) || outsideRole(error), notFound),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      get: Traced.fn("GroupRepoSql.get")((organizationId, id) =>
        Effect.orDie(findGroup({ organization_id: organizationId, id }))
      ),
      list: Traced.fn("GroupRepoSql.list")((organizationId) => Effect.orDie(findGroups(organizationId))),
      // One DELETE: the foreign key from SCIM group mappings refuses it while one targets the group.
      delete: Traced.fn("GroupRepoSql.delete")((organizationId, id) =>
        removeGroup({ organization_id: organizationId, id }).pipe(
          Effect.catchIf(
            mappedGroup,
            () => new Conflict({ message: "the group is the target of a SCIM group mapping" })
          ),
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(new NotFound()), onSome: () => Effect.void })),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      setMembers: Traced.fn("GroupRepoSql.setMembers")((organizationId, id, memberIds) =>
        setOfGroup(groupMembers, "member_id", organizationId, id, memberIds)
      ),
      setRoles: Traced.fn("GroupRepoSql.setRoles")((organizationId, id, roleIds) =>
        setOfGroup(groupRoles, "role_id", organizationId, id, roleIds)
      ),
      groupRoleIds: Traced.fn("GroupRepoSql.groupRoleIds")((organizationId, memberId) =>
        Effect.map(
          Effect.orDie(roleIdsOfMember({ organization_id: organizationId, member_id: memberId })),
          (rows) => rows.map((row) => row.role_id)
        )
      ),

      createMapping: Traced.fn("GroupRepoSql.createMapping")((mapping) =>
        Effect.gen(function*() {
          yield* insertMapping(mapping)
          yield* insertSet(
            mappingMembers,
            "mapping_id",
            "member_id",
            mapping.organization_id,
            mapping.id,
            mapping.member_ids
          )
        }).pipe(
          Effect.catchIf(
            isUniqueViolation(externalIdKey),
            () => new Conflict({ message: `the SCIM group ${mapping.externalId} is already mapped` })
          ),
          Effect.catchIf((error) => outsideMember(error) || outsideTarget(error), notFound),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      ),
      getMapping: Traced.fn("GroupRepoSql.getMapping")((organizationId, id) =>
        Effect.orDie(findMapping({ organization_id: organizationId, id }))
      ),
      listMappings: Traced.fn("GroupRepoSql.listMappings")((organizationId) =>
        Effect.orDie(listMappings(organizationId))
      ),
      listMappingsForUpdate: Traced.fn("GroupRepoSql.listMappingsForUpdate")((organizationId) =>
        Effect.orDie(listMappingsForUpdate(organizationId))
      ),
      updateMapping: Traced.fn("GroupRepoSql.updateMapping")((mapping) =>
        Effect.gen(function*() {
          if (Option.isNone(yield* replaceMapping(mapping))) return yield* new NotFound()
          yield* replaceSet(
            mappingMembers,
            "mapping_id",
            "member_id",
            mapping.organization_id,
            mapping.id,
            mapping.member_ids
          )
        }).pipe(
          Effect.catchIf(
            isUniqueViolation(externalIdKey),
            () => new Conflict({ message: `the SCIM group ${mapping.externalId} is already mapped` })
          ),
          Effect.catchIf((error) => outsideMember(error) || outsideTarget(error), notFound),
          sql.withTransaction,
          Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die })
        )
      )
    })
  }
)

/**
 * `GroupRepo` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<GroupRepo, never, SqlClient.SqlClient | TablePrefix> = Layer.effect(GroupRepo, make)
