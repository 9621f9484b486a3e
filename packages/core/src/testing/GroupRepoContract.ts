/**
 * The contract every `GroupRepo` implementation satisfies: groups and SCIM group mappings.
 *
 * Every test creates its own organizations with random ids, so the suite passes on a shared,
 * non-empty store. Groups and mappings refer to members and roles, so the layer also provides
 * `MemberRepo` and `RoleRepo`.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Group from "../Group.js"
import { GroupRepo } from "../GroupRepo.js"
import { GroupId, type OrganizationId, ScimGroupMappingId } from "../Ids.js"
import { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import type { RoleRepo } from "../RoleRepo.js"
import { ScimGroupMappingRecord } from "../ScimGroupMapping.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const sorted = <A extends string>(ids: ReadonlyArray<A>) => [...ids].sort()

const newRole = (organizationId: OrganizationId, name: string) =>
  Fixtures.role(organizationId, name, { now: at("2024-01-01T00:00:00.000Z") })

const groupRecord = (
  organizationId: OrganizationId,
  options: Partial<Parameters<typeof Group.make>[0]> = {}
) =>
  Group.make({
    id: GroupId.make(Fixtures.uuid()),
    organizationId,
    name: "Contract Group",
    now: at("2024-01-01T00:00:00.000Z"),
    ...options
  })

const mappingRecord = (organizationId: OrganizationId, fields: Partial<ScimGroupMappingRecord>) =>
  new ScimGroupMappingRecord({
    id: ScimGroupMappingId.make(Fixtures.uuid()),
    organization_id: organizationId,
    displayName: "Contract SCIM Group",
    externalId: `ext-${Fixtures.uuid()}`,
    targetMode: "role",
    member_ids: [],
    ...fields
  })

/**
 * The services the suite needs from the layer under test.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = GroupRepo | MemberRepo | RoleRepo | OrganizationRepo | Transaction

/**
 * Registers the `GroupRepo` contract suite.
 *
 * @since 0.1.0
 * @category utils
 */
export const groupRepoContract = (
  name: string,
  layer: Layer.Layer<Requirements, unknown>
): void => {
  describe(`GroupRepo contract: ${name}`, () => {
    it.effect("round-trips every field of a group; member and role sets come back sorted, once each", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const [m1, m2] = [yield* Fixtures.member(org.id), yield* Fixtures.member(org.id)]
        const [r1, r2] = [yield* newRole(org.id, "one"), yield* newRole(org.id, "two")]
        const full = new Group.Group({
          id: GroupId.make(Fixtures.uuid()),
          organization_id: org.id,
          name: "platform-team",
          display_name: "Platform Team",
          member_ids: [m2.id, m1.id, m2.id],
          role_ids: [r2.id, r1.id, r1.id],
          created_at: at("2024-02-03T04:05:06.789Z")
        })
        const bare = groupRecord(org.id)
        yield* repo.create(full)
        yield* repo.create(bare)
        expect(yield* repo.get(org.id, full.id)).toEqual(Option.some(
          new Group.Group({ ...full, member_ids: sorted([m1.id, m2.id]), role_ids: sorted([r1.id, r2.id]) })
        ))
        const readBare = yield* repo.get(org.id, bare.id)
        expect(readBare).toEqual(Option.some(bare))
        expect(Option.map(readBare, (g) => "display_name" in g)).toEqual(Option.some(false))
      }).pipe(Effect.provide(layer)))

    it.effect("refuses members and roles of another organization", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const orgA = yield* Fixtures.organization()
        const orgB = yield* Fixtures.organization()
        const memberB = yield* Fixtures.member(orgB.id)
        const roleB = yield* newRole(orgB.id, "foreign")
        const withMember = groupRecord(orgA.id, { memberIds: [memberB.id] })
        const withRole = groupRecord(orgA.id, { roleIds: [roleB.id] })
        expect((yield* Effect.flip(repo.create(withMember)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.create(withRole)))._tag).toBe("NotFound")
        expect(yield* repo.list(orgA.id)).toEqual([])

        const group = groupRecord(orgA.id)
        yield* repo.create(group)
        expect((yield* Effect.flip(repo.setMembers(orgA.id, group.id, [memberB.id])))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.setRoles(orgA.id, group.id, [roleB.id])))._tag).toBe("NotFound")
        expect(yield* repo.get(orgA.id, group.id)).toEqual(Option.some(group))
      }).pipe(Effect.provide(layer)))

    it.effect("hides every group and mapping of one organization from another", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const orgA = yield* Fixtures.organization()
        const orgB = yield* Fixtures.organization()
        const member = yield* Fixtures.member(orgA.id)
        const role = yield* newRole(orgA.id, "reader")
        const group = groupRecord(orgA.id, { memberIds: [member.id], roleIds: [role.id] })
        yield* repo.create(group)
        const mapping = mappingRecord(orgA.id, { roleId: role.id })
        yield* repo.createMapping(mapping)

        expect(yield* repo.get(orgB.id, group.id)).toEqual(Option.none())
        expect(yield* repo.list(orgB.id)).toEqual([])
        expect(yield* repo.groupRoleIds(orgB.id, member.id)).toEqual([])
        expect((yield* Effect.flip(repo.setMembers(orgB.id, group.id, [])))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.setRoles(orgB.id, group.id, [])))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.delete(orgB.id, group.id)))._tag).toBe("NotFound")
        expect(yield* repo.getMapping(orgB.id, mapping.id)).toEqual(Option.none())
        expect(yield* repo.listMappings(orgB.id)).toEqual([])
        expect(yield* repo.listMappingsForUpdate(orgB.id)).toEqual([])
        const moved = new ScimGroupMappingRecord({ ...mapping, organization_id: orgB.id })
        expect((yield* Effect.flip(repo.updateMapping(moved)))._tag).toBe("NotFound")

        expect(yield* repo.get(orgA.id, group.id)).toEqual(Option.some(group))
        expect(yield* repo.getMapping(orgA.id, mapping.id)).toEqual(Option.some(mapping))
      }).pipe(Effect.provide(layer)))

    it.effect("lists groups oldest first, ties broken by id", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const [low, high] = sorted([Fixtures.uuid(), Fixtures.uuid()])
        const later = groupRecord(org.id, { now: at("2024-01-03T00:00:00.000Z") })
        const tieHigh = groupRecord(org.id, { id: GroupId.make(high!), now: at("2024-01-02T00:00:00.000Z") })
        const tieLow = groupRecord(org.id, { id: GroupId.make(low!), now: at("2024-01-02T00:00:00.000Z") })
        for (const group of [later, tieHigh, tieLow]) yield* repo.create(group)
        expect(yield* repo.list(org.id)).toEqual([tieLow, tieHigh, later])
      }).pipe(Effect.provide(layer)))

    it.effect("replaces members and roles and reports the roles members hold through groups", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const [ann, bob] = [yield* Fixtures.member(org.id), yield* Fixtures.member(org.id)]
        const [r1, r2, r3] = [yield* newRole(org.id, "r1"), yield* newRole(org.id, "r2"), yield* newRole(org.id, "r3")]
        const first = groupRecord(org.id, { memberIds: [ann.id], roleIds: [r1.id] })
        const second = groupRecord(org.id, { memberIds: [ann.id, bob.id], roleIds: [r1.id, r2.id] })
        for (const group of [first, second]) yield* repo.create(group)
        expect(yield* repo.groupRoleIds(org.id, ann.id)).toEqual(sorted([r1.id, r2.id]))
        expect(yield* repo.groupRoleIds(org.id, bob.id)).toEqual(sorted([r1.id, r2.id]))

        const withRoles = yield* repo.setRoles(org.id, second.id, [r3.id, r3.id])
        expect(withRoles.role_ids).toEqual([r3.id])
        const withMembers = yield* repo.setMembers(org.id, second.id, [bob.id])
        expect(withMembers).toEqual(new Group.Group({ ...second, member_ids: [bob.id], role_ids: [r3.id] }))
        expect(yield* repo.get(org.id, second.id)).toEqual(Option.some(withMembers))
        expect(yield* repo.groupRoleIds(org.id, ann.id)).toEqual([r1.id])
        expect(yield* repo.groupRoleIds(org.id, bob.id)).toEqual([r3.id])
        const loner = yield* Fixtures.member(org.id)
        expect(yield* repo.groupRoleIds(org.id, loner.id)).toEqual([])
        const unknown = GroupId.make(Fixtures.uuid())
        expect((yield* Effect.flip(repo.setMembers(org.id, unknown, [])))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("deletes groups, but not one that a SCIM group mapping targets", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "grant")
        const free = groupRecord(org.id, { memberIds: [member.id], roleIds: [role.id] })
        const mapped = groupRecord(org.id)
        for (const group of [free, mapped]) yield* repo.create(group)
        yield* repo.createMapping(mappingRecord(org.id, { targetMode: "group", groupId: mapped.id }))

        yield* repo.delete(org.id, free.id)
        expect(yield* repo.get(org.id, free.id)).toEqual(Option.none())
        expect(yield* repo.groupRoleIds(org.id, member.id)).toEqual([])
        expect((yield* Effect.flip(repo.delete(org.id, free.id)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.delete(org.id, mapped.id)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, mapped.id)).toEqual(Option.some(mapped))
      }).pipe(Effect.provide(layer)))

    it.effect("drops a hard-deleted member from its groups and SCIM group mappings", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const members = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const [leaver, stayer] = [yield* Fixtures.member(org.id), yield* Fixtures.member(org.id)]
        const role = yield* newRole(org.id, "shared")
        const group = groupRecord(org.id, { memberIds: [leaver.id, stayer.id], roleIds: [role.id] })
        yield* repo.create(group)
        const mapping = mappingRecord(org.id, { roleId: role.id, member_ids: sorted([leaver.id, stayer.id]) })
        yield* repo.createMapping(mapping)

        yield* members.hardDelete(org.id, leaver.id)
        expect(Option.map(yield* repo.get(org.id, group.id), (g) => g.member_ids)).toEqual(Option.some([stayer.id]))
        expect(Option.map(yield* repo.getMapping(org.id, mapping.id), (m) => m.member_ids))
          .toEqual(Option.some([stayer.id]))
        expect(yield* repo.groupRoleIds(org.id, leaver.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("round-trips mappings of both target modes and lists them by display name", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const [m1, m2] = [yield* Fixtures.member(org.id), yield* Fixtures.member(org.id)]
        const role = yield* newRole(org.id, "mapped")
        const group = groupRecord(org.id)
        yield* repo.create(group)
        const toRole = mappingRecord(org.id, {
          displayName: "beta",
          externalId: "00u1-beta",
          roleId: role.id,
          member_ids: [m2.id, m1.id, m1.id]
        })
        const toGroup = mappingRecord(org.id, { displayName: "alpha", targetMode: "group", groupId: group.id })
        const [low, high] = sorted([Fixtures.uuid(), Fixtures.uuid()])
        const twinHigh = mappingRecord(org.id, {
          id: ScimGroupMappingId.make(high!),
          displayName: "gamma",
          roleId: role.id
        })
        const twinLow = mappingRecord(org.id, {
          id: ScimGroupMappingId.make(low!),
          displayName: "gamma",
          roleId: role.id
        })
        for (const mapping of [toRole, twinHigh, toGroup, twinLow]) yield* repo.createMapping(mapping)

        const normalizedToRole = new ScimGroupMappingRecord({ ...toRole, member_ids: sorted([m1.id, m2.id]) })
        expect(yield* repo.getMapping(org.id, toRole.id)).toEqual(Option.some(normalizedToRole))
        const readToGroup = yield* repo.getMapping(org.id, toGroup.id)
        expect(readToGroup).toEqual(Option.some(toGroup))
        expect(Option.map(readToGroup, (m) => "roleId" in m)).toEqual(Option.some(false))
        const expected = [toGroup, normalizedToRole, twinLow, twinHigh]
        expect(yield* repo.listMappings(org.id)).toEqual(expected)
        expect(yield* repo.listMappingsForUpdate(org.id)).toEqual(expected)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps external ids unique per organization and references inside it", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const role = yield* newRole(org.id, "target")
        const otherRole = yield* newRole(other.id, "target")
        const otherMember = yield* Fixtures.member(other.id)
        const externalId = `ext-${Fixtures.uuid()}`
        yield* repo.createMapping(mappingRecord(org.id, { externalId, roleId: role.id }))
        const twin = mappingRecord(org.id, { externalId, roleId: role.id })
        expect((yield* Effect.flip(repo.createMapping(twin)))._tag).toBe("Conflict")
        expect(yield* repo.getMapping(org.id, twin.id)).toEqual(Option.none())
        yield* repo.createMapping(mappingRecord(other.id, { externalId, roleId: otherRole.id }))

        const foreignRole = mappingRecord(org.id, { roleId: otherRole.id })
        const foreignGroup = mappingRecord(org.id, { targetMode: "group", groupId: GroupId.make(Fixtures.uuid()) })
        const foreignMember = mappingRecord(org.id, { roleId: role.id, member_ids: [otherMember.id] })
        for (const mapping of [foreignRole, foreignGroup, foreignMember]) {
          expect((yield* Effect.flip(repo.createMapping(mapping)))._tag).toBe("NotFound")
        }
        expect((yield* repo.listMappings(org.id)).length).toBe(1)
      }).pipe(Effect.provide(layer)))

    it.effect("updates a mapping from a role target to a group target", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "legacy")
        const group = groupRecord(org.id, { memberIds: [member.id], roleIds: [role.id] })
        yield* repo.create(group)
        const mapping = mappingRecord(org.id, { roleId: role.id, member_ids: [member.id] })
        yield* repo.createMapping(mapping)
        const taken = mappingRecord(org.id, { roleId: role.id })
        yield* repo.createMapping(taken)

        const { roleId: _roleId, ...rest } = mapping
        const migrated = new ScimGroupMappingRecord({ ...rest, targetMode: "group", groupId: group.id })
        yield* repo.updateMapping(migrated)
        const read = yield* repo.getMapping(org.id, mapping.id)
        expect(read).toEqual(Option.some(migrated))
        expect(Option.map(read, (m) => "roleId" in m)).toEqual(Option.some(false))

        const clash = new ScimGroupMappingRecord({ ...migrated, externalId: taken.externalId })
        expect((yield* Effect.flip(repo.updateMapping(clash)))._tag).toBe("Conflict")
        const unknown = new ScimGroupMappingRecord({ ...migrated, id: ScimGroupMappingId.make(Fixtures.uuid()) })
        expect((yield* Effect.flip(repo.updateMapping(unknown)))._tag).toBe("NotFound")
        expect(yield* repo.getMapping(org.id, mapping.id)).toEqual(Option.some(migrated))
      }).pipe(Effect.provide(layer)))

    it.effect("keeps nothing of a failed transaction", () =>
      Effect.gen(function*() {
        const repo = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "rollback")
        const existing = groupRecord(org.id)
        yield* repo.create(existing)
        const fresh = groupRecord(org.id, { memberIds: [member.id], roleIds: [role.id] })
        const mapping = mappingRecord(org.id, { roleId: role.id })
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(fresh)
          yield* repo.setMembers(org.id, existing.id, [member.id])
          yield* repo.createMapping(mapping)
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, fresh.id)).toEqual(Option.none())
        expect(yield* repo.get(org.id, existing.id)).toEqual(Option.some(existing))
        expect(yield* repo.listMappings(org.id)).toEqual([])
        expect(yield* repo.groupRoleIds(org.id, member.id)).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
}
