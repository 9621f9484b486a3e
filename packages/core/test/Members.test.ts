import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Group from "../src/Group.js"
import * as GroupRepo from "../src/GroupRepo.js"
import { ApiKeyId, GroupId, MemberId, type OrganizationId, RoleId } from "../src/Ids.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"
import * as Roles from "../src/Roles.js"
import * as ServiceAccounts from "../src/ServiceAccounts.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer, ServiceAccounts.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

// An organization with its admin, a plain member, and a "people manager" holding member:write,
// role:write and role:read but not everything (so not an admin).
const setup = Effect.gen(function*() {
  const members = yield* Members.Members
  const roles = yield* Roles.Roles
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const { member_id: memberId } = yield* members.invite(admin, { email: "bob@acme.example", role: "member" })
  const managerRole = yield* roles.create(admin, {
    name: "People managers",
    permissions: ["member:read", "member:write", "role:read", "role:write"]
  })
  const { member_id: managerId } = yield* members.invite(admin, { email: "mia@acme.example", role: "member" })
  yield* members.unassignRole(admin, managerId, created.roles.member.id)
  yield* members.assignRole(admin, managerId, { roleId: managerRole.id })
  return {
    created,
    org,
    admin,
    memberId,
    member: yield* Fixtures.principal(org, memberId),
    managerId,
    manager: yield* Fixtures.principal(org, managerId),
    managerRole
  }
})

const auditActions = (organizationId: OrganizationId) =>
  Effect.map(
    Effect.flatMap(AuditLogRepo.AuditLogRepo, (repo) => repo.list(organizationId, { limit: 100 })),
    (page) => page.items
  )

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

describe("Members.list", () => {
  it.effect("lists live members with role names, admin and service-account flags", () =>
    run(Effect.gen(function*() {
      const { admin, created, memberId, managerId } = yield* setup
      const service = yield* Members.Members
      const accounts = yield* ServiceAccounts.ServiceAccounts
      const { member_id: botId } = yield* accounts.create(admin, { name: "Exporter", role_ids: [] })
      const { members } = yield* service.list(admin)
      expect(members.map((m) => [m.id, m.email, m.roles, m.is_admin, m.is_service_account, m.is_scim_managed])).toEqual(
        [
          [created.admin.id, "ada@acme.example", ["admin"], true, false, false],
          [memberId, "bob@acme.example", ["member"], false, false, false],
          [managerId, "mia@acme.example", ["People managers"], false, false, false],
          [botId, expect.stringMatching(/^exporter-.*@service-accounts\.sightline\.local$/), [], false, true, false]
        ]
      )
      expect(members[1]).toMatchObject({ name: "bob", created_at: expect.anything() })
    })))

  it.effect("shows roles granted through groups, once each, and hides deleted members", () =>
    run(Effect.gen(function*() {
      const { admin, created, memberId, managerId, org } = yield* setup
      const groups = yield* GroupRepo.GroupRepo
      yield* groups.create(Group.make({
        id: GroupId.make("6f1c2a7e-1d0b-4c55-9d1e-3f4a5b6c7d8e"),
        organizationId: org,
        name: "Ops",
        memberIds: [memberId],
        roleIds: [created.roles.admin.id, created.roles.member.id],
        now: yield* DateTime.now
      }))
      const service = yield* Members.Members
      yield* service.delete(admin, managerId, { hard_delete: false })
      const { members } = yield* service.list(admin)
      expect(members.map((m) => m.id)).toEqual([created.admin.id, memberId])
      expect(members[1]).toMatchObject({ roles: ["admin", "member"], is_admin: true })
    })))

  it.effect("needs member:read and never shows another organization's members", () =>
    run(Effect.gen(function*() {
      const { admin, created, org } = yield* setup
      const roles = yield* Roles.Roles
      const service = yield* Members.Members
      const nothing = yield* roles.create(admin, { name: "Nothing" })
      const { member_id: idleId } = yield* service.invite(admin, { email: "idle@acme.example", role: "member" })
      yield* service.unassignRole(admin, idleId, created.roles.member.id)
      yield* service.assignRole(admin, idleId, { roleId: nothing.id })
      const error = yield* Effect.flip(service.list(yield* Fixtures.principal(org, idleId)))
      expect(error._tag).toBe("PermissionDenied")
      expect(error.message).toBe("permission denied: member:read required")

      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const { members } = yield* service.list(yield* Fixtures.principal(other.organization.id, other.admin.id))
      expect(members.map((m) => m.email)).toEqual(["x@other.example"])
    })))
})

describe("Members.invite", () => {
  it.effect("creates a member holding the requested system role and audits it", () =>
    run(Effect.gen(function*() {
      const { admin, created, org } = yield* setup
      const service = yield* Members.Members
      const result = yield* service.invite(admin, { email: "Eve@Acme.example", role: "admin" })
      expect(result).toEqual({
        success: true,
        member_id: expect.any(String),
        sign_in_token: expect.stringMatching(/^[\w-]{43}$/),
        sign_in_expires_at: expect.anything(),
        sign_in_emailed: false
      })
      const roles = yield* service.listRoles(admin, result.member_id)
      expect(roles.roles.map((r) => r.id)).toEqual([created.roles.admin.id])
      const member = Option.getOrThrow(yield* (yield* MemberRepo.MemberRepo).get(org, result.member_id))
      expect(member).toMatchObject({ email: "Eve@Acme.example", name: "Eve", is_service_account: false })
      const [entry] = yield* auditActions(org)
      expect(entry).toMatchObject({
        action: "member.invite",
        actor_id: admin.memberId,
        auth_method: "jwt",
        resource_type: "member",
        resource_id: result.member_id,
        details: { role: "admin" }
      })
    })))

  it.effect("refuses an e-mail address the organization already has, ignoring case, deleted members included", () =>
    run(Effect.gen(function*() {
      const { admin, memberId } = yield* setup
      const service = yield* Members.Members
      const taken = yield* Effect.flip(service.invite(admin, { email: "BOB@acme.example", role: "member" }))
      expect(taken._tag).toBe("Conflict")
      yield* service.delete(admin, memberId, { hard_delete: false })
      const stillTaken = yield* Effect.flip(service.invite(admin, { email: "bob@acme.example", role: "member" }))
      expect(stillTaken._tag).toBe("Conflict")
      // A hard delete erases the member, and with it the address.
      yield* service.delete(admin, memberId, { hard_delete: true })
      expect((yield* service.invite(admin, { email: "bob@acme.example", role: "member" })).success).toBe(true)
    })))

  it.effect("needs member:write; inviting an admin needs the admin role", () =>
    run(Effect.gen(function*() {
      const { manager, member, org } = yield* setup
      const service = yield* Members.Members
      const denied = yield* Effect.flip(service.invite(member, { email: "new@acme.example", role: "member" }))
      expect([denied._tag, denied.message]).toEqual(["PermissionDenied", "permission denied: member:write required"])
      const notAdmin = yield* Effect.flip(service.invite(manager, { email: "new@acme.example", role: "admin" }))
      expect([notAdmin._tag, notAdmin.message]).toEqual(["PermissionDenied", "admin role required"])
      // Nothing of the refused invitation was kept.
      expect(Option.isNone(yield* (yield* MemberRepo.MemberRepo).findByEmail(org, "new@acme.example"))).toBe(true)
      expect((yield* service.invite(manager, { email: "new@acme.example", role: "member" })).success).toBe(true)
    })))
})

describe("Members.delete", () => {
  it.effect("soft-deletes by default: the member is hidden, keeps its roles, and is marked deleted once", () =>
    run(Effect.gen(function*() {
      const { admin, created, memberId, org } = yield* setup
      const service = yield* Members.Members
      expect(yield* service.delete(admin, memberId, { hard_delete: false })).toEqual({ id: memberId, success: true })
      const repo = yield* MemberRepo.MemberRepo
      const stored = Option.getOrThrow(yield* repo.get(org, memberId))
      expect(stored.deleted_at).toBeDefined()
      expect(yield* repo.roleIds(org, memberId)).toEqual([created.roles.member.id])
      // The principal Auth builds for a deleted member is refused everywhere, keys included.
      const key = Policy.ApiKey({
        keyId: ApiKeyId.make("00000000-0000-4000-8000-0000000000ff"),
        assumedRoleIds: [created.roles.member.id],
        inheritAllRoles: false,
        fullMemberAccess: false
      })
      const error = yield* Effect.flip(service.list(yield* Fixtures.principal(org, memberId, key)))
      expect([error._tag, error.message]).toEqual(["Unauthenticated", "invalid API key: API key not found"])
      // Deleted members are gone to the API, except to a hard delete.
      expect((yield* Effect.flip(service.delete(admin, memberId, { hard_delete: false })))._tag).toBe("NotFound")
      expect((yield* Effect.flip(service.listRoles(admin, memberId)))._tag).toBe("NotFound")
      const entries = yield* auditActions(org)
      expect(entries[0]).toMatchObject({
        action: "member.delete",
        resource_id: memberId,
        details: { hard_delete: false, is_service_account: false }
      })
    })))

  it.effect("hard-deletes a live or a soft-deleted member with its assignments", () =>
    run(Effect.gen(function*() {
      const { admin, memberId, managerId, org } = yield* setup
      const service = yield* Members.Members
      const repo = yield* MemberRepo.MemberRepo
      yield* service.delete(admin, memberId, { hard_delete: true })
      expect(Option.isNone(yield* repo.get(org, memberId))).toBe(true)
      yield* service.delete(admin, managerId, { hard_delete: false })
      yield* service.delete(admin, managerId, { hard_delete: true })
      expect(Option.isNone(yield* repo.get(org, managerId))).toBe(true)
      expect(yield* repo.roleIds(org, managerId)).toEqual([])
      expect((yield* Effect.flip(service.delete(admin, memberId, { hard_delete: true })))._tag).toBe("NotFound")
    })))

  it.effect("answers NotFound for another organization's member and refuses deleting yourself", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const service = yield* Members.Members
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const foreign = yield* Effect.flip(service.delete(admin, other.admin.id, { hard_delete: true }))
      expect([foreign._tag, foreign.message]).toEqual(["NotFound", "Resource not found"])
      const self = yield* Effect.flip(service.delete(admin, admin.memberId, { hard_delete: false }))
      expect([self._tag, self.message]).toEqual(["InvalidRequest", "you cannot delete yourself"])
    })))

  it.effect("needs member:write, and the admin role to remove someone holding more than the caller", () =>
    run(Effect.gen(function*() {
      const { admin, manager, member, memberId, created } = yield* setup
      const service = yield* Members.Members
      const denied = yield* Effect.flip(service.delete(member, admin.memberId, { hard_delete: false }))
      expect([denied._tag, denied.message]).toEqual(["PermissionDenied", "permission denied: member:write required"])
      const stronger = yield* Effect.flip(service.delete(manager, created.admin.id, { hard_delete: false }))
      expect([stronger._tag, stronger.message]).toEqual(["PermissionDenied", "admin role required"])
      // A plain member holds chat:write and the like, which the manager lacks.
      const alsoStronger = yield* Effect.flip(service.delete(manager, memberId, { hard_delete: false }))
      expect(alsoStronger.message).toBe("admin role required")
    })))

  it.effect("never deletes the organization's last admin, and rolls the attempt back", () =>
    run(Effect.gen(function*() {
      const { admin, created, org } = yield* setup
      const roles = yield* Roles.Roles
      const service = yield* Members.Members
      // Every permission, but not the admin system role: strong enough to remove the admin.
      const everything = yield* roles.create(admin, { name: "Everything", permissions: Permission.all })
      const { member_id: rootId } = yield* service.invite(admin, { email: "root@acme.example", role: "member" })
      yield* service.assignRole(admin, rootId, { roleId: everything.id })
      const before = yield* auditActions(org)
      const error = yield* Effect.flip(
        service.delete(yield* Fixtures.principal(org, rootId), created.admin.id, { hard_delete: true })
      )
      expect([error._tag, error.message]).toEqual(["Conflict", "the organization must keep at least one admin"])
      expect(Option.isSome(yield* (yield* MemberRepo.MemberRepo).get(org, created.admin.id))).toBe(true)
      expect((yield* auditActions(org)).length).toBe(before.length)
      // With a second admin, the first may go.
      yield* service.assignRole(admin, rootId, { roleId: created.roles.admin.id })
      expect(
        (yield* service.delete(yield* Fixtures.principal(org, rootId), created.admin.id, { hard_delete: false }))
          .success
      )
        .toBe(true)
    })))
})

describe("Members.listRoles", () => {
  it.effect("lists direct and group-granted roles, oldest first; needs role:read", () =>
    run(Effect.gen(function*() {
      const { admin, created, managerRole, memberId, org } = yield* setup
      const service = yield* Members.Members
      yield* (yield* GroupRepo.GroupRepo).create(Group.make({
        id: GroupId.make("6f1c2a7e-1d0b-4c55-9d1e-3f4a5b6c7d8e"),
        organizationId: org,
        name: "Managers",
        memberIds: [memberId],
        roleIds: [managerRole.id],
        now: yield* DateTime.now
      }))
      const result = yield* service.listRoles(admin, memberId)
      expect(result.member_id).toBe(memberId)
      expect(result.roles.map((r) => r.name)).toEqual(["member", "People managers"])
      expect(result.roles[0]).toMatchObject({ id: created.roles.member.id, is_system: true })

      const nothing = yield* (yield* Roles.Roles).create(admin, { name: "Nothing" })
      yield* service.unassignRole(admin, memberId, created.roles.member.id)
      yield* service.assignRole(admin, memberId, { roleId: nothing.id })
      yield* (yield* GroupRepo.GroupRepo).setMembers(org, GroupId.make("6f1c2a7e-1d0b-4c55-9d1e-3f4a5b6c7d8e"), [])
      const denied = yield* Effect.flip(service.listRoles(yield* Fixtures.principal(org, memberId), memberId))
      expect([denied._tag, denied.message]).toEqual(["PermissionDenied", "permission denied: role:read required"])
    })))

  it.effect("answers NotFound for an unknown or foreign member", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const service = yield* Members.Members
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      expect((yield* Effect.flip(service.listRoles(admin, other.admin.id)))._tag).toBe("NotFound")
      const unknown = MemberId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b")
      expect((yield* Effect.flip(service.listRoles(admin, unknown)))._tag).toBe("NotFound")
    })))
})

describe("Members.assignRole and unassignRole", () => {
  it.effect("assign and unassign a role, auditing each change once", () =>
    run(Effect.gen(function*() {
      const { admin, managerRole, memberId, org } = yield* setup
      const service = yield* Members.Members
      const assigned = yield* service.assignRole(admin, memberId, { roleId: managerRole.id })
      expect(assigned).toEqual({ member_id: memberId, role_id: managerRole.id, success: true })
      // Assigning again changes nothing and records nothing.
      yield* service.assignRole(admin, memberId, { roleId: managerRole.id })
      const afterAssign = yield* auditActions(org)
      expect(afterAssign.filter((e) => e.action === "member.role_assign" && e.resource_id === memberId)).toEqual([
        expect.objectContaining({ details: { role_id: managerRole.id, role_name: "People managers" } })
      ])
      const unassigned = yield* service.unassignRole(admin, memberId, managerRole.id)
      expect(unassigned).toEqual({ member_id: memberId, role_id: managerRole.id, success: true })
      yield* service.unassignRole(admin, memberId, managerRole.id)
      const entries = yield* auditActions(org)
      expect(entries.filter((e) => e.action === "member.role_unassign" && e.resource_id === memberId)).toHaveLength(1)
      expect((yield* service.listRoles(admin, memberId)).roles.map((r) => r.name)).toEqual(["member"])
    })))

  it.effect("record how the caller authenticated: a key's changes are audited as api_key", () =>
    run(Effect.gen(function*() {
      const { created, managerRole, memberId, org } = yield* setup
      const key = Policy.ApiKey({
        keyId: ApiKeyId.make("00000000-0000-4000-8000-0000000000ff"),
        assumedRoleIds: [created.roles.admin.id],
        inheritAllRoles: false,
        fullMemberAccess: false
      })
      const admin = yield* Fixtures.principal(org, created.admin.id, key)
      yield* (yield* Members.Members).assignRole(admin, memberId, { roleId: managerRole.id })
      const [entry] = yield* auditActions(org)
      expect(entry).toMatchObject({ action: "member.role_assign", actor_id: created.admin.id, auth_method: "api_key" })
    })))

  it.effect("need role:write, and the admin role for a role granting more than the caller holds", () =>
    run(Effect.gen(function*() {
      const { created, manager, member, memberId, managerId } = yield* setup
      const service = yield* Members.Members
      const denied = yield* Effect.flip(service.assignRole(member, managerId, { roleId: created.roles.member.id }))
      expect([denied._tag, denied.message]).toEqual(["PermissionDenied", "permission denied: role:write required"])
      const admin = yield* Effect.flip(service.assignRole(manager, memberId, { roleId: created.roles.admin.id }))
      expect([admin._tag, admin.message]).toEqual(["PermissionDenied", "admin role required"])
      const demote = yield* Effect.flip(service.unassignRole(manager, memberId, created.roles.member.id))
      expect([demote._tag, demote.message]).toEqual(["PermissionDenied", "admin role required"])
      const unassignDenied = yield* Effect.flip(service.unassignRole(member, memberId, created.roles.member.id))
      expect(unassignDenied._tag).toBe("PermissionDenied")
    })))

  it.effect("answer NotFound for a foreign or unknown member or role, and a deleted member", () =>
    run(Effect.gen(function*() {
      const { admin, created, memberId } = yield* setup
      const service = yield* Members.Members
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const cases = [
        service.assignRole(admin, other.admin.id, { roleId: created.roles.member.id }),
        service.assignRole(admin, memberId, { roleId: other.roles.member.id }),
        service.assignRole(admin, memberId, { roleId: RoleId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b") }),
        service.unassignRole(admin, other.admin.id, other.roles.admin.id),
        service.unassignRole(admin, memberId, other.roles.member.id)
      ]
      for (const attempt of cases) {
        const error = yield* Effect.flip(attempt)
        expect([error._tag, error.message]).toEqual(["NotFound", "Resource not found"])
      }
      yield* service.delete(admin, memberId, { hard_delete: false })
      expect((yield* Effect.flip(service.assignRole(admin, memberId, { roleId: created.roles.member.id })))._tag)
        .toBe("NotFound")
    })))

  it.effect("never take admin from the last admin; an admin through a group counts", () =>
    run(Effect.gen(function*() {
      const { admin, created, memberId, org } = yield* setup
      const service = yield* Members.Members
      const error = yield* Effect.flip(service.unassignRole(admin, admin.memberId, created.roles.admin.id))
      expect([error._tag, error.message]).toEqual(["Conflict", "the organization must keep at least one admin"])
      yield* (yield* GroupRepo.GroupRepo).create(Group.make({
        id: GroupId.make("6f1c2a7e-1d0b-4c55-9d1e-3f4a5b6c7d8e"),
        organizationId: org,
        name: "Admins",
        memberIds: [memberId],
        roleIds: [created.roles.admin.id],
        now: yield* DateTime.now
      }))
      expect((yield* service.unassignRole(admin, admin.memberId, created.roles.admin.id)).success).toBe(true)
    })))
})
