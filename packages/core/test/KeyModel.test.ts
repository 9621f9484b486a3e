/**
 * The seed's key model end to end, through `Auth` and `ApiKeys` over the memory ports: a key has an
 * owner (ownership and direct shares) and assumed roles (permissions), the roles are a snapshot
 * intersected with the owner's live roles on every request, and no key is ever wider than its maker.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as ApiKey from "../src/ApiKey.js"
import { ApiKeyRepo } from "../src/ApiKeyRepo.js"
import * as ApiKeys from "../src/ApiKeys.js"
import * as AuditLog from "../src/AuditLog.js"
import { AuditLogRepo } from "../src/AuditLogRepo.js"
import * as Auth from "../src/Auth.js"
import * as Decision from "../src/Decision.js"
import { NotFound, PermissionDenied, Unauthenticated } from "../src/Errors.js"
import * as Group from "../src/Group.js"
import { GroupRepo } from "../src/GroupRepo.js"
import { ApiKeyId, GroupId, type MemberId, type OrganizationId } from "../src/Ids.js"
import { MemberRepo } from "../src/MemberRepo.js"
import type * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as Secret from "../src/Secret.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = ApiKeys.layer.pipe(Layer.provideMerge(Auth.layer), Layer.provideMerge(Memory.layer))

// --- the organization and its people -------------------------------------------------------------

const customRole = (organizationId: OrganizationId, name: string, permissions: ReadonlyArray<Permission.Permission>) =>
  Effect.zipRight(TestClock.adjust(Duration.seconds(1)), Fixtures.role(organizationId, name, { permissions }))

/** `admin`, `member`, `analyst` (reads) and `auditor` (`organization:read`, which lists every key). */
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const system = yield* Fixtures.systemRoles(org.id)
  return {
    org,
    admin: system.admin,
    member: system.member,
    analyst: yield* customRole(org.id, "analyst", ["chat:read", "playbook:read"]),
    auditor: yield* customRole(org.id, "auditor", ["organization:read"])
  }
})

const memberWith = (
  organizationId: OrganizationId,
  roles: ReadonlyArray<Role.RoleRecord>,
  options: { readonly isServiceAccount?: boolean } = {}
) => Fixtures.member(organizationId, { ...options, roleIds: roles.map((role) => role.id) })

const assign = (organizationId: OrganizationId, memberId: MemberId, role: Role.RoleRecord) =>
  Effect.flatMap(MemberRepo, (repo) => Effect.orDie(repo.assignRole(organizationId, memberId, role.id)))

const unassign = (organizationId: OrganizationId, memberId: MemberId, role: Role.RoleRecord) =>
  Effect.flatMap(MemberRepo, (repo) => repo.unassignRole(organizationId, memberId, role.id))

// --- requests ------------------------------------------------------------------------------------

const session = (organizationId: OrganizationId, memberId: MemberId) =>
  Effect.flatMap(Auth.Auth, (auth) => auth.sessionPrincipal(organizationId, memberId))

/** What the http middleware does on every request: authenticate the presented key afresh. */
const request = (secret: string) => Effect.flatMap(Auth.Auth, (auth) => auth.authenticateApiKey(secret))

const mint = (principal: Policy.Principal, body: ApiKey.CreateApiKey) =>
  Effect.flatMap(ApiKeys.ApiKeys, (keys) => keys.create(principal, body))

const listAll = (principal: Policy.Principal) =>
  Effect.flatMap(
    ApiKeys.ApiKeys,
    (keys) => keys.list(principal, Schema.decodeUnknownSync(ApiKey.ListApiKeys)({ scope: "all" }))
  )

/** Whether a request with this key may list every key of the organization (`organization:read`). */
const canListAll = (secret: string) =>
  Effect.flatMap(request(secret), (principal) =>
    Effect.match(listAll(principal), {
      onFailure: (error) => {
        expect(error).toBeInstanceOf(PermissionDenied)
        return false
      },
      onSuccess: () => true
    }))

const refusal = (secret: string) =>
  Effect.map(Effect.flip(request(secret)), (error) => {
    expect(error).toBeInstanceOf(Unauthenticated)
    return error.message
  })

const all: ApiKey.CreateApiKey = { inheritAllRoles: true }

// --- scenarios -----------------------------------------------------------------------------------

describe("the key model", () => {
  it.effect("a scoped key is refused what its roles lack, though its owner may do it", () =>
    Effect.gen(function*() {
      const { admin, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [admin, member])
      const robot = yield* memberWith(org.id, [member], { isServiceAccount: true })
      const owner = yield* session(org.id, alice.id)
      const scoped = yield* mint(owner, { assumedRoles: [member.id] })
      const principal = yield* request(scoped.key)

      expect(yield* canListAll(scoped.key)).toBe(false)
      expect((yield* listAll(owner)).api_keys).toHaveLength(1)
      const forRobot = yield* Effect.flip(mint(principal, { ...all, targetMemberId: robot.id }))
      expect(forRobot).toBeInstanceOf(PermissionDenied)
      expect(Policy.requireAdmin(principal)).toEqual(Decision.deny("permission_denied", "admin role required"))
      expect(Policy.hasPermission(principal, "playbook:write")).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("removing a role from the owner removes it from the key on the next request", () =>
    Effect.gen(function*() {
      const { auditor, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, auditor])
      const key = yield* mint(yield* session(org.id, alice.id), all)
      expect(yield* canListAll(key.key)).toBe(true)
      yield* unassign(org.id, alice.id, auditor)
      expect(yield* canListAll(key.key)).toBe(false)
      // The stored snapshot is untouched: the intersection happens per request.
      expect(key.api_key.assumed_roles).toContain(auditor.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a role that reached the owner through a group leaves the key when the group drops it", () =>
    Effect.gen(function*() {
      const { auditor, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const groups = yield* GroupRepo
      const auditors = Group.make({
        id: GroupId.make(Fixtures.uuid()),
        organizationId: org.id,
        name: "auditors",
        memberIds: [alice.id],
        roleIds: [auditor.id],
        now: yield* DateTime.now
      })
      yield* Effect.orDie(groups.create(auditors))
      const key = yield* mint(yield* session(org.id, alice.id), { assumedRoles: [auditor.id] })
      expect(yield* canListAll(key.key)).toBe(true)
      yield* Effect.orDie(groups.setMembers(org.id, auditors.id, []))
      expect(yield* canListAll(key.key)).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("granting the owner a role later adds nothing to an existing key, even one that took all roles", () =>
    Effect.gen(function*() {
      const { auditor, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const key = yield* mint(yield* session(org.id, alice.id), all)
      yield* assign(org.id, alice.id, auditor)
      expect(yield* canListAll(key.key)).toBe(false)
      // The owner has it now, and a key minted from now on gets it.
      const later = yield* mint(yield* session(org.id, alice.id), all)
      expect(yield* canListAll(later.key)).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a legacy \"All roles\" key follows the owner's live roles both ways", () =>
    Effect.gen(function*() {
      const { auditor, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      // Minting never creates a legacy key, so it is stored as one migrated from before snapshots.
      const secret = yield* (yield* Secret.SecretHasher).generate
      yield* Effect.orDie((yield* ApiKeyRepo).create(ApiKey.mint({
        id: ApiKeyId.make(Fixtures.uuid()),
        organizationId: org.id,
        memberId: alice.id,
        createdBy: alice.id,
        secretHash: yield* Secret.sha256Hex(secret),
        now: yield* DateTime.now,
        assumedRoles: [],
        inheritAllRoles: true
      })))
      expect(yield* canListAll(secret)).toBe(false)
      yield* assign(org.id, alice.id, auditor)
      expect(yield* canListAll(secret)).toBe(true)
      yield* unassign(org.id, alice.id, auditor)
      expect(yield* canListAll(secret)).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a revoked key and a rotated-away key are refused; the replacement works", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const owner = yield* session(org.id, alice.id)
      const keys = yield* ApiKeys.ApiKeys
      const revoked = yield* mint(owner, all)
      const rotated = yield* mint(owner, all)
      yield* keys.revoke(owner, revoked.api_key.id)
      const replacement = yield* keys.rotate(owner, rotated.api_key.id)
      expect(yield* refusal(revoked.key)).toBe("invalid API key: API key not found")
      expect(yield* refusal(rotated.key)).toBe("invalid API key: API key not found")
      expect((yield* request(replacement.key)).auth).toMatchObject({ keyId: replacement.api_key.id })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a soft-deleted member's keys stop at once, service accounts' included", () =>
    Effect.gen(function*() {
      const { admin, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const boss = yield* memberWith(org.id, [admin])
      const robot = yield* memberWith(org.id, [member], { isServiceAccount: true })
      const personal = yield* mint(yield* session(org.id, alice.id), all)
      const robotKey = yield* mint(yield* session(org.id, boss.id), { ...all, targetMemberId: robot.id })
      yield* request(personal.key)
      yield* request(robotKey.key)
      const members = yield* MemberRepo
      const now = yield* DateTime.now
      yield* Effect.orDie(members.softDelete(org.id, alice.id, now))
      yield* Effect.orDie(members.softDelete(org.id, robot.id, now))
      expect(yield* refusal(personal.key)).toBe("invalid API key: API key not found")
      expect(yield* refusal(robotKey.key)).toBe("invalid API key: API key not found")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("an admin-role key of the wrong owner cannot read an object shared directly with another member", () =>
    Effect.gen(function*() {
      const { admin, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [admin, member])
      const bob = yield* memberWith(org.id, [member])
      const carol = yield* memberWith(org.id, [member])
      const now = yield* DateTime.now
      // Carol's playbook, shared with Bob alone.
      const playbook: Policy.ObjectAccess = {
        organizationId: org.id,
        ownerId: carol.id,
        isPublic: false,
        grants: [{ memberId: bob.id, accessType: "viewer" }]
      }
      const readAs = (secret: string) =>
        Effect.map(request(secret), (principal) => Policy.canRead(principal, "playbook", playbook, now))

      const adminKey = yield* mint(yield* session(org.id, alice.id), { ...all, fullMemberAccess: true })
      expect(Policy.isAdmin(yield* request(adminKey.key))).toBe(true)
      const denial = yield* readAs(adminKey.key)
      expect(denial).toMatchObject({ _tag: "Deny", code: "not_found" })
      expect(yield* Effect.flip(Decision.enforce(denial))).toEqual(new NotFound())

      // Bob reaches it with a key that keeps his direct grants, not with one that does not.
      const bobs = yield* session(org.id, bob.id)
      const bobFull = yield* mint(bobs, { ...all, fullMemberAccess: true })
      const bobScoped = yield* mint(bobs, all)
      expect(yield* readAs(bobFull.key)).toEqual(Decision.allow)
      expect(yield* readAs(bobScoped.key)).toMatchObject({ _tag: "Deny", code: "not_found" })
      // Ownership always counts: Carol's key without full member access still reads her own playbook.
      const carolScoped = yield* mint(yield* session(org.id, carol.id), all)
      expect(yield* readAs(carolScoped.key)).toEqual(Decision.allow)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("minting from a key never widens it, whatever the key and the request", () =>
    Effect.gen(function*() {
      const { admin, analyst, auditor, member, org } = yield* setup
      const roles = [admin, member, analyst, auditor]
      const alice = yield* memberWith(org.id, roles)
      const robot = yield* memberWith(org.id, roles, { isServiceAccount: true })
      const owner = yield* session(org.id, alice.id)
      const permissions = (principal: Policy.Principal) => Policy.effectivePermissions(principal)
      let minted = 0
      let refused = 0
      for (const parentRoles of Arr.drop(subsets(roles), 1)) {
        for (const parentFull of [false, true]) {
          const parentKey = yield* mint(owner, {
            assumedRoles: parentRoles.map((role) => role.id),
            fullMemberAccess: parentFull
          })
          const parent = yield* request(parentKey.key)
          const requests: ReadonlyArray<ApiKey.CreateApiKey> = [
            all,
            ...roles.map((role) => ({ assumedRoles: [role.id] }))
          ]
            .flatMap((body) => [body, { ...body, fullMemberAccess: true }, { ...body, targetMemberId: robot.id }])
          for (const body of requests) {
            const outcome = yield* Effect.either(mint(parent, body))
            if (outcome._tag === "Left") {
              refused++
              continue
            }
            minted++
            const child = yield* request(outcome.right.key)
            expect(permissions(parent)).toEqual(expect.arrayContaining([...permissions(child)]))
            if (Policy.keepsMemberGrants(child)) expect(parentFull).toBe(true)
          }
        }
      }
      // Both branches were exercised, so the property above is not vacuous.
      expect(minted).toBeGreaterThan(0)
      expect(refused).toBeGreaterThan(0)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the secret is never in a stored record or an audit entry", () =>
    Effect.gen(function*() {
      const { admin, member, org } = yield* setup
      const boss = yield* memberWith(org.id, [admin])
      const robot = yield* memberWith(org.id, [member], { isServiceAccount: true })
      const keys = yield* ApiKeys.ApiKeys
      const bootstrap = yield* keys.bootstrap(org.id, boss.id, "root")
      const principal = yield* request(bootstrap.key)
      const personal = yield* keys.create(principal, { ...all, name: "personal" })
      const forRobot = yield* keys.create(principal, { ...all, targetMemberId: robot.id, clientId: "{\"a\":1}" })
      const rotated = yield* keys.rotate(principal, personal.api_key.id)
      yield* keys.revoke(principal, forRobot.api_key.id)
      const secrets = [bootstrap.key, personal.key, forRobot.key, rotated.key]

      const records = (yield* (yield* ApiKeyRepo).list(org.id, { limit: 100, includeRevoked: true })).items
      const entries = (yield* (yield* AuditLogRepo).list(org.id, { limit: 100 })).items
      expect(records).toHaveLength(4)
      expect(entries.map((entry) => entry.action).sort()).toEqual([
        "api_key.create",
        "api_key.create",
        "api_key.create",
        "api_key.revoke",
        "api_key.rotate"
      ])
      const storedText = JSON.stringify([
        records.map((record) => Schema.encodeSync(ApiKey.ApiKeyRecord)(record)),
        entries.map((entry) => Schema.encodeSync(AuditLog.AuditLogRecord)(entry))
      ])
      for (const secret of secrets) {
        expect(storedText).not.toContain(secret)
        // Nor its distinctive tail (test secrets differ only in their last bytes), as a cut-off copy would be.
        expect(storedText).not.toContain(secret.slice(-12))
      }
      // What is stored instead is exactly the hash of each secret.
      const hashes = yield* Effect.forEach(secrets, Secret.sha256Hex)
      expect(records.map((record) => record.secret_hash).sort()).toEqual([...hashes].sort())
    }).pipe(Effect.provide(TestLayer)))
})

/** Every subset of `items`, the empty one first. */
const subsets = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> =>
  items.reduce<ReadonlyArray<ReadonlyArray<A>>>(
    (acc, item) => [...acc, ...acc.map((subset) => [...subset, item])],
    [[]]
  )
