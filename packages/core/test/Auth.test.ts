import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as ApiKey from "../src/ApiKey.js"
import { ApiKeyRepo } from "../src/ApiKeyRepo.js"
import * as Auth from "../src/Auth.js"
import { Unauthenticated } from "../src/Errors.js"
import * as Group from "../src/Group.js"
import { GroupRepo } from "../src/GroupRepo.js"
import { ApiKeyId, GroupId, MemberId, type OrganizationId } from "../src/Ids.js"
import { MemberRepo } from "../src/MemberRepo.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as Secret from "../src/Secret.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Auth.layer.pipe(Layer.provideMerge(Memory.layer))

/** Every port in memory, but with this secret hasher. */
const layerWith = (hasher: Layer.Layer<Secret.SecretHasher>) =>
  Auth.layer.pipe(Layer.provideMerge(hasher), Layer.provideMerge(Memory.layer))

// --- fixtures ------------------------------------------------------------------------------------

const secretOf = (n: number) => {
  const bytes = new Uint8Array(Secret.SECRET_BYTES)
  bytes[0] = n
  return Encoding.encodeBase64(bytes)
}

/** An organization with its system roles and an `analyst` custom role, created one second apart. */
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const now = yield* DateTime.now
  const system = yield* Fixtures.systemRoles(org.id, now)
  const analyst = yield* Fixtures.role(org.id, "analyst", {
    permissions: ["chat:read", "playbook:read"],
    now: DateTime.add(now, { seconds: 1 })
  })
  const auditor = yield* Fixtures.role(org.id, "auditor", {
    permissions: ["organization:read"],
    now: DateTime.add(now, { seconds: 2 })
  })
  return { org, admin: system.admin, member: system.member, analyst, auditor }
})

/** Stores a key for `secret` (hashed as the service stores it) and returns its record. */
const storeKey = (
  organizationId: OrganizationId,
  memberId: MemberId,
  secret: string,
  options: Partial<ApiKey.MintInput> = {}
) =>
  Effect.gen(function*() {
    const record = ApiKey.mint({
      id: ApiKeyId.make(Fixtures.uuid()),
      organizationId,
      memberId,
      createdBy: memberId,
      secretHash: yield* Secret.sha256Hex(secret),
      now: yield* DateTime.now,
      assumedRoles: [],
      ...options
    })
    yield* Effect.orDie(Effect.flatMap(ApiKeyRepo, (repo) => repo.create(record)))
    return record
  })

const authenticate = (presented: string) => Effect.flatMap(Auth.Auth, (auth) => auth.authenticateApiKey(presented))

const refusedWith = (presented: string) =>
  Effect.map(Effect.flip(authenticate(presented)), (error) => {
    expect(error).toBeInstanceOf(Unauthenticated)
    return error.message
  })

const roleNames = (principal: Policy.Principal) => principal.roles.map((role) => role.name)

// --- authenticateApiKey --------------------------------------------------------------------------

describe("Auth.authenticateApiKey", () => {
  it.effect("builds the principal of a key: owner, live roles and the key's credential", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [member.id, analyst.id] })
      const record = yield* storeKey(org.id, alice.id, secretOf(1), {
        assumedRoles: [analyst.id],
        fullMemberAccess: true
      })
      const principal = yield* authenticate(secretOf(1))
      expect(principal).toEqual({
        organizationId: org.id,
        memberId: alice.id,
        email: alice.email,
        isServiceAccount: false,
        deleted: false,
        roles: [member, analyst].map(Role.toRoleInfo),
        auth: Policy.ApiKey({
          keyId: record.id,
          assumedRoleIds: [analyst.id],
          inheritAllRoles: false,
          fullMemberAccess: true,
          clientId: ""
        })
      })
      // The snapshot, not the live roles, decides what the key may do.
      expect(Policy.effectiveRoles(principal).map((role) => role.name)).toEqual(["analyst"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("marks a service account's key as such and keeps a legacy key's \"All roles\" flag", () =>
    Effect.gen(function*() {
      const { analyst, org } = yield* setup
      const robot = yield* Fixtures.member(org.id, { roleIds: [analyst.id], isServiceAccount: true })
      yield* storeKey(org.id, robot.id, secretOf(1), { inheritAllRoles: true })
      const principal = yield* authenticate(secretOf(1))
      expect(principal.isServiceAccount).toBe(true)
      expect(principal.auth).toMatchObject({ _tag: "ApiKey", inheritAllRoles: true })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("answers `invalid API key format` to anything but the canonical base64 of 32 bytes", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const alice = yield* Fixtures.member(org.id)
      const valid = secretOf(0xfb) // starts with "+", so the URL-safe variant differs
      yield* storeKey(org.id, alice.id, valid)
      const malformed = [
        "",
        "not a key",
        valid.slice(0, -1), // padding dropped
        valid.replaceAll("+", "-"), // URL-safe alphabet
        `${valid}\n`,
        ` ${valid}`,
        Encoding.encodeBase64(new Uint8Array(31)),
        Encoding.encodeBase64(new Uint8Array(33))
      ]
      for (const presented of malformed) expect(yield* refusedWith(presented)).toBe("invalid API key format")
      // The same key, as issued, works.
      expect((yield* authenticate(valid)).memberId).toBe(alice.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("answers `invalid API key: API key not found` to a well-formed unknown key", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const alice = yield* Fixtures.member(org.id)
      yield* storeKey(org.id, alice.id, secretOf(1))
      expect(yield* refusedWith(secretOf(2))).toBe("invalid API key: API key not found")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("answers `invalid API key: API key not found` to a revoked key", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const alice = yield* Fixtures.member(org.id)
      const record = yield* storeKey(org.id, alice.id, secretOf(1))
      const repo = yield* ApiKeyRepo
      yield* Effect.orDie(repo.update(yield* ApiKey.revoke(record, yield* DateTime.now)))
      expect(yield* refusedWith(secretOf(1))).toBe("invalid API key: API key not found")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("answers `invalid API key: API key expired` from the key's `expires_at` on", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const alice = yield* Fixtures.member(org.id)
      yield* storeKey(org.id, alice.id, secretOf(1), { expirySeconds: 60 })
      yield* TestClock.adjust(Duration.seconds(59))
      expect((yield* authenticate(secretOf(1))).memberId).toBe(alice.id)
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* refusedWith(secretOf(1))).toBe("invalid API key: API key expired")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses every key of a soft-deleted or removed owner at once", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [member.id] })
      const bob = yield* Fixtures.member(org.id, { roleIds: [member.id] })
      yield* storeKey(org.id, alice.id, secretOf(1))
      yield* storeKey(org.id, bob.id, secretOf(2))
      const members = yield* MemberRepo
      yield* Effect.orDie(members.softDelete(org.id, alice.id, yield* DateTime.now))
      yield* Effect.orDie(members.hardDelete(org.id, bob.id))
      expect(yield* refusedWith(secretOf(1))).toBe("invalid API key: API key not found")
      expect(yield* refusedWith(secretOf(2))).toBe("invalid API key: API key not found")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("confirms the stored hash with the hasher's constant-time equality, not the lookup alone", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const alice = yield* Fixtures.member(org.id)
      yield* storeKey(org.id, alice.id, secretOf(1))
      expect(yield* refusedWith(secretOf(1))).toBe("invalid API key: API key not found")
    }).pipe(
      Effect.provide(layerWith(Layer.succeed(Secret.SecretHasher, {
        generate: Effect.die("unused"),
        hash: Secret.sha256Hex,
        equals: () => false
      })))
    ))

  it.effect("reads the owner's roles on every call, so a role change shows on the next request", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [member.id, analyst.id] })
      yield* storeKey(org.id, alice.id, secretOf(1), { assumedRoles: [member.id, analyst.id] })
      expect(roleNames(yield* authenticate(secretOf(1)))).toEqual(["member", "analyst"])
      yield* (yield* MemberRepo).unassignRole(org.id, alice.id, analyst.id)
      expect(roleNames(yield* authenticate(secretOf(1)))).toEqual(["member"])
    }).pipe(Effect.provide(TestLayer)))
})

// --- sessionPrincipal ----------------------------------------------------------------------------

describe("Auth.sessionPrincipal", () => {
  it.effect("builds a session principal with the member's live roles", () =>
    Effect.gen(function*() {
      const { analyst, org } = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [analyst.id] })
      const principal = yield* Effect.flatMap(Auth.Auth, (auth) => auth.sessionPrincipal(org.id, alice.id))
      expect(principal).toEqual({
        organizationId: org.id,
        memberId: alice.id,
        email: alice.email,
        isServiceAccount: false,
        deleted: false,
        roles: [Role.toRoleInfo(analyst)],
        auth: Policy.Session()
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is `Unauthenticated` for an unknown, soft-deleted or foreign member", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const other = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [member.id] })
      const stranger = yield* Fixtures.member(other.org.id, { roleIds: [other.member.id] })
      yield* Effect.orDie((yield* MemberRepo).softDelete(org.id, alice.id, yield* DateTime.now))
      const auth = yield* Auth.Auth
      for (const memberId of [alice.id, stranger.id, MemberId.make(Fixtures.uuid())]) {
        const error = yield* Effect.flip(auth.sessionPrincipal(org.id, memberId))
        expect(error).toEqual(new Unauthenticated({ message: "Authentication required" }))
      }
      // The stranger is fine in its own organization.
      expect((yield* auth.sessionPrincipal(other.org.id, stranger.id)).memberId).toBe(stranger.id)
    }).pipe(Effect.provide(TestLayer)))
})

// --- liveRoles -----------------------------------------------------------------------------------

describe("Auth.liveRoles", () => {
  it.effect("unites direct and group-granted roles, once each, in the organization's role order", () =>
    Effect.gen(function*() {
      const { analyst, auditor, member, org } = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [auditor.id, member.id] })
      const groups = yield* GroupRepo
      yield* Effect.orDie(groups.create(Group.make({
        id: GroupId.make(Fixtures.uuid()),
        organizationId: org.id,
        name: "analysts",
        memberIds: [alice.id],
        roleIds: [analyst.id, member.id],
        now: yield* DateTime.now
      })))
      const auth = yield* Auth.Auth
      const roles = yield* auth.liveRoles(org.id, alice.id)
      // member was created with the organization, analyst one second later, auditor two.
      expect(roles.map((role) => role.name)).toEqual(["member", "analyst", "auditor"])
      // A group-granted role counts for the key model too.
      yield* storeKey(org.id, alice.id, secretOf(1), { assumedRoles: [analyst.id] })
      const principal = yield* authenticate(secretOf(1))
      expect(Policy.hasPermission(principal, "playbook:read")).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("never reaches roles of another organization, and is empty for an unknown member", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const other = yield* setup
      const alice = yield* Fixtures.member(org.id, { roleIds: [member.id] })
      const auth = yield* Auth.Auth
      expect(yield* auth.liveRoles(other.org.id, alice.id)).toEqual([])
      expect(yield* auth.liveRoles(org.id, MemberId.make(Fixtures.uuid()))).toEqual([])
      expect((yield* auth.liveRoles(org.id, alice.id)).map((role) => role.id)).toEqual([member.id])
    }).pipe(Effect.provide(TestLayer)))
})
