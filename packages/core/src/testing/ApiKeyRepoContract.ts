/**
 * The contract every `ApiKeyRepo` implementation must meet.
 *
 * It runs on a shared, non-empty database: each test makes its own organizations and members with
 * random ids and never assumes a table is empty. Role ids in `assumed_roles` are random too: the
 * snapshot must outlive the roles it names, so it carries no foreign key to roles.
 *
 * @since 0.1.0
 */
import { expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as ApiKey from "../ApiKey.js"
import { ApiKeyRepo } from "../ApiKeyRepo.js"
import * as AuditLog from "../AuditLog.js"
import { AuditLogRepo } from "../AuditLogRepo.js"
import { ApiKeyId, AuditLogEntryId, type MemberId, type OrganizationId, RoleId } from "../Ids.js"
import { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import type { RoleRepo } from "../RoleRepo.js"
import { SecretHash } from "../Secret.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * Every port the suite needs (the SQL adapter's foreign keys need organizations and members).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = ApiKeyRepo | AuditLogRepo | OrganizationRepo | MemberRepo | RoleRepo | Transaction

const base = DateTime.unsafeMake("2026-01-15T09:30:00.123Z")
const at = (seconds: number) => DateTime.add(base, { seconds })
const randomHash = () => SecretHash.make(`${Fixtures.uuid()}${Fixtures.uuid()}`.replaceAll("-", ""))
const encode = (record: ApiKey.ApiKeyRecord) => Schema.encodeSync(ApiKey.ApiKeyRecord)(record)

const key = (
  organizationId: OrganizationId,
  memberId: MemberId,
  options: Partial<ApiKey.MintInput> = {}
): ApiKey.ApiKeyRecord =>
  ApiKey.mint({
    id: ApiKeyId.make(Fixtures.uuid()),
    organizationId,
    memberId,
    createdBy: memberId,
    secretHash: randomHash(),
    now: base,
    assumedRoles: [RoleId.make(Fixtures.uuid())],
    ...options
  })

/** The key with this secret hash, as authentication finds it. */
const keyByHash = (hash: SecretHash) =>
  Effect.flatMap(ApiKeyRepo, (repo) => Effect.map(repo.findCredential(hash), Option.map((found) => found.key)))

const revoked = (record: ApiKey.ApiKeyRecord, when: DateTime.Utc) => Either.getOrThrow(ApiKey.revoke(record, when))

const createAll = (records: ReadonlyArray<ApiKey.ApiKeyRecord>) =>
  Effect.flatMap(ApiKeyRepo, (repo) => Effect.forEach(records, repo.create, { discard: true }))

/** Every id a listing returns from `after` on, following cursors, checking each page's size. */
const allIds = (
  organizationId: OrganizationId,
  options: Omit<ApiKeyRepo.ListOptions, "after">,
  after?: Pagination.Keyset
) =>
  Fixtures.allIds(
    options.limit,
    (cursor) => Effect.flatMap(ApiKeyRepo, (repo) => repo.list(organizationId, { ...options, after: cursor })),
    after
  )

/**
 * Registers the `ApiKeyRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const apiKeyRepoContract = (name: string, layer: Layer.Layer<Requirements, unknown>): void => {
  // One layer for the whole suite: the tests share its state as they would share a database.
  it.layer(layer)(name, (it) => {
    it.effect("create then get round-trips every field", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const admin = yield* Fixtures.member(org.id)
        const minimal = key(org.id, member.id)
        const full = revoked(
          key(org.id, member.id, {
            createdBy: admin.id,
            name: "Embed key — ünïcode",
            clientId: "{\"tenant\": \"acme\", \"regions\": [\"eu\", \"us\"]}",
            assumedRoles: [RoleId.make(Fixtures.uuid()), RoleId.make(Fixtures.uuid()), RoleId.make(Fixtures.uuid())],
            inheritAllRoles: true,
            fullMemberAccess: true,
            expirySeconds: 3600,
            now: at(7),
            rotatedFrom: minimal.id,
            parent: { id: minimal.id, expiresAt: at(1800) }
          }),
          at(60)
        )
        yield* createAll([minimal, full])
        for (const record of [minimal, full]) {
          const stored = yield* repo.get(org.id, record.id)
          expect(Option.map(stored, encode)).toEqual(Option.some(encode(record)))
          const locked = yield* repo.getForUpdate(org.id, record.id)
          expect(Option.map(locked, encode)).toEqual(Option.some(encode(record)))
        }
      }))

    it.effect("findCredential: the key with its owner and the owner's live roles, in role order", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const members = yield* MemberRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const later = yield* Fixtures.role(org.id, "Later", { now: at(20) })
        const earlier = yield* Fixtures.role(org.id, "Earlier", { now: at(10) })
        const record = key(org.id, member.id, { assumedRoles: [earlier.id] })
        yield* repo.create(record)
        expect(Option.isNone(yield* repo.findCredential(randomHash()))).toBe(true)

        // A member without roles: the key and the member, no roles.
        const bare = Option.getOrThrow(yield* repo.findCredential(record.secret_hash))
        expect(encode(bare.key)).toEqual(encode(record))
        expect(Option.map(bare.member, (m) => m.id)).toEqual(Option.some(member.id))
        expect(bare.roles).toEqual([])

        for (const role of [later, earlier]) yield* members.assignRole(org.id, member.id, role.id)
        const held = Option.getOrThrow(yield* repo.findCredential(record.secret_hash))
        expect(held.roles).toEqual([earlier, later])
        // A role taken away and a member soft-deleted show at once.
        yield* members.unassignRole(org.id, member.id, later.id)
        yield* members.softDelete(org.id, member.id, at(30))
        const after = Option.getOrThrow(yield* repo.findCredential(record.secret_hash))
        expect(after.roles).toEqual([earlier])
        expect(Option.map(after.member, (m) => m.deleted_at !== undefined)).toEqual(Option.some(true))
      }))

    it.effect("get and getForUpdate see only the key's own organization", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const other = yield* Fixtures.organization()
        const record = key(org.id, member.id)
        yield* repo.create(record)
        expect(Option.isNone(yield* repo.get(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.getForUpdate(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.get(org.id, ApiKeyId.make(Fixtures.uuid())))).toBe(true)
        expect(Option.isSome(yield* repo.get(org.id, record.id))).toBe(true)
      }))

    it.effect("findCredential finds a key in whichever organization it lives", () =>
      Effect.gen(function*() {
        const a = yield* Fixtures.organizationWithMember
        const b = yield* Fixtures.organizationWithMember
        const inA = key(a.org.id, a.member.id)
        const inB = key(b.org.id, b.member.id)
        yield* createAll([inA, inB])
        const foundA = yield* keyByHash(inA.secret_hash)
        const foundB = yield* keyByHash(inB.secret_hash)
        expect(Option.map(foundA, (row) => [row.id, row.organization_id])).toEqual(Option.some([inA.id, a.org.id]))
        expect(Option.map(foundB, (row) => [row.id, row.organization_id])).toEqual(Option.some([inB.id, b.org.id]))
        expect(Option.map(foundB, encode)).toEqual(Option.some(encode(inB)))
        expect(Option.isNone(yield* keyByHash(randomHash()))).toBe(true)
      }))

    it.effect("create rejects a duplicate id or secret hash with Conflict and keeps the original", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const original = key(org.id, member.id, { name: "original" })
        yield* repo.create(original)
        const sameId = key(org.id, member.id, { id: original.id, name: "same id" })
        const sameHash = key(org.id, member.id, { secretHash: original.secret_hash, name: "same hash" })
        expect((yield* Effect.flip(repo.create(sameId)))._tag).toBe("Conflict")
        expect((yield* Effect.flip(repo.create(sameHash)))._tag).toBe("Conflict")
        expect(Option.isNone(yield* repo.get(org.id, sameHash.id))).toBe(true)
        expect(Option.map(yield* repo.get(org.id, original.id), (row) => row.name)).toEqual(Option.some("original"))
        const other = yield* Fixtures.organizationWithMember
        const hashInOtherOrg = key(other.org.id, other.member.id, { secretHash: original.secret_hash })
        expect((yield* Effect.flip(repo.create(hashInOtherOrg)))._tag).toBe("Conflict")
      }))

    it.effect("revokeDescendants revokes the live keys down a parent's chain, in its organization only", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const child = (parent: ApiKey.ApiKeyRecord) =>
          key(org.id, member.id, { parent: { id: parent.id, expiresAt: parent.expires_at } })
        const root = key(org.id, member.id)
        const a = child(root)
        const b = child(root)
        const grandchild = child(a)
        const alreadyRevoked = revoked(child(root), at(5))
        const unrelated = key(org.id, member.id)
        const other = yield* Fixtures.organizationWithMember
        // The same parent id in another organization is another key's business.
        const foreign = key(other.org.id, other.member.id, { parent: { id: root.id, expiresAt: at(3600) } })
        yield* createAll([root, a, b, grandchild, alreadyRevoked, unrelated, foreign])
        const ids = yield* repo.revokeDescendants(org.id, root.id, at(60))
        expect([...ids].sort()).toEqual([a.id, b.id, grandchild.id].sort())
        for (const record of [a, b, grandchild]) {
          expect(Option.map(yield* repo.get(org.id, record.id), (r) => r.revoked_at)).toEqual(Option.some(at(60)))
        }
        expect(Option.map(yield* repo.get(org.id, alreadyRevoked.id), (r) => r.revoked_at)).toEqual(Option.some(at(5)))
        for (const [o, record] of [[org.id, root], [org.id, unrelated], [other.org.id, foreign]] as const) {
          expect(Option.map(yield* repo.get(o, record.id), (r) => r.revoked_at)).toEqual(Option.some(undefined))
        }
        expect(yield* repo.revokeDescendants(org.id, root.id, at(90))).toEqual([])
      }))

    it.effect("reparent hands a key's children to another key", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const old = key(org.id, member.id)
        const replacement = key(org.id, member.id)
        const kid = key(org.id, member.id, { parent: { id: old.id, expiresAt: old.expires_at } })
        yield* createAll([old, replacement, kid])
        yield* repo.reparent(org.id, old.id, replacement.id)
        expect(Option.map(yield* repo.get(org.id, kid.id), (r) => r.parent_key_id)).toEqual(Option.some(replacement.id))
        expect(yield* repo.revokeDescendants(org.id, old.id, at(60))).toEqual([])
        expect(yield* repo.revokeDescendants(org.id, replacement.id, at(60))).toEqual([kid.id])
      }))

    it.effect("update replaces the stored key (revocation persists)", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const record = key(org.id, member.id)
        yield* repo.create(record)
        const revokedRecord = revoked(record, at(30))
        yield* repo.update(revokedRecord)
        const stored = yield* repo.get(org.id, record.id)
        expect(Option.map(stored, encode)).toEqual(Option.some(encode(revokedRecord)))
        expect(Option.map(stored, (row) => ApiKey.statusAt(row, at(31)))).toEqual(Option.some("revoked"))
        const byHash = yield* keyByHash(record.secret_hash)
        expect(Option.flatMap(byHash, (row) => Option.fromNullable(row.revoked_at))).toEqual(Option.some(at(30)))
      }))

    it.effect("update of a key that is absent or in another organization is NotFound and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const other = yield* Fixtures.organizationWithMember
        const record = key(org.id, member.id)
        yield* repo.create(record)
        const hijack = new ApiKey.ApiKeyRecord({ ...revoked(record, at(5)), organization_id: other.org.id })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.get(org.id, record.id), encode)).toEqual(Option.some(encode(record)))
        expect(Option.isNone(yield* repo.get(other.org.id, record.id))).toBe(true)
        expect((yield* Effect.flip(repo.update(key(org.id, member.id))))._tag).toBe("NotFound")
      }))

    it.effect("list is newest first, ties broken by id descending, and never shows another organization", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const other = yield* Fixtures.organizationWithMember
        const records = [
          key(org.id, member.id, { now: at(1) }),
          key(org.id, member.id, { now: at(3) }),
          key(org.id, member.id, { now: at(2) }),
          key(org.id, member.id, { now: at(2) }),
          key(org.id, member.id, { now: at(2) })
        ]
        yield* createAll([...records, key(other.org.id, other.member.id, { now: at(2) })])
        const page = yield* repo.list(org.id, { limit: 10, includeRevoked: true })
        expect(page.items.map((row) => row.id)).toEqual(Fixtures.newestFirst(records))
        expect(page.nextCursor).toBeUndefined()
        expect(page.items.map(encode)).toEqual(
          Fixtures.newestFirst(records).map((id) => encode(records.find((r) => r.id === id)!))
        )
      }))

    it.effect("list pages neither repeat nor skip when newer keys arrive between pages", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const records = [10, 20, 20, 30, 40].map((s) => key(org.id, member.id, { now: at(s) }))
        yield* createAll(records)
        const options = { limit: 2, includeRevoked: false }
        const first = yield* repo.list(org.id, options)
        expect(first.items).toHaveLength(2)
        expect(first.nextCursor).toBeDefined()
        // Newer keys sort before the cursor and must not show up; an older one sorts after it and must.
        const older = key(org.id, member.id, { now: at(0) })
        yield* createAll([
          key(org.id, member.id, { now: at(50) }),
          key(org.id, member.id, { now: at(100) }),
          older
        ])
        const rest = yield* allIds(org.id, options, yield* Pagination.decodeCursor(first.nextCursor!))
        expect([...first.items.map((row) => row.id), ...rest]).toEqual(Fixtures.newestFirst([...records, older]))
      }))

    it.effect("list filters by owners and by revocation; expired keys are listed", () =>
      Effect.gen(function*() {
        const { member, org } = yield* Fixtures.organizationWithMember
        const second = yield* Fixtures.member(org.id)
        const third = yield* Fixtures.member(org.id, { isServiceAccount: true })
        const own = key(org.id, member.id, { now: at(1) })
        const ownExpired = key(org.id, member.id, { now: at(2), expirySeconds: 1 })
        const ownRevoked = revoked(key(org.id, member.id, { now: at(3) }), at(4))
        const secondKey = key(org.id, second.id, { now: at(5) })
        const thirdKey = key(org.id, third.id, { now: at(6) })
        yield* createAll([own, ownExpired, ownRevoked, secondKey, thirdKey])
        const ids = (options: Omit<ApiKeyRepo.ListOptions, "after" | "limit">) =>
          allIds(org.id, { ...options, limit: 2 })

        expect(yield* ids({ memberIds: [member.id], includeRevoked: false })).toEqual([ownExpired.id, own.id])
        expect(yield* ids({ memberIds: [member.id], includeRevoked: true })).toEqual([
          ownRevoked.id,
          ownExpired.id,
          own.id
        ])
        expect(yield* ids({ memberIds: [member.id, third.id], includeRevoked: false })).toEqual([
          thirdKey.id,
          ownExpired.id,
          own.id
        ])
        expect(yield* ids({ memberIds: [], includeRevoked: true })).toEqual([])
        expect(yield* ids({ includeRevoked: false })).toEqual([thirdKey.id, secondKey.id, ownExpired.id, own.id])
        expect(yield* ids({ includeRevoked: true })).toEqual(
          Fixtures.newestFirst([own, ownExpired, ownRevoked, secondKey, thirdKey])
        )
      }))

    it.effect("a failed transaction leaves neither the key nor its audit entry", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const audit = yield* AuditLogRepo
        const tx = yield* Transaction
        const { member, org } = yield* Fixtures.organizationWithMember
        const mintWithAudit = (record: ApiKey.ApiKeyRecord) =>
          Effect.zipRight(
            repo.create(record),
            audit.append(
              new AuditLog.AuditLogRecord({
                id: AuditLogEntryId.make(Fixtures.uuid()),
                organization_id: org.id,
                actor_id: member.id,
                action: "api_key.create",
                resource_type: "api_key",
                resource_id: record.id,
                details: { name: record.name },
                auth_method: "jwt",
                created_at: base
              })
            )
          )

        const failed = key(org.id, member.id)
        const exit = yield* Effect.exit(tx.withTransaction(
          Effect.zipRight(mintWithAudit(failed), Effect.fail("boom" as const))
        ))
        expect(exit._tag).toBe("Failure")
        expect(Option.isNone(yield* repo.get(org.id, failed.id))).toBe(true)
        expect(Option.isNone(yield* keyByHash(failed.secret_hash))).toBe(true)
        expect((yield* audit.list(org.id, { limit: 10 })).items).toEqual([])

        const committed = key(org.id, member.id)
        yield* tx.withTransaction(mintWithAudit(committed))
        expect(Option.isSome(yield* repo.get(org.id, committed.id))).toBe(true)
        expect((yield* audit.list(org.id, { limit: 10 })).items.map((e) => e.resource_id)).toEqual([committed.id])
      }))
  })
}
