import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import type * as AuditLog from "../src/AuditLog.js"
import * as AuditLogs from "../src/AuditLogs.js"
import * as Members from "../src/Members.js"
import * as Organizations from "../src/Organizations.js"
import * as Pagination from "../src/Pagination.js"
import * as Roles from "../src/Roles.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.mergeAll(Organizations.layer, Members.layer, Roles.layer, AuditLogs.layer).pipe(
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

const query = (fields: Partial<AuditLog.ListAuditLogs> = {}): AuditLog.ListAuditLogs => ({
  page_size: 50,
  ...fields
})

// Five audited actions a second apart: the bootstrap's system invite, two invites by the admin, a
// role created by the admin and a role created by a second admin.
const setup = Effect.gen(function*() {
  const { admin, created, org } = yield* Fixtures.organizationWithAdmin()
  const members = yield* Members.Members
  yield* TestClock.adjust("1 second")
  const { member_id: bobId } = yield* members.invite(admin, { email: "bob@acme.example", role: "member" })
  yield* TestClock.adjust("1 second")
  const { member_id: eveId } = yield* members.invite(admin, { email: "eve@acme.example", role: "admin" })
  yield* TestClock.adjust("1 second")
  yield* (yield* Roles.Roles).create(admin, { name: "Analysts" })
  yield* TestClock.adjust("1 second")
  const eve = yield* Fixtures.principal(org, eveId)
  yield* (yield* Roles.Roles).create(eve, { name: "Writers" })
  return { created, org, admin, eve, member: yield* Fixtures.principal(org, bobId) }
})

describe("AuditLogs.list", () => {
  it.effect("lists the organization's entries newest first, in the served shape", () =>
    run(Effect.gen(function*() {
      const { admin, created, eve } = yield* setup
      const { entries, next_cursor } = yield* (yield* AuditLogs.AuditLogs).list(admin, query())
      expect(entries.map((e) => [e.action, e.actor_id, e.auth_method])).toEqual([
        ["role.create", eve.memberId, "jwt"],
        ["role.create", admin.memberId, "jwt"],
        ["member.invite", admin.memberId, "jwt"],
        ["member.invite", admin.memberId, "jwt"],
        ["member.invite", undefined, "system"]
      ])
      expect(entries[4]).toMatchObject({ resource_type: "member", resource_id: created.admin.id })
      expect(entries.every((e) => !("organization_id" in e))).toBe(true)
      expect(next_cursor).toBeUndefined()
    })))

  it.effect("filters by action and by actor", () =>
    run(Effect.gen(function*() {
      const { admin, eve } = yield* setup
      const service = yield* AuditLogs.AuditLogs
      const roles = yield* service.list(admin, query({ action: "role.create" }))
      expect(roles.entries.map((e) => e.details["name"])).toEqual(["Writers", "Analysts"])
      const byEve = yield* service.list(admin, query({ actor_id: eve.memberId }))
      expect(byEve.entries.map((e) => e.action)).toEqual(["role.create"])
      const both = yield* service.list(admin, query({ action: "member.invite", actor_id: eve.memberId }))
      expect(both.entries).toEqual([])
    })))

  it.effect("pages with an opaque cursor until the last page, which has none", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const service = yield* AuditLogs.AuditLogs
      const all = (yield* service.list(admin, query())).entries
      const first = yield* service.list(admin, query({ page_size: 2 }))
      expect(first.entries).toEqual(all.slice(0, 2))
      const second = yield* service.list(admin, query({ page_size: 2, cursor: first.next_cursor! }))
      expect(second.entries).toEqual(all.slice(2, 4))
      const last = yield* service.list(admin, query({ page_size: 2, cursor: second.next_cursor! }))
      expect(last.entries).toEqual(all.slice(4))
      expect(last.next_cursor).toBeUndefined()
    })))

  it.effect("rejects a cursor that is not one of ours", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const service = yield* AuditLogs.AuditLogs
      const valid = Pagination.encodeCursor({
        at: "2026-11-22T10:00:00.000Z",
        id: "00000000-0000-4000-8000-000000000001"
      })
      const forged = Pagination.encodeCursor({ at: "2026-11-22T10:00:00.000Z", id: "not-an-entry-id" })
      for (const cursor of ["not a cursor", valid.slice(3), forged]) {
        const error = yield* Effect.flip(service.list(admin, query({ cursor })))
        expect([error._tag, error.message]).toEqual(["InvalidRequest", "invalid cursor"])
      }
    })))

  it.effect("never shows another organization's entries, whatever the filters", () =>
    run(Effect.gen(function*() {
      const { admin } = yield* setup
      const other = yield* (yield* Organizations.Organizations).create({ name: "Other", adminEmail: "x@other.example" })
      const theirAdmin = yield* Fixtures.principal(other.organization.id, other.admin.id)
      yield* (yield* Roles.Roles).create(theirAdmin, { name: "Theirs" })
      const service = yield* AuditLogs.AuditLogs
      const mine = yield* service.list(admin, query({ actor_id: theirAdmin.memberId }))
      expect(mine.entries).toEqual([])
      const theirs = yield* service.list(theirAdmin, query())
      expect(theirs.entries.map((e) => e.action)).toEqual(["role.create", "member.invite"])
    })))

  it.effect("needs organization:read", () =>
    run(Effect.gen(function*() {
      const { member } = yield* setup
      const error = yield* Effect.flip((yield* AuditLogs.AuditLogs).list(member, query()))
      expect([error._tag, error.message]).toEqual(["PermissionDenied", "permission denied: organization:read required"])
    })))
})
