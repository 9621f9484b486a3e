import { describe, expect, it } from "@effect/vitest"
import type { Member } from "@sightline/core/Member"
import { MemberRepo } from "@sightline/core/MemberRepo"
import type { Organization } from "@sightline/core/Organization"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import { Transaction, withTransaction } from "@sightline/core/Transaction"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { forEachDatabase } from "./utils/databases.js"

forEachDatabase((database) =>
  describe(`SqlTransaction (${database.name})`, () => {
    it.effect("commits every write of a successful transaction", () =>
      Effect.gen(function*() {
        const { member, org } = yield* withTransaction(Effect.gen(function*() {
          const org = yield* Fixtures.organization()
          return { org, member: yield* Fixtures.member(org.id) }
        }))
        expect(Option.isSome(yield* (yield* OrganizationRepo).get(org.id))).toBe(true)
        expect(Option.isSome(yield* (yield* MemberRepo).get(org.id, member.id))).toBe(true)
      }).pipe(Effect.provide(database.shared)))

    it.effect("a failure rolls back every write and keeps its error", () =>
      Effect.gen(function*() {
        const written: Array<Member> = []
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          const org = yield* Fixtures.organization()
          written.push(yield* Fixtures.member(org.id))
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit).toEqual(Exit.fail("boom"))
        const [member] = written
        expect(yield* (yield* OrganizationRepo).get(member.organization_id)).toEqual(Option.none())
        expect(yield* (yield* MemberRepo).get(member.organization_id, member.id)).toEqual(Option.none())
      }).pipe(Effect.provide(database.shared)))

    it.effect("a defect rolls back too", () =>
      Effect.gen(function*() {
        const written: Array<Organization> = []
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          written.push(yield* Fixtures.organization())
          return yield* Effect.die("crash")
        })))
        expect(exit).toEqual(Exit.die("crash"))
        expect(yield* (yield* OrganizationRepo).get(written[0].id)).toEqual(Option.none())
      }).pipe(Effect.provide(database.shared)))

    it.effect("a nested transaction joins the outer one: the outer failure rolls back the inner writes", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        const written: Array<Organization> = []
        const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
          written.push(yield* tx.withTransaction(Fixtures.organization()))
          return yield* Effect.fail("outer")
        })))
        expect(exit).toEqual(Exit.fail("outer"))
        expect(yield* (yield* OrganizationRepo).get(written[0].id)).toEqual(Option.none())
      }).pipe(Effect.provide(database.shared)))

    it.effect("a failed nested transaction rolls back only its own writes", () =>
      Effect.gen(function*() {
        const tx = yield* Transaction
        const orgs = yield* OrganizationRepo
        const inner: Array<Organization> = []
        const outer = yield* tx.withTransaction(Effect.gen(function*() {
          const outer = yield* Fixtures.organization("outer")
          const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
            inner.push(yield* Fixtures.organization("inner"))
            return yield* Effect.fail("inner")
          })))
          expect(exit).toEqual(Exit.fail("inner"))
          // The outer transaction goes on after the inner failure.
          return yield* Fixtures.member(outer.id)
        }))
        expect(Option.isSome(yield* orgs.get(outer.organization_id))).toBe(true)
        expect(Option.isSome(yield* (yield* MemberRepo).get(outer.organization_id, outer.id))).toBe(true)
        expect(yield* orgs.get(inner[0].id)).toEqual(Option.none())
      }).pipe(Effect.provide(database.shared)))
  })
)
