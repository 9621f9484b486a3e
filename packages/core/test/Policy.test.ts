import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Decision from "../src/Decision.js"
import { NotFound, PermissionDenied } from "../src/Errors.js"
import { ApiKeyId, ChatId, ConnectorId, MemberId, ModelNumber, OrganizationId, RoleId } from "../src/Ids.js"
import * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"

// --- builders --------------------------------------------------------------------------------------

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`

const org = OrganizationId.make(uuid(1))
const otherOrg = OrganizationId.make(uuid(2))
const alice = MemberId.make(uuid(10))
const bob = MemberId.make(uuid(11))
const robot = MemberId.make(uuid(12))
const keyId = ApiKeyId.make(uuid(20))
const siblingKeyId = ApiKeyId.make(uuid(21))
const now = DateTime.unsafeMake("2025-06-01T12:00:00Z")

const anyModel: Policy.ModelConfig = { allowModelChoice: true }

const role = (
  n: number,
  name: string,
  permissions: ReadonlyArray<Permission.Permission>,
  model: Policy.ModelConfig = anyModel
): Policy.RoleInfo => ({ id: RoleId.make(uuid(100 + n)), name, permissions, isSystem: false, model })

// System roles are stored with no permissions on purpose: the engine must take them from code.
const admin: Policy.RoleInfo = {
  id: RoleId.make(uuid(100)),
  name: "admin",
  permissions: [],
  isSystem: true,
  model: anyModel
}
const member: Policy.RoleInfo = {
  id: RoleId.make(uuid(99)),
  name: "member",
  permissions: [],
  isSystem: true,
  model: anyModel
}
const analyst = role(1, "analyst", ["playbook:read", "chat:read", "chat:write", "connector:read"])
const writer = role(2, "writer", ["playbook:read", "playbook:write"])
const keyAdmin = role(3, "key-admin", ["organization:read", "organization:write"])
const auditor = role(4, "auditor", ["organization:read"])
const roleAdmin = role(5, "role-admin", ["role:read", "role:write", "playbook:read"])

const session = (
  roles: ReadonlyArray<Policy.RoleInfo>,
  overrides: Partial<Policy.Principal> = {}
): Policy.Principal => ({
  organizationId: org,
  memberId: alice,
  isServiceAccount: false,
  roles,
  auth: Policy.Session(),
  ...overrides
})

const keyAuth = (assumed: ReadonlyArray<Policy.RoleInfo>, options: Partial<Omit<Policy.ApiKey, "_tag">> = {}) =>
  Policy.ApiKey({
    keyId,
    assumedRoleIds: assumed.map((r) => r.id),
    inheritAllRoles: false,
    fullMemberAccess: false,
    ...options
  })

const withKey = (
  live: ReadonlyArray<Policy.RoleInfo>,
  assumed: ReadonlyArray<Policy.RoleInfo>,
  options: Partial<Omit<Policy.ApiKey, "_tag">> = {}
): Policy.Principal => session(live, { auth: keyAuth(assumed, options) })

const ids = (roles: ReadonlyArray<Policy.RoleInfo>) => roles.map((r) => r.id)
const names = (roles: ReadonlyArray<Policy.RoleInfo>) => roles.map((r) => r.name)

const expectDeny = (decision: Decision.Decision, code: Decision.DenyCode, reason?: string | RegExp) => {
  expect(decision._tag).toBe("Deny")
  if (decision._tag !== "Deny") return
  expect(decision.code).toBe(code)
  if (typeof reason === "string") expect(decision.reason).toBe(reason)
  else if (reason !== undefined) expect(decision.reason).toMatch(reason)
}

const expectMinted = (decision: Policy.MintDecision): Policy.Minted => {
  if (decision._tag === "Deny") throw new Error(`expected an allow, got ${decision.code}: ${decision.reason}`)
  return decision
}

// --- permissions -----------------------------------------------------------------------------------

describe("Policy permissions", () => {
  it("admin grants every permission whatever its stored list says", () => {
    expect(Policy.effectivePermissions(session([admin]))).toEqual(Permission.all)
    expect(Policy.hasPermission(session([admin]), "organization:write")).toBe(true)
  })

  it("member grants the member defaults and no administration", () => {
    const p = session([member])
    expect(Policy.hasPermission(p, "playbook:write")).toBe(true)
    expect(Policy.hasPermission(p, "organization:write")).toBe(false)
    expect(Policy.hasPermission(p, "role:write")).toBe(false)
  })

  it("a custom role grants its own permissions and several roles add up", () => {
    expect(Policy.effectivePermissions(session([analyst, writer]))).toEqual([
      "chat:read",
      "chat:write",
      "connector:read",
      "playbook:read",
      "playbook:write"
    ])
  })

  it("requirePermission denies with the permission named", () => {
    expect(Policy.requirePermission(session([writer]), "playbook:write")).toEqual(Decision.allow)
    expectDeny(
      Policy.requirePermission(session([analyst]), "playbook:write"),
      "permission_denied",
      "permission denied: playbook:write required"
    )
  })

  it("requireAdmin needs the admin role on this request, not just on the owner", () => {
    expect(Decision.isAllow(Policy.requireAdmin(session([admin])))).toBe(true)
    expectDeny(Policy.requireAdmin(session([member])), "permission_denied", "admin role required")
    expectDeny(Policy.requireAdmin(withKey([admin, member], [member])), "permission_denied", "admin role required")
    expect(Decision.isAllow(Policy.requireAdmin(withKey([admin, member], [admin])))).toBe(true)
  })

  it("a deleted member is unauthenticated and holds nothing", () => {
    const deleted = session([admin], { deleted: true })
    expect(Policy.effectiveRoles(deleted)).toEqual([])
    expectDeny(Policy.authenticated(deleted), "unauthenticated")
    expectDeny(Policy.requirePermission(deleted, "chat:read"), "unauthenticated")
    expectDeny(
      Policy.authenticated({ ...withKey([admin], [admin]), deleted: true }),
      "unauthenticated",
      "invalid API key: API key not found"
    )
  })

  it("assigning or removing a role needs role:write", () => {
    expectDeny(
      Policy.canAssignRole(session([member]), analyst),
      "permission_denied",
      "permission denied: role:write required"
    )
    expect(Decision.isAllow(Policy.canAssignRole(session([roleAdmin, analyst]), analyst))).toBe(true)
  })

  it("assigning a role that grants more than the caller holds needs the admin role", () => {
    expectDeny(Policy.canAssignRole(session([roleAdmin]), admin), "permission_denied", "admin role required")
    expectDeny(Policy.canAssignRole(session([roleAdmin]), keyAdmin), "permission_denied", "admin role required")
    expect(Decision.isAllow(Policy.canAssignRole(session([admin]), admin))).toBe(true)
  })

  it("creating a role is limited to permissions the caller holds", () => {
    expect(Decision.isAllow(Policy.canCreateRole(session([roleAdmin]), ["playbook:read"]))).toBe(true)
    expectDeny(
      Policy.canCreateRole(session([roleAdmin]), ["playbook:write"]),
      "permission_denied",
      "admin role required"
    )
    expectDeny(
      Policy.canCreateRole(session([analyst]), []),
      "permission_denied",
      "permission denied: role:write required"
    )
  })

  it("editing a system role, or a role beyond the caller's permissions, needs the admin role", () => {
    expectDeny(Policy.canEditRole(session([roleAdmin, member]), member), "permission_denied", "admin role required")
    expect(Decision.isAllow(Policy.canEditRole(session([admin]), member))).toBe(true)
    expect(Decision.isAllow(Policy.canEditRole(session([roleAdmin]), role(9, "reader", ["playbook:read"])))).toBe(true)
    expectDeny(
      Policy.canEditRole(session([roleAdmin]), role(9, "reader", ["playbook:read"]), ["organization:write"]),
      "permission_denied",
      "admin role required"
    )
    expectDeny(Policy.canEditRole(session([roleAdmin]), keyAdmin), "permission_denied", "admin role required")
  })
})

// --- the key model ---------------------------------------------------------------------------------

describe("Policy key model", () => {
  it("a session acts with the live roles", () => {
    expect(names(Policy.effectiveRoles(session([analyst, writer])))).toEqual(["analyst", "writer"])
  })

  it("a key acts with its snapshot intersected with the live roles", () => {
    expect(names(Policy.effectiveRoles(withKey([analyst, writer, auditor], [analyst, auditor])))).toEqual([
      "analyst",
      "auditor"
    ])
  })

  it("a role removed from the owner is gone from the key at once", () => {
    const key = withKey([analyst], [analyst, writer])
    expect(names(Policy.effectiveRoles(key))).toEqual(["analyst"])
    expect(Policy.hasPermission(key, "playbook:write")).toBe(false)
  })

  it("a role granted to the owner later adds nothing to a key", () => {
    const before = withKey([analyst], [analyst])
    const after = { ...before, roles: [analyst, writer] }
    expect(Policy.effectivePermissions(after)).toEqual(Policy.effectivePermissions(before))
  })

  it("a legacy All roles key follows the live roles, additions included", () => {
    const legacy = withKey([analyst, writer], [], { inheritAllRoles: true })
    expect(names(Policy.effectiveRoles(legacy))).toEqual(["analyst", "writer"])
    expect(names(Policy.effectiveRoles({ ...legacy, roles: [writer] }))).toEqual(["writer"])
  })

  it("a session keeps direct grants; a key only with fullMemberAccess", () => {
    expect(Policy.keepsMemberGrants(session([]))).toBe(true)
    expect(Policy.keepsMemberGrants(withKey([], []))).toBe(false)
    expect(Policy.keepsMemberGrants(withKey([], [], { fullMemberAccess: true }))).toBe(true)
  })
})

// --- minting ---------------------------------------------------------------------------------------

describe("Policy.canMint", () => {
  const personal = (assumed: ReadonlyArray<Policy.RoleInfo>, options: Partial<Policy.MintRequest> = {}) => ({
    assumedRoleIds: ids(assumed),
    inheritAllRoles: false,
    fullMemberAccess: false,
    ...options
  })
  const serviceAccount = (liveRoles: ReadonlyArray<Policy.RoleInfo>, overrides: Partial<Policy.TargetMember> = {}) => ({
    id: robot,
    organizationId: org,
    isServiceAccount: true,
    liveRoleIds: ids(liveRoles),
    ...overrides
  })

  it("a personal key assumes roles the caller holds and is owned by the caller", () => {
    const minted = expectMinted(Policy.canMint(session([analyst, writer]), personal([writer])))
    expect(minted.ownerId).toBe(alice)
    expect(minted.assumedRoleIds).toEqual([writer.id])
    expect(minted.fullMemberAccess).toBe(false)
  })

  it("a duplicated role is stored once", () => {
    expect(expectMinted(Policy.canMint(session([writer]), personal([writer, writer]))).assumedRoleIds).toEqual([
      writer.id
    ])
  })

  it("a role the caller does not hold is denied", () => {
    expectDeny(
      Policy.canMint(session([analyst]), personal([writer])),
      "permission_denied",
      `permission denied: role ${writer.id} is not held by the caller`
    )
  })

  it("an API-key caller assumes only roles of its own key, even ones its owner holds", () => {
    expectDeny(
      Policy.canMint(withKey([analyst, writer], [analyst]), personal([writer])),
      "permission_denied",
      `permission denied: role ${writer.id} is not held by the calling key`
    )
    expect(Decision.isAllow(Policy.canMint(withKey([analyst, writer], [analyst]), personal([analyst])))).toBe(true)
  })

  it("an API-key caller cannot assume a snapshot role its owner has since lost", () => {
    expectDeny(Policy.canMint(withKey([analyst], [analyst, writer]), personal([writer])), "permission_denied")
  })

  it("inheritAllRoles snapshots the caller's live roles for a session", () => {
    const minted = expectMinted(Policy.canMint(session([analyst, writer]), personal([], { inheritAllRoles: true })))
    expect(minted.assumedRoleIds).toEqual(ids([analyst, writer]))
  })

  it("inheritAllRoles from an API key snapshots the key's effective roles, not the owner's", () => {
    const minted = expectMinted(
      Policy.canMint(withKey([analyst, writer, auditor], [writer, admin]), personal([], { inheritAllRoles: true }))
    )
    expect(minted.assumedRoleIds).toEqual([writer.id])
  })

  it("empty assumedRoles without inheritAllRoles is an invalid request", () => {
    expectDeny(
      Policy.canMint(session([analyst]), personal([])),
      "invalid_request",
      "inheritAllRoles is required when assumedRoles is empty"
    )
  })

  it("assumedRoles together with inheritAllRoles is an invalid request", () => {
    expectDeny(Policy.canMint(session([analyst]), personal([analyst], { inheritAllRoles: true })), "invalid_request")
  })

  it("inheriting from a caller with no roles is denied rather than minting a key that can do nothing", () => {
    expectDeny(
      Policy.canMint(session([]), personal([], { inheritAllRoles: true })),
      "permission_denied",
      "permission denied: no roles to assume"
    )
  })

  it("a key for a service account needs organization:write", () => {
    expectDeny(
      Policy.canMint(session([analyst]), personal([analyst], { targetMember: serviceAccount([analyst]) })),
      "permission_denied",
      "permission denied: organization:write required to mint a key for another member"
    )
  })

  it("a key for a service account is owned by the service account", () => {
    const minted = expectMinted(
      Policy.canMint(session([keyAdmin, analyst]), personal([analyst], { targetMember: serviceAccount([analyst]) }))
    )
    expect(minted.ownerId).toBe(robot)
    expect(minted.assumedRoleIds).toEqual([analyst.id])
  })

  it("a human target is an invalid request", () => {
    expectDeny(
      Policy.canMint(
        session([admin]),
        personal([analyst], { targetMember: serviceAccount([analyst], { id: bob, isServiceAccount: false }) })
      ),
      "invalid_request",
      "targetMemberId must be a service account"
    )
  })

  it("a target of another organization, or a deleted one, is not found", () => {
    const request = (target: Policy.TargetMember) => personal([analyst], { targetMember: target })
    expectDeny(
      Policy.canMint(session([admin]), request(serviceAccount([analyst], { organizationId: otherOrg }))),
      "not_found"
    )
    expectDeny(Policy.canMint(session([admin]), request(serviceAccount([analyst], { deleted: true }))), "not_found")
  })

  it("a service-account key assumes only roles the target holds, even for an admin", () => {
    expectDeny(
      Policy.canMint(session([admin, writer]), personal([writer], { targetMember: serviceAccount([analyst]) })),
      "permission_denied",
      `permission denied: role ${writer.id} is not held by the target member`
    )
  })

  it("a non-admin caller hands a service account only roles it holds itself", () => {
    expectDeny(
      Policy.canMint(session([keyAdmin]), personal([analyst], { targetMember: serviceAccount([analyst]) })),
      "permission_denied",
      `permission denied: role ${analyst.id} is not held by the caller`
    )
  })

  it("an admin hands a service account any role the target holds", () => {
    const minted = expectMinted(
      Policy.canMint(
        session([admin]),
        personal([], { inheritAllRoles: true, targetMember: serviceAccount([analyst, writer]) })
      )
    )
    expect(minted.assumedRoleIds).toEqual(ids([analyst, writer]))
  })

  it("inheritAllRoles for a service account by a non-admin narrows to the roles both hold", () => {
    const minted = expectMinted(
      Policy.canMint(
        session([keyAdmin, writer]),
        personal([], { inheritAllRoles: true, targetMember: serviceAccount([analyst, writer]) })
      )
    )
    expect(minted.assumedRoleIds).toEqual([writer.id])
  })

  it("naming oneself as the target mints a personal key without organization:write", () => {
    const minted = expectMinted(
      Policy.canMint(
        session([analyst], { memberId: robot, isServiceAccount: true }),
        personal([analyst], { targetMember: serviceAccount([analyst]) })
      )
    )
    expect(minted.ownerId).toBe(robot)
  })

  it("fullMemberAccess from a session is allowed", () => {
    expect(
      expectMinted(Policy.canMint(session([analyst]), personal([analyst], { fullMemberAccess: true }))).fullMemberAccess
    )
      .toBe(true)
  })

  it("fullMemberAccess from an API key needs a calling key that has it", () => {
    expectDeny(
      Policy.canMint(withKey([analyst], [analyst]), personal([analyst], { fullMemberAccess: true })),
      "permission_denied",
      "permission denied: fullMemberAccess requires a calling key with full member access"
    )
    expect(
      Decision.isAllow(
        Policy.canMint(
          withKey([analyst], [analyst], { fullMemberAccess: true }),
          personal([analyst], { fullMemberAccess: true })
        )
      )
    ).toBe(true)
  })

  it("a deleted caller is unauthenticated", () => {
    expectDeny(Policy.canMint(session([admin], { deleted: true }), personal([admin])), "unauthenticated")
  })
})

// --- the capability table --------------------------------------------------------------------------

describe("Policy key capabilities", () => {
  const key = (overrides: Partial<Policy.KeyInfo> = {}): Policy.KeyInfo => ({
    id: siblingKeyId,
    organizationId: org,
    ownerId: alice,
    assumedRoleIds: [analyst.id],
    inheritAllRoles: false,
    fullMemberAccess: false,
    ...overrides
  })

  it("listing one's own keys needs nothing; listing anyone's needs organization:read", () => {
    expect(Decision.isAllow(Policy.canListKeys(session([]), "personal"))).toBe(true)
    expect(Decision.isAllow(Policy.canListKeys(session([auditor]), "all"))).toBe(true)
    expectDeny(Policy.canListKeys(session([writer]), "all"), "permission_denied")
    expectDeny(
      Policy.canListKeys(session([analyst]), "service_accounts"),
      "permission_denied",
      "permission denied: organization:read required"
    )
  })

  it("organization:write revokes anyone's key and rotates another member's key no wider than the caller", () => {
    const narrow = key({ ownerId: bob, assumedRoleIds: [keyAdmin.id] })
    expect(Decision.isAllow(Policy.canManageKey(session([keyAdmin]), narrow, "rotate"))).toBe(true)
    expect(Decision.isAllow(Policy.canManageKey(session([keyAdmin]), key({ ownerId: bob }), "revoke"))).toBe(true)
    expectDeny(Policy.canManageKey(session([keyAdmin]), key({ ownerId: bob }), "rotate"), "permission_denied")
  })

  it("below admin, organization:write rotates another member's key only when it is no wider", () => {
    const adminKey = key({ ownerId: bob, assumedRoleIds: [admin.id] })
    expect(Decision.isAllow(Policy.canManageKey(session([keyAdmin]), adminKey, "revoke"))).toBe(true)
    expectDeny(Policy.canManageKey(session([keyAdmin]), adminKey, "rotate"), "permission_denied", "admin role required")
    expectDeny(
      Policy.canManageKey(
        session([keyAdmin]),
        key({ ownerId: bob, assumedRoleIds: [], inheritAllRoles: true }),
        "rotate"
      ),
      "permission_denied"
    )
    expect(Decision.isAllow(Policy.canManageKey(session([admin]), adminKey, "rotate"))).toBe(true)
  })

  it("another member's key is permission_denied to a caller that can list it, not_found otherwise", () => {
    expectDeny(Policy.canManageKey(session([auditor]), key({ ownerId: bob }), "revoke"), "permission_denied")
    expectDeny(Policy.canManageKey(session([analyst]), key({ ownerId: bob }), "revoke"), "not_found")
  })

  it("a key of another organization is not found, even to an admin", () => {
    expectDeny(Policy.canManageKey(session([admin]), key({ organizationId: otherOrg }), "revoke"), "not_found")
  })

  it("a session revokes and rotates its member's own keys", () => {
    expect(Decision.isAllow(Policy.canManageKey(session([]), key({ assumedRoleIds: [admin.id] }), "rotate"))).toBe(true)
  })

  it("a key may revoke or rotate itself", () => {
    const caller = withKey([analyst], [analyst])
    expect(Decision.isAllow(Policy.canManageKey(caller, key({ id: keyId }), "revoke"))).toBe(true)
    expect(Decision.isAllow(Policy.canManageKey(caller, key({ id: keyId }), "rotate"))).toBe(true)
  })

  it("a key may revoke any sibling key but rotate only one no wider than itself", () => {
    const caller = withKey([analyst, writer], [analyst])
    const wider = key({ assumedRoleIds: [analyst.id, writer.id] })
    expect(Decision.isAllow(Policy.canManageKey(caller, wider, "revoke"))).toBe(true)
    expectDeny(
      Policy.canManageKey(caller, wider, "rotate"),
      "permission_denied",
      "permission denied: cannot rotate a key wider than the calling key"
    )
    expect(Decision.isAllow(Policy.canManageKey(caller, key(), "rotate"))).toBe(true)
    expectDeny(Policy.canManageKey(caller, key({ fullMemberAccess: true }), "rotate"), "permission_denied")
    expectDeny(
      Policy.canManageKey(caller, key({ assumedRoleIds: [], inheritAllRoles: true }), "rotate"),
      "permission_denied"
    )
  })
})

// --- object access ---------------------------------------------------------------------------------

describe("Policy object access", () => {
  const object = (overrides: Partial<Policy.ObjectAccess> = {}): Policy.ObjectAccess => ({
    organizationId: org,
    ownerId: bob,
    isPublic: false,
    grants: [],
    ...overrides
  })
  const access = (principal: Policy.Principal, o: Policy.ObjectAccess) =>
    Option.getOrUndefined(Policy.objectAccess(principal, o, now))

  it("the owner has owner access", () => {
    expect(access(session([]), object({ ownerId: alice }))).toBe("owner")
  })

  it("an object of another organization gives nothing, even to its owner id", () => {
    expect(access(session([admin]), object({ ownerId: alice, organizationId: otherOrg }))).toBeUndefined()
    expectDeny(
      Policy.canRead(session([admin]), "playbook", object({ ownerId: alice, organizationId: otherOrg }), now),
      "not_found"
    )
  })

  it("org-wide visibility gives viewer access unless it says otherwise", () => {
    expect(access(session([]), object({ isPublic: true }))).toBe("viewer")
    expect(access(session([]), object({ isPublic: true, publicAccessType: "editor" }))).toBe("editor")
  })

  it("a direct member grant counts for a session", () => {
    expect(access(session([]), object({ grants: [{ memberId: alice, accessType: "editor" }] }))).toBe("editor")
    expect(access(session([]), object({ grants: [{ memberId: bob, accessType: "editor" }] }))).toBeUndefined()
  })

  it("a direct member grant is invisible to a key without fullMemberAccess and kept with it", () => {
    const shared = object({ grants: [{ memberId: alice, accessType: "editor" }] })
    expect(access(withKey([analyst], [analyst]), shared)).toBeUndefined()
    expectDeny(Policy.canRead(withKey([analyst], [analyst]), "playbook", shared, now), "not_found")
    expect(access(withKey([analyst], [analyst], { fullMemberAccess: true }), shared)).toBe("editor")
  })

  it("a key keeps its owner's ownership without fullMemberAccess", () => {
    expect(access(withKey([analyst], [analyst]), object({ ownerId: alice }))).toBe("owner")
  })

  it("a role grant counts through the effective roles only", () => {
    const shared = object({ grants: [{ roleId: writer.id, accessType: "viewer" }] })
    expect(access(session([writer]), shared)).toBe("viewer")
    expect(access(withKey([writer, analyst], [analyst]), shared)).toBeUndefined()
    expect(access(withKey([writer], [writer]), shared)).toBe("viewer")
    expect(access(withKey([], [writer]), shared)).toBeUndefined()
  })

  it("an expired grant gives nothing, from its expiry instant on", () => {
    const grant = (expiresAt: DateTime.Utc) =>
      object({ grants: [{ memberId: alice, accessType: "viewer", expiresAt }] })
    expect(access(session([]), grant(now))).toBeUndefined()
    expect(access(session([]), grant(DateTime.add(now, { seconds: 1 })))).toBe("viewer")
  })

  it("the strongest source wins", () => {
    const o = object({
      isPublic: true,
      grants: [{ memberId: alice, accessType: "viewer" }, { roleId: writer.id, accessType: "editor" }]
    })
    expect(access(session([writer]), o)).toBe("editor")
  })

  it("an admin key with the wrong owner is denied an object shared directly with another member", () => {
    const shared = object({ ownerId: bob, grants: [{ memberId: bob, accessType: "owner" }] })
    const adminKey = withKey([admin], [admin], { fullMemberAccess: true })
    expect(access(adminKey, shared)).toBeUndefined()
    expectDeny(Policy.canRead(adminKey, "playbook", shared, now), "not_found")
  })

  it("reading needs the resource permission as well as access", () => {
    const readable = object({ isPublic: true })
    expect(Decision.isAllow(Policy.canRead(session([analyst]), "playbook", readable, now))).toBe(true)
    expectDeny(
      Policy.canRead(session([auditor]), "playbook", readable, now),
      "permission_denied",
      "permission denied: playbook:read required"
    )
  })

  it("direct grants kept by fullMemberAccess are still capped by the assumed roles", () => {
    const shared = object({ grants: [{ memberId: alice, accessType: "editor" }] })
    const key = withKey([analyst, writer], [analyst], { fullMemberAccess: true })
    expect(Decision.isAllow(Policy.canRead(key, "playbook", shared, now))).toBe(true)
    expectDeny(
      Policy.canWrite(key, "playbook", shared, now),
      "permission_denied",
      "permission denied: playbook:write required"
    )
  })

  it("writing needs editor access, owning needs owner access", () => {
    const viewer = object({ grants: [{ memberId: alice, accessType: "viewer" }] })
    const editor = object({ grants: [{ memberId: alice, accessType: "editor" }] })
    const p = session([writer])
    expectDeny(
      Policy.canWrite(p, "playbook", viewer, now),
      "permission_denied",
      "permission denied: editor access required"
    )
    expect(Decision.isAllow(Policy.canWrite(p, "playbook", editor, now))).toBe(true)
    expectDeny(
      Policy.canOwn(p, "playbook", editor, now),
      "permission_denied",
      "permission denied: owner access required"
    )
    expect(Decision.isAllow(Policy.canOwn(p, "playbook", object({ ownerId: alice }), now))).toBe(true)
  })

  it("an invisible object is not found even to a caller without the resource permission", () => {
    expectDeny(Policy.canRead(session([]), "playbook", object(), now), "not_found")
  })

  it("a deleted member reaches nothing", () => {
    const deleted = session([admin], { deleted: true })
    expect(access(deleted, object({ ownerId: alice }))).toBeUndefined()
    expectDeny(Policy.canRead(deleted, "playbook", object({ ownerId: alice }), now), "unauthenticated")
  })

  it.effect("enforcing a hidden object fails with the seed's not found text", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Decision.enforce(Policy.canRead(session([analyst]), "playbook", object(), now)))
      expect(error).toBeInstanceOf(NotFound)
      expect(error.message).toBe("Resource not found")
      const denied = yield* Effect.flip(
        Decision.enforce(Policy.canRead(session([auditor]), "playbook", object({ isPublic: true }), now))
      )
      expect(denied).toBeInstanceOf(PermissionDenied)
      expect(denied.message).toBe("permission denied: playbook:read required")
    }))
})

// --- agents ----------------------------------------------------------------------------------------

describe("Policy agents", () => {
  const c1 = ConnectorId.make(1)
  const c2 = ConnectorId.make(2)
  const connector = (id: ConnectorId, overrides: Partial<Policy.ConnectorAccess> = {}): Policy.ConnectorAccess => ({
    id,
    organizationId: org,
    isPublic: false,
    grants: [],
    ...overrides
  })
  const agent: Policy.AgentAccess = { organizationId: org, connectorIds: [c1, c2] }
  const reachable = [
    connector(c1, { isPublic: true }),
    connector(c2, { grants: [{ roleId: analyst.id, accessType: "viewer" }] })
  ]

  it("an agent is visible when the caller reaches every connector it uses", () => {
    expect(Decision.isAllow(Policy.agentVisible(session([analyst]), agent, reachable, now))).toBe(true)
  })

  it("an agent is hidden when one connector is out of reach", () => {
    expectDeny(Policy.agentVisible(session([writer]), agent, reachable, now), "not_found")
  })

  it("a connector missing from the lookup counts as out of reach", () => {
    expectDeny(Policy.agentVisible(session([analyst]), agent, [reachable[0]!], now), "not_found")
  })

  it("an agent of another organization is not found", () => {
    expectDeny(
      Policy.agentVisible(session([admin]), { ...agent, organizationId: otherOrg }, reachable, now),
      "not_found"
    )
  })

  it("an agent with no connectors is visible to every member", () => {
    expect(Decision.isAllow(Policy.agentVisible(session([]), { organizationId: org, connectorIds: [] }, [], now))).toBe(
      true
    )
  })

  it("reading or changing a visible agent needs agent:read or agent:write", () => {
    const p = session([analyst])
    expectDeny(
      Policy.canAccessAgent(p, "read", agent, reachable, now),
      "permission_denied",
      "permission denied: agent:read required"
    )
    expect(Decision.isAllow(Policy.canAccessAgent(session([analyst, member]), "write", agent, reachable, now))).toBe(
      true
    )
    // Visibility is checked first, so a caller lacking agent:read learns nothing about a hidden agent.
    expectDeny(Policy.canAccessAgent(session([writer]), "read", agent, reachable, now), "not_found")
  })
})

// --- models ----------------------------------------------------------------------------------------

describe("Policy models", () => {
  const m = (n: number, id: string): Policy.CatalogueModel => ({ number: ModelNumber.make(n), id, provider: "test" })
  const small = m(1, "small")
  const medium = m(2, "medium")
  const large = m(3, "large")
  const catalogue: Policy.Catalogue = { models: [small, medium, large], defaultModel: ModelNumber.make(2) }
  const restricted = (n: number, allowed: ReadonlyArray<number>, extra: Partial<Policy.ModelConfig> = {}) =>
    role(n, `restricted-${n}`, ["chat:write"], {
      allowModelChoice: false,
      allowedModelIds: allowed.map((n) => ModelNumber.make(n)),
      ...extra
    })

  it("a role without an allow-list allows the whole catalogue", () => {
    expect(Policy.allowedModels(session([analyst]), catalogue)).toEqual([small, medium, large])
  })

  it("allow-lists of several roles combine as a union, in catalogue order", () => {
    expect(Policy.allowedModels(session([restricted(20, [3]), restricted(21, [1])]), catalogue)).toEqual([small, large])
  })

  it("any role without an allow-list lifts the others' restrictions", () => {
    expect(Policy.allowedModels(session([restricted(20, [3]), analyst]), catalogue)).toHaveLength(3)
  })

  it("allow-list entries outside the catalogue are ignored, and no role means no model", () => {
    expect(Policy.allowedModels(session([restricted(20, [9])]), catalogue)).toEqual([])
    expect(Policy.allowedModels(session([]), catalogue)).toEqual([])
  })

  it("a key narrows models to its assumed roles", () => {
    expect(Policy.allowedModels(withKey([analyst, restricted(20, [3])], [restricted(20, [3])]), catalogue)).toEqual([
      large
    ])
  })

  it("the default is the first role default the caller may use, else the organization's, else the first allowed", () => {
    const withDefault = restricted(20, [1, 3], { defaultModelId: ModelNumber.make(3) })
    expect(Policy.defaultModel(session([withDefault]), catalogue)).toEqual(Option.some(large))
    const unusableDefault = restricted(21, [1, 2], { defaultModelId: ModelNumber.make(3) })
    expect(Policy.defaultModel(session([unusableDefault]), catalogue)).toEqual(Option.some(medium))
    expect(Policy.defaultModel(session([restricted(22, [1, 3])]), catalogue)).toEqual(Option.some(small))
    expect(Policy.defaultModel(session([]), catalogue)).toEqual(Option.none())
  })

  it("model with chat_id is an invalid request", () => {
    expectDeny(
      Policy.resolveChatModel(session([analyst]), { requested: "small", chatId: ChatId.make(uuid(30)) }, catalogue),
      "invalid_request"
    )
  })

  it("continuing a chat keeps its model", () => {
    expect(Policy.resolveChatModel(session([analyst]), { chatId: ChatId.make(uuid(30)) }, catalogue)).toEqual({
      _tag: "Allow",
      model: Option.none()
    })
  })

  it("a new chat without a model gets the default", () => {
    expect(Policy.resolveChatModel(session([analyst]), {}, catalogue)).toEqual({
      _tag: "Allow",
      model: Option.some(medium)
    })
    expectDeny(
      Policy.resolveChatModel(session([restricted(20, [9])]), {}, catalogue),
      "permission_denied",
      "permission denied: no model is permitted for your roles"
    )
  })

  it("a model outside the catalogue is denied", () => {
    expectDeny(
      Policy.resolveChatModel(session([analyst]), { requested: "huge" }, catalogue),
      "permission_denied",
      "permission denied: model huge is not available in this organization"
    )
  })

  it("a model outside the caller's allow-lists is denied", () => {
    expectDeny(
      Policy.resolveChatModel(
        session([restricted(20, [1, 2], { allowModelChoice: true })]),
        { requested: "large" },
        catalogue
      ),
      "permission_denied",
      "permission denied: model large is not permitted for your roles"
    )
  })

  it("picking a model needs a role that allows model choice, unless it is the default anyway", () => {
    const noChoice = session([restricted(20, [1, 2, 3])])
    expectDeny(
      Policy.resolveChatModel(noChoice, { requested: "large" }, catalogue),
      "permission_denied",
      "permission denied: model choice is not allowed for your roles"
    )
    expect(Policy.resolveChatModel(noChoice, { requested: "medium" }, catalogue)).toEqual({
      _tag: "Allow",
      model: Option.some(medium)
    })
    expect(Policy.resolveChatModel(session([analyst]), { requested: "large" }, catalogue)).toEqual({
      _tag: "Allow",
      model: Option.some(large)
    })
  })

  it("a deleted member is unauthenticated", () => {
    expectDeny(Policy.resolveChatModel(session([analyst], { deleted: true }), {}, catalogue), "unauthenticated")
  })
})

// --- end users' sessions -----------------------------------------------------------------------------

describe("Policy for an end user's session", () => {
  const scope = (externalUserId: string, models?: ReadonlyArray<string>, keyClientId = "") => ({
    externalUserId,
    keyClientId,
    origins: ["https://app.example.com"],
    ...(models === undefined ? {} : { models })
  })
  const endUser = (externalUserId: string, models?: ReadonlyArray<string>) =>
    withKey([admin], [admin], { clientId: "{\"region\":\"EU\"}", endUser: scope(externalUserId, models) })

  it("may only chat, whatever the key's roles, and is never an admin", () => {
    const principal = endUser("ana")
    expect(Policy.effectivePermissions(principal)).toEqual(["chat:read", "chat:write", "connector:read"])
    expect(Policy.hasPermission(principal, "chat:write")).toBe(true)
    for (const permission of ["member:read", "organization:write", "playbook:write", "sandbox:write"] as const) {
      expect(Policy.hasPermission(principal, permission)).toBe(false)
    }
    expect(Policy.isAdmin(principal)).toBe(false)
    expectDeny(Policy.requireAdmin(principal), "permission_denied")
    // The key it was minted with keeps its own.
    expect(Policy.isAdmin(withKey([admin], [admin], { clientId: "{\"region\":\"EU\"}" }))).toBe(true)
  })

  it("has an audience of its own: its external id's, not its attributes'", () => {
    const keyed = withKey([admin], [admin], { clientId: "{\"region\":\"EU\"}" })
    expect(Policy.audienceOf(endUser("ana"))).not.toBe(Policy.audienceOf(keyed))
    expect(Policy.audienceOf(endUser("ana"))).not.toBe(Policy.audienceOf(endUser("bo")))
    expect(Policy.audienceOf(endUser("ana"))).toBe(Policy.audienceOf(endUser("ana")))
    // Another host tenant's user of the same id, minted by a key with other attributes of its own.
    const otherTenant = withKey([admin], [admin], {
      clientId: "{\"region\":\"EU\"}",
      endUser: scope("ana", undefined, "{\"tenant\":\"b\"}")
    })
    expect(Policy.audienceOf(otherTenant)).not.toBe(Policy.audienceOf(endUser("ana")))
    // Its attributes are the key's client metadata for row-level security.
    expect(Policy.clientAttributesJson(endUser("ana"))).toBe("{\"region\":\"EU\"}")
    const chat = {
      organizationId: org,
      ownerId: alice,
      isPublic: false,
      grants: [],
      audience: Policy.audienceOf(endUser("ana"))
    }
    expect(Option.isSome(Policy.objectAccess(endUser("ana"), chat, now))).toBe(true)
    expect(Option.isNone(Policy.objectAccess(endUser("bo"), chat, now))).toBe(true)
    expect(Option.isNone(Policy.objectAccess(keyed, chat, now))).toBe(true)
  })

  it("uses only the models its session names", () => {
    const catalogue: Policy.Catalogue = {
      models: [
        { number: ModelNumber.make(1), id: "offline", provider: "offline" },
        { number: ModelNumber.make(2), id: "big", provider: "openai" }
      ]
    }
    expect(Policy.allowedModels(endUser("ana"), catalogue).map((m) => m.id)).toEqual(["offline", "big"])
    expect(Policy.allowedModels(endUser("ana", ["big"]), catalogue).map((m) => m.id)).toEqual(["big"])
    expect(Option.map(Policy.defaultModel(endUser("ana", ["big"]), catalogue), (m) => m.id)).toEqual(Option.some("big"))
  })
})
