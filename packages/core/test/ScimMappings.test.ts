import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Auth from "../src/Auth.js"
import * as Group from "../src/Group.js"
import * as GroupRepo from "../src/GroupRepo.js"
import { ApiKeyId, GroupId, type MemberId, type OrganizationId, type RoleId, ScimGroupMappingId } from "../src/Ids.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"
import * as Roles from "../src/Roles.js"
import { ScimGroupMapping, ScimGroupMappingRecord } from "../src/ScimGroupMapping.js"
import * as ScimMappings from "../src/ScimMappings.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer, ScimMappings.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const mappingId = (n: number) => ScimGroupMappingId.make(`6f1c2a7e-1d0b-4c55-9d1e-${n.toString().padStart(12, "0")}`)

const setup = Effect.gen(function*() {
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const members = yield* Members.Members
  const { member_id: bobId } = yield* members.invite(admin, { email: "bob@acme.example", role: "member" })
  const { member_id: eveId } = yield* members.invite(admin, { email: "eve@acme.example", role: "member" })
  const finance = yield* (yield* Roles.Roles).create(admin, { name: "Finance", permissions: ["chat:read"] })
  return { created, org, admin, bobId, eveId, member: yield* Fixtures.principal(org, bobId), finance }
})

const mapping = (
  organizationId: OrganizationId,
  n: number,
  displayName: string,
  target: { readonly roleId: RoleId } | { readonly groupId: GroupId },
  memberIds: ReadonlyArray<MemberId>
) =>
  new ScimGroupMappingRecord({
    id: mappingId(n),
    organization_id: organizationId,
    displayName,
    externalId: `ext-${n}`,
    ...target,
    targetMode: "roleId" in target ? "role" : "group",
    member_ids: memberIds
  })

describe("ScimMappings.list", () => {
  it.effect("lists the organization's mappings by display name, without internal fields", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, finance, org } = yield* setup
      const groups = yield* GroupRepo.GroupRepo
      const group = Group.make({
        id: GroupId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b"),
        organizationId: org,
        name: "Ops",
        now: yield* DateTime.now
      })
      yield* groups.create(group)
      yield* groups.createMapping(mapping(org, 1, "Zeta", { roleId: finance.id }, [bobId]))
      yield* groups.createMapping(mapping(org, 2, "Alpha", { groupId: group.id }, []))
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      yield* groups.createMapping(mapping(other.organization.id, 3, "Other", { roleId: other.roles.member.id }, []))
      const { mappings } = yield* (yield* ScimMappings.ScimMappings).list(admin)
      expect(mappings).toEqual([
        new ScimGroupMapping({
          id: mappingId(2),
          displayName: "Alpha",
          externalId: "ext-2",
          groupId: group.id,
          targetMode: "group"
        }),
        new ScimGroupMapping({
          id: mappingId(1),
          displayName: "Zeta",
          externalId: "ext-1",
          roleId: finance.id,
          targetMode: "role"
        })
      ])
      expect(mappings.every((m) => !("member_ids" in m) && !("organization_id" in m))).toBe(true)
    })))

  it.effect("needs organization:read", () =>
    run(Effect.gen(function*() {
      const { member } = yield* setup
      const error = yield* Effect.flip((yield* ScimMappings.ScimMappings).list(member))
      expect([error._tag, error.message]).toEqual(["PermissionDenied", "permission denied: organization:read required"])
    })))
})

describe("ScimMappings.migrateAll", () => {
  it.effect("moves role-targeted mappings to groups carrying the role and members, reusing identical groups", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, eveId, created, finance, org } = yield* setup
      const groups = yield* GroupRepo.GroupRepo
      // An existing group that already carries `member` for exactly Eve: the "Staff" mapping reuses it.
      const staff = Group.make({
        id: GroupId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b"),
        organizationId: org,
        name: "Existing staff",
        memberIds: [eveId],
        roleIds: [created.roles.member.id],
        now: yield* DateTime.now
      })
      yield* groups.create(staff)
      yield* groups.createMapping(mapping(org, 1, "Finance team", { roleId: finance.id }, [bobId, eveId]))
      yield* groups.createMapping(mapping(org, 2, "Staff", { roleId: created.roles.member.id }, [eveId]))
      yield* groups.createMapping(mapping(org, 3, "Already", { groupId: staff.id }, []))
      const service = yield* ScimMappings.ScimMappings

      expect(yield* service.migrateAll(admin)).toEqual({ migratedMappingCount: 2 })

      const { mappings } = yield* service.list(admin)
      expect(mappings.map((m) => [m.displayName, m.targetMode, m.roleId])).toEqual([
        ["Already", "group", undefined],
        ["Finance team", "group", undefined],
        ["Staff", "group", undefined]
      ])
      expect(mappings[2]!.groupId).toBe(staff.id)
      const financeGroup = Option.getOrThrow(yield* groups.get(org, mappings[1]!.groupId!))
      expect(financeGroup).toMatchObject({
        name: "Finance team",
        display_name: "Finance team",
        member_ids: [bobId, eveId].sort(),
        role_ids: [finance.id]
      })
      expect((yield* groups.list(org)).length).toBe(2)
      // Bob now holds Finance through the group.
      expect((yield* Auth.liveRoles(org, bobId)).map((r) => r.name)).toEqual(["member", "Finance"])

      const audit =
        (yield* (yield* AuditLogRepo.AuditLogRepo).list(org, { limit: 100, action: "scim_group_mapping.migrate" }))
          .items
      expect(audit.map((e) => [e.resource_id, e.details])).toEqual(expect.arrayContaining([
        [mappingId(1), { from_role_id: finance.id, to_group_id: financeGroup.id, group_created: true }],
        [mappingId(2), { from_role_id: created.roles.member.id, to_group_id: staff.id, group_created: false }]
      ]))
      expect(audit).toHaveLength(2)

      // Idempotent: nothing is left to move, nothing is written.
      expect(yield* service.migrateAll(admin)).toEqual({ migratedMappingCount: 0 })
      expect((yield* groups.list(org)).length).toBe(2)
    })))

  it.effect("touches only the caller's organization", () =>
    run(Effect.gen(function*() {
      const { admin, org } = yield* setup
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const groups = yield* GroupRepo.GroupRepo
      yield* groups.createMapping(mapping(other.organization.id, 1, "Theirs", { roleId: other.roles.member.id }, []))
      expect(yield* (yield* ScimMappings.ScimMappings).migrateAll(admin)).toEqual({ migratedMappingCount: 0 })
      const theirs = Option.getOrThrow(yield* groups.getMapping(other.organization.id, mappingId(1)))
      expect(theirs.targetMode).toBe("role")
      expect(yield* groups.list(org)).toEqual([])
    })))

  it.effect("needs organization:write", () =>
    run(Effect.gen(function*() {
      const { admin, finance, org } = yield* setup
      yield* (yield* GroupRepo.GroupRepo).createMapping(mapping(org, 1, "Finance", { roleId: finance.id }, []))
      // organization:read alone lists but does not migrate.
      const readers = yield* (yield* Roles.Roles).create(admin, { name: "Readers", permissions: ["organization:read"] })
      const { member_id } = yield* (yield* Members.Members).invite(admin, { email: "r@acme.example", role: "member" })
      yield* (yield* Members.Members).assignRole(admin, member_id, { roleId: readers.id })
      const reader = yield* Fixtures.principal(org, member_id)
      const error = yield* Effect.flip((yield* ScimMappings.ScimMappings).migrateAll(reader))
      expect([error._tag, error.message]).toEqual([
        "PermissionDenied",
        "permission denied: organization:write required"
      ])
      expect((yield* (yield* ScimMappings.ScimMappings).list(reader)).mappings[0]!.targetMode).toBe("role")
    })))
})

describe("ScimMappings.whoAmI", () => {
  it.effect("describes a session caller: identity, live roles, permissions, admin flag", () =>
    run(Effect.gen(function*() {
      const { admin, created, org } = yield* setup
      const me = yield* (yield* ScimMappings.ScimMappings).whoAmI(admin)
      expect(me).toEqual({
        organizationId: org,
        memberId: created.admin.id,
        email: "ada@acme.example",
        name: "ada",
        isServiceAccount: false,
        authMethod: "jwt",
        fullMemberAccess: true,
        roles: [{ id: created.roles.admin.id, name: "admin", isSystem: true }],
        permissions: Permission.all,
        isAdmin: true
      })
    })))

  it.effect("describes a key by its effective roles: the snapshot within the owner's live roles", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, created, finance, org } = yield* setup
      yield* (yield* Members.Members).assignRole(admin, bobId, { roleId: finance.id })
      const keyId = ApiKeyId.make("0a0b0c0d-1d0b-4c55-9d1e-3f4a5b6c7d8e")
      const key = Policy.ApiKey({
        keyId,
        // Admin is in the snapshot but not held by Bob, so it does not count.
        assumedRoleIds: [finance.id, created.roles.admin.id],
        inheritAllRoles: false,
        fullMemberAccess: false
      })
      const me = yield* (yield* ScimMappings.ScimMappings).whoAmI(yield* Fixtures.principal(org, bobId, key))
      expect(me).toMatchObject({
        memberId: bobId,
        authMethod: "api_key",
        apiKeyId: keyId,
        fullMemberAccess: false,
        roles: [{ id: finance.id, name: "Finance", isSystem: false }],
        permissions: ["chat:read"],
        isAdmin: false
      })
    })))

  it.effect("is unauthenticated for a deleted or erased member", () =>
    run(Effect.gen(function*() {
      const { admin, bobId, eveId, org } = yield* setup
      const service = yield* ScimMappings.ScimMappings
      const bob = yield* Fixtures.principal(org, bobId)
      const eve = yield* Fixtures.principal(org, eveId)
      yield* (yield* Members.Members).delete(admin, bobId, { hard_delete: false })
      yield* (yield* Members.Members).delete(admin, eveId, { hard_delete: true })
      // Auth marks a soft-deleted member; a principal built before the delete is caught by the lookup.
      for (const principal of [{ ...bob, deleted: true }, bob, eve]) {
        expect((yield* Effect.flip(service.whoAmI(principal)))._tag).toBe("Unauthenticated")
      }
    })))
})
