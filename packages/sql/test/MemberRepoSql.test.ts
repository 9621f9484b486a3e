import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Conflict, NotFound } from "@sightline/core/Errors"
import { MemberId, OrganizationId, RoleId } from "@sightline/core/Ids"
import { Member } from "@sightline/core/Member"
import { MemberRepo } from "@sightline/core/MemberRepo"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Order from "effect/Order"
import * as Schema from "effect/Schema"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"

/** Roles have no SQL repository yet: tests insert the rows that assignments refer to. */
const insertRole = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix
    const id = RoleId.make(Fixtures.uuid())
    yield* sql`INSERT INTO ${sql(prefix.name("roles"))} ${
      sql.insert({
        id,
        organization_id: organizationId,
        name: `role-${id}`,
        created_at: new Date(),
        updated_at: new Date()
      })
    }`
    return id
  })

const at = (iso: string) => DateTime.unsafeMake(iso)

const newMember = (organizationId: OrganizationId, fields: Partial<ConstructorParameters<typeof Member>[0]> = {}) => {
  const id = MemberId.make(Fixtures.uuid())
  return new Member({
    id,
    organization_id: organizationId,
    email: `${id}@example.com`,
    name: "Someone",
    is_service_account: false,
    is_scim_managed: false,
    created_at: at("2024-01-01T00:00:00.000Z"),
    ...fields
  })
}

forEachDatabase((database) =>
  describe(`MemberRepoSql (${database.name})`, () => {
    it.effect("round-trips a member with every optional field, timestamps as RFC 3339", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = newMember(org.id, {
          description: "nightly exports",
          is_service_account: true,
          is_scim_managed: true,
          created_at: at("2024-02-03T04:05:06.789Z")
        })
        yield* repo.create(member)
        const read = Option.getOrThrow(yield* repo.get(org.id, member.id))
        expect(read).toEqual(member)
        expect(Schema.encodeSync(Member)(read).created_at).toBe("2024-02-03T04:05:06.789Z")
        expect(yield* repo.findByEmail(org.id, member.email)).toEqual(Option.some(member))
      }).pipe(Effect.provide(database.shared)))

    it.effect("reads NULL columns back as absent fields", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const read = Option.getOrThrow(yield* repo.get(org.id, member.id))
        expect("description" in read).toBe(false)
        expect("deleted_at" in read).toBe(false)
      }).pipe(Effect.provide(database.shared)))

    it.effect("finds by e-mail regardless of case", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id, { email: `Ada.${Fixtures.uuid()}@Example.com` })
        const found = yield* repo.findByEmail(org.id, member.email.toUpperCase())
        expect(Option.map(found, (m) => m.id)).toEqual(Option.some(member.id))
      }).pipe(Effect.provide(database.shared)))

    it.effect("a second member with the same e-mail, in any case, is a Conflict", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const first = yield* Fixtures.member(org.id)
        const clash = yield* Effect.flip(repo.create(newMember(org.id, { email: first.email.toUpperCase() })))
        expect(clash).toBeInstanceOf(Conflict)
        expect(clash.message).toContain(first.email.toUpperCase())
      }).pipe(Effect.provide(database.shared)))

    it.effect("the same e-mail in another organization is allowed", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const a = yield* Fixtures.organization()
        const b = yield* Fixtures.organization()
        const first = yield* Fixtures.member(a.id)
        const second = newMember(b.id, { email: first.email })
        yield* repo.create(second)
        expect(Option.map(yield* repo.findByEmail(b.id, first.email), (m) => m.id)).toEqual(Option.some(second.id))
      }).pipe(Effect.provide(database.shared)))

    it.effect("a soft-deleted member keeps its e-mail reserved", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const first = yield* Fixtures.member(org.id)
        yield* repo.softDelete(org.id, first.id, at("2024-03-01T00:00:00.000Z"))
        expect(yield* Effect.flip(repo.create(newMember(org.id, { email: first.email })))).toBeInstanceOf(Conflict)
      }).pipe(Effect.provide(database.shared)))

    it.effect("a Conflict inside a transaction leaves the transaction usable", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const first = yield* Fixtures.member(org.id)
        const later = newMember(org.id)
        yield* withTransaction(Effect.gen(function*() {
          const clash = yield* Effect.flip(repo.create(newMember(org.id, { email: first.email })))
          expect(clash).toBeInstanceOf(Conflict)
          yield* repo.create(later)
        }))
        expect(Option.isSome(yield* repo.get(org.id, later.id))).toBe(true)
      }).pipe(Effect.provide(database.shared)))

    it.effect("every read and write is scoped to the organization", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const mine = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const member = yield* Fixtures.member(mine.id)
        const role = yield* insertRole(mine.id)
        yield* repo.assignRole(mine.id, member.id, role)

        expect(yield* repo.get(other.id, member.id)).toEqual(Option.none())
        expect(yield* repo.findByEmail(other.id, member.email)).toEqual(Option.none())
        expect(yield* repo.list(other.id, { includeDeleted: true })).toEqual([])
        expect(yield* repo.roleIds(other.id, member.id)).toEqual([])
        expect(yield* repo.membersWithRole(other.id, role)).toEqual([])
        expect(yield* Effect.flip(repo.softDelete(other.id, member.id, at("2024-01-02T00:00:00.000Z"))))
          .toBeInstanceOf(NotFound)
        expect(yield* Effect.flip(repo.hardDelete(other.id, member.id))).toBeInstanceOf(NotFound)
        yield* repo.unassignRole(other.id, member.id, role)

        // Nothing above touched the member of `mine`.
        const read = Option.getOrThrow(yield* repo.get(mine.id, member.id))
        expect(read.deleted_at).toBeUndefined()
        expect(yield* repo.roleIds(mine.id, member.id)).toEqual([role])
      }).pipe(Effect.provide(database.shared)))

    it.effect("lists oldest first (ties by id), without soft-deleted members unless asked, by kind", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const human = newMember(org.id, { created_at: at("2024-01-03T00:00:00.000Z") })
        const bot = newMember(org.id, { is_service_account: true, created_at: at("2024-01-01T00:00:00.000Z") })
        const tieA = newMember(org.id, { created_at: at("2024-01-02T00:00:00.000Z") })
        const tieB = newMember(org.id, { created_at: at("2024-01-02T00:00:00.000Z") })
        const gone = newMember(org.id, { created_at: at("2024-01-04T00:00:00.000Z") })
        yield* Effect.forEach([human, bot, tieA, tieB, gone], repo.create)
        yield* repo.softDelete(org.id, gone.id, at("2024-02-01T00:00:00.000Z"))
        const [low, high] = Arr.sort([tieA.id, tieB.id], Order.string)

        const ids = (members: ReadonlyArray<Member>) => members.map((m) => m.id)
        expect(ids(yield* repo.list(org.id))).toEqual([bot.id, low, high, human.id])
        expect(ids(yield* repo.list(org.id, { includeDeleted: true }))).toEqual([bot.id, low, high, human.id, gone.id])
        expect(ids(yield* repo.list(org.id, { isServiceAccount: true }))).toEqual([bot.id])
        expect(ids(yield* repo.list(org.id, { isServiceAccount: false }))).toEqual([low, high, human.id])
      }).pipe(Effect.provide(database.shared)))

    it.effect("soft delete sets deleted_at once and returns the member", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const first = at("2024-05-01T10:00:00.000Z")
        const deleted = yield* repo.softDelete(org.id, member.id, first)
        expect(deleted).toEqual(new Member({ ...member, deleted_at: first }))
        const again = yield* repo.softDelete(org.id, member.id, at("2024-06-01T10:00:00.000Z"))
        expect(again.deleted_at).toEqual(first)
        expect(Option.getOrThrow(yield* repo.get(org.id, member.id)).deleted_at).toEqual(first)
        expect(yield* Effect.flip(repo.softDelete(org.id, MemberId.make(Fixtures.uuid()), first)))
          .toBeInstanceOf(NotFound)
      }).pipe(Effect.provide(database.shared)))

    it.effect("hard delete removes the member and its role assignments", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const role = yield* insertRole(org.id)
        yield* repo.assignRole(org.id, member.id, role)
        yield* repo.hardDelete(org.id, member.id)
        expect(yield* repo.get(org.id, member.id)).toEqual(Option.none())
        expect(yield* repo.membersWithRole(org.id, role)).toEqual([])
        expect(yield* Effect.flip(repo.hardDelete(org.id, member.id))).toBeInstanceOf(NotFound)
        // The e-mail is free again.
        yield* repo.create(newMember(org.id, { email: member.email }))
      }).pipe(Effect.provide(database.shared)))

    it.effect("assigns roles idempotently, lists them sorted, and unassigns", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const a = yield* Fixtures.member(org.id)
        const b = yield* Fixtures.member(org.id)
        const r1 = yield* insertRole(org.id)
        const r2 = yield* insertRole(org.id)
        yield* repo.assignRole(org.id, a.id, r1)
        yield* repo.assignRole(org.id, a.id, r2)
        yield* repo.assignRole(org.id, a.id, r1)
        yield* repo.assignRole(org.id, b.id, r1)
        expect(yield* repo.roleIds(org.id, a.id)).toEqual(Arr.sort([r1, r2], Order.string))
        expect(yield* repo.membersWithRole(org.id, r1)).toEqual(Arr.sort([a.id, b.id], Order.string))
        yield* repo.unassignRole(org.id, a.id, r1)
        yield* repo.unassignRole(org.id, a.id, r1)
        expect(yield* repo.roleIds(org.id, a.id)).toEqual([r2])
        expect(yield* repo.membersWithRole(org.id, r1)).toEqual([b.id])
      }).pipe(Effect.provide(database.shared)))

    it.effect("assigning is NotFound unless the member and the role are both the organization's", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const other = yield* Fixtures.organization()
        const member = yield* Fixtures.member(org.id)
        const outsider = yield* Fixtures.member(other.id)
        const role = yield* insertRole(org.id)
        const foreignRole = yield* insertRole(other.id)
        const attempts = [
          repo.assignRole(org.id, member.id, foreignRole),
          repo.assignRole(org.id, outsider.id, role),
          repo.assignRole(org.id, member.id, RoleId.make(Fixtures.uuid())),
          repo.assignRole(org.id, MemberId.make(Fixtures.uuid()), role)
        ]
        for (const attempt of attempts) {
          expect(yield* Effect.flip(attempt)).toBeInstanceOf(NotFound)
        }
        expect(yield* repo.roleIds(org.id, member.id)).toEqual([])
        expect(yield* repo.roleIds(other.id, outsider.id)).toEqual([])
      }).pipe(Effect.provide(database.shared)))

    it.live("concurrent creations with one e-mail: exactly one succeeds, the others are Conflicts", () =>
      Effect.gen(function*() {
        const repo = yield* MemberRepo
        const org = yield* Fixtures.organization()
        const email = `race.${Fixtures.uuid()}@example.com`
        const exits = yield* Effect.all(
          Arr.makeBy(8, () => Effect.exit(repo.create(newMember(org.id, { email })))),
          { concurrency: "unbounded" }
        )
        expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
        for (const exit of exits.filter(Exit.isFailure)) {
          expect(exit).toEqual(Exit.fail(expect.any(Conflict)))
        }
        expect(yield* repo.list(org.id)).toHaveLength(1)
      }).pipe(Effect.provide(database.shared)))
  })
)
