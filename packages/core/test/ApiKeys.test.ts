import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as ApiKey from "../src/ApiKey.js"
import { ApiKeyRepo, layerMemory as apiKeyRepoMemory } from "../src/ApiKeyRepo.js"
import * as ApiKeys from "../src/ApiKeys.js"
import { AuditLogRepo } from "../src/AuditLogRepo.js"
import * as Auditor from "../src/Auditor.js"
import * as Auth from "../src/Auth.js"
import { InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "../src/Errors.js"
import { ApiKeyId, MemberId, type OrganizationId } from "../src/Ids.js"
import { MemberRepo } from "../src/MemberRepo.js"
import type * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"
import * as Role from "../src/Role.js"
import * as Secret from "../src/Secret.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"
import * as Transaction from "../src/Transaction.js"

const TestLayer = ApiKeys.layer.pipe(Layer.provideMerge(Auth.layer), Layer.provideMerge(Memory.layer))

/**
 * Every port in memory, but with `ports` in place of the memory ones (built over the same memory
 * state); the `Auditor` is rebuilt over them, so a replaced `AuditLogRepo` is the one it writes to.
 */
const layerWith = <Ports>(ports: Layer.Layer<Ports, never, Transaction.MemoryState>) =>
  ApiKeys.layer.pipe(
    // Fresh: `Memory.layer` builds the same `Auditor.layer`, and layers are shared by reference.
    Layer.provideMerge(Layer.merge(Auth.layer, Layer.fresh(Auditor.layer))),
    Layer.provideMerge(ports),
    Layer.provideMerge(Memory.layer)
  )

// --- fixtures ------------------------------------------------------------------------------------

// A second apart, so that the organization's role order (oldest first) is known.
const customRole = (organizationId: OrganizationId, name: string, permissions: ReadonlyArray<Permission.Permission>) =>
  Effect.zipRight(TestClock.adjust(Duration.seconds(1)), Fixtures.role(organizationId, name, { permissions }))

/**
 * An organization with the system roles and custom roles: `analyst` (reads), `auditor`
 * (`organization:read`) and `keyAdmin` (`organization:write` without being `admin`).
 */
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const system = yield* Fixtures.systemRoles(org.id)
  return {
    org,
    admin: system.admin,
    member: system.member,
    analyst: yield* customRole(org.id, "analyst", ["chat:read", "playbook:read"]),
    auditor: yield* customRole(org.id, "auditor", ["organization:read"]),
    keyAdmin: yield* customRole(org.id, "key-admin", ["organization:read", "organization:write"])
  }
})

const memberWith = (
  organizationId: OrganizationId,
  roles: ReadonlyArray<Role.RoleRecord>,
  options: { readonly isServiceAccount?: boolean } = {}
) => Fixtures.member(organizationId, { ...options, roleIds: roles.map((role) => role.id) })

const session = (organizationId: OrganizationId, memberId: MemberId) =>
  Effect.flatMap(Auth.Auth, (auth) => auth.sessionPrincipal(organizationId, memberId))

const asKey = (secret: string) => Effect.flatMap(Auth.Auth, (auth) => auth.authenticateApiKey(secret))

const service = ApiKeys.ApiKeys

const create = (principal: Policy.Principal, body: ApiKey.CreateApiKey) =>
  Effect.flatMap(service, (keys) => keys.create(principal, body))

const all: ApiKey.CreateApiKey = { inheritAllRoles: true }

const listQuery = (params: Record<string, string> = {}) => Schema.decodeUnknownSync(ApiKey.ListApiKeys)(params)

const list = (principal: Policy.Principal, params: Record<string, string> = {}) =>
  Effect.flatMap(service, (keys) => keys.list(principal, listQuery(params)))

const stored = (organizationId: OrganizationId, id: ApiKeyId) =>
  Effect.flatMap(ApiKeyRepo, (repo) => Effect.map(repo.get(organizationId, id), Option.getOrThrow))

const auditEntries = (organizationId: OrganizationId) =>
  Effect.flatMap(AuditLogRepo, (repo) => Effect.map(repo.list(organizationId, { limit: 100 }), (page) => page.items))

const expectFailure = <A, E, R>(effect: Effect.Effect<A, E, R>, expected: E) =>
  Effect.map(Effect.flip(effect), (error) => expect(error).toEqual(expected))

const notFound = new NotFound()

// --- create --------------------------------------------------------------------------------------

describe("ApiKeys.create", () => {
  it.effect("mints a personal key of every live role, expiring after the 90-day default", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const principal = yield* session(org.id, alice.id)
      const result = yield* create(principal, all)
      const now = yield* DateTime.now
      expect(Secret.isWellFormed(result.key)).toBe(true)
      expect(result.api_key).toEqual(
        new ApiKey.ApiKey({
          id: result.api_key.id,
          member_id: alice.id,
          name: "",
          client_id: "",
          // A snapshot of the live roles, never a legacy "All roles" key.
          assumed_roles: [member.id, analyst.id],
          inherit_all_roles: false,
          full_member_access: false,
          status: "active",
          created_at: now,
          expires_at: DateTime.add(now, { days: 90 })
        })
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("keeps the name, the client metadata exactly as sent, the TTL and full member access", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const clientId = "{ \"tenant\": \"acme\",  \"region\":\"eu\" }"
      const result = yield* create(yield* session(org.id, alice.id), {
        assumedRoles: [analyst.id],
        name: "embed",
        clientId,
        expirySeconds: 600,
        fullMemberAccess: true
      })
      expect(result.api_key).toMatchObject({
        name: "embed",
        client_id: clientId,
        assumed_roles: [analyst.id],
        full_member_access: true,
        expires_at: DateTime.add(yield* DateTime.now, { seconds: 600 })
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("stores only the secret's hash and records `api_key.create` for the caller", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const result = yield* create(yield* session(org.id, alice.id), { ...all, name: "ci" })
      const record = yield* stored(org.id, result.api_key.id)
      expect(record.secret_hash).toBe(yield* Secret.sha256Hex(result.key))
      expect(record.created_by).toBe(alice.id)
      const entries = yield* auditEntries(org.id)
      expect(entries).toHaveLength(1)
      expect(entries[0]).toMatchObject({
        actor_id: alice.id,
        action: "api_key.create",
        resource_type: "api_key",
        resource_id: result.api_key.id,
        auth_method: "jwt",
        details: { member_id: alice.id, name: "ci", assumed_roles: [member.id], full_member_access: false }
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("writes the key and its audit entry in one transaction: a failed audit write stores no key", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const exit = yield* Effect.exit(create(yield* session(org.id, alice.id), all))
      expect(exit._tag).toBe("Failure")
      const page = yield* (yield* ApiKeyRepo).list(org.id, { limit: 10, includeRevoked: true })
      expect(page.items).toEqual([])
    }).pipe(
      Effect.provide(layerWith(Layer.succeed(AuditLogRepo, {
        append: () => Effect.dieMessage("audit store down"),
        list: () => Effect.die("unused"),
        usage: () => Effect.die("unused")
      })))
    ))

  it.effect("scopes a key only to roles the caller holds", () =>
    Effect.gen(function*() {
      const { admin, analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const principal = yield* session(org.id, alice.id)
      const error = yield* Effect.flip(create(principal, { assumedRoles: [analyst.id, admin.id] }))
      expect(error).toBeInstanceOf(PermissionDenied)
      expect(error.message).toBe(`permission denied: role ${admin.id} is not held by the caller`)
      expect((yield* create(principal, { assumedRoles: [analyst.id] })).api_key.assumed_roles).toEqual([analyst.id])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("from an API key: only the key's own roles, and `inheritAllRoles` means the key's roles", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const narrow = yield* create(yield* session(org.id, alice.id), { assumedRoles: [analyst.id] })
      const principal = yield* asKey(narrow.key)
      const error = yield* Effect.flip(create(principal, { assumedRoles: [member.id] }))
      expect(error).toEqual(
        new PermissionDenied({ message: `permission denied: role ${member.id} is not held by the calling key` })
      )
      const child = yield* create(principal, all)
      expect(child.api_key.assumed_roles).toEqual([analyst.id])
      const [entry] = yield* Effect.map(
        auditEntries(org.id),
        (entries) => entries.filter((e) => e.resource_id === child.api_key.id)
      )
      expect(entry).toMatchObject({ auth_method: "api_key", details: { caller_api_key_id: narrow.api_key.id } })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a key minted by a key keeps its clientId, never outlives it, and dies with it", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const eu = "{\"region\":\"EU\"}"
      const parent = yield* create(yield* session(org.id, alice.id), { ...all, clientId: eu, expirySeconds: 3600 })
      const asParent = yield* asKey(parent.key)
      // Another clientId, or none at all ("{}" included), would shed the row-level security.
      for (const clientId of ["{\"region\":\"US\"}", "{}", ""]) {
        expect(yield* Effect.flip(create(asParent, { ...all, clientId }))).toEqual(
          new PermissionDenied({
            message:
              "permission denied: a key minted by a key with a clientId keeps that clientId (omit clientId or repeat it)"
          })
        )
      }
      const child = yield* create(asParent, { ...all, expirySeconds: 365 * 24 * 3600 })
      expect(child.api_key.client_id).toBe(eu)
      // Capped at the parent's expiry, not a year.
      expect(child.api_key.expires_at).toEqual(parent.api_key.expires_at)
      const same = yield* create(asParent, { ...all, clientId: eu, expirySeconds: 60 })
      expect(same.api_key.client_id).toBe(eu)
      const grandchild = yield* create(yield* asKey(child.key), all)
      expect(grandchild.api_key.client_id).toBe(eu)
      // A key without a clientId mints children with any it likes (it has none to shed).
      const plain = yield* create(yield* session(org.id, alice.id), all)
      const tagged = yield* create(yield* asKey(plain.key), { ...all, clientId: eu })
      expect(tagged.api_key.client_id).toBe(eu)
      // Revoking the parent revokes its whole line.
      yield* Effect.flatMap(service, (keys) => keys.revoke(asParent, parent.api_key.id))
      for (const secret of [child.key, same.key, grandchild.key]) {
        expect(yield* Effect.flip(asKey(secret))).toEqual(new Unauthenticated({ message: Auth.KEY_NOT_FOUND }))
      }
      expect((yield* asKey(tagged.key)).memberId).toBe(alice.id)
      const [entry] = (yield* auditEntries(org.id)).filter((e) =>
        e.action === "api_key.revoke" && e.resource_id === parent.api_key.id
      )
      expect([...(entry!.details["revoked_descendants"] as Array<string>)].sort()).toEqual(
        [child.api_key.id, same.api_key.id, grandchild.api_key.id].sort()
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a rotated parent hands its children to the replacement, which then revokes them", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const parent = yield* create(yield* session(org.id, alice.id), { ...all, clientId: "{\"region\":\"EU\"}" })
      const child = yield* create(yield* asKey(parent.key), all)
      const keys = yield* service
      const alicesSession = yield* session(org.id, alice.id)
      const rotated = yield* keys.rotate(alicesSession, parent.api_key.id)
      expect((yield* asKey(child.key)).memberId).toBe(alice.id)
      yield* keys.revoke(alicesSession, rotated.api_key.id)
      expect(yield* Effect.flip(asKey(child.key))).toEqual(new Unauthenticated({ message: Auth.KEY_NOT_FOUND }))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("lets a key enable `fullMemberAccess` only when it has full member access itself", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const owner = yield* session(org.id, alice.id)
      const plain = yield* asKey((yield* create(owner, all)).key)
      const full = yield* asKey((yield* create(owner, { ...all, fullMemberAccess: true })).key)
      yield* expectFailure(
        create(plain, { ...all, fullMemberAccess: true }),
        new PermissionDenied({
          message: "permission denied: fullMemberAccess requires a calling key with full member access"
        })
      )
      expect((yield* create(full, { ...all, fullMemberAccess: true })).api_key.full_member_access).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses a key with no roles to assume", () =>
    Effect.gen(function*() {
      const { org } = yield* setup
      const loner = yield* memberWith(org.id, [])
      yield* expectFailure(
        create(yield* session(org.id, loner.id), all),
        new PermissionDenied({ message: "permission denied: no roles to assume" })
      )
    }).pipe(Effect.provide(TestLayer)))

  it.effect("refuses a caller whose member was deleted", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const principal = yield* session(org.id, alice.id)
      const error = yield* Effect.flip(create({ ...principal, deleted: true }, all))
      expect(error).toBeInstanceOf(Unauthenticated)
    }).pipe(Effect.provide(TestLayer)))

  describe("targetMemberId", () => {
    it.effect("mints for a service account as an admin: the account owns it, the admin made it", () =>
      Effect.gen(function*() {
        const { admin, analyst, member, org } = yield* setup
        const boss = yield* memberWith(org.id, [admin])
        const robot = yield* memberWith(org.id, [member, analyst], { isServiceAccount: true })
        const result = yield* create(yield* session(org.id, boss.id), { ...all, targetMemberId: robot.id })
        expect(result.api_key.member_id).toBe(robot.id)
        expect(result.api_key.assumed_roles).toEqual([member.id, analyst.id])
        expect((yield* stored(org.id, result.api_key.id)).created_by).toBe(boss.id)
        expect((yield* asKey(result.key)).memberId).toBe(robot.id)
        const [entry] = yield* auditEntries(org.id)
        expect(entry).toMatchObject({ actor_id: boss.id, details: { member_id: robot.id } })
      }).pipe(Effect.provide(TestLayer)))

    it.effect("limits a non-admin's key for a service account to roles both hold", () =>
      Effect.gen(function*() {
        const { analyst, keyAdmin, member, org } = yield* setup
        const operator = yield* memberWith(org.id, [keyAdmin, analyst])
        const robot = yield* memberWith(org.id, [member, analyst], { isServiceAccount: true })
        const principal = yield* session(org.id, operator.id)
        const result = yield* create(principal, { ...all, targetMemberId: robot.id })
        expect(result.api_key.assumed_roles).toEqual([analyst.id])
        yield* expectFailure(
          create(principal, { assumedRoles: [member.id], targetMemberId: robot.id }),
          new PermissionDenied({ message: `permission denied: role ${member.id} is not held by the caller` })
        )
      }).pipe(Effect.provide(TestLayer)))

    it.effect("needs `organization:write`, checked before anything about the target is revealed", () =>
      Effect.gen(function*() {
        const { auditor, member, org } = yield* setup
        const alice = yield* memberWith(org.id, [member, auditor])
        const robot = yield* memberWith(org.id, [member], { isServiceAccount: true })
        const principal = yield* session(org.id, alice.id)
        const expected = new PermissionDenied({
          message: "permission denied: organization:write required to mint a key for another member"
        })
        for (const target of [robot.id, MemberId.make(Fixtures.uuid())]) {
          yield* expectFailure(create(principal, { ...all, targetMemberId: target }), expected)
        }
      }).pipe(Effect.provide(TestLayer)))

    it.effect("is `invalid_request` for a human target", () =>
      Effect.gen(function*() {
        const { admin, member, org } = yield* setup
        const boss = yield* memberWith(org.id, [admin])
        const bob = yield* memberWith(org.id, [member])
        yield* expectFailure(
          create(yield* session(org.id, boss.id), { ...all, targetMemberId: bob.id }),
          new InvalidRequest({ message: "targetMemberId must be a service account" })
        )
      }).pipe(Effect.provide(TestLayer)))

    it.effect("is `not_found` for an unknown, deleted or foreign service account", () =>
      Effect.gen(function*() {
        const { admin, member, org } = yield* setup
        const other = yield* setup
        const boss = yield* memberWith(org.id, [admin])
        const retired = yield* memberWith(org.id, [member], { isServiceAccount: true })
        yield* Effect.orDie((yield* MemberRepo).softDelete(org.id, retired.id, yield* DateTime.now))
        const foreign = yield* memberWith(other.org.id, [other.member], { isServiceAccount: true })
        const principal = yield* session(org.id, boss.id)
        for (const target of [retired.id, foreign.id, MemberId.make(Fixtures.uuid())]) {
          yield* expectFailure(create(principal, { ...all, targetMemberId: target }), notFound)
        }
      }).pipe(Effect.provide(TestLayer)))

    it.effect("naming yourself mints a personal key, without `organization:write`", () =>
      Effect.gen(function*() {
        const { member, org } = yield* setup
        const alice = yield* memberWith(org.id, [member])
        const result = yield* create(yield* session(org.id, alice.id), { ...all, targetMemberId: alice.id })
        expect(result.api_key.member_id).toBe(alice.id)
      }).pipe(Effect.provide(TestLayer)))
  })
})

// --- list ----------------------------------------------------------------------------------------

describe("ApiKeys.list", () => {
  /** An organization where alice (member), bob (member) and a service account each own keys. */
  const population = Effect.gen(function*() {
    const roles = yield* setup
    const { admin, auditor, member, org } = roles
    const alice = yield* memberWith(org.id, [member])
    const bob = yield* memberWith(org.id, [member, auditor])
    const boss = yield* memberWith(org.id, [admin])
    const robot = yield* memberWith(org.id, [member], { isServiceAccount: true })
    const keyOf = Effect.fnUntraced(function*(principal: Policy.Principal, body: ApiKey.CreateApiKey) {
      yield* TestClock.adjust(Duration.seconds(1))
      return (yield* create(principal, body)).api_key
    })
    const asAlice = yield* session(org.id, alice.id)
    const asBob = yield* session(org.id, bob.id)
    const asBoss = yield* session(org.id, boss.id)
    const alice1 = yield* keyOf(asAlice, { ...all, name: "alice-1" })
    const bob1 = yield* keyOf(asBob, { ...all, name: "bob-1" })
    const alice2 = yield* keyOf(asAlice, { ...all, name: "alice-2" })
    const robot1 = yield* keyOf(asBoss, { ...all, name: "robot-1", targetMemberId: robot.id })
    // Another organization's keys never show up.
    const other = yield* setup
    const stranger = yield* memberWith(other.org.id, [other.admin])
    yield* keyOf(yield* session(other.org.id, stranger.id), all)
    return { ...roles, asAlice, asBob, asBoss, alice1, alice2, bob1, robot1 }
  })

  const names = (response: ApiKey.ListApiKeysResponse) => response.api_keys.map((key) => key.name)

  it.effect("lists the caller's own keys by default, newest first, without secrets or hashes", () =>
    Effect.gen(function*() {
      const { asAlice } = yield* population
      const response = yield* list(asAlice)
      expect(names(response)).toEqual(["alice-2", "alice-1"])
      expect(response.next_page_token).toBeUndefined()
      const wire = JSON.stringify(Schema.encodeSync(ApiKey.ListApiKeysResponse)(response))
      expect(wire).not.toMatch(/secret|hash/)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("lists every key of the organization only with `organization:read`", () =>
    Effect.gen(function*() {
      const { asAlice, asBob } = yield* population
      yield* expectFailure(
        list(asAlice, { scope: "all" }),
        new PermissionDenied({ message: "permission denied: organization:read required" })
      )
      yield* expectFailure(
        list(asAlice, { scope: "service_accounts" }),
        new PermissionDenied({ message: "permission denied: organization:read required" })
      )
      expect(names(yield* list(asBob, { scope: "all" }))).toEqual(["robot-1", "alice-2", "bob-1", "alice-1"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("lists only service accounts' keys with `scope=service_accounts`", () =>
    Effect.gen(function*() {
      const { asBoss } = yield* population
      expect(names(yield* list(asBoss, { scope: "service_accounts" }))).toEqual(["robot-1"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("hides revoked keys unless `include_revoked`, and lists expired ones as `expired`", () =>
    Effect.gen(function*() {
      const { alice1, asAlice } = yield* population
      const shortLived = yield* create(asAlice, { ...all, name: "short", expirySeconds: 10 })
      yield* Effect.flatMap(service, (keys) => keys.revoke(asAlice, alice1.id))
      yield* TestClock.adjust(Duration.seconds(10))
      const current = yield* list(asAlice)
      expect(current.api_keys.map((key) => [key.name, key.status])).toEqual([
        ["short", "expired"],
        ["alice-2", "active"]
      ])
      const everything = yield* list(asAlice, { include_revoked: "true" })
      expect(everything.api_keys.map((key) => key.status)).toEqual(["expired", "active", "revoked"])
      expect(everything.api_keys[0]!.id).toBe(shortLived.api_key.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("pages with `page_size` and `page_token`; a foreign token is `invalid_request`", () =>
    Effect.gen(function*() {
      const { asBob } = yield* population
      const first = yield* list(asBob, { scope: "all", page_size: "3" })
      expect(names(first)).toEqual(["robot-1", "alice-2", "bob-1"])
      expect(first.next_page_token).toBeDefined()
      const second = yield* list(asBob, { scope: "all", page_size: "3", page_token: first.next_page_token! })
      expect(names(second)).toEqual(["alice-1"])
      expect(second.next_page_token).toBeUndefined()
      yield* expectFailure(
        list(asBob, { scope: "all", page_token: "not-a-cursor" }),
        new InvalidRequest({ message: "invalid cursor" })
      )
    }).pipe(Effect.provide(TestLayer)))
})

// --- rotate --------------------------------------------------------------------------------------

describe("ApiKeys.rotate", () => {
  const rotate = (principal: Policy.Principal, id: ApiKeyId) =>
    Effect.flatMap(service, (keys) => keys.rotate(principal, id))

  it.effect("replaces a key with one of the same name, roles, client metadata and member access", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const owner = yield* session(org.id, alice.id)
      const original = yield* create(owner, {
        assumedRoles: [analyst.id],
        name: "embed",
        clientId: "{\"tenant\":\"acme\"}",
        fullMemberAccess: true,
        expirySeconds: 3600
      })
      yield* TestClock.adjust(Duration.minutes(10))
      const result = yield* rotate(owner, original.api_key.id)
      const now = yield* DateTime.now
      expect(result.revoked_api_key_id).toBe(original.api_key.id)
      expect(result.key).not.toBe(original.key)
      expect(Secret.isWellFormed(result.key)).toBe(true)
      expect(result.api_key).toEqual(
        new ApiKey.ApiKey({
          ...original.api_key,
          id: result.api_key.id,
          created_at: now,
          // The old key's lifetime, counted from the rotation.
          expires_at: DateTime.add(now, { hours: 1 })
        })
      )
      expect(result.api_key.id).not.toBe(original.api_key.id)
      const old = yield* stored(org.id, original.api_key.id)
      expect(ApiKey.statusAt(old, now)).toBe("revoked")
      expect((yield* stored(org.id, result.api_key.id)).rotated_from).toBe(original.api_key.id)
      const rotation = (yield* auditEntries(org.id)).find((entry) => entry.action === "api_key.rotate")
      expect(rotation).toMatchObject({
        actor_id: alice.id,
        resource_id: original.api_key.id,
        details: { replacement_api_key_id: result.api_key.id }
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is `invalid_request` for a revoked key and `not_found` for an unknown or foreign one", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* setup
      const other = yield* setup
      const boss = yield* memberWith(org.id, [admin])
      const principal = yield* session(org.id, boss.id)
      const original = yield* create(principal, all)
      yield* rotate(principal, original.api_key.id)
      yield* expectFailure(
        rotate(principal, original.api_key.id),
        new InvalidRequest({ message: "cannot rotate a revoked API key" })
      )
      yield* expectFailure(rotate(principal, ApiKeyId.make(Fixtures.uuid())), notFound)
      const stranger = yield* memberWith(other.org.id, [other.member])
      const foreign = yield* create(yield* session(other.org.id, stranger.id), all)
      yield* expectFailure(rotate(principal, foreign.api_key.id), notFound)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("another member's key: `not_found` without `organization:read`, 403 with it, allowed with write", () =>
    Effect.gen(function*() {
      const { admin, auditor, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const bob = yield* memberWith(org.id, [member])
      const carol = yield* memberWith(org.id, [member, auditor])
      const boss = yield* memberWith(org.id, [admin])
      const target = yield* create(yield* session(org.id, alice.id), all)
      yield* expectFailure(rotate(yield* session(org.id, bob.id), target.api_key.id), notFound)
      yield* expectFailure(
        rotate(yield* session(org.id, carol.id), target.api_key.id),
        new PermissionDenied({
          message: "permission denied: organization:write required to manage another member's key"
        })
      )
      const result = yield* rotate(yield* session(org.id, boss.id), target.api_key.id)
      expect(result.api_key.member_id).toBe(alice.id)
      expect((yield* stored(org.id, result.api_key.id)).created_by).toBe(boss.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a key rotates itself, but not a sibling key wider than itself", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const owner = yield* session(org.id, alice.id)
      const wide = yield* create(owner, all)
      const narrow = yield* create(owner, { assumedRoles: [analyst.id] })
      const asNarrow = yield* asKey(narrow.key)
      yield* expectFailure(
        rotate(asNarrow, wide.api_key.id),
        new PermissionDenied({ message: "permission denied: cannot rotate a key wider than the calling key" })
      )
      const result = yield* rotate(asNarrow, narrow.api_key.id)
      expect(result.api_key.assumed_roles).toEqual([analyst.id])
      // The caller's key is the one rotated away: it stops working.
      const refused = yield* Effect.flip(asKey(narrow.key))
      expect(refused.message).toBe("invalid API key: API key not found")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("rotates an expired key back to an active one", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const owner = yield* session(org.id, alice.id)
      const original = yield* create(owner, { ...all, expirySeconds: 60 })
      yield* TestClock.adjust(Duration.minutes(5))
      const result = yield* rotate(owner, original.api_key.id)
      expect(result.api_key.status).toBe("active")
      expect((yield* asKey(result.key)).memberId).toBe(alice.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("two concurrent rotations of one key mint one replacement", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const owner = yield* session(org.id, alice.id)
      const original = yield* create(owner, all)
      const outcomes = yield* Effect.all(
        [rotate(owner, original.api_key.id), rotate(owner, original.api_key.id)],
        { concurrency: "unbounded", mode: "either" }
      )
      expect(outcomes.filter(Either.isRight)).toHaveLength(1)
      expect(outcomes.filter(Either.isLeft).map((outcome) => outcome.left)).toEqual([
        new InvalidRequest({ message: "cannot rotate a revoked API key" })
      ])
      const page = yield* (yield* ApiKeyRepo).list(org.id, { limit: 10, includeRevoked: true })
      expect(page.items).toHaveLength(2)
      const rotations = (yield* auditEntries(org.id)).filter((entry) => entry.action === "api_key.rotate")
      expect(rotations).toHaveLength(1)
    }).pipe(
      // The locked read takes real time (a database round trip), giving the other rotation time to
      // reach it: only the transaction around read-check-write keeps it from seeing an active key.
      Effect.provide(layerWith(
        Layer.effect(
          ApiKeyRepo,
          Effect.map(ApiKeyRepo, (repo) =>
            ApiKeyRepo.of({
              ...repo,
              getForUpdate: (organizationId, id) => Effect.zipLeft(repo.getForUpdate(organizationId, id), realDelay)
            }))
        ).pipe(Layer.provide(apiKeyRepoMemory))
      ))
    ))
})

// A pause on the live clock (the test clock would never advance on its own).
const realDelay = Effect.withClock(Effect.sleep("50 millis"), Clock.make())

// --- revoke --------------------------------------------------------------------------------------

describe("ApiKeys.revoke", () => {
  const revoke = (principal: Policy.Principal, id: ApiKeyId) =>
    Effect.flatMap(service, (keys) => keys.revoke(principal, id))

  it.effect("revokes a key once and records `api_key.revoke`; a second revoke is `invalid_request`", () =>
    Effect.gen(function*() {
      const { member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const owner = yield* session(org.id, alice.id)
      const key = yield* create(owner, { ...all, name: "old" })
      expect(yield* revoke(owner, key.api_key.id)).toEqual({ id: key.api_key.id, success: true })
      const record = yield* stored(org.id, key.api_key.id)
      expect(record.revoked_at).toEqual(yield* DateTime.now)
      yield* expectFailure(
        revoke(owner, key.api_key.id),
        new InvalidRequest({ message: "API key is already revoked" })
      )
      const revocations = (yield* auditEntries(org.id)).filter((entry) => entry.action === "api_key.revoke")
      expect(revocations).toHaveLength(1)
      expect(revocations[0]).toMatchObject({
        actor_id: alice.id,
        resource_id: key.api_key.id,
        auth_method: "jwt",
        details: { member_id: alice.id, name: "old" }
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("another member's key: `not_found` without `organization:read`, 403 with it, allowed with write", () =>
    Effect.gen(function*() {
      const { auditor, keyAdmin, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member])
      const bob = yield* memberWith(org.id, [member])
      const carol = yield* memberWith(org.id, [member, auditor])
      const operator = yield* memberWith(org.id, [keyAdmin])
      const target = yield* create(yield* session(org.id, alice.id), all)
      yield* expectFailure(revoke(yield* session(org.id, bob.id), target.api_key.id), notFound)
      yield* expectFailure(
        revoke(yield* session(org.id, carol.id), target.api_key.id),
        new PermissionDenied({
          message: "permission denied: organization:write required to manage another member's key"
        })
      )
      expect((yield* revoke(yield* session(org.id, operator.id), target.api_key.id)).success).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is `not_found` for an unknown key or another organization's, even to an admin", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* setup
      const other = yield* setup
      const boss = yield* memberWith(org.id, [admin])
      const stranger = yield* memberWith(other.org.id, [other.admin])
      const foreign = yield* create(yield* session(other.org.id, stranger.id), all)
      const principal = yield* session(org.id, boss.id)
      yield* expectFailure(revoke(principal, foreign.api_key.id), notFound)
      yield* expectFailure(revoke(principal, ApiKeyId.make(Fixtures.uuid())), notFound)
      expect((yield* stored(other.org.id, foreign.api_key.id)).revoked_at).toBeUndefined()
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a key may revoke any key of its owner, even a wider one", () =>
    Effect.gen(function*() {
      const { analyst, member, org } = yield* setup
      const alice = yield* memberWith(org.id, [member, analyst])
      const owner = yield* session(org.id, alice.id)
      const wide = yield* create(owner, all)
      const narrow = yield* create(owner, { assumedRoles: [analyst.id] })
      const result = yield* revoke(yield* asKey(narrow.key), wide.api_key.id)
      expect(result.success).toBe(true)
      const [entry] = (yield* auditEntries(org.id)).filter((e) => e.action === "api_key.revoke")
      expect(entry).toMatchObject({ auth_method: "api_key", details: { caller_api_key_id: narrow.api_key.id } })
    }).pipe(Effect.provide(TestLayer)))
})

// --- bootstrap -----------------------------------------------------------------------------------

describe("ApiKeys.bootstrap", () => {
  const bootstrap = (organizationId: OrganizationId, memberId: MemberId, name = "bootstrap") =>
    Effect.flatMap(service, (keys) => keys.bootstrap(organizationId, memberId, name))

  it.effect("mints a snapshot of the member's roles with full member access, recorded as a system action", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* setup
      const boss = yield* memberWith(org.id, [admin])
      const result = yield* bootstrap(org.id, boss.id, "org create")
      const now = yield* DateTime.now
      expect(result.api_key).toMatchObject({
        member_id: boss.id,
        name: "org create",
        assumed_roles: [admin.id],
        inherit_all_roles: false,
        full_member_access: true,
        status: "active",
        expires_at: DateTime.add(now, { days: 90 })
      })
      const principal = yield* asKey(result.key)
      expect(Policy.isAdmin(principal)).toBe(true)
      const [entry] = yield* auditEntries(org.id)
      expect(entry).toMatchObject({ action: "api_key.create", auth_method: "system", resource_id: result.api_key.id })
      expect(entry!.actor_id).toBeUndefined()
      expect((yield* stored(org.id, result.api_key.id)).created_by).toBe(boss.id)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is `not_found` for an unknown, deleted or foreign member, and 403 for one without roles", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* setup
      const other = yield* setup
      const gone = yield* memberWith(org.id, [admin])
      yield* Effect.orDie((yield* MemberRepo).softDelete(org.id, gone.id, yield* DateTime.now))
      const stranger = yield* memberWith(other.org.id, [other.admin])
      for (const memberId of [gone.id, stranger.id, MemberId.make(Fixtures.uuid())]) {
        yield* expectFailure(bootstrap(org.id, memberId), notFound)
      }
      const loner = yield* memberWith(org.id, [])
      yield* expectFailure(
        bootstrap(org.id, loner.id),
        new PermissionDenied({ message: "permission denied: no roles to assume" })
      )
      expect(yield* auditEntries(org.id)).toEqual([])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("validates the name like the API does", () =>
    Effect.gen(function*() {
      const { admin, org } = yield* setup
      const boss = yield* memberWith(org.id, [admin])
      const error = yield* Effect.flip(bootstrap(org.id, boss.id, "x".repeat(ApiKey.NAME_MAX_LENGTH + 1)))
      expect(error).toBeInstanceOf(InvalidRequest)
      expect(error.message).toContain(`name must be at most ${ApiKey.NAME_MAX_LENGTH} characters`)
    }).pipe(Effect.provide(TestLayer)))
})
