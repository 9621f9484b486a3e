/**
 * What the ApiKeyRepo contract cannot show, on real databases:
 * - no secret in clear: after minting a key, no column of any table holds the secret in any encoding;
 * - a revocation that has committed is seen by every lookup that starts afterwards;
 * - authentication and keyset pages are served by indexes (EXPLAIN of the statements the repository
 *   actually runs, on a table with thousands of keys).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as ApiKey from "@sightline/core/ApiKey"
import { ApiKeyRepo } from "@sightline/core/ApiKeyRepo"
import { ApiKeyId, type MemberId, type OrganizationId, RoleId } from "@sightline/core/Ids"
import { MemberRepo } from "@sightline/core/MemberRepo"
import * as Pagination from "@sightline/core/Pagination"
import { RoleRecord } from "@sightline/core/Role"
import { RoleRepo } from "@sightline/core/RoleRepo"
import * as Secret from "@sightline/core/Secret"
import { Fixtures } from "@sightline/core/testing"
import { Transaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const mintRecord = (
  organizationId: OrganizationId,
  memberId: MemberId,
  secretHash: Secret.SecretHash,
  now: DateTime.Utc
) =>
  ApiKey.mint({
    id: ApiKeyId.make(Fixtures.uuid()),
    organizationId,
    memberId,
    createdBy: memberId,
    secretHash,
    now,
    assumedRoles: [RoleId.make(Fixtures.uuid())],
    name: "dump test"
  })

/** Every row of every table under the store's prefix, each rendered as text (`row::text`). */
const dumpPrefixTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const prefix = (yield* TablePrefix).prefix
  const tables = yield* sql<{ tablename: string }>`
    SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND starts_with(tablename, ${prefix})`
  const rows = yield* Effect.forEach(
    tables,
    ({ tablename }) =>
      sql<{ row: string }>`SELECT t::text AS row FROM ${sql(tablename)} t`.pipe(
        Effect.map((rows) => rows.map(({ row }) => `${tablename}: ${row}`))
      )
  )
  return { tables: tables.map((t) => t.tablename), text: rows.flat().join("\n") }
})

/** Every encoding of a secret (and of its bytes) that would let someone recover it. */
const recoverableForms = (secret: string): ReadonlyArray<string> => {
  const bytes = Either.getOrThrow(Encoding.decodeBase64(secret))
  const textBytes = new TextEncoder().encode(secret)
  const unpadded = (s: string) => s.replace(/=+$/, "")
  const forms = [
    secret,
    unpadded(secret),
    Encoding.encodeBase64Url(bytes),
    unpadded(Encoding.encodeBase64Url(bytes)),
    Encoding.encodeHex(bytes),
    Encoding.encodeHex(bytes).toUpperCase(),
    // The secret's own text, re-encoded.
    Encoding.encodeHex(textBytes),
    Encoding.encodeBase64(textBytes),
    Encoding.encodeBase64Url(textBytes),
    encodeURIComponent(secret)
  ]
  return Arr.dedupe(forms)
}

forEachDatabase((database) =>
  describe(`ApiKeyRepoSql (${database.name})`, () => {
    it.live("no secret in clear: no column of any table holds the secret or any reversible form of it", () =>
      Effect.gen(function*() {
        const hasher = yield* Secret.SecretHasher
        const repo = yield* ApiKeyRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const secret = yield* hasher.generate
        expect(Secret.isWellFormed(secret)).toBe(true)
        const hash = yield* hasher.hash(secret)
        const record = mintRecord(org.id, member.id, hash, yield* DateTime.now)
        yield* repo.create(record)

        const dump = yield* dumpPrefixTables
        expect(dump.tables.length).toBeGreaterThan(5)
        // The key is in the dump (so the search below looks at it), with its SHA-256 only.
        expect(dump.text).toContain(record.id)
        expect(dump.text).toContain(hash)
        const haystack = dump.text.toLowerCase()
        for (const form of recoverableForms(secret)) {
          expect(dump.text.includes(form), `the dump contains ${form}`).toBe(false)
          expect(haystack.includes(form.toLowerCase()), `the dump contains ${form} (any case)`).toBe(false)
        }
        // And the stored hash is exactly the SHA-256 of the secret's text, nothing derived otherwise.
        expect(Option.map(yield* repo.findCredential(yield* Secret.sha256Hex(secret)), (found) => found.key.id))
          .toEqual(Option.some(record.id))
      }).pipe(
        Effect.provide(database.store(database.freshPrefix())),
        Effect.provide(Secret.layer)
      ))

    it.live("findCredential decodes unchanged rows once; a removed or edited role, a revocation or a deleted owner is read afresh", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const members = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const roles = yield* Fixtures.systemRoles(org.id)
        const member = yield* Fixtures.member(org.id, { roleIds: [roles.admin.id, roles.member.id] })
        const record = mintRecord(org.id, member.id, yield* Secret.sha256Hex(Fixtures.uuid()), yield* DateTime.now)
        yield* repo.create(record)
        const find = Effect.map(repo.findCredential(record.secret_hash), Option.getOrThrow)

        const first = yield* find
        expect(first.roles.map((role) => role.id)).toHaveLength(2)
        // Read as the rows' JSON, the credential decodes to what the repositories read column by
        // column (timestamps included).
        expect(first.key).toStrictEqual(Option.getOrThrow(yield* repo.get(org.id, record.id)))
        expect(first.member).toStrictEqual(yield* members.get(org.id, member.id))
        expect(first.roles).toStrictEqual(yield* (yield* RoleRepo).heldBy(org.id, member.id))
        // The same rows: the same decoded credential.
        expect(yield* find).toBe(first)

        yield* members.unassignRole(org.id, member.id, roles.admin.id)
        const fewer = yield* find
        expect(fewer.roles.map((role) => role.id)).toEqual([roles.member.id])
        expect(yield* find).toBe(fewer)

        // A role edited in place: the same rows by id, one of them rewritten.
        const roleRepo = yield* RoleRepo
        const held = Option.getOrThrow(yield* roleRepo.get(org.id, roles.member.id))
        yield* Effect.orDie(roleRepo.update(new RoleRecord({ ...held, description: "edited in place" })))
        expect((yield* find).roles.map((role) => role.description)).toEqual(["edited in place"])

        const stored = Option.getOrThrow(yield* repo.get(org.id, record.id))
        yield* Effect.orDie(repo.update(Either.getOrThrow(ApiKey.revoke(stored, yield* DateTime.now))))
        expect((yield* find).key.revoked_at).toBeDefined()

        yield* Effect.orDie(members.softDelete(org.id, member.id, yield* DateTime.now))
        expect(Option.getOrThrow((yield* find).member).deleted_at).toBeDefined()
      }).pipe(Effect.provide(database.store(database.freshPrefix()))))

    /** The key with this secret hash, as authentication finds it (its owner and roles set aside). */
    const keyByHash = (repo: ApiKeyRepo.Service) => (hash: Secret.SecretHash) =>
      Effect.map(repo.findCredential(hash), Option.map((found) => found.key))

    /**
     * Readers look the key up by hash (as authentication does) and derive its status, in a loop, while
     * a transaction locks the key, writes the revocation and holds it uncommitted for a while. Each read
     * notes the phase it started in. Returns every read.
     */
    const readsAroundRevocation = (
      lookupOf: (repo: ApiKeyRepo.Service) => Effect.Effect<
        (hash: Secret.SecretHash) => Effect.Effect<Option.Option<ApiKey.ApiKeyRecord>>
      >
    ) =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepo
        const tx = yield* Transaction
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const secret = yield* Secret.sha256Hex(Fixtures.uuid())
        const record = mintRecord(org.id, member.id, secret, yield* DateTime.now)
        yield* repo.create(record)
        const lookup = yield* lookupOf(repo)

        const phase = yield* Ref.make<"before" | "open" | "after">("before")
        const stop = yield* Ref.make(false)
        const reads: Array<{ readonly phase: "before" | "open" | "after"; readonly status: string }> = []
        const reader = Effect.gen(function*() {
          while (!(yield* Ref.get(stop))) {
            // The phase is read before the lookup is sent: a read marked "after" started after the
            // commit was acknowledged.
            const startedIn = yield* Ref.get(phase)
            const found = yield* lookup(record.secret_hash)
            const now = yield* DateTime.now
            reads.push({
              phase: startedIn,
              status: Option.match(found, { onNone: () => "missing", onSome: (key) => ApiKey.statusAt(key, now) })
            })
            // A breath between reads, so that a lookup answered without I/O cannot starve the timers.
            yield* Effect.sleep(Duration.millis(1))
          }
        })
        const readers = yield* Effect.fork(Effect.all(Arr.makeBy(6, () => reader), { concurrency: "unbounded" }))

        yield* Effect.sleep(Duration.millis(100))
        yield* tx.withTransaction(Effect.gen(function*() {
          const locked = Option.getOrThrow(yield* repo.getForUpdate(org.id, record.id))
          yield* Effect.orDie(repo.update(Either.getOrThrow(ApiKey.revoke(locked, yield* DateTime.now))))
          yield* Ref.set(phase, "open")
          // Written, not committed: readers race the open revocation.
          yield* Effect.sleep(Duration.millis(300))
        }))
        yield* Ref.set(phase, "after")
        yield* Effect.sleep(Duration.millis(300))
        yield* Ref.set(stop, true)
        yield* Fiber.join(readers)
        return reads
      })

    const through = (phase: string, reads: ReadonlyArray<{ readonly phase: string; readonly status: string }>) =>
      reads.filter((read) => read.phase === phase)

    it.live("revoke vs verify: once the revocation commits, no lookup sees the key active", () =>
      Effect.gen(function*() {
        const reads = yield* readsAroundRevocation((repo) => Effect.succeed(keyByHash(repo)))
        expect(through("before", reads).length).toBeGreaterThan(0)
        expect(through("before", reads).every((read) => read.status === "active")).toBe(true)
        expect(through("after", reads).length).toBeGreaterThan(0)
        expect(through("after", reads).filter((read) => read.status !== "revoked")).toEqual([])
        if (database.name === "postgres") {
          // Readers really overlapped the open transaction, and saw the committed state (no dirty read).
          expect(through("open", reads).some((read) => read.status === "active")).toBe(true)
        }
      }).pipe(Effect.provide(database.shared)), 60_000)

    it.live("revoke vs verify: the same check catches a lookup that can return a stale key", () =>
      Effect.gen(function*() {
        // A lookup that remembers what it found (a cache in front of the repository): the check
        // above must fail on it, or it proves nothing.
        const reads = yield* readsAroundRevocation((repo) =>
          Effect.map(
            Ref.make(Option.none<ApiKey.ApiKeyRecord>()),
            (cache) =>
            (hash: Secret.SecretHash) =>
              Effect.flatMap(Ref.get(cache), (cached) =>
                Option.isSome(cached)
                  ? Effect.succeed(cached)
                  : Effect.tap(keyByHash(repo)(hash), (found) => Ref.set(cache, found)))
          )
        )
        expect(through("after", reads).filter((read) => read.status !== "revoked").length).toBeGreaterThan(0)
      }).pipe(Effect.provide(database.shared)), 60_000)

    describe("indexes (EXPLAIN of the repository's own statements, thousands of keys)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      /** 20 organizations of 5 members with 60 keys each (6 000 keys, one in ten revoked). */
      const populate = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* Effect.forEach(Arr.range(1, 20), () =>
          Fixtures.organization())
        const members = yield* Effect.forEach(orgs, (org) =>
          Effect.forEach(Arr.range(1, 5), () =>
            Fixtures.member(org.id)))
        const apiKeys = sql(`${prefix}api_keys`)
        yield* sql`INSERT INTO ${apiKeys} (id, organization_id, member_id, name, client_id, assumed_roles,
            inherit_all_roles, full_member_access, created_at, expires_at, revoked_at, secret_hash, created_by)
          SELECT gen_random_uuid(), m.organization_id, m.id, 'bulk', '', '{}', false, false,
            timestamptz '2025-01-01T00:00:00Z' + g * interval '1 minute', timestamptz '2027-01-01T00:00:00Z',
            CASE WHEN g % 10 = 0 THEN timestamptz '2026-01-01T00:00:00Z' END,
            encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex'), m.id
          FROM ${sql(`${prefix}members`)} m, generate_series(1, 60) g
          WHERE m.organization_id IN ${
          sql.in(orgs.map((org) => org.id))
        }`
        yield* sql`ANALYZE ${apiKeys}`
        return { org: orgs[7]!, members: members[7]! }
      })

      const indexScanOn = (plan: string, ...indexes: ReadonlyArray<string>) =>
        indexes.some((index) => new RegExp(`Index (Only )?Scan( Backward)? using ${prefix}${index}\\b`).test(plan))

      it.live("findCredential is an index scan on the unique hash index", () =>
        Effect.gen(function*() {
          const repo = yield* ApiKeyRepo
          const { members, org } = yield* populate
          const record = mintRecord(
            org.id,
            members[0]!.id,
            yield* Secret.sha256Hex(Fixtures.uuid()),
            yield* DateTime.now
          )
          yield* repo.create(record)
          // The first lookup reads the credential's version, then its rows; the next, the version alone.
          const first = yield* capturePlans(repo.findCredential(record.secret_hash))
          const again = yield* capturePlans(repo.findCredential(record.secret_hash))
          for (const { result } of [first, again]) {
            expect(Option.map(result, (found) => found.key.id)).toEqual(Option.some(record.id))
          }
          expect(first.plans).toHaveLength(2)
          expect(again.plans).toHaveLength(1)
          for (const { plan } of [...first.plans, ...again.plans]) {
            expect(plan).toMatch(new RegExp(`Index Scan using ${prefix}api_keys_secret_hash_key`))
          }
        }).pipe(Effect.provide(store)), 120_000)

      it.live("keyset pages read an index in order: no sequential scan, no sort", () =>
        Effect.gen(function*() {
          const repo = yield* ApiKeyRepo
          const { members, org } = yield* populate
          const first = yield* capturePlans(repo.list(org.id, { limit: 20, includeRevoked: true }))
          expect(first.result.items).toHaveLength(20)
          const after = yield* Pagination.decodeCursor(first.result.nextCursor!)
          const next = yield* capturePlans(repo.list(org.id, { limit: 20, includeRevoked: false, after }))
          expect(next.result.items).toHaveLength(20)
          const owner = yield* capturePlans(
            repo.list(org.id, { limit: 20, includeRevoked: false, memberIds: [members[2]!.id], after })
          )
          expect(owner.result.items.length).toBeGreaterThan(0)
          const owners = yield* capturePlans(
            repo.list(org.id, { limit: 20, includeRevoked: false, memberIds: [members[1]!.id, members[3]!.id] })
          )
          expect(owners.result.items).toHaveLength(20)

          for (const { plans } of [first, next, owner]) {
            expect(plans).toHaveLength(1)
            expect(indexScanOn(plans[0]!.plan, "api_keys_created_idx", "api_keys_member_created_idx")).toBe(true)
            expect(plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
          }
          // Several owners: an index still narrows the scan (a top-N sort of one organization's keys
          // of those owners is acceptable).
          expect(owners.plans[0]!.plan).toMatch(new RegExp(`Index (Only )?Scan.* (using|on) ${prefix}api_keys_`))
          expect(owners.plans[0]!.plan).not.toMatch(/Seq Scan/)
          // The cursor is an index condition, not a filter applied after reading from the start.
          expect(next.plans[0]!.plan).toMatch(/Index Cond: .*created_at/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)
