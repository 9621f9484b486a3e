import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import * as Group from "../src/Group.js"
import { GroupId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "../src/Ids.js"
import * as ScimGroupMapping from "../src/ScimGroupMapping.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const org = OrganizationId.make(id(1))
const now = DateTime.unsafeMake("2026-01-01T00:00:00.000Z")
const memberIds = (...ns: Array<number>) => ns.map((n) => MemberId.make(id(100 + n)))
const roleId = (n: number) => RoleId.make(id(200 + n))

const mapping = (n: number, fields: { roleId?: RoleId; groupId?: GroupId; members?: ReadonlyArray<MemberId> }) =>
  new ScimGroupMapping.ScimGroupMappingRecord({
    id: ScimGroupMappingId.make(id(300 + n)),
    organization_id: org,
    displayName: `SCIM group ${n}`,
    externalId: `ext-${n}`,
    ...(fields.roleId === undefined ? {} : { roleId: fields.roleId }),
    ...(fields.groupId === undefined ? {} : { groupId: fields.groupId }),
    targetMode: fields.groupId === undefined ? "role" : "group",
    member_ids: Group.normalizeIds(fields.members ?? [])
  })

const group = (n: number, roles: ReadonlyArray<RoleId>, members: ReadonlyArray<MemberId>) =>
  Group.make({
    id: GroupId.make(id(400 + n)),
    organizationId: org,
    name: `group ${n}`,
    memberIds: members,
    roleIds: roles,
    now
  })

// New group ids derived from the mapping id, so that tests can predict them.
const newGroupId = (m: ScimGroupMapping.ScimGroupMappingRecord) => GroupId.make(`99999999${m.id.slice(8)}`)

/** Applies a plan as the migration use case would: create the groups, replace the mappings. */
const apply = (
  mappings: ReadonlyArray<ScimGroupMapping.ScimGroupMappingRecord>,
  groups: ReadonlyArray<Group.Group>,
  plan: ScimGroupMapping.MigrationPlan
) => ({
  mappings: mappings.map((m) => plan.mappings.find((updated) => updated.id === m.id) ?? m),
  groups: [...groups, ...plan.groupsToCreate]
})

describe("ScimGroupMapping", () => {
  it("requires exactly the target its mode names", () => {
    const decode = Schema.decodeUnknownEither(ScimGroupMapping.ScimGroupMapping)
    const base = { id: id(1), displayName: "Eng", externalId: "e" }
    expect(Either.isRight(decode({ ...base, targetMode: "role", roleId: id(2) }))).toBe(true)
    expect(Either.isRight(decode({ ...base, targetMode: "group", groupId: id(3) }))).toBe(true)
    for (
      const invalid of [
        { ...base, targetMode: "role" },
        { ...base, targetMode: "role", roleId: id(2), groupId: id(3) },
        { ...base, targetMode: "group", roleId: id(2) },
        { ...base, targetMode: "group" },
        { ...base, targetMode: "user", roleId: id(2) }
      ]
    ) {
      expect(Either.isLeft(decode(invalid))).toBe(true)
    }
    expect(() => mapping(1, {})).toThrow("targetMode role has a roleId")
  })

  it("serves a stored mapping without its organization and members, in camelCase", () => {
    expect(
      Schema.encodeSync(ScimGroupMapping.ScimGroupMapping)(mapping(1, { roleId: roleId(1), members: memberIds(1) }))
    )
      .toEqual({ id: id(301), displayName: "SCIM group 1", externalId: "ext-1", roleId: roleId(1), targetMode: "role" })
  })
})

describe("ScimGroupMapping.planMigration", () => {
  it("moves every role-targeted mapping to a new group with that role and the SCIM group's members", () => {
    const toRole = mapping(1, { roleId: roleId(1), members: memberIds(2, 1) })
    const toGroup = mapping(2, { groupId: GroupId.make(id(402)) })
    const plan = ScimGroupMapping.planMigration({ mappings: [toRole, toGroup], groups: [], newGroupId, now })
    const created = Group.make({
      id: newGroupId(toRole),
      organizationId: org,
      name: "SCIM group 1",
      displayName: "SCIM group 1",
      memberIds: memberIds(1, 2),
      roleIds: [roleId(1)],
      now
    })
    expect(plan.groupsToCreate).toEqual([created])
    const { roleId: _, ...rest } = toRole
    expect(plan.mappings).toEqual([
      new ScimGroupMapping.ScimGroupMappingRecord({ ...rest, targetMode: "group", groupId: created.id })
    ])
    expect("roleId" in plan.mappings[0]!).toBe(false)
  })

  it("reuses an existing group with exactly that role and those members", () => {
    const identical = group(1, [roleId(1)], memberIds(3, 1, 2))
    const plan = ScimGroupMapping.planMigration({
      mappings: [mapping(1, { roleId: roleId(1), members: memberIds(1, 2, 3) })],
      groups: [identical],
      newGroupId,
      now
    })
    expect(plan.groupsToCreate).toEqual([])
    expect(plan.mappings.map((m) => m.groupId)).toEqual([identical.id])
  })

  it("never reuses a group that grants more, or has other members", () => {
    const groups = [
      group(1, [roleId(1), roleId(2)], memberIds(1)),
      group(2, [roleId(1)], memberIds(1, 2)),
      group(3, [roleId(1)], []),
      new Group.Group({ ...group(4, [roleId(1)], memberIds(1)), organization_id: OrganizationId.make(id(2)) })
    ]
    const plan = ScimGroupMapping.planMigration({
      mappings: [mapping(1, { roleId: roleId(1), members: memberIds(1) })],
      groups,
      newGroupId,
      now
    })
    expect(plan.groupsToCreate.map((g) => g.id)).toEqual([newGroupId(mapping(1, { roleId: roleId(1) }))])
  })

  it("shares one new group between mappings of the same role and members", () => {
    const first = mapping(1, { roleId: roleId(1), members: memberIds(1) })
    const second = mapping(2, { roleId: roleId(1), members: memberIds(1) })
    const third = mapping(3, { roleId: roleId(2), members: memberIds(1) })
    const plan = ScimGroupMapping.planMigration({ mappings: [first, second, third], groups: [], newGroupId, now })
    expect(plan.groupsToCreate.map((g) => g.id)).toEqual([newGroupId(first), newGroupId(third)])
    expect(plan.mappings.map((m) => m.groupId)).toEqual([newGroupId(first), newGroupId(first), newGroupId(third)])
  })

  it("migrates nothing the second time", () => {
    const mappings = [mapping(1, { roleId: roleId(1), members: memberIds(1) }), mapping(2, { roleId: roleId(2) })]
    const firstPlan = ScimGroupMapping.planMigration({ mappings, groups: [], newGroupId, now })
    expect(firstPlan.mappings.length).toBe(2)
    const after = apply(mappings, [], firstPlan)
    expect(ScimGroupMapping.planMigration({ ...after, newGroupId, now })).toEqual({ groupsToCreate: [], mappings: [] })
  })

  it.prop(
    "leaves every mapping on a group with exactly its role and members, and is idempotent",
    [
      FastCheck.array(
        FastCheck.record({
          role: FastCheck.integer({ min: 1, max: 3 }),
          members: FastCheck.subarray([1, 2, 3, 4]),
          toGroup: FastCheck.boolean()
        }),
        { maxLength: 8 }
      ),
      FastCheck.array(
        FastCheck.record({ roles: FastCheck.subarray([1, 2, 3]), members: FastCheck.subarray([1, 2, 3, 4]) }),
        { maxLength: 4 }
      )
    ],
    ([specs, groupSpecs]) => {
      const groups = groupSpecs.map((g, i) => group(i, g.roles.map(roleId), memberIds(...g.members)))
      const mappings = specs.map((s, i) =>
        s.toGroup
          ? mapping(i, { groupId: GroupId.make(id(400)), members: memberIds(...s.members) })
          : mapping(i, { roleId: roleId(s.role), members: memberIds(...s.members) })
      )
      const plan = ScimGroupMapping.planMigration({ mappings, groups, newGroupId, now })
      const after = apply(mappings, groups, plan)
      expect(plan.mappings.length).toBe(specs.filter((s) => !s.toGroup).length)
      after.mappings.forEach((m, i) => {
        expect(m.targetMode).toBe("group")
        if (specs[i]!.toGroup) return
        const target = after.groups.find((g) => g.id === m.groupId)
        expect(target?.role_ids).toEqual([roleId(specs[i]!.role)])
        expect(target?.member_ids).toEqual(Group.normalizeIds(memberIds(...specs[i]!.members)))
      })
      const key = (g: Group.Group) => JSON.stringify([g.role_ids, g.member_ids])
      const existingKeys = new Set(groups.map(key))
      const createdKeys = plan.groupsToCreate.map(key)
      expect(new Set(createdKeys).size).toBe(createdKeys.length)
      expect(createdKeys.filter((k) => existingKeys.has(k))).toEqual([])
      expect(ScimGroupMapping.planMigration({ ...after, newGroupId, now })).toEqual({
        groupsToCreate: [],
        mappings: []
      })
    }
  )
})
