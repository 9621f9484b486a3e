import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Decision from "../src/Decision.js"
import { ModelNumber, OrganizationId, RoleId } from "../src/Ids.js"
import * as Permission from "../src/Permission.js"
import * as Role from "../src/Role.js"

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const org = OrganizationId.make(id(1))
const created = DateTime.unsafeMake("2026-01-01T00:00:00.000Z")
const later = DateTime.unsafeMake("2026-02-01T00:00:00.000Z")
const models = (...ns: Array<number>) => ns.map((n) => ModelNumber.make(n))

const { admin, member } = Role.systemRoles({
  organizationId: org,
  adminId: RoleId.make(id(10)),
  memberId: RoleId.make(id(11)),
  now: created
})

const custom = (request: Partial<Role.CreateRole> = {}) =>
  Role.make({ id: RoleId.make(id(20)), organizationId: org, request: { name: "Analysts", ...request }, now: created })

const withModels = (defaultModel: number | undefined, allowed: ReadonlyArray<number> | undefined) =>
  new Role.RoleRecord({
    ...custom(),
    ...(defaultModel === undefined ? {} : { default_model_id: ModelNumber.make(defaultModel) }),
    ...(allowed === undefined ? {} : { allowed_model_ids: models(...allowed) })
  })

const decodeError = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string | undefined =>
  Either.match(Schema.decodeUnknownEither(schema)(input), { onLeft: (e) => e.message, onRight: () => undefined })

const denial = (decision: Decision.Decision) => decision._tag === "Deny" ? [decision.code, decision.reason] : "allow"

describe("Role.systemRoles", () => {
  it("builds admin with every permission and member with the member defaults, both system roles", () => {
    expect(admin).toMatchObject({ name: "admin", is_system: true, is_scim_managed: false, organization_id: org })
    expect(member).toMatchObject({ name: "member", is_system: true, is_scim_managed: false, organization_id: org })
    expect(admin.permissions).toEqual(Permission.all)
    expect([...member.permissions].sort()).toEqual([...Permission.memberDefaults].sort())
    expect([admin.created_at, admin.updated_at, member.created_at]).toEqual([created, created, created])
  })

  it("recognises only the admin system role as admin", () => {
    expect(Role.isSystemAdmin(admin)).toBe(true)
    expect(Role.isSystemAdmin(member)).toBe(false)
    expect(Role.isSystemAdmin(custom({ name: "admin", permissions: Permission.all }))).toBe(false)
  })
})

describe("Role.toRoleInfo", () => {
  it("hands the policy engine the permissions and the model configuration", () => {
    expect(Role.toRoleInfo(withModels(2, [2, 5]))).toEqual({
      id: RoleId.make(id(20)),
      name: "Analysts",
      permissions: [],
      isSystem: false,
      model: { allowedModelIds: models(2, 5), defaultModelId: 2, allowModelChoice: true }
    })
    expect(Role.toRoleInfo(admin)).toMatchObject({ name: "admin", isSystem: true, permissions: Permission.all })
  })
})

describe("Role.CreateRole", () => {
  it("requires a trimmed, non-empty name of at most 100 characters", () => {
    expect(decodeError(Role.CreateRole, { name: "Analysts" })).toBeUndefined()
    expect(decodeError(Role.CreateRole, { name: "a".repeat(100) })).toBeUndefined()
    for (const name of ["", " Analysts", "Analysts ", "a".repeat(101), 42]) {
      expect(decodeError(Role.CreateRole, { name })).toBeDefined()
    }
    expect(decodeError(Role.CreateRole, {})).toBeDefined()
  })

  it("accepts only known permission strings", () => {
    expect(decodeError(Role.CreateRole, { name: "r", permissions: ["chat:read", "role:write"] })).toBeUndefined()
    for (const permission of ["chat:delete", "billing:read", "chat", ""]) {
      expect(decodeError(Role.CreateRole, { name: "r", permissions: [permission] })).toBeDefined()
    }
  })

  it("makes a custom role: no permissions by default, empty description, every model allowed", () => {
    const role = custom()
    expect(role).toMatchObject({ name: "Analysts", description: "", is_system: false, permissions: [] })
    expect(role.allow_model_choice).toBe(true)
    expect("default_model_id" in role || "allowed_model_ids" in role).toBe(false)
  })

  it("stores permissions once each, in the canonical order", () => {
    const role = custom({ permissions: ["playbook:write", "chat:read", "playbook:write", "organization:read"] })
    expect(role.permissions).toEqual(["organization:read", "chat:read", "playbook:write"])
  })
})

describe("Role.UpdateRole", () => {
  it("rejects allowed_model_ids together with clear_allowed_model_ids", () => {
    expect(decodeError(Role.UpdateRole, { allowed_model_ids: [1], clear_allowed_model_ids: true }))
      .toContain("allowed_model_ids and clear_allowed_model_ids cannot be sent together")
    expect(decodeError(Role.UpdateRole, { allowed_model_ids: [1], clear_allowed_model_ids: false })).toBeUndefined()
    expect(decodeError(Role.UpdateRole, { clear_allowed_model_ids: true })).toBeUndefined()
  })

  it("takes 0 or a positive integer as default_model_id and a non-empty list of model ids", () => {
    for (const value of [0, 3]) expect(decodeError(Role.UpdateRole, { default_model_id: value })).toBeUndefined()
    for (const value of [-1, 1.5, "3"]) expect(decodeError(Role.UpdateRole, { default_model_id: value })).toBeDefined()
    for (const value of [[], [0], [-2], [1.5]]) {
      expect(decodeError(Role.UpdateRole, { allowed_model_ids: value })).toBeDefined()
    }
  })
})

describe("Role.checkUpdate", () => {
  it("keeps the name and the permissions of system roles", () => {
    expect(denial(Role.checkUpdate(admin, { name: "superuser" })))
      .toEqual(["invalid_request", "the system role admin cannot be renamed"])
    expect(denial(Role.checkUpdate(member, { permissions: ["chat:read"] })))
      .toEqual(["invalid_request", "the permissions of the system role member cannot be changed"])
  })

  it("lets system roles be re-sent unchanged and their description and model configuration edited", () => {
    const reordered = [...admin.permissions].reverse()
    expect(Role.checkUpdate(admin, { name: "admin", permissions: reordered })).toEqual(Decision.allow)
    expect(Role.checkUpdate(member, {
      description: "Everyone",
      default_model_id: 2,
      allowed_model_ids: models(2, 3),
      allow_model_choice: false
    })).toEqual(Decision.allow)
  })

  it("lets custom roles be renamed and their permissions changed", () => {
    expect(Role.checkUpdate(custom(), { name: "Scientists", permissions: ["chat:write"] })).toEqual(Decision.allow)
  })

  it("requires the default model to be one of the allowed models, after the update", () => {
    const denied = ["invalid_request", "default_model_id must be one of allowed_model_ids"]
    expect(denial(Role.checkUpdate(custom(), { default_model_id: 4, allowed_model_ids: models(1, 2) }))).toEqual(denied)
    expect(denial(Role.checkUpdate(withModels(1, [1, 2]), { allowed_model_ids: models(2) }))).toEqual(denied)
    expect(denial(Role.checkUpdate(withModels(undefined, [1, 2]), { default_model_id: 3 }))).toEqual(denied)
    expect(Role.checkUpdate(withModels(undefined, [1, 2]), { default_model_id: 2 })).toEqual(Decision.allow)
    expect(Role.checkUpdate(withModels(1, [1, 2]), { default_model_id: 0, allowed_model_ids: models(2) }))
      .toEqual(Decision.allow)
    expect(Role.checkUpdate(withModels(1, [1]), { default_model_id: 5, clear_allowed_model_ids: true }))
      .toEqual(Decision.allow)
  })

  it.effect("becomes an InvalidRequest when enforced", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Decision.enforce(Role.checkUpdate(admin, { name: "root" })))
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message).toBe("the system role admin cannot be renamed")
    }))
})

describe("Role.applyUpdate", () => {
  it("replaces what is sent, keeps what is omitted and stamps updated_at", () => {
    const role = withModels(1, [1, 2])
    const updated = Role.applyUpdate(role, { description: "Data people", allow_model_choice: false }, later)
    expect(updated).toEqual(
      new Role.RoleRecord({ ...role, description: "Data people", allow_model_choice: false, updated_at: later })
    )
  })

  it("clears the default model with 0 and the allow-list with clear_allowed_model_ids", () => {
    const updated = Role.applyUpdate(
      withModels(1, [1, 2]),
      { default_model_id: 0, clear_allowed_model_ids: true },
      later
    )
    expect("default_model_id" in updated).toBe(false)
    expect("allowed_model_ids" in updated).toBe(false)
  })

  it("stores allowed models once each, in ascending order, and normalizes permissions", () => {
    const updated = Role.applyUpdate(custom(), {
      allowed_model_ids: models(9, 3, 9),
      default_model_id: 9,
      permissions: ["agent:write", "member:read", "agent:write"]
    }, later)
    expect(updated.allowed_model_ids).toEqual(models(3, 9))
    expect(updated.default_model_id).toBe(9)
    expect(updated.permissions).toEqual(["member:read", "agent:write"])
    expect(updated.created_at).toEqual(created)
  })

  it.prop("is idempotent: applying the same update twice changes nothing more", [Role.UpdateRole], ([update]) => {
    const once = Role.applyUpdate(withModels(1, [1, 2]), update, later)
    expect(Role.applyUpdate(once, update, later)).toEqual(once)
  })
})

describe("Role.checkDelete", () => {
  it("refuses system roles and allows custom ones", () => {
    expect(denial(Role.checkDelete(admin))).toEqual(["invalid_request", "the system role admin cannot be deleted"])
    expect(denial(Role.checkDelete(member))).toEqual(["invalid_request", "the system role member cannot be deleted"])
    expect(Role.checkDelete(custom())).toEqual(Decision.allow)
  })
})

describe("Role wire shape", () => {
  it("serves a stored role without its organization, with permissions and model configuration", () => {
    const encoded = Schema.encodeSync(Role.Role)(withModels(2, [2, 5]))
    expect(encoded).toEqual({
      id: id(20),
      name: "Analysts",
      description: "",
      is_system: false,
      is_scim_managed: false,
      permissions: [],
      default_model_id: 2,
      allowed_model_ids: [2, 5],
      allow_model_choice: true,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z"
    })
  })

  it("decodes AssignRole's camelCase roleId as a UUID", () => {
    expect(decodeError(Role.AssignRole, { roleId: id(3) })).toBeUndefined()
    expect(decodeError(Role.AssignRole, { role_id: id(3) })).toBeDefined()
    expect(decodeError(Role.AssignRole, { roleId: "admin" })).toBeDefined()
  })
})
