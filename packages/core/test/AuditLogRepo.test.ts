import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as AuditLog from "../src/AuditLog.js"
import * as AuditLogRepo from "../src/AuditLogRepo.js"
import * as Auditor from "../src/Auditor.js"
import * as IdGenerator from "../src/IdGenerator.js"
import { ApiKeyId, MemberId, OrganizationId } from "../src/Ids.js"
import * as MemberRepo from "../src/MemberRepo.js"
import * as OrganizationRepo from "../src/OrganizationRepo.js"
import * as Policy from "../src/Policy.js"
import { auditLogRepoContract } from "../src/testing/AuditLogRepoContract.js"
import * as Transaction from "../src/Transaction.js"

const memory = Layer.mergeAll(AuditLogRepo.layerMemory, OrganizationRepo.layerMemory, MemberRepo.layerMemory).pipe(
  Layer.provideMerge(Transaction.layerMemory)
)

auditLogRepoContract("AuditLogRepo.layerMemory", memory)

const org = OrganizationId.make("00000000-0000-4000-8000-00000000a001")
const actor = MemberId.make("00000000-0000-4000-8000-00000000b001")

describe("AuditLog.Details", () => {
  const decode = Schema.decodeUnknownEither(AuditLog.Details)
  const errorOf = (details: unknown) => {
    const result = decode(details)
    return Either.isLeft(result) ? result.left.message : "decoded"
  }

  it("accepts any JSON object without secret-like property names", () => {
    const details = { name: "ci", roles: ["a"], n: 1.5, ok: true, none: null, nested: { key_id: "k" } }
    expect(decode(details)).toEqual(Either.right(details))
  })

  it("rejects secret-like property names at any depth", () => {
    for (
      const details of [
        { secret: "x" },
        { secret_hash: "x" },
        { Password: "x" },
        { key: "x" },
        { nested: { access_token: "x" } },
        { list: [{ ok: 1 }, { credentials: "x" }] }
      ]
    ) {
      expect(errorOf(details)).toContain("audit details must not carry secrets")
    }
  })

  it("rejects values JSON cannot carry and non-objects", () => {
    for (const details of [{ n: Number.NaN }, { n: Infinity }, { u: undefined }, { f: () => 1 }, [1], "x", null]) {
      expect(errorOf(details)).not.toBe("decoded")
    }
  })
})

describe("Auditor.record", () => {
  const layer = Auditor.layer.pipe(Layer.provideMerge(Layer.mergeAll(memory, IdGenerator.layerTest)))

  it.effect("appends an entry stamped with a new id and the current time", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-04-01T10:00:00.000Z"))
      const recorded = yield* (yield* Auditor.Auditor).record({
        organizationId: org,
        actorId: actor,
        authMethod: "jwt",
        action: "api_key.revoke",
        resourceType: "api_key",
        resourceId: "00000000-0000-4000-8000-00000000c001",
        details: { name: "ci" }
      })
      expect(Schema.encodeSync(AuditLog.AuditLogEntry)(AuditLog.toEntry(recorded))).toEqual({
        id: "00000000-0000-4000-8000-000000000001",
        actor_id: actor,
        action: "api_key.revoke",
        resource_type: "api_key",
        resource_id: "00000000-0000-4000-8000-00000000c001",
        details: { name: "ci" },
        auth_method: "jwt",
        created_at: "2026-04-01T10:00:00.000Z"
      })
      const system = yield* (yield* Auditor.Auditor).record({
        organizationId: org,
        authMethod: "system",
        action: "scim_group_mapping.migrate",
        resourceType: "organization",
        resourceId: org
      })
      expect(system.actor_id).toBeUndefined()
      expect(system.details).toEqual({})
      const repo = yield* AuditLogRepo.AuditLogRepo
      expect((yield* repo.list(org, { limit: 10 })).items.map((e) => e.id)).toEqual([system.id, recorded.id])
    }).pipe(Effect.provide(layer)))

  it.effect("details that look like a secret are a defect and nothing is appended", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit((yield* Auditor.Auditor).record({
        organizationId: org,
        actorId: actor,
        authMethod: "api_key",
        action: "api_key.create",
        resourceType: "api_key",
        resourceId: "00000000-0000-4000-8000-00000000c002",
        details: { key: "c2VjcmV0" }
      }))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      const repo = yield* AuditLogRepo.AuditLogRepo
      expect((yield* repo.list(org, { limit: 10 })).items).toEqual([])
    }).pipe(Effect.provide(layer)))
})

describe("AuditLog wire shapes", () => {
  it("ListAuditLogs defaults to 50 per page and validates its filters", () => {
    const decode = Schema.decodeUnknownEither(AuditLog.ListAuditLogs)
    expect(decode({})).toEqual(Either.right({ page_size: 50 }))
    expect(decode({ cursor: "c", page_size: "100", action: "role.create", actor_id: actor })).toEqual(
      Either.right({ cursor: "c", page_size: 100, action: "role.create", actor_id: actor })
    )
    for (const query of [{ page_size: "0" }, { page_size: "101" }, { action: "role.explode" }, { actor_id: "bob" }]) {
      expect(Either.isLeft(decode(query))).toBe(true)
    }
  })
})

describe("Auditor", () => {
  const layer = Auditor.layer.pipe(Layer.provideMerge(Layer.mergeAll(memory, IdGenerator.layerTest)))

  it.effect("recordBy stamps the principal's organization, member and auth method", () =>
    Effect.gen(function*() {
      const auditor = yield* Auditor.Auditor
      const principal: Policy.Principal = {
        organizationId: org,
        memberId: actor,
        isServiceAccount: false,
        roles: [],
        auth: Policy.ApiKey({
          keyId: ApiKeyId.make("00000000-0000-4000-8000-00000000a001"),
          assumedRoleIds: [],
          inheritAllRoles: true,
          fullMemberAccess: false
        })
      }
      const entry = yield* auditor.recordBy(principal, {
        action: "playbook.delete",
        resourceType: "playbook",
        resourceId: "00000000-0000-4000-8000-00000000b001",
        details: { name: "weekly" }
      })
      expect(entry).toMatchObject({
        organization_id: org,
        actor_id: actor,
        auth_method: "api_key",
        action: "playbook.delete",
        details: { name: "weekly" }
      })
      const repo = yield* AuditLogRepo.AuditLogRepo
      expect((yield* repo.list(org, { limit: 10 })).items.map((e) => e.id)).toEqual([entry.id])
    }).pipe(Effect.provide(layer)))
})
