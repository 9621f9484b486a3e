import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as GroupRepo from "../src/GroupRepo.js"
import { ModelNumber, type OrganizationId, RoleId, ScimGroupMappingId } from "../src/Ids.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as Members from "../src/Members.js"
import * as Model from "../src/Model.js"
import * as Organizations from "../src/Organizations.js"
import * as RoleRepo from "../src/RoleRepo.js"
import * as Roles from "../src/Roles.js"
import { ScimGroupMappingRecord } from "../src/ScimGroupMapping.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

// The test catalogue: model 1 (`offline`, the default) and model 2 (`offline-fast`).
const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const models = (...numbers: Array<number>) => numbers.map((n) => ModelNumber.make(n))

// An organization with its admin, a plain member and a role manager (role:read and role:write, plus
// chat:read, but nothing else).
const setup = Effect.gen(function*() {
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const members = yield* Members.Members
  const roles = yield* Roles.Roles
  const { member_id: memberId } = yield* members.invite(admin, { email: "bob@acme.example", role: "member" })
  const managers = yield* roles.create(admin, {
    name: "Role managers",
    permissions: ["role:read", "role:write", "chat:read"]
  })
  const { member_id: managerId } = yield* members.invite(admin, { email: "mia@acme.example", role: "member" })
  yield* members.unassignRole(admin, managerId, created.roles.member.id)
  yield* members.assignRole(admin, managerId, { roleId: managers.id })
  return {
    created,
    org,
    admin,
    member: yield* Fixtures.principal(org, memberId),
    manager: yield* Fixtures.principal(org, managerId),
    managers
  }
})

const entries = (organizationId: OrganizationId) =>
  Effect.map(
    Effect.flatMap(AuditLogRepo.AuditLogRepo, (repo) => repo.list(organizationId, { limit: 100 })),
    (page) => page.items
  )

describe("Roles.list", () => {
  it.effect("lists the organization's roles oldest first, with permissions and model configuration", () =>
    run(Effect.gen(function*() {
      const { created, managers, member } = yield* setup
      const service = yield* Roles.Roles
      const { roles } = yield* service.list(member)
      expect(roles.map((r) => r.name)).toEqual(["admin", "member", "Role managers"])
      expect(roles[2]).toEqual(managers)
      expect(roles[0]).toMatchObject({ id: created.roles.admin.id, is_system: true, allow_model_choice: true })
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const theirs = yield* service.list(yield* Fixtures.principal(other.organization.id, other.admin.id))
      expect(theirs.roles.map((r) => r.id)).toEqual([other.roles.admin.id, other.roles.member.id])
    })))

  it.effect("needs role:read", () =>
    run(Effect.gen(function*() {
      const { admin, created, org } = yield* setup
      const roles = yield* Roles.Roles
      const members = yield* Members.Members
      const nothing = yield* roles.create(admin, { name: "Nothing" })
      const { member_id } = yield* members.invite(admin, { email: "idle@acme.example", role: "member" })
      yield* members.unassignRole(admin, member_id, created.roles.member.id)
      yield* members.assignRole(admin, member_id, { roleId: nothing.id })
      const error = yield* Effect.flip(roles.list(yield* Fixtures.principal(org, member_id)))
      expect([error._tag, error.message]).toEqual(["PermissionDenied", "permission denied: role:read required"])
    })))
})

describe("Roles.create", () => {
  it.effect("creates a custom role with normalized permissions and audits it", () =>
    run(Effect.gen(function*() {
      const { admin, org } = yield* setup
      const role = yield* (yield* Roles.Roles).create(admin, {
        name: "Analysts",
        description: "Read and chat",
        permissions: ["chat:write", "chat:read", "chat:write"]
      })
      expect(role).toMatchObject({
        organization_id: org,
        name: "Analysts",
        description: "Read and chat",
        is_system: false,
        is_scim_managed: false,
        permissions: ["chat:read", "chat:write"],
        allow_model_choice: true
      })
      expect(role.default_model_id).toBeUndefined()
      expect(Option.getOrThrow(yield* (yield* RoleRepo.RoleRepo).get(org, role.id))).toEqual(role)
      const [entry] = yield* entries(org)
      expect(entry).toMatchObject({
        action: "role.create",
        resource_type: "role",
        resource_id: role.id,
        actor_id: admin.memberId,
        details: { name: "Analysts", permissions: ["chat:read", "chat:write"] }
      })
    })))

  it.effect("refuses a name taken ignoring case, the system roles' included", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const service = yield* Roles.Roles
      for (const name of ["ADMIN", "role MANAGERS"]) {
        const error = yield* Effect.flip(service.create(admin, { name }))
        expect(error._tag).toBe("Conflict")
      }
    })))

  it.effect("needs role:write, and the admin role to grant what the caller lacks", () =>
    run(Effect.gen(function*() {
      const { manager, member } = yield* setup
      const service = yield* Roles.Roles
      const denied = yield* Effect.flip(service.create(member, { name: "X" }))
      expect([denied._tag, denied.message]).toEqual(["PermissionDenied", "permission denied: role:write required"])
      const wider = yield* Effect.flip(service.create(manager, { name: "X", permissions: ["chat:write"] }))
      expect([wider._tag, wider.message]).toEqual(["PermissionDenied", "admin role required"])
      expect((yield* service.create(manager, { name: "X", permissions: ["chat:read"] })).permissions).toEqual([
        "chat:read"
      ])
    })))
})

describe("Roles.update", () => {
  it.effect("changes name, description and permissions, auditing fields and permissions separately", () =>
    run(Effect.gen(function*() {
      const { admin, managers, org } = yield* setup
      const service = yield* Roles.Roles
      yield* TestClock.adjust("1 hour")
      const updated = yield* service.update(admin, managers.id, {
        name: "Role admins",
        description: "Manage roles",
        permissions: ["role:write", "role:read"]
      })
      expect(updated).toMatchObject({
        name: "Role admins",
        description: "Manage roles",
        permissions: ["role:read", "role:write"]
      })
      expect(DateTime.toEpochMillis(updated.updated_at)).toBe(3_600_000)
      expect(updated.created_at).toEqual(managers.created_at)
      expect(Option.getOrThrow(yield* (yield* RoleRepo.RoleRepo).get(org, managers.id))).toEqual(updated)
      const [permissions, fields] = yield* entries(org)
      expect(fields).toMatchObject({
        action: "role.update",
        resource_id: managers.id,
        details: { fields: ["name", "description"] }
      })
      expect(permissions).toMatchObject({
        action: "role.permissions_update",
        details: { before: ["role:read", "role:write", "chat:read"], after: ["role:read", "role:write"] }
      })
    })))

  it.effect("sets and clears the model configuration by the seed's rules", () =>
    run(Effect.gen(function*() {
      const { admin, managers } = yield* setup
      const service = yield* Roles.Roles
      const restricted = yield* service.update(admin, managers.id, {
        default_model_id: 2,
        allowed_model_ids: models(2, 1, 2),
        allow_model_choice: false
      })
      expect(restricted).toMatchObject({ default_model_id: 2, allowed_model_ids: [1, 2], allow_model_choice: false })
      const cleared = yield* service.update(admin, managers.id, { default_model_id: 0, clear_allowed_model_ids: true })
      expect(cleared.default_model_id).toBeUndefined()
      expect(cleared.allowed_model_ids).toBeUndefined()
      expect(cleared.allow_model_choice).toBe(false)
    })))

  it.effect("refuses model ids outside the catalogue and a default outside the allowed models", () =>
    run(Effect.gen(function*() {
      const { admin, managers } = yield* setup
      const service = yield* Roles.Roles
      const unknownDefault = yield* Effect.flip(service.update(admin, managers.id, { default_model_id: 7 }))
      expect([unknownDefault._tag, unknownDefault.message]).toEqual(["InvalidRequest", "unknown model id: 7"])
      const unknownAllowed = yield* Effect.flip(
        service.update(admin, managers.id, { allowed_model_ids: models(1, 9, 8) })
      )
      expect(unknownAllowed.message).toBe("unknown model id: 9, 8")
      const outside = yield* Effect.flip(
        service.update(admin, managers.id, { default_model_id: 1, allowed_model_ids: models(2) })
      )
      expect([outside._tag, outside.message]).toEqual([
        "InvalidRequest",
        "default_model_id must be one of allowed_model_ids"
      ])
    })))

  it.effect("lets an admin set a system role's model configuration but never rename it or change its permissions", () =>
    run(Effect.gen(function*() {
      const { admin, created, manager } = yield* setup
      const service = yield* Roles.Roles
      const member = created.roles.member.id
      expect((yield* service.update(admin, member, { allowed_model_ids: models(1) })).allowed_model_ids).toEqual([1])
      const rename = yield* Effect.flip(service.update(admin, member, { name: "staff" }))
      expect([rename._tag, rename.message]).toEqual(["InvalidRequest", "the system role member cannot be renamed"])
      const permissions = yield* Effect.flip(service.update(admin, member, { permissions: ["chat:read"] }))
      expect(permissions.message).toBe("the permissions of the system role member cannot be changed")
      const notAdmin = yield* Effect.flip(service.update(manager, member, { description: "x" }))
      expect([notAdmin._tag, notAdmin.message]).toEqual(["PermissionDenied", "admin role required"])
    })))

  it.effect("writes nothing for a PATCH that changes nothing", () =>
    run(Effect.gen(function*() {
      const { admin, managers, org } = yield* setup
      const before = (yield* entries(org)).length
      yield* TestClock.adjust("1 hour")
      const same = yield* (yield* Roles.Roles).update(admin, managers.id, { name: "Role managers", description: "" })
      expect(same).toEqual(managers)
      expect((yield* entries(org)).length).toBe(before)
    })))

  it.effect("needs role:write (before any lookup), answers NotFound for a foreign role, Conflict for a taken name", () =>
    run(Effect.gen(function*() {
      const { admin, managers, member } = yield* setup
      const service = yield* Roles.Roles
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const denied = yield* Effect.flip(service.update(member, other.roles.member.id, { description: "x" }))
      expect(denied._tag).toBe("PermissionDenied")
      const foreign = yield* Effect.flip(service.update(admin, other.roles.member.id, { description: "x" }))
      expect([foreign._tag, foreign.message]).toEqual(["NotFound", "Resource not found"])
      const taken = yield* Effect.flip(service.update(admin, managers.id, { name: "Member" }))
      expect(taken._tag).toBe("Conflict")
    })))

  it.effect("needs the admin role to widen a role beyond the caller's permissions", () =>
    run(Effect.gen(function*() {
      const { manager, managers } = yield* setup
      const service = yield* Roles.Roles
      const wider = yield* Effect.flip(
        service.update(manager, managers.id, { permissions: ["role:read", "chat:write"] })
      )
      expect([wider._tag, wider.message]).toEqual(["PermissionDenied", "admin role required"])
      expect((yield* service.update(manager, managers.id, { permissions: ["role:read", "role:write"] })).permissions)
        .toEqual(["role:read", "role:write"])
    })))
})

describe("Roles.delete", () => {
  it.effect("deletes a custom role with its assignments and audits it", () =>
    run(Effect.gen(function*() {
      const { admin, managers, manager, org } = yield* setup
      const service = yield* Roles.Roles
      expect(yield* service.delete(admin, managers.id)).toEqual({ id: managers.id, success: true })
      expect(Option.isNone(yield* (yield* RoleRepo.RoleRepo).get(org, managers.id))).toBe(true)
      expect(yield* (yield* MemberRepo.MemberRepo).roleIds(org, manager.memberId)).toEqual([])
      const [entry] = yield* entries(org)
      expect(entry).toMatchObject({
        action: "role.delete",
        resource_id: managers.id,
        details: { name: "Role managers" }
      })
    })))

  it.effect("refuses system roles, roles a SCIM mapping targets, and foreign roles", () =>
    run(Effect.gen(function*() {
      const { admin, created, managers, org } = yield* setup
      const service = yield* Roles.Roles
      const system = yield* Effect.flip(service.delete(admin, created.roles.member.id))
      expect([system._tag, system.message]).toEqual(["InvalidRequest", "the system role member cannot be deleted"])
      yield* (yield* GroupRepo.GroupRepo).createMapping(
        new ScimGroupMappingRecord({
          id: ScimGroupMappingId.make("6f1c2a7e-1d0b-4c55-9d1e-3f4a5b6c7d8e"),
          organization_id: org,
          displayName: "Managers",
          externalId: "ext-1",
          roleId: managers.id,
          targetMode: "role",
          member_ids: []
        })
      )
      const mapped = yield* Effect.flip(service.delete(admin, managers.id))
      expect(mapped._tag).toBe("Conflict")
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const foreign = yield* Effect.flip(service.delete(admin, other.roles.admin.id))
      expect(foreign._tag).toBe("NotFound")
      const unknown = yield* Effect.flip(service.delete(admin, RoleId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b")))
      expect(unknown._tag).toBe("NotFound")
    })))

  it.effect("needs role:write, and the admin role for a role granting more than the caller holds", () =>
    run(Effect.gen(function*() {
      const { admin, manager, member } = yield* setup
      const service = yield* Roles.Roles
      const writers = yield* service.create(admin, { name: "Writers", permissions: ["chat:write"] })
      expect((yield* Effect.flip(service.delete(member, writers.id)))._tag).toBe("PermissionDenied")
      const stronger = yield* Effect.flip(service.delete(manager, writers.id))
      expect([stronger._tag, stronger.message]).toEqual(["PermissionDenied", "admin role required"])
    })))
})

describe("Roles.unknownModels", () => {
  it("treats default_model_id 0 as clearing, not as a model", () => {
    const catalogue = { entries: Model.testEntries, defaultModel: Model.testEntries[0] }
    expect(Roles.unknownModels(catalogue, { default_model_id: 0 })).toEqual([])
    expect(Roles.unknownModels(catalogue, { default_model_id: 3, allowed_model_ids: models(3, 2) })).toEqual([3])
  })
})
