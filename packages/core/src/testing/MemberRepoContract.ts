/**
 * The contract every `MemberRepo` implementation satisfies.
 *
 * Every test creates its own organizations with random ids, so the suite passes on a shared,
 * non-empty store. Role assignments need roles, so the layer also provides `RoleRepo`.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { MemberId, type OrganizationId, RoleId } from "../Ids.js"
import { Member } from "../Member.js"
import { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import type { RoleRepo } from "../RoleRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const newRole = (organizationId: OrganizationId, name: string) =>
  Fixtures.role(organizationId, name, { now: at("2024-01-01T00:00:00.000Z") })

const memberRecord = (organizationId: OrganizationId, fields: Partial<Member> = {}) => {
  const id = MemberId.make(fields.id ?? Fixtures.uuid())
  return new Member({
    id,
    organization_id: organizationId,
    email: `${id}@example.com`,
    name: "Contract Member",
    is_service_account: false,
    is_scim_managed: false,
    created_at: at("2024-01-01T00:00:00.000Z"),
    ...fields
  })
}

const sorted = <A extends string>(ids: ReadonlyArray<A>) => [...ids].sort()

/**
 * The services the suite needs from the layer under test.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = MemberRepo | RoleRepo | OrganizationRepo | Transaction

/**
 * Registers the `MemberRepo` contract suite.
 *
 * @since 0.1.0
 * @category utils
 */
export const memberRepoContract = (
  name: string,
  layer: Layer.Layer<Requirements, unknown>
): void => {
  describe(`MemberRepo contract: ${name}`, () => {
    it.effect("round-trips every field, optional ones set and unset", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const full = memberRecord(org.id, {
          email: "Robot.Account@Service.Example.com",
          name: "Nightly exporter",
          description: "Exports every night",
          is_service_account: true,
          is_scim_managed: true,
          deleted_at: at("2024-05-06T07:08:09.456Z"),
          created_at: at("2024-02-03T04:05:06.789Z")
        })
        const bare = memberRecord(org.id)
        yield* repo.create(full)
        yield* repo.create(bare)
        expect(yield* repo.get(org.id, full.id)).toEqual(Option.some(full))
        const readBare = yield* repo.get(org.id, bare.id)
        expect(readBare).toEqual(Option.some(bare))
        expect(Option.map(readBare, (m) => ["description" in m, "deleted_at" in m])).toEqual(
          Option.some([false, false])
        )
      }).pipe(Effect.provide(layer)))

    it.effect("finds members by e-mail ignoring case, soft-deleted ones included", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = memberRecord(org.id, { email: "Ada.Lovelace@Example.com" })
        yield* repo.create(member)
        expect(Option.map(yield* repo.findByEmail(org.id, "ada.lovelace@example.COM"), (m) => m.id))
          .toEqual(Option.some(member.id))
        yield* repo.softDelete(org.id, member.id, at("2024-06-01T00:00:00.000Z"))
        expect(Option.isSome(yield* repo.findByEmail(org.id, "ADA.LOVELACE@example.com"))).toBe(true)
        expect(yield* repo.findByEmail(org.id, "someone.else@example.com")).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("rejects a second member with the same e-mail in one organization, whatever its case", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        yield* repo.create(memberRecord(org.id, { email: "grace@example.com" }))
        const clash = memberRecord(org.id, { email: "GRACE@example.com" })
        const error = yield* Effect.flip(repo.create(clash))
        expect(error._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, clash.id)).toEqual(Option.none())
        yield* repo.create(memberRecord(other.id, { email: "grace@example.com" }))
      }).pipe(Effect.provide(layer)))

    it.effect("hides every member of one organization from another", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const orgA = yield* Fixtures.organization()
        const orgB = yield* Fixtures.organization()
        const member = yield* Fixtures.member(orgA.id, { email: "shared@example.com" })
        const roleA = yield* newRole(orgA.id, "analyst")
        const roleB = yield* newRole(orgB.id, "analyst")
        yield* repo.assignRole(orgA.id, member.id, roleA.id)

        expect(yield* repo.get(orgB.id, member.id)).toEqual(Option.none())
        expect(yield* repo.findByEmail(orgB.id, "shared@example.com")).toEqual(Option.none())
        expect(yield* repo.list(orgB.id, { includeDeleted: true })).toEqual([])
        expect(yield* repo.roleIds(orgB.id, member.id)).toEqual([])
        expect(yield* repo.membersWithRole(orgB.id, roleA.id)).toEqual([])
        expect((yield* Effect.flip(repo.assignRole(orgB.id, member.id, roleB.id)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.assignRole(orgA.id, member.id, roleB.id)))._tag).toBe("NotFound")
        expect((yield* Effect.flip(repo.softDelete(orgB.id, member.id, at("2024-01-02T00:00:00.000Z"))))._tag)
          .toBe("NotFound")
        expect((yield* Effect.flip(repo.hardDelete(orgB.id, member.id)))._tag).toBe("NotFound")
        yield* repo.unassignRole(orgB.id, member.id, roleA.id)

        expect(yield* repo.get(orgA.id, member.id)).toEqual(Option.some(member))
        expect(yield* repo.roleIds(orgA.id, member.id)).toEqual([roleA.id])
        expect(yield* repo.membersWithRole(orgB.id, roleB.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("lists members oldest first (ties by id), without soft-deleted ones unless asked", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const [low, high] = sorted([Fixtures.uuid(), Fixtures.uuid()])
        const later = memberRecord(org.id, { created_at: at("2024-01-03T00:00:00.000Z") })
        const tieHigh = memberRecord(org.id, { id: MemberId.make(high), created_at: at("2024-01-02T00:00:00.000Z") })
        const tieLow = memberRecord(org.id, { id: MemberId.make(low), created_at: at("2024-01-02T00:00:00.000Z") })
        const robot = memberRecord(org.id, { is_service_account: true, created_at: at("2024-01-04T00:00:00.000Z") })
        const gone = memberRecord(org.id, { created_at: at("2024-01-01T00:00:00.000Z") })
        for (const member of [later, robot, tieHigh, gone, tieLow]) yield* repo.create(member)
        const deleted = yield* repo.softDelete(org.id, gone.id, at("2024-02-01T00:00:00.000Z"))

        expect(yield* repo.list(org.id)).toEqual([tieLow, tieHigh, later, robot])
        expect(yield* repo.list(org.id, { includeDeleted: true })).toEqual([deleted, tieLow, tieHigh, later, robot])
        expect(yield* repo.list(org.id, { isServiceAccount: true })).toEqual([robot])
        expect(yield* repo.list(org.id, { isServiceAccount: false })).toEqual([tieLow, tieHigh, later])
      }).pipe(Effect.provide(layer)))

    it.effect("soft-deletes once: the member stays readable with its first deleted_at", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "viewer")
        yield* repo.assignRole(org.id, member.id, role.id)
        const first = at("2024-03-01T10:00:00.000Z")
        const deleted = yield* repo.softDelete(org.id, member.id, first)
        expect(deleted.deleted_at).toEqual(first)
        const again = yield* repo.softDelete(org.id, member.id, at("2024-03-02T10:00:00.000Z"))
        expect(again.deleted_at).toEqual(first)
        expect(yield* repo.get(org.id, member.id)).toEqual(Option.some(deleted))
        expect(yield* repo.roleIds(org.id, member.id)).toEqual([role.id])
        const unknown = MemberId.make(Fixtures.uuid())
        expect((yield* Effect.flip(repo.softDelete(org.id, unknown, first)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("hard-deletes a member with its role assignments and frees its e-mail", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id, { email: "leaver@example.com" })
        const stayer = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "editor")
        yield* repo.assignRole(org.id, member.id, role.id)
        yield* repo.assignRole(org.id, stayer.id, role.id)
        yield* repo.hardDelete(org.id, member.id)

        expect(yield* repo.get(org.id, member.id)).toEqual(Option.none())
        expect(yield* repo.roleIds(org.id, member.id)).toEqual([])
        expect(yield* repo.membersWithRole(org.id, role.id)).toEqual([stayer.id])
        expect((yield* repo.list(org.id, { includeDeleted: true })).map((m) => m.id)).toEqual([stayer.id])
        expect((yield* Effect.flip(repo.hardDelete(org.id, member.id)))._tag).toBe("NotFound")
        yield* repo.create(memberRecord(org.id, { email: "leaver@example.com" }))
      }).pipe(Effect.provide(layer)))

    it.effect("assigns and unassigns roles idempotently; role and member lists are sorted by id", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const other = yield* Fixtures.member(org.id)
        const roles = [yield* newRole(org.id, "one"), yield* newRole(org.id, "two"), yield* newRole(org.id, "three")]
        for (const role of roles) yield* repo.assignRole(org.id, member.id, role.id)
        yield* repo.assignRole(org.id, member.id, roles[0]!.id)
        yield* repo.assignRole(org.id, other.id, roles[0]!.id)

        expect(yield* repo.roleIds(org.id, member.id)).toEqual(sorted(roles.map((r) => r.id)))
        expect(yield* repo.membersWithRole(org.id, roles[0]!.id)).toEqual(sorted([member.id, other.id]))

        yield* repo.unassignRole(org.id, member.id, roles[0]!.id)
        yield* repo.unassignRole(org.id, member.id, roles[0]!.id)
        expect(yield* repo.roleIds(org.id, member.id)).toEqual(sorted([roles[1]!.id, roles[2]!.id]))
        expect(yield* repo.membersWithRole(org.id, roles[0]!.id)).toEqual([other.id])

        const unknownRole = RoleId.make(Fixtures.uuid())
        expect((yield* Effect.flip(repo.assignRole(org.id, member.id, unknownRole)))._tag).toBe("NotFound")
        const unknownMember = MemberId.make(Fixtures.uuid())
        expect((yield* Effect.flip(repo.assignRole(org.id, unknownMember, roles[0]!.id)))._tag).toBe("NotFound")
        yield* repo.unassignRole(org.id, unknownMember, roles[0]!.id)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps nothing of a failed transaction", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const existing = yield* Fixtures.member(org.id)
        const role = yield* newRole(org.id, "auditor")
        const fresh = memberRecord(org.id)
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(fresh)
          yield* repo.assignRole(org.id, fresh.id, role.id)
          yield* repo.assignRole(org.id, existing.id, role.id)
          yield* repo.softDelete(org.id, existing.id, at("2024-04-01T00:00:00.000Z"))
          return yield* Effect.fail("boom" as const)
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, fresh.id)).toEqual(Option.none())
        expect(yield* repo.get(org.id, existing.id)).toEqual(Option.some(existing))
        expect(yield* repo.membersWithRole(org.id, role.id)).toEqual([])
      }).pipe(Effect.provide(layer)))
  })
}
