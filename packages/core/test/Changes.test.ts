import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { AuditLogRepo } from "../src/AuditLogRepo.js"
import * as Auth from "../src/Auth.js"
import type * as Change from "../src/Change.js"
import { ChangeRepo } from "../src/ChangeRepo.js"
import * as Changes from "../src/Changes.js"
import type { ChangeId, MemberId, OrganizationId, RoleId } from "../src/Ids.js"
import * as Library from "../src/Library.js"
import { decodeText } from "../src/LibraryDiff.js"
import { LibraryStore } from "../src/LibraryStore.js"
import { MemberRepo } from "../src/MemberRepo.js"
import type * as Permission from "../src/Permission.js"
import type * as Policy from "../src/Policy.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Changes.layer.pipe(
  Layer.provideMerge(Library.layer),
  Layer.provideMerge(Auth.layer),
  Layer.provideMerge(Memory.layer)
)

type Files = Record<string, string>

/** The text of main's files. */
const mainFiles = (organizationId: OrganizationId) =>
  Effect.gen(function*() {
    const store = yield* LibraryStore
    const head = Option.getOrThrow(yield* store.head(organizationId))
    const snapshot = Option.getOrThrow(yield* store.read(organizationId, head))
    return Object.fromEntries(Array.from(HashMap.entries(snapshot.files), ([p, b]) => [p, decodeText(b)]))
  })

const policy: Files = {
  "sales/OWNERS": "owner: role:sales-leads\nrule: approvals=2 distinct authors=role:contractors\n",
  "sales/q.sql": "select 1\n",
  "eng/OWNERS": "owner: role:sales-leads\nrule: approvals=3\n",
  "eng/job.py": "print(1)\n",
  "hr/OWNERS": "owner: role:hr\nreader: role:hr\n",
  "hr/salaries.sql": "select salary\n",
  "docs/OWNERS": "owner: role:sales-leads\nauto_approve: paths=*.md\n",
  "docs/guide.md": "# Guide\n",
  "ops/OWNERS": "owner: role:sales-leads\nrule: approvals=1\n"
}

/** An organization with system roles, OWNERS roles, members holding them, and main seeded with `policy`. */
const world = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const now = yield* DateTime.now
  const system = yield* Fixtures.systemRoles(org.id, now)
  const custom = (name: string, permissions: ReadonlyArray<Permission.Permission> = []) =>
    Effect.map(Fixtures.role(org.id, name, { permissions, now }), (role) => role.id)
  const leadsRole = yield* custom("sales-leads")
  const contractorsRole = yield* custom("contractors")
  const hrRole = yield* custom("hr")
  const readOnlyRole = yield* custom("read-only", ["change:read"])
  const person = (...roleIds: ReadonlyArray<RoleId>) => Effect.map(Fixtures.member(org.id, { roleIds }), (m) => m.id)
  const admin = yield* person(system.admin.id)
  const leads = yield* Effect.all(Array.from({ length: 5 }, () => person(system.member.id, leadsRole)))
  const contractor = yield* person(system.member.id, contractorsRole)
  const member = yield* person(system.member.id)
  const hr = yield* person(system.member.id, hrRole)
  const readOnly = yield* person(readOnlyRole)
  // Owns sales/ through the leads role but may only read changes.
  const readOnlyLead = yield* person(readOnlyRole, leadsRole)
  const nobody = yield* person()
  const leadContractor = yield* person(system.member.id, leadsRole, contractorsRole)
  const main1 = yield* Fixtures.seedMain(org.id, admin, policy)
  return { org, admin, leads, contractor, member, hr, readOnly, readOnlyLead, nobody, leadContractor, main1, leadsRole }
})

/** The principal of a member acting with a session (its live roles now). */
const as = (organizationId: OrganizationId, memberId: MemberId) =>
  Effect.flatMap(Auth.Auth, (auth) => Effect.orDie(auth.sessionPrincipal(organizationId, memberId)))

/** Body fields to override; `undefined` leaves a field out. */
type BodyOverrides = { readonly [K in keyof Change.CreateLibraryChange]?: Change.CreateLibraryChange[K] | undefined }

const body = (overrides: BodyOverrides = {}): Change.CreateLibraryChange =>
  Object.fromEntries(
    Object.entries({ title: "Net revenue", description: "Use net revenue", draft: false, ...overrides })
      .filter(([, value]) => value !== undefined)
  ) as unknown as Change.CreateLibraryChange

const file = (
  principal: Policy.Principal,
  baseRef: string,
  changes: Record<string, string | null>,
  overrides: BodyOverrides = {}
) =>
  Effect.flatMap(
    Changes.Changes,
    (s) => s.create(principal, { body: body(overrides), baseRef: Option.some(baseRef), edits: Fixtures.edits(changes) })
  )

const approve = (principal: Policy.Principal, id: ChangeId, ref: string) =>
  Effect.flatMap(Changes.Changes, (s) => s.approve(principal, id, { expected_git_ref: ref }))
const deny = (principal: Policy.Principal, id: ChangeId, ref: string) =>
  Effect.flatMap(Changes.Changes, (s) => s.deny(principal, id, { expected_git_ref: ref }))
const restore = (principal: Policy.Principal, id: ChangeId, ref: string) =>
  Effect.flatMap(Changes.Changes, (s) => s.restore(principal, id, { expected_git_ref: ref }))
const get = (principal: Policy.Principal, id: ChangeId, revision?: number) =>
  Effect.flatMap(Changes.Changes, (s) => s.get(principal, id, revision === undefined ? {} : { revision }))
const list = (principal: Policy.Principal, query: Partial<Change.ListChangesQuery> = {}) =>
  Effect.flatMap(
    Changes.Changes,
    (s) => s.list(principal, { status: [], page_size: 50, include_auto_approved: false, ...query })
  )

/** The tag and message of a failure, as plain data (vitest cannot print a failed match on an Effect error). */
const failure = <A, E extends { readonly _tag: string; readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => ({ _tag: error._tag, message: error.message }))

const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => error._tag)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof TestLayer>>) =>
  Effect.provide(effect, TestLayer)

describe("Changes.create", () => {
  it.effect("files staged edits as an open change with its diff, numbering changes per organization", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const first = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      expect(first).toMatchObject({
        change_number: 1,
        status: "open",
        has_conflicts: false,
        auto_approved: false
      })
      expect(first.conflicts).toBeUndefined()
      expect(first.diffs.map((d) => [d.new_path, d.additions, d.deletions])).toEqual([["sales/q.sql", 1, 1]])
      expect(first.raw_diff).toContain("-select 1\n+select 2")
      const second = yield* file(contractor, w.main1, { "sales/new.sql": "select 3\n" })
      expect(second.change_number).toBe(2)
      const stored = yield* get(contractor, first.change_id)
      expect(stored).toMatchObject({
        number: 1,
        author_id: w.contractor,
        status: "open",
        revision: 1,
        git_ref: first.git_ref,
        required_approvals: 2,
        approval_count: 0,
        ai_generated: false
      })
      // Filing does not touch main.
      expect((yield* mainFiles(w.org.id))["sales/q.sql"]).toBe("select 1\n")
    })))

  it.effect("nothing staged, invalid paths, an unknown base and a malformed OWNERS file are invalid_request", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const member = yield* as(w.org.id, w.member)
      expect(yield* tagOf(file(member, w.main1, {}))).toBe("InvalidRequest")
      // Edits that restate the base are not changes.
      expect(yield* tagOf(file(member, w.main1, { "sales/q.sql": "select 1\n", "nope.txt": null })))
        .toBe("InvalidRequest")
      expect(yield* tagOf(file(member, w.main1, { "../etc/passwd": "x" }))).toBe("InvalidRequest")
      expect(yield* tagOf(file(member, "f".repeat(40), { "a.txt": "x" }))).toBe("InvalidRequest")
      const malformed = yield* failure(
        file(member, w.main1, { "sales/OWNERS": "owner: role:sales-leads\nowners: x\n" })
      )
      expect(malformed._tag).toBe("InvalidRequest")
      expect(malformed.message).toMatch(/^sales\/OWNERS:2: unknown directive "owners"/)
      // A new change needs a title and a description.
      expect(yield* tagOf(file(member, w.main1, { "a.txt": "x" }, { title: undefined }))).toBe("InvalidRequest")
    })))

  it.effect("needs change:write, and an edit to a path the caller may not read is not_found", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      expect(yield* tagOf(file(yield* as(w.org.id, w.readOnly), w.main1, { "a.txt": "x" }))).toBe("PermissionDenied")
      const member = yield* as(w.org.id, w.member)
      expect(yield* tagOf(file(member, w.main1, { "hr/salaries.sql": "select 0\n" }))).toBe("NotFound")
      // Even a no-op write to a hidden file is refused, so guesses of its content learn nothing.
      expect(yield* tagOf(file(member, w.main1, { "hr/salaries.sql": "select salary\n" }))).toBe("NotFound")
      const hr = yield* as(w.org.id, w.hr)
      expect((yield* file(hr, w.main1, { "hr/salaries.sql": "select 0\n" })).status).toBe("open")
    })))

  it.effect("a draft stays draft, and its author opens it by filing a revision with draft false", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const draft = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" }, { draft: true })
      expect(draft.status).toBe("draft")
      const opened = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" }, {
        change_number: draft.change_number,
        title: undefined,
        description: undefined
      })
      expect(opened).toMatchObject({ change_id: draft.change_id, change_number: draft.change_number, status: "open" })
      const stored = yield* get(contractor, draft.change_id)
      expect(stored).toMatchObject({ revision: 2, title: "Net revenue", git_ref: opened.git_ref })
    })))

  it.effect("only the author files revisions; an unknown or foreign number is not_found", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      const lead = yield* as(w.org.id, w.leads[0]!)
      expect(yield* tagOf(file(lead, w.main1, { "sales/q.sql": "select 9\n" }, { change_number: filed.change_number })))
        .toBe("PermissionDenied")
      expect(yield* tagOf(file(contractor, w.main1, { "sales/q.sql": "select 9\n" }, { change_number: 99 })))
        .toBe("NotFound")
      const other = yield* world
      const stranger = yield* as(other.org.id, other.admin)
      // The other organization has no change with that number, whatever this one has.
      expect(
        yield* tagOf(file(stranger, other.main1, { "sales/q.sql": "x\n" }, { change_number: filed.change_number }))
      )
        .toBe("NotFound")
    })))

  it.effect("an auto-approve rule matching every path merges at once; a draft waits", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const member = yield* as(w.org.id, w.member)
      const draft = yield* file(member, w.main1, { "docs/faq.md": "# FAQ\n" }, { draft: true })
      expect(draft).toMatchObject({ status: "draft", auto_approved: false })
      expect((yield* mainFiles(w.org.id))["docs/faq.md"]).toBeUndefined()
      const filed = yield* file(member, w.main1, { "docs/guide.md": "# Guide v2\n" })
      expect(filed).toMatchObject({ status: "approved", auto_approved: true, has_conflicts: false })
      expect((yield* mainFiles(w.org.id))["docs/guide.md"]).toBe("# Guide v2\n")
      // A path outside the rule keeps the whole change in review.
      const mixed = yield* file(member, w.main1, { "docs/a.md": "a\n", "docs/b.sql": "select\n" })
      expect(mixed).toMatchObject({ status: "open", auto_approved: false })
      // Auto-approved changes are left out of listings unless asked for.
      const admin = yield* as(w.org.id, w.admin)
      expect((yield* list(admin)).changes.map((c) => c.number)).not.toContain(filed.change_number)
      expect((yield* list(admin, { include_auto_approved: true })).changes.map((c) => c.number))
        .toContain(filed.change_number)
    })))

  it.effect("conflicts with main file the change reserved; resubmitting the number files a new changeset", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const main2 = yield* Fixtures.seedMain(w.org.id, w.admin, { ...policy, "sales/q.sql": "select 3\n" })
      const contractor = yield* as(w.org.id, w.contractor)
      // Edited against the first main, which has moved since.
      const reserved = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      expect(reserved).toMatchObject({ status: "reserved", has_conflicts: true, auto_approved: false })
      expect(reserved.conflicts).toContain("CONFLICT (content): sales/q.sql")
      expect(reserved.conflicts).toContain("<<<<<<< main")
      const lead = yield* as(w.org.id, w.leads[0]!)
      expect(yield* tagOf(approve(lead, reserved.change_id, reserved.git_ref))).toBe("Conflict")
      const resubmitted = yield* file(contractor, main2, { "sales/q.sql": "select 2\n" }, {
        change_number: reserved.change_number
      })
      expect(resubmitted).toMatchObject({ change_id: reserved.change_id, status: "open", has_conflicts: false })
      expect((yield* get(contractor, reserved.change_id)).revision).toBe(2)
    })))
})

describe("Changes.approve", () => {
  it.effect("merges once enough distinct owners approved; self and non-owner approvals are rejected", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      // The contractor rule asks for distinct approvers: the author may not approve.
      // Neither the author (a contractor) nor any other non-owner holds write authority on sales.
      expect(yield* failure(approve(contractor, filed.change_id, filed.git_ref))).toEqual({
        _tag: "PermissionDenied",
        message: "no OWNERS write authority on sales/q.sql"
      })
      expect(yield* tagOf(approve(yield* as(w.org.id, w.member), filed.change_id, filed.git_ref)))
        .toBe("PermissionDenied")
      const [lead1, lead2] = [yield* as(w.org.id, w.leads[0]!), yield* as(w.org.id, w.leads[1]!)]
      expect(yield* approve(lead1, filed.change_id, filed.git_ref)).toEqual({
        merged: false,
        approval_count: 1,
        required_approvals: 2,
        already_approved: false
      })
      expect(yield* approve(lead1, filed.change_id, filed.git_ref)).toMatchObject({
        merged: false,
        approval_count: 1,
        already_approved: true
      })
      expect((yield* mainFiles(w.org.id))["sales/q.sql"]).toBe("select 1\n")
      expect(yield* approve(lead2, filed.change_id, filed.git_ref)).toEqual({
        merged: true,
        approval_count: 2,
        required_approvals: 2,
        already_approved: false
      })
      expect((yield* mainFiles(w.org.id))["sales/q.sql"]).toBe("select 2\n")
      expect(yield* get(contractor, filed.change_id)).toMatchObject({ status: "approved", approval_count: 2 })
      // A merged change is final.
      expect(yield* tagOf(approve(yield* as(w.org.id, w.leads[2]!), filed.change_id, filed.git_ref)))
        .toBe("Conflict")
    })))

  it.effect("self-approval is rejected where a rule asks for distinct approvers, even from an owner", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const author = yield* as(w.org.id, w.leadContractor)
      const filed = yield* file(author, w.main1, { "sales/q.sql": "select 2\n" })
      expect(yield* failure(approve(author, filed.change_id, filed.git_ref))).toEqual({
        _tag: "PermissionDenied",
        message: "self-approval is not allowed: a folder rule requires distinct approvers"
      })
      expect((yield* get(author, filed.change_id)).capabilities).toMatchObject({ can_approve: false, can_deny: true })
      yield* approve(yield* as(w.org.id, w.leads[0]!), filed.change_id, filed.git_ref)
      expect(yield* approve(yield* as(w.org.id, w.admin), filed.change_id, filed.git_ref))
        .toMatchObject({ merged: true, approval_count: 2 })
    })))

  it.effect("an owner outside the rule's author scope lands their own change; admins approve anything", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const lead = yield* as(w.org.id, w.leads[0]!)
      const own = yield* file(lead, w.main1, { "sales/q.sql": "select 2\n" })
      expect(own.status).toBe("open")
      expect(yield* approve(lead, own.change_id, own.git_ref)).toMatchObject({ merged: true, approval_count: 1 })
      const member = yield* as(w.org.id, w.member)
      const root = yield* file(member, w.main1, { "README.md": "hello\n" })
      // Nobody owns the root: only an admin may approve it.
      expect(yield* tagOf(approve(lead, root.change_id, root.git_ref))).toBe("PermissionDenied")
      expect(yield* approve(yield* as(w.org.id, w.admin), root.change_id, root.git_ref))
        .toMatchObject({ merged: true, required_approvals: 1 })
      expect((yield* mainFiles(w.org.id))["README.md"]).toBe("hello\n")
    })))

  it.effect("a stale expected_git_ref is a conflict, and a new revision restarts the count", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      const lead = yield* as(w.org.id, w.leads[0]!)
      expect(yield* approve(lead, filed.change_id, filed.git_ref)).toMatchObject({ approval_count: 1 })
      const revised = yield* file(contractor, w.main1, { "sales/q.sql": "select 22\n" }, {
        change_number: filed.change_number
      })
      expect(yield* failure(approve(lead, filed.change_id, filed.git_ref))).toEqual({
        _tag: "Conflict",
        message: `stale expected_git_ref: change ${filed.change_number} is now at ${revised.git_ref}`
      })
      expect(yield* tagOf(deny(lead, filed.change_id, filed.git_ref))).toBe("Conflict")
      expect(yield* get(lead, filed.change_id)).toMatchObject({ approval_count: 0, revision: 2 })
      expect(yield* approve(lead, filed.change_id, revised.git_ref)).toMatchObject({
        approval_count: 1,
        already_approved: false
      })
    })))

  it.effect("counts approvals with the approvers' live roles", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      const lead1 = yield* as(w.org.id, w.leads[0]!)
      yield* approve(lead1, filed.change_id, filed.git_ref)
      const members = yield* MemberRepo
      yield* members.unassignRole(w.org.id, w.leads[0]!, w.leadsRole)
      expect((yield* get(contractor, filed.change_id)).approval_count).toBe(0)
      // The second lead's approval alone does not merge: the first no longer counts.
      const lead2 = yield* as(w.org.id, w.leads[1]!)
      expect(yield* approve(lead2, filed.change_id, filed.git_ref)).toMatchObject({ merged: false, approval_count: 1 })
    })))

  it.effect("when main moved so that the merge conflicts, the change becomes reserved", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      yield* approve(yield* as(w.org.id, w.leads[0]!), filed.change_id, filed.git_ref)
      const main2 = yield* Fixtures.seedMain(w.org.id, w.admin, { ...policy, "sales/q.sql": "select 3\n" })
      expect(yield* approve(yield* as(w.org.id, w.leads[1]!), filed.change_id, filed.git_ref)).toMatchObject({
        merged: false,
        approval_count: 2
      })
      expect((yield* get(contractor, filed.change_id)).status).toBe("reserved")
      expect((yield* mainFiles(w.org.id))["sales/q.sql"]).toBe("select 3\n")
      const again = yield* file(contractor, main2, { "sales/q.sql": "select 2\n" }, {
        change_number: filed.change_number
      })
      expect(again.status).toBe("open")
    })))

  it.effect("a merge that would leave a malformed OWNERS file is a conflict and the change stays open", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const admin = yield* as(w.org.id, w.admin)
      const filed = yield* file(admin, w.main1, {
        "ops/OWNERS": "owner: role:sales-leads\nrule: approvals=1\ninherit: true\n"
      })
      expect(filed.status).toBe("open")
      // Main gains an `inherit:` line at the other end of the file: each side is valid, and the
      // line merge is clean, but the result declares `inherit:` twice.
      yield* Fixtures.seedMain(w.org.id, w.admin, {
        ...policy,
        "ops/OWNERS": "inherit: false\nowner: role:sales-leads\nrule: approvals=1\n"
      })
      expect(yield* failure(approve(admin, filed.change_id, filed.git_ref))).toEqual({
        _tag: "Conflict",
        message: `change ${filed.change_number} cannot merge: ops/OWNERS:4: "inherit:" is given twice`
      })
      expect(yield* get(admin, filed.change_id)).toMatchObject({ status: "open", approval_count: 0 })
    })))

  it.effect("concurrent approvers merge exactly once with a correct count", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const member = yield* as(w.org.id, w.member)
      // eng needs three approvals from its owners (five leads race for it).
      const filed = yield* file(member, w.main1, { "eng/job.py": "print(2)\n" })
      const store = yield* LibraryStore
      const before = Option.getOrThrow(yield* store.head(w.org.id))
      const approvers = yield* Effect.forEach(w.leads, (lead) => as(w.org.id, lead))
      const outcomes = yield* Effect.forEach(
        approvers,
        (p) => Effect.either(approve(p, filed.change_id, filed.git_ref)),
        { concurrency: "unbounded" }
      )
      const answers = outcomes.flatMap((o) => (o._tag === "Right" ? [o.right] : []))
      const merged = answers.filter((a) => a.merged)
      expect(merged).toHaveLength(1)
      expect(merged[0]).toMatchObject({ approval_count: 3, required_approvals: 3 })
      expect(answers.filter((a) => !a.merged).map((a) => a.approval_count).sort()).toEqual([1, 2])
      // Everyone after the merge found it approved.
      expect(outcomes.filter((o) => o._tag === "Left").map((o) => o._tag === "Left" && o.left._tag))
        .toEqual(["Conflict", "Conflict"])
      const after = Option.getOrThrow(yield* store.head(w.org.id))
      const mergeCommit = Option.getOrThrow(yield* store.read(w.org.id, after))
      expect(Option.getOrThrow(mergeCommit.parent)).toBe(before)
      expect((yield* mainFiles(w.org.id))["eng/job.py"]).toBe("print(2)\n")
      expect(yield* (yield* ChangeRepo).approvals(w.org.id, filed.change_id)).toHaveLength(3)
    })))
})

describe("Changes.deny and restore", () => {
  it.effect("the author or an owner of every path denies; the same people restore; states are checked", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      const member = yield* as(w.org.id, w.member)
      expect(yield* tagOf(deny(member, filed.change_id, filed.git_ref))).toBe("PermissionDenied")
      expect(yield* deny(contractor, filed.change_id, filed.git_ref)).toEqual({ success: true })
      const denied = yield* get(contractor, filed.change_id)
      expect(denied).toMatchObject({ status: "denied", git_ref: filed.git_ref })
      expect(denied.capabilities).toMatchObject({ can_approve: false, can_deny: false, can_restore: true })
      const lead = yield* as(w.org.id, w.leads[0]!)
      expect(yield* tagOf(approve(lead, filed.change_id, filed.git_ref))).toBe("Conflict")
      expect(yield* tagOf(deny(lead, filed.change_id, filed.git_ref))).toBe("Conflict")
      expect(yield* tagOf(restore(member, filed.change_id, filed.git_ref))).toBe("PermissionDenied")
      expect(yield* tagOf(restore(lead, filed.change_id, "stale"))).toBe("Conflict")
      expect(yield* restore(lead, filed.change_id, filed.git_ref)).toEqual({ success: true })
      expect(yield* get(contractor, filed.change_id)).toMatchObject({ status: "open", revision: 1 })
      expect(yield* tagOf(restore(lead, filed.change_id, filed.git_ref))).toBe("Conflict")
      // An owner who is not the author may deny too.
      expect(yield* deny(lead, filed.change_id, filed.git_ref)).toEqual({ success: true })
    })))

  it.effect("review actions are audited", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      yield* deny(contractor, filed.change_id, filed.git_ref)
      yield* restore(contractor, filed.change_id, filed.git_ref)
      yield* approve(yield* as(w.org.id, w.leads[0]!), filed.change_id, filed.git_ref)
      const page = yield* (yield* AuditLogRepo).list(w.org.id, { limit: 10 })
      expect(page.items.map((e) => e.action).sort()).toEqual(["change.approve", "change.deny", "change.restore"])
      expect(page.items.every((e) => e.resource_id === filed.change_id && e.auth_method === "jwt")).toBe(true)
    })))
})

describe("Changes.get and list", () => {
  it.effect("get shows diffs of the current or an earlier revision, and the caller's capabilities", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const filed = yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n" })
      yield* file(contractor, w.main1, { "sales/q.sql": "select 2\n", "sales/r.sql": "select 4\n" }, {
        change_number: filed.change_number
      })
      const lead = yield* as(w.org.id, w.leads[0]!)
      const current = yield* get(lead, filed.change_id)
      expect(current.diffs?.map((d) => d.new_path)).toEqual(["sales/q.sql", "sales/r.sql"])
      expect(current.capabilities).toEqual(
        expect.objectContaining({ can_approve: true, can_deny: true, can_restore: false, caller_approved: false })
      )
      expect((yield* get(lead, filed.change_id, 1)).diffs?.map((d) => d.new_path)).toEqual(["sales/q.sql"])
      expect(yield* tagOf(get(lead, filed.change_id, 3))).toBe("NotFound")
      const mine = yield* get(contractor, filed.change_id)
      expect(mine.capabilities).toMatchObject({ can_approve: false, can_deny: true })
      // OWNERS authority without change:write: the actions would be refused, so none is offered.
      expect((yield* get(yield* as(w.org.id, w.readOnlyLead), filed.change_id)).capabilities).toMatchObject({
        can_approve: false,
        can_deny: false,
        can_restore: false
      })
      yield* approve(lead, filed.change_id, current.git_ref)
      expect((yield* get(lead, filed.change_id)).capabilities).toMatchObject({ caller_approved: true })
    })))

  it.effect("another organization's change is not_found for every operation", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const filed = yield* file(yield* as(w.org.id, w.contractor), w.main1, { "sales/q.sql": "select 2\n" })
      const other = yield* world
      const stranger = yield* as(other.org.id, other.admin)
      const tags = yield* Effect.all([
        tagOf(get(stranger, filed.change_id)),
        tagOf(approve(stranger, filed.change_id, filed.git_ref)),
        tagOf(deny(stranger, filed.change_id, filed.git_ref)),
        tagOf(restore(stranger, filed.change_id, filed.git_ref))
      ])
      expect(tags).toEqual(["NotFound", "NotFound", "NotFound", "NotFound"])
      expect((yield* list(stranger)).changes).toEqual([])
    })))

  it.effect("only changes whose every path the caller may read are listed, counted and shown", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const hr = yield* as(w.org.id, w.hr)
      const secret = yield* file(hr, w.main1, { "hr/salaries.sql": "select 0\n" })
      const both = yield* file(hr, w.main1, { "hr/salaries.sql": "select 1\n", "sales/q.sql": "x\n" })
      const open = yield* file(yield* as(w.org.id, w.contractor), w.main1, { "sales/q.sql": "select 2\n" })
      const member = yield* as(w.org.id, w.member)
      const seen = yield* list(member)
      expect(seen.changes.map((c) => c.id)).toEqual([open.change_id])
      expect(seen.counts).toEqual({ reserved: 0, draft: 0, open: 1, approved: 0, denied: 0 })
      expect(yield* tagOf(get(member, secret.change_id))).toBe("NotFound")
      expect(yield* tagOf(deny(member, both.change_id, both.git_ref))).toBe("NotFound")
      expect((yield* list(hr)).changes).toHaveLength(3)
      expect((yield* list(yield* as(w.org.id, w.admin))).counts.open).toBe(3)
      // change:read is all listing needs beyond OWNERS; without it, list and get are refused.
      expect((yield* list(yield* as(w.org.id, w.readOnly))).changes).toHaveLength(1)
      const nobody = yield* as(w.org.id, w.nobody)
      expect(yield* tagOf(list(nobody))).toBe("PermissionDenied")
      expect(yield* tagOf(get(nobody, open.change_id))).toBe("PermissionDenied")
      expect(yield* tagOf(approve(nobody, open.change_id, open.git_ref))).toBe("PermissionDenied")
    })))

  it.effect("lists newest first in pages, filtered by status, with counts ignoring the filter", () =>
    run(Effect.gen(function*() {
      const w = yield* world
      const contractor = yield* as(w.org.id, w.contractor)
      const a = yield* file(contractor, w.main1, { "sales/a.sql": "a\n" })
      yield* TestClock.adjust("1 millis")
      const b = yield* file(contractor, w.main1, { "sales/b.sql": "b\n" }, { draft: true })
      yield* TestClock.adjust("1 millis")
      const c = yield* file(contractor, w.main1, { "sales/c.sql": "c\n" })
      const first = yield* list(contractor, { page_size: 2 })
      expect(first.changes.map((x) => x.id)).toEqual([c.change_id, b.change_id])
      expect(first.next_page_token).toBeDefined()
      const second = yield* list(contractor, { page_size: 2, page_token: first.next_page_token! })
      expect(second.changes.map((x) => x.id)).toEqual([a.change_id])
      expect(second.next_page_token).toBeUndefined()
      const drafts = yield* list(contractor, { status: ["draft"] })
      expect(drafts.changes.map((x) => x.id)).toEqual([b.change_id])
      expect(drafts.counts).toMatchObject({ draft: 1, open: 2 })
      expect(yield* tagOf(list(contractor, { page_token: "not-a-token" }))).toBe("InvalidRequest")
    })))
})
