import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Auth from "../src/Auth.js"
import * as Changes from "../src/Changes.js"
import * as Group from "../src/Group.js"
import { GroupRepo } from "../src/GroupRepo.js"
import { ApiKeyId, GroupId, type MemberId, type OrganizationId, type RoleId } from "../src/Ids.js"
import * as Library from "../src/Library.js"
import { decodeText } from "../src/LibraryDiff.js"
import { MemberRepo } from "../src/MemberRepo.js"
import * as Owners from "../src/Owners.js"
import * as Policy from "../src/Policy.js"
import { RoleRepo } from "../src/RoleRepo.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Changes.layer.pipe(
  Layer.provideMerge(Library.layer),
  Layer.provideMerge(Auth.layer),
  Layer.provideMerge(Memory.layer)
)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

type Files = Record<string, string>

const texts = (files: Library.Files): Files =>
  Object.fromEntries(Array.from(HashMap.entries(files), ([path, bytes]) => [path, decodeText(bytes)]))

const policy: Files = {
  "OWNERS": "owner: role:leads\n",
  "sales/OWNERS": "owner: role:leads\n",
  "sales/q.sql": "select 1\n",
  "hr/OWNERS": "owner: role:hr\nreader: role:hr\n",
  "hr/salaries.sql": "select salary\n",
  "README.md": "hello\n"
}

const world = (files: Files = policy) =>
  Effect.gen(function*() {
    const org = yield* Fixtures.organization()
    const now = yield* DateTime.now
    const system = yield* Fixtures.systemRoles(org.id, now)
    const hrRole = (yield* Fixtures.role(org.id, "hr", { now })).id
    const person = (...roleIds: ReadonlyArray<RoleId>) => Effect.map(Fixtures.member(org.id, { roleIds }), (m) => m.id)
    const admin = yield* person(system.admin.id)
    const member = yield* person(system.member.id)
    const hr = yield* person(system.member.id, hrRole)
    const main = yield* Fixtures.seedMain(org.id, admin, files)
    return { org, admin, member, hr, hrRole, main }
  })

const as = (organizationId: OrganizationId, memberId: MemberId) =>
  Effect.flatMap(Auth.Auth, (auth) => Effect.orDie(auth.sessionPrincipal(organizationId, memberId)))

const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => error._tag)

describe("Library.snapshotFor", () => {
  it.effect("prunes main to what the caller may read, OWNERS files of readable folders included", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const library = yield* Library.Library
      const view = yield* library.snapshotFor(yield* as(w.org.id, w.member))
      expect(view.ref).toEqual(Option.some(w.main))
      expect(Object.keys(texts(view.files)).sort()).toEqual(["OWNERS", "README.md", "sales/OWNERS", "sales/q.sql"])
      const hrView = yield* library.snapshotFor(yield* as(w.org.id, w.hr))
      expect(texts(hrView.files)["hr/salaries.sql"]).toBe("select salary\n")
      expect(Object.keys(texts((yield* library.snapshotFor(yield* as(w.org.id, w.admin))).files)).sort())
        .toEqual(Object.keys(policy).sort())
    })))

  it.effect("an empty library is an empty snapshot without a ref", () =>
    run(Effect.gen(function*() {
      const org = yield* Fixtures.organization()
      const m = yield* Fixtures.member(org.id)
      const principal = yield* as(org.id, m.id)
      const view = yield* (yield* Library.Library).snapshotFor(principal)
      expect(view.ref).toEqual(Option.none())
      expect(HashMap.size(view.files)).toBe(0)
    })))

  it.effect("any ref is pruned by main's OWNERS, never by the snapshot's own", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const member = yield* as(w.org.id, w.member)
      // A proposal that would make its author a reader of the root, and so of every folder below.
      const filed = yield* (yield* Changes.Changes).create(member, {
        body: { title: "me too", description: "let me read", draft: false },
        baseRef: Option.some(w.main),
        edits: Fixtures.edits({ "OWNERS": `owner: role:leads\nreader: member:${w.member}\n` })
      })
      expect(filed.status).toBe("open")
      const proposed = yield* (yield* Library.Library).snapshotFor(member, filed.git_ref)
      expect(texts(proposed.files)["OWNERS"]).toContain(`reader: member:${w.member}`)
      expect(texts(proposed.files)["hr/salaries.sql"]).toBeUndefined()
    })))

  it.effect("an unknown or foreign ref is not_found, and a deleted member is unauthenticated", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const other = yield* world()
      const library = yield* Library.Library
      const member = yield* as(w.org.id, w.member)
      expect(yield* tagOf(library.snapshotFor(member, "0".repeat(40)))).toBe("NotFound")
      expect(yield* tagOf(library.snapshotFor(member, other.main))).toBe("NotFound")
      expect(yield* tagOf(library.snapshotFor({ ...member, deleted: true }))).toBe("Unauthenticated")
    })))

  it.effect("a malformed OWNERS file on main locks the library to admins until one repairs it", () =>
    run(Effect.gen(function*() {
      const w = yield* world({ ...policy, "sales/OWNERS": "owners: role:leads\n" })
      const library = yield* Library.Library
      const member = yield* as(w.org.id, w.member)
      expect(HashMap.size((yield* library.snapshotFor(member)).files)).toBe(0)
      const changes = yield* Changes.Changes
      expect(
        yield* tagOf(changes.create(member, {
          body: { title: "t", description: "d", draft: false },
          baseRef: Option.some(w.main),
          edits: Fixtures.edits({ "README.md": "bye\n" })
        }))
      ).toBe("NotFound")
      const admin = yield* as(w.org.id, w.admin)
      expect(HashMap.size((yield* library.snapshotFor(admin)).files)).toBe(Object.keys(policy).length)
      // Only a change that leaves every OWNERS file valid may be filed: the repair.
      const fix = yield* changes.create(admin, {
        body: { title: "repair", description: "fix the directive", draft: false },
        baseRef: Option.some(w.main),
        edits: Fixtures.edits({ "sales/OWNERS": "owner: role:leads\n" })
      })
      expect(fix.status).toBe("open")
      expect(yield* changes.approve(admin, fix.change_id, { expected_git_ref: fix.git_ref }))
        .toMatchObject({ merged: true })
      expect(texts((yield* library.snapshotFor(member)).files)["README.md"]).toBe("hello\n")
    })))
})

describe("Library.diff", () => {
  it.effect("diffs staged edits against their base: new, deleted, modified and renamed files", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const library = yield* Library.Library
      const member = yield* as(w.org.id, w.member)
      const diff = yield* library.diff(
        member,
        Option.some(w.main),
        Fixtures.edits({
          "README.md": null,
          "docs/README.md": "hello\n",
          "sales/q.sql": "select 2\n",
          "new.txt": "n\n"
        })
      )
      expect(diff.has_changes).toBe(true)
      expect(diff.diffs.map((d) => [d.old_path, d.new_path, d.is_new, d.is_delete, d.is_rename])).toEqual([
        ["README.md", "docs/README.md", false, false, true],
        ["new.txt", "new.txt", true, false, false],
        ["sales/q.sql", "sales/q.sql", false, false, false]
      ])
      expect(diff.raw_diff).toContain("rename from README.md")
      expect(yield* library.diff(member, Option.some(w.main), Fixtures.edits({}))).toEqual({
        has_changes: false,
        diffs: [],
        raw_diff: ""
      })
      // The first change of an empty library has no base.
      const fresh = yield* library.diff(member, Option.none(), Fixtures.edits({ "a.txt": "a\n" }))
      expect(fresh.diffs.map((d) => d.is_new)).toEqual([true])
    })))

  it.effect("hidden paths are not_found; invalid paths and unknown bases are invalid_request", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const library = yield* Library.Library
      const member = yield* as(w.org.id, w.member)
      const base = Option.some(w.main)
      expect(yield* tagOf(library.diff(member, base, Fixtures.edits({ "hr/salaries.sql": null })))).toBe("NotFound")
      expect(yield* tagOf(library.diff(member, base, Fixtures.edits({ "hr/new.sql": "x" })))).toBe("NotFound")
      expect(yield* tagOf(library.diff(member, base, Fixtures.edits({ "/abs.txt": "x" })))).toBe("InvalidRequest")
      expect(yield* tagOf(library.diff(member, base, Fixtures.edits({ "a/./b": "x" })))).toBe("InvalidRequest")
      expect(yield* tagOf(library.diff(member, Option.some("f".repeat(40)), Fixtures.edits({ "a.txt": "x" }))))
        .toBe("InvalidRequest")
      const hr = yield* as(w.org.id, w.hr)
      expect((yield* library.diff(hr, base, Fixtures.edits({ "hr/salaries.sql": null }))).diffs[0]?.is_delete).toBe(
        true
      )
    })))
})

describe("Library callers", () => {
  it.effect("live callers carry direct and group roles; deleted members are absent", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const groups = yield* GroupRepo
      const now = yield* DateTime.now
      const group = Group.make({
        id: GroupId.make(Fixtures.uuid()),
        organizationId: w.org.id,
        name: "people",
        memberIds: [w.member],
        roleIds: [w.hrRole],
        now
      })
      yield* Effect.orDie(groups.create(group))
      const members = yield* MemberRepo
      yield* Effect.orDie(members.softDelete(w.org.id, w.hr, now))
      const library = yield* Library.Library
      const callers = yield* library.liveCallers(w.org.id, [w.member, w.hr, w.admin])
      expect(HashMap.has(callers, w.hr)).toBe(false)
      const member = Option.getOrThrow(HashMap.get(callers, w.member))
      expect(member.roleNames).toContain("hr")
      expect(member.isAdmin).toBe(false)
      expect(Option.getOrThrow(HashMap.get(callers, w.admin)).isAdmin).toBe(true)
      // Through the group, the member now reads hr.
      const tree = (yield* library.main(w.org.id)).tree
      expect(Owners.readAuthority(tree, member, "hr/salaries.sql")._tag).toBe("Allow")
    })))

  it.effect("a key's caller has only the roles the key acts with", () =>
    run(Effect.gen(function*() {
      const w = yield* world()
      const session = yield* as(w.org.id, w.hr)
      const member = (yield* (yield* RoleRepo).list(w.org.id)).find((r) => r.name === "member")!
      const key = {
        ...session,
        auth: Policy.ApiKey({
          keyId: ApiKeyId.make(Fixtures.uuid()),
          assumedRoleIds: [member.id],
          inheritAllRoles: false,
          fullMemberAccess: false
        })
      }
      const library = yield* Library.Library
      expect((yield* library.callerOf(key)).roleNames).toEqual(["member"])
      expect(texts((yield* library.snapshotFor(key)).files)["hr/salaries.sql"]).toBeUndefined()
      expect(texts((yield* library.snapshotFor(session)).files)["hr/salaries.sql"]).toBe("select salary\n")
    })))
})
