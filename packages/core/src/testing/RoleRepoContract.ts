/**
 * The contract every `RoleRepo` implementation satisfies.
 *
 * Every test creates its own organizations with random ids, so the suite passes on a shared,
 * non-empty store. Deleting a role reaches into assignments, groups and SCIM group mappings, so the
 * layer also provides `MemberRepo` and `GroupRepo`.
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
import { GroupId, type MemberId, ModelNumber, type OrganizationId, RoleId, ScimGroupMappingId } from "../Ids.js"
import { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Role from "../Role.js"
import { RoleRepo } from "../RoleRepo.js"
import { ScimGroupMappingRecord } from "../ScimGroupMapping.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const roleRecord = (organizationId: OrganizationId, name: string, fields: Partial<Role.RoleRecord> = {}) =>
  new Role.RoleRecord({
    ...Role.make({
      id: RoleId.make(Fixtures.uuid()),
      organizationId,
      request: { name },
      now: at("2024-01-01T00:00:00.000Z")
    }),
    ...fields
  })

const created = (organizationId: OrganizationId, name: string, fields: Partial<Role.RoleRecord> = {}) =>
  Effect.gen(function*() {
    const role = roleRecord(organizationId, name, fields)
    yield* (yield* RoleRepo).create(role)
    return role
  })

/** A group "Crew" of the organization with these members and roles. */
const crew = (organizationId: OrganizationId, memberIds: ReadonlyArray<MemberId>, roleIds: ReadonlyArray<RoleId>) =>
  Group.make({
    id: GroupId.make(Fixtures.uuid()),
    organizationId,
    name: "Crew",
    memberIds,
    roleIds,
    now: at("2024-01-01T00:00:00.000Z")
  })

/**
 * The services the suite needs from the layer under test.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = RoleRepo | MemberRepo | GroupRepo | OrganizationRepo | Transaction

/**
 * Registers the `RoleRepo` contract suite.
 *
 * @since 0.1.0
 * @category utils
 */
export const roleRepoContract = (
  name: string,
  layer: Layer.Layer<Requirements, unknown>
): void => {
  describe(`RoleRepo contract: ${name}`, () => {
    it.effect("round-trips every field of custom and system roles", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const custom = roleRecord(org.id, "Data Science", {
          description: "Models and notebooks",
          is_scim_managed: true,
          permissions: ["chat:read", "chat:write", "sandbox:write"],
          default_model_id: ModelNumber.make(7),
          allowed_model_ids: [ModelNumber.make(3), ModelNumber.make(7)],
          allow_model_choice: false,
          created_at: at("2024-02-03T04:05:06.789Z"),
          updated_at: at("2024-02-04T04:05:06.001Z")
        })
        const bare = roleRecord(org.id, "Bare")
        const system = Role.systemRoles({
          organizationId: org.id,
          adminId: RoleId.make(Fixtures.uuid()),
          memberId: RoleId.make(Fixtures.uuid()),
          now: at("2024-01-01T00:00:00.000Z")
        })
        for (const role of [custom, bare, system.admin, system.member]) yield* repo.create(role)

        for (const role of [custom, bare, system.admin, system.member]) {
          expect(yield* repo.get(org.id, role.id)).toEqual(Option.some(role))
          expect(yield* repo.getForUpdate(org.id, role.id)).toEqual(Option.some(role))
        }
        const readBare = yield* repo.get(org.id, bare.id)
        expect(Option.map(readBare, (r) => ["default_model_id" in r, "allowed_model_ids" in r]))
          .toEqual(Option.some([false, false]))
      }).pipe(Effect.provide(layer)))

    it.effect("finds roles by name ignoring case", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const role = yield* created(org.id, "Finance Team")
        expect(yield* repo.findByName(org.id, "finance team")).toEqual(Option.some(role))
        expect(yield* repo.findByName(org.id, "FINANCE TEAM")).toEqual(Option.some(role))
        expect(yield* repo.findByName(org.id, "Finance")).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("keeps role names unique per organization, ignoring case, on create and update", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const analysts = yield* created(org.id, "Analysts")
        const clash = roleRecord(org.id, "ANALYSTS")
        expect((yield* Effect.flip(repo.create(clash)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, clash.id)).toEqual(Option.none())
        yield* created(other.id, "Analysts")

        const editors = yield* created(org.id, "Editors")
        const renamed = new Role.RoleRecord({
          ...editors,
          name: "analysts",
          updated_at: at("2024-06-01T00:00:00.000Z")
        })
        expect((yield* Effect.flip(repo.update(renamed)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, editors.id)).toEqual(Option.some(editors))

        const recased = new Role.RoleRecord({ ...analysts, name: "ANALYSTS" })
        yield* repo.update(recased)
        expect(yield* repo.get(org.id, analysts.id)).toEqual(Option.some(recased))
      }).pipe(Effect.provide(layer)))

    it.effect("updates every field, including clearing optional ones", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const role = yield* created(org.id, "Ops", {
          default_model_id: ModelNumber.make(2),
          allowed_model_ids: [ModelNumber.make(2)]
        })
        const updated = Role.applyUpdate(role, {
          name: "Operations",
          description: "Runs the platform",
          permissions: ["connector:read", "connector:write"],
          default_model_id: 0,
          clear_allowed_model_ids: true,
          allow_model_choice: false
        }, at("2024-07-08T09:10:11.012Z"))
        yield* repo.update(updated)
        const read = yield* repo.get(org.id, role.id)
        expect(read).toEqual(Option.some(updated))
        expect(Option.map(read, (r) => ["default_model_id" in r, "allowed_model_ids" in r]))
          .toEqual(Option.some([false, false]))
      }).pipe(Effect.provide(layer)))

    it.effect("lists roles oldest first, ties broken by id", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const org = yield* Fixtures.organization()
        const [low, high] = [Fixtures.uuid(), Fixtures.uuid()].sort()
        const later = yield* created(org.id, "Later", { created_at: at("2024-01-03T00:00:00.000Z") })
        const tieHigh = yield* created(org.id, "High", {
          id: RoleId.make(high!),
          created_at: at("2024-01-02T00:00:00.000Z")
        })
        const tieLow = yield* created(org.id, "Low", {
          id: RoleId.make(low!),
          created_at: at("2024-01-02T00:00:00.000Z")
        })
        expect(yield* repo.list(org.id)).toEqual([tieLow, tieHigh, later])
      }).pipe(Effect.provide(layer)))

    it.effect("hides every role of one organization from another", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const orgA = yield* Fixtures.organization()
        const orgB = yield* Fixtures.organization()
        const role = yield* created(orgA.id, "Secret Team")
        expect(yield* repo.get(orgB.id, role.id)).toEqual(Option.none())
        expect(yield* repo.getForUpdate(orgB.id, role.id)).toEqual(Option.none())
        expect(yield* repo.findByName(orgB.id, "Secret Team")).toEqual(Option.none())
        expect(yield* repo.list(orgB.id)).toEqual([])
        const hijack = new Role.RoleRecord({ ...role, organization_id: orgB.id, name: "Hijacked" })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.delete(orgB.id, role.id)))._tag).toBe("NotFound")
        expect(yield* repo.get(orgA.id, role.id)).toEqual(Option.some(role))
      }).pipe(Effect.provide(layer)))

    it.effect("heldBy: the member's direct and group roles, each once, in list order, and nobody else's", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const members = yield* MemberRepo
        const groups = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const other = yield* Fixtures.member(org.id)
        const third = yield* created(org.id, "Third", { created_at: at("2024-01-03T00:00:00.000Z") })
        const first = yield* created(org.id, "First", { created_at: at("2024-01-01T00:00:00.000Z") })
        const second = yield* created(org.id, "Second", { created_at: at("2024-01-02T00:00:00.000Z") })
        const othersOnly = yield* created(org.id, "Others only")
        yield* members.assignRole(org.id, member.id, third.id)
        yield* members.assignRole(org.id, member.id, first.id)
        yield* members.assignRole(org.id, other.id, othersOnly.id)
        expect(yield* repo.heldBy(org.id, member.id)).toEqual([first, third])
        // Through a group: the role it also holds directly appears once.
        yield* groups.create(crew(org.id, [member.id], [second.id, first.id]))
        expect(yield* repo.heldBy(org.id, member.id)).toEqual([first, second, third])
        expect(yield* repo.heldBy(org.id, other.id)).toEqual([othersOnly])
        // Another organization sees none of them.
        const stranger = yield* Fixtures.organization()
        expect(yield* repo.heldBy(stranger.id, member.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("deletes a role with its member assignments and group grants", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const members = yield* MemberRepo
        const groups = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const doomed = yield* created(org.id, "Temporary")
        const kept = yield* created(org.id, "Permanent")
        for (const role of [doomed, kept]) yield* members.assignRole(org.id, member.id, role.id)
        const group = crew(org.id, [member.id], [doomed.id, kept.id])
        yield* groups.create(group)

        yield* repo.delete(org.id, doomed.id)
        expect(yield* repo.get(org.id, doomed.id)).toEqual(Option.none())
        expect(yield* members.roleIds(org.id, member.id)).toEqual([kept.id])
        expect(yield* members.membersWithRole(org.id, doomed.id)).toEqual([])
        expect(Option.map(yield* groups.get(org.id, group.id), (g) => g.role_ids)).toEqual(Option.some([kept.id]))
        expect(yield* groups.groupRoleIds(org.id, member.id)).toEqual([kept.id])
        expect((yield* Effect.flip(repo.delete(org.id, doomed.id)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("refuses to delete a role that a SCIM group mapping targets", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const groups = yield* GroupRepo
        const org = yield* Fixtures.organization()
        const role = yield* created(org.id, "Mapped")
        yield* groups.createMapping(
          new ScimGroupMappingRecord({
            id: ScimGroupMappingId.make(Fixtures.uuid()),
            organization_id: org.id,
            displayName: "Engineering",
            externalId: `ext-${Fixtures.uuid()}`,
            roleId: role.id,
            targetMode: "role",
            member_ids: []
          })
        )
        expect((yield* Effect.flip(repo.delete(org.id, role.id)))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, role.id)).toEqual(Option.some(role))
      }).pipe(Effect.provide(layer)))

    it.effect("keeps nothing of a failed transaction", () =>
      Effect.gen(function*() {
        const repo = yield* RoleRepo
        const members = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const existing = yield* created(org.id, "Existing")
        yield* members.assignRole(org.id, member.id, existing.id)
        const fresh = roleRecord(org.id, "Fresh")
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(fresh)
          yield* repo.update(new Role.RoleRecord({ ...existing, name: "Renamed" }))
          yield* repo.delete(org.id, existing.id)
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, fresh.id)).toEqual(Option.none())
        expect(yield* repo.get(org.id, existing.id)).toEqual(Option.some(existing))
        expect(yield* members.roleIds(org.id, member.id)).toEqual([existing.id])
      }).pipe(Effect.provide(layer)))
  })
}
