import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import { type OrganizationId, RoleId } from "../src/Ids.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import * as Permission from "../src/Permission.js"
import * as Roles from "../src/Roles.js"
import * as ServiceAccounts from "../src/ServiceAccounts.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer, ServiceAccounts.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

// An organization with its admin, a plain member, a custom "Exporters" role, and an organization
// operator: organization:read/write without role:write, so it may not hand out roles.
const setup = Effect.gen(function*() {
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const members = yield* Members.Members
  const roles = yield* Roles.Roles
  const { member_id: memberId } = yield* members.invite(admin, { email: "bob@acme.example", role: "member" })
  const exporters = yield* roles.create(admin, { name: "Exporters", permissions: ["chat:read", "connector:read"] })
  const operators = yield* roles.create(admin, {
    name: "Operators",
    permissions: ["organization:read", "organization:write", "chat:read", "connector:read"]
  })
  const { member_id: operatorId } = yield* members.invite(admin, { email: "olga@acme.example", role: "member" })
  yield* members.unassignRole(admin, operatorId, created.roles.member.id)
  yield* members.assignRole(admin, operatorId, { roleId: operators.id })
  return {
    created,
    org,
    admin,
    member: yield* Fixtures.principal(org, memberId),
    operator: yield* Fixtures.principal(org, operatorId),
    exporters
  }
})

const entries = (organizationId: OrganizationId) =>
  Effect.map(
    Effect.flatMap(AuditLogRepo.AuditLogRepo, (repo) => repo.list(organizationId, { limit: 100 })),
    (page) => page.items
  )

describe("ServiceAccounts.create", () => {
  it.effect("creates a service-account member with its roles and generated address, audited", () =>
    run(Effect.gen(function*() {
      const { admin, exporters, org } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const result = yield* service.create(admin, {
        name: "Nightly Exporter",
        description: "Exports every night",
        role_ids: [exporters.id, exporters.id]
      })
      expect(result.email).toBe(`nightly-exporter-${result.member_id.slice(-12)}@service-accounts.sightline.local`)
      const member = Option.getOrThrow(yield* (yield* MemberRepo.MemberRepo).get(org, result.member_id))
      expect(member).toMatchObject({
        name: "Nightly Exporter",
        description: "Exports every night",
        is_service_account: true,
        email: result.email
      })
      expect(yield* (yield* MemberRepo.MemberRepo).roleIds(org, result.member_id)).toEqual([exporters.id])
      const [entry] = yield* entries(org)
      expect(entry).toMatchObject({
        action: "service_account.create",
        resource_type: "service_account",
        resource_id: result.member_id,
        details: { name: "Nightly Exporter", role_ids: [exporters.id] }
      })
    })))

  it.effect("accepts no roles with organization:write alone; handing out roles also needs role:write", () =>
    run(Effect.gen(function*() {
      const { exporters, operator } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      expect((yield* service.create(operator, { name: "Bare", role_ids: [] })).member_id).toBeDefined()
      const error = yield* Effect.flip(service.create(operator, { name: "Bot", role_ids: [exporters.id] }))
      expect([error._tag, error.message]).toEqual(["PermissionDenied", "permission denied: role:write required"])
    })))

  it.effect("needs organization:write, and the admin role for roles granting more than the caller holds", () =>
    run(Effect.gen(function*() {
      const { admin, created, exporters, member, org } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const members = yield* Members.Members
      const denied = yield* Effect.flip(service.create(member, { name: "Bot", role_ids: [] }))
      expect([denied._tag, denied.message]).toEqual([
        "PermissionDenied",
        "permission denied: organization:write required"
      ])
      // Every permission but one: may hand out narrower roles, never `admin`.
      const almost = yield* (yield* Roles.Roles).create(admin, {
        name: "Almost",
        permissions: Permission.all.filter((p) => p !== "agent:write")
      })
      const { member_id: almostId } = yield* members.invite(admin, { email: "al@acme.example", role: "member" })
      yield* members.unassignRole(admin, almostId, created.roles.member.id)
      yield* members.assignRole(admin, almostId, { roleId: almost.id })
      const caller = yield* Fixtures.principal(org, almostId)
      const before = yield* (yield* MemberRepo.MemberRepo).list(org)
      const wider = yield* Effect.flip(service.create(caller, { name: "Bot", role_ids: [created.roles.admin.id] }))
      expect([wider._tag, wider.message]).toEqual(["PermissionDenied", "admin role required"])
      expect(yield* (yield* MemberRepo.MemberRepo).list(org)).toEqual(before)
      expect((yield* service.create(caller, { name: "Bot", role_ids: [exporters.id] })).email).toMatch(/^bot-/)
    })))

  it.effect("answers NotFound for a role of another organization or an unknown role, creating nothing", () =>
    run(Effect.gen(function*() {
      const { admin, exporters, org } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const before = yield* (yield* MemberRepo.MemberRepo).list(org)
      for (const roleId of [other.roles.member.id, RoleId.make("3f2a9c1e-7b4d-4e8f-9a01-5c6d7e8f9a0b")]) {
        const error = yield* Effect.flip(service.create(admin, { name: "Bot", role_ids: [exporters.id, roleId] }))
        expect([error._tag, error.message]).toEqual(["NotFound", "Resource not found"])
      }
      expect(yield* (yield* MemberRepo.MemberRepo).list(org)).toEqual(before)
    })))
})

describe("ServiceAccounts.list", () => {
  it.effect("lists live service accounts only, with role names; needs organization:read", () =>
    run(Effect.gen(function*() {
      const { admin, exporters, member, operator } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const first = yield* service.create(admin, { name: "First", description: "one", role_ids: [exporters.id] })
      const second = yield* service.create(admin, { name: "Second", role_ids: [] })
      yield* service.delete(admin, second.member_id)
      const { service_accounts } = yield* service.list(operator)
      expect(service_accounts).toEqual([
        {
          id: first.member_id,
          name: "First",
          description: "one",
          email: first.email,
          roles: ["Exporters"],
          created_at: expect.anything()
        }
      ])
      const denied = yield* Effect.flip(service.list(member))
      expect([denied._tag, denied.message]).toEqual([
        "PermissionDenied",
        "permission denied: organization:read required"
      ])
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      expect((yield* service.list(yield* Fixtures.principal(other.organization.id, other.admin.id))).service_accounts)
        .toEqual(
          []
        )
    })))
})

describe("ServiceAccounts.delete", () => {
  it.effect("soft-deletes the account (its keys stop at once) and audits it", () =>
    run(Effect.gen(function*() {
      const { admin, org } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const { member_id } = yield* service.create(admin, { name: "Bot", role_ids: [] })
      expect(yield* service.delete(admin, member_id)).toEqual({ success: true })
      const stored = Option.getOrThrow(yield* (yield* MemberRepo.MemberRepo).get(org, member_id))
      expect(stored.deleted_at).toBeDefined()
      const [entry] = yield* entries(org)
      expect(entry).toMatchObject({
        action: "service_account.delete",
        resource_id: member_id,
        details: { name: "Bot" }
      })
      expect((yield* Effect.flip(service.delete(admin, member_id)))._tag).toBe("NotFound")
    })))

  it.effect("answers NotFound for a human, a foreign account or an unknown id", () =>
    run(Effect.gen(function*() {
      const { admin, member } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const otherAdmin = yield* Fixtures.principal(other.organization.id, other.admin.id)
      const foreign = yield* service.create(otherAdmin, { name: "Theirs", role_ids: [] })
      for (const id of [member.memberId, foreign.member_id]) {
        const error = yield* Effect.flip(service.delete(admin, id))
        expect([error._tag, error.message]).toEqual(["NotFound", "Resource not found"])
      }
    })))

  it.effect("needs organization:write, the admin role for a stronger account, and refuses deleting itself", () =>
    run(Effect.gen(function*() {
      const { admin, created, member, operator, org } = yield* setup
      const service = yield* ServiceAccounts.ServiceAccounts
      const bot = yield* service.create(admin, { name: "Bot", role_ids: [created.roles.admin.id] })
      const denied = yield* Effect.flip(service.delete(member, bot.member_id))
      expect(denied.message).toBe("permission denied: organization:write required")
      const stronger = yield* Effect.flip(service.delete(operator, bot.member_id))
      expect([stronger._tag, stronger.message]).toEqual(["PermissionDenied", "admin role required"])
      const self = yield* Effect.flip(service.delete(yield* Fixtures.principal(org, bot.member_id), bot.member_id))
      expect([self._tag, self.message]).toEqual(["InvalidRequest", "a service account cannot delete itself"])
    })))
})
