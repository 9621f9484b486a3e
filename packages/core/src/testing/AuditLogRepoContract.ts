/**
 * The contract every `AuditLogRepo` implementation must meet.
 *
 * It runs on a shared, non-empty database: each test makes its own organizations and members with
 * random ids and never assumes a table is empty.
 *
 * @since 0.1.0
 */
import { expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AuditLog from "../AuditLog.js"
import { AuditLogRepo } from "../AuditLogRepo.js"
import { AuditLogEntryId, type MemberId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * Every port the suite needs (the SQL adapter's foreign keys need organizations and members).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = AuditLogRepo | OrganizationRepo | MemberRepo | Transaction

const base = DateTime.unsafeMake("2026-02-10T08:00:00.456Z")
const at = (seconds: number) => DateTime.add(base, { seconds })
const encode = (record: AuditLog.AuditLogRecord) => Schema.encodeSync(AuditLog.AuditLogRecord)(record)

const entry = (
  organizationId: OrganizationId,
  actorId: MemberId | undefined,
  options: {
    readonly action?: AuditLog.Action
    readonly at?: DateTime.Utc
    readonly details?: AuditLog.Details
  } = {}
) =>
  new AuditLog.AuditLogRecord({
    id: AuditLogEntryId.make(Fixtures.uuid()),
    organization_id: organizationId,
    ...(actorId === undefined ? {} : { actor_id: actorId }),
    action: options.action ?? "role.update",
    resource_type: "role",
    resource_id: Fixtures.uuid(),
    details: options.details ?? {},
    auth_method: actorId === undefined ? "system" : "api_key",
    created_at: options.at ?? base
  })

const appendAll = (records: ReadonlyArray<AuditLog.AuditLogRecord>) =>
  Effect.flatMap(AuditLogRepo, (repo) => Effect.forEach(records, repo.append, { discard: true }))

/** Every id a listing returns, following cursors, with at most `limit` rows per page. */
const allIds = (organizationId: OrganizationId, options: Omit<AuditLogRepo.ListOptions, "after">) =>
  Fixtures.allIds(
    options.limit,
    (after) => Effect.flatMap(AuditLogRepo, (repo) => repo.list(organizationId, { ...options, after }))
  )

/**
 * Registers the `AuditLogRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const auditLogRepoContract = (name: string, layer: Layer.Layer<Requirements, unknown>): void => {
  // One layer for the whole suite: the tests share its state as they would share a database.
  it.layer(layer)(name, (it) => {
    it.effect("append then list round-trips every field, with or without an actor", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const detailed = entry(org.id, member.id, {
          action: "api_key.create",
          at: at(1),
          details: {
            name: "Embed key — ünïcode",
            assumed_roles: [Fixtures.uuid(), Fixtures.uuid()],
            expires_in_seconds: 3600,
            ratio: 0.25,
            full_member_access: true,
            client: { tenant: "acme", tags: ["a", "b"], nested: { deep: null } }
          }
        })
        const system = entry(org.id, undefined, { action: "scim_group_mapping.migrate", at: at(2) })
        yield* appendAll([detailed, system])
        const page = yield* repo.list(org.id, { limit: 10 })
        expect(page.items.map(encode)).toEqual([encode(system), encode(detailed)])
        expect(page.items[0]!.actor_id).toBeUndefined()
        expect(AuditLog.toEntry(page.items[1]!).actor_id).toBe(member.id)
      }))

    it.effect("usage sums the model.usage entries of a period per member, key and model, and nothing else", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const other = yield* Fixtures.organizationWithMember
        const key = Fixtures.uuid()
        const usage = (seconds: number, details: AuditLog.Details, organizationId = org.id) =>
          entry(organizationId, member.id, { action: "model.usage", at: at(seconds), details })
        yield* appendAll([
          usage(10, { model: "gpt", api_key_id: key, input: 100, output: 10, calls: [{}, {}] }),
          usage(11, { model: "gpt", api_key_id: key, input: 50, output: 5, calls: [{}] }),
          usage(12, { model: "offline", input: 0, output: 0, calls: [{}] }),
          // Outside the period, of another action, of another organization.
          usage(30, { model: "gpt", api_key_id: key, input: 1000, output: 1000, calls: [{}] }),
          entry(org.id, member.id, { action: "role.update", at: at(12), details: { input: 7 } }),
          usage(12, { model: "gpt", input: 9, output: 9, calls: [{}] }, other.org.id)
        ])
        const sums = yield* repo.usage(org.id, { from: at(10), to: at(30) })
        const sorted = [...sums].sort((a, b) => a.model.localeCompare(b.model))
        expect(sorted).toEqual([
          { memberId: member.id, apiKeyId: key, model: "gpt", answers: 2, calls: 3, input: 150, output: 15 },
          { memberId: member.id, model: "offline", answers: 1, calls: 1, input: 0, output: 0 }
        ])
      }))

    it.effect("list sees only the organization's own entries", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const a = yield* Fixtures.organizationWithMember
        const b = yield* Fixtures.organizationWithMember
        const inA = entry(a.org.id, a.member.id)
        yield* appendAll([inA, entry(b.org.id, b.member.id), entry(b.org.id, b.member.id)])
        expect((yield* repo.list(a.org.id, { limit: 10 })).items.map((row) => row.id)).toEqual([inA.id])
        expect((yield* repo.list(b.org.id, { limit: 10, actorId: a.member.id })).items).toEqual([])
      }))

    it.effect("list is newest first with ties broken by id, and pages survive newer entries", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const records = [5, 5, 5, 10, 20, 20, 30].map((s) => entry(org.id, member.id, { at: at(s) }))
        yield* appendAll(records)
        const first = yield* repo.list(org.id, { limit: 3 })
        expect(first.items.map((row) => row.id)).toEqual(Fixtures.newestFirst(records).slice(0, 3))
        // Newer entries sort before the cursor and must not appear; an older one sorts after it and must.
        const older = entry(org.id, member.id, { at: at(1) })
        yield* appendAll([entry(org.id, member.id, { at: at(40) }), entry(org.id, member.id, { at: at(31) }), older])
        const ids = first.items.map((row) => row.id)
        let cursor = first.nextCursor
        while (cursor !== undefined) {
          const page = yield* repo.list(org.id, { limit: 3, after: yield* Pagination.decodeCursor(cursor) })
          expect(page.items.length).toBeLessThanOrEqual(3)
          ids.push(...page.items.map((row) => row.id))
          cursor = page.nextCursor
        }
        expect(ids).toEqual(Fixtures.newestFirst([...records, older]))
      }))

    it.effect("list filters by action and by actor, alone and together", () =>
      Effect.gen(function*() {
        const { member, org } = yield* Fixtures.organizationWithMember
        const other = yield* Fixtures.member(org.id)
        const create = entry(org.id, member.id, { action: "api_key.create", at: at(1) })
        const revoke = entry(org.id, member.id, { action: "api_key.revoke", at: at(2) })
        const otherCreate = entry(org.id, other.id, { action: "api_key.create", at: at(3) })
        const system = entry(org.id, undefined, { action: "api_key.create", at: at(4) })
        yield* appendAll([create, revoke, otherCreate, system])
        expect(yield* allIds(org.id, { limit: 1, action: "api_key.create" })).toEqual([
          system.id,
          otherCreate.id,
          create.id
        ])
        expect(yield* allIds(org.id, { limit: 1, actorId: member.id })).toEqual([revoke.id, create.id])
        expect(yield* allIds(org.id, { limit: 1, actorId: member.id, action: "api_key.create" })).toEqual([create.id])
        expect(yield* allIds(org.id, { limit: 1, action: "role.delete" })).toEqual([])
        expect(yield* allIds(org.id, { limit: 2 })).toEqual([system.id, otherCreate.id, revoke.id, create.id])
      }))

    it.effect("a failed transaction leaves no entry; a committed one keeps it", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const tx = yield* Transaction
        const { member, org } = yield* Fixtures.organizationWithMember
        const exit = yield* Effect.exit(tx.withTransaction(
          Effect.zipRight(appendAll([entry(org.id, member.id)]), Effect.fail("boom" as const))
        ))
        expect(exit._tag).toBe("Failure")
        expect((yield* repo.list(org.id, { limit: 10 })).items).toEqual([])
        const kept = entry(org.id, member.id)
        yield* tx.withTransaction(appendAll([kept]))
        expect((yield* repo.list(org.id, { limit: 10 })).items.map((row) => row.id)).toEqual([kept.id])
      }))

    it.effect("appending an id twice is a defect and keeps the first entry", () =>
      Effect.gen(function*() {
        const repo = yield* AuditLogRepo
        const { member, org } = yield* Fixtures.organizationWithMember
        const first = entry(org.id, member.id, { action: "role.create" })
        yield* repo.append(first)
        const exit = yield* Effect.exit(repo.append(new AuditLog.AuditLogRecord({ ...first, action: "role.delete" })))
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
        expect((yield* repo.list(org.id, { limit: 10 })).items.map((row) => row.action)).toEqual(["role.create"])
      }))
  })
}
