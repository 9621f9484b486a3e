import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Change from "../src/Change.js"
import { ChangeId, MemberId, OrganizationId } from "../src/Ids.js"

const decode = <A, I>(schema: Schema.Schema<A, I>) => (input: unknown) =>
  Either.mapLeft(Schema.decodeUnknownEither(schema)(input), (e) => ParseResult.TreeFormatter.formatErrorSync(e))

const t0 = DateTime.unsafeMake("2026-01-01T00:00:00Z")
const t1 = DateTime.unsafeMake("2026-01-02T00:00:00Z")

const record = (overrides: Partial<Change.MakeParams> = {}) =>
  Change.make({
    id: ChangeId.make("00000000-0000-4000-8000-000000000001"),
    organizationId: OrganizationId.make("00000000-0000-4000-8000-0000000000f0"),
    number: 7,
    authorId: MemberId.make("00000000-0000-4000-8000-0000000000a1"),
    authorEmail: "author@example.com",
    title: "Fix revenue query",
    description: "Uses net revenue",
    gitRef: "ref-1",
    baseRef: "main-1",
    touchedPaths: ["sales/revenue.sql"],
    aiGenerated: false,
    requiredApprovals: 1,
    draft: false,
    hasConflicts: false,
    autoApproved: false,
    now: t0,
    ...overrides
  })

const withStatus = (status: Change.ChangeStatus) => new Change.ChangeRecord({ ...record(), status })

const revision = (overrides: Partial<Change.ReviseParams> = {}): Change.ReviseParams => ({
  gitRef: "ref-2",
  baseRef: "main-2",
  touchedPaths: ["sales/revenue.sql", "sales/cost.sql"],
  requiredApprovals: 2,
  draft: false,
  hasConflicts: false,
  autoApproved: false,
  now: t1,
  ...overrides
})

const conflictMessage = <A>(result: Either.Either<A, { readonly _tag: string; readonly message: string }>) => {
  if (Either.isRight(result)) throw new Error("expected a Conflict")
  expect(result.left._tag).toBe("Conflict")
  return result.left.message
}

describe("Change request schemas", () => {
  const create = decode(Change.CreateLibraryChange)

  it("a new change needs a title and a description", () => {
    expect(Either.getOrThrow(create({ title: "T", description: "D" }))).toEqual({
      title: "T",
      description: "D",
      draft: false
    })
    for (const body of [{}, { title: "T" }, { description: "D" }, { title: " ", description: "D" }]) {
      expect(Either.flip(create(body)).pipe(Either.getOrThrow)).toContain(
        "title and description are required for a new change"
      )
    }
  })

  it("a revision (change_number) may omit both", () => {
    expect(Either.getOrThrow(create({ change_number: 3, draft: true }))).toEqual({ change_number: 3, draft: true })
  })

  it("titles are at most 50 characters and change numbers are positive int32", () => {
    expect(Either.isRight(create({ title: "x".repeat(50), description: "D" }))).toBe(true)
    expect(Either.flip(create({ title: "x".repeat(51), description: "D" })).pipe(Either.getOrThrow)).toContain(
      "title must be at most 50 characters"
    )
    for (const change_number of [0, 1.5, 2147483648]) {
      expect(Either.isLeft(create({ change_number }))).toBe(true)
    }
  })

  it("approve, deny and restore bodies need a non-empty expected_git_ref", () => {
    expect(Either.isRight(decode(Change.ApproveChange)({ expected_git_ref: "abc" }))).toBe(true)
    expect(Either.isLeft(decode(Change.DenyChange)({ expected_git_ref: "" }))).toBe(true)
    expect(Either.isLeft(decode(Change.RestoreChange)({}))).toBe(true)
  })

  it("List Changes takes a repeatable status and defaults", () => {
    const list = decode(Change.ListChangesQuery)
    expect(Either.getOrThrow(list({}))).toEqual({ status: [], page_size: 50, include_auto_approved: false })
    expect(Either.getOrThrow(list({ status: "open" })).status).toEqual(["open"])
    expect(Either.getOrThrow(list({ status: ["open", "denied"], include_auto_approved: "true", page_size: "5" })))
      .toMatchObject({ status: ["open", "denied"], include_auto_approved: true, page_size: 5 })
    for (
      const query of [{ status: "merged" }, { page_size: "0" }, { page_size: "101" }, { include_auto_approved: "yes" }]
    ) {
      expect(Either.isLeft(list(query))).toBe(true)
    }
  })

  it("Get Change takes an optional positive revision", () => {
    expect(Either.getOrThrow(decode(Change.GetChangeQuery)({ revision: "2" }))).toEqual({ revision: 2 })
    expect(Either.isLeft(decode(Change.GetChangeQuery)({ revision: "0" }))).toBe(true)
  })

  it("a library change result carries conflicts only when it has some", () => {
    const result = new Change.LibraryChangeResult({
      change_id: ChangeId.make("00000000-0000-4000-8000-000000000001"),
      change_number: 1,
      status: "open",
      git_ref: "r",
      has_conflicts: false,
      auto_approved: false,
      diffs: [],
      raw_diff: "",
      checks: []
    })
    expect(Object.keys(Schema.encodeSync(Change.LibraryChangeResult)(result))).not.toContain("conflicts")
  })
})

describe("Change lifecycle", () => {
  it.each(
    [
      [{ draft: false, hasConflicts: false, autoApproved: false }, "open"],
      [{ draft: true, hasConflicts: false, autoApproved: false }, "draft"],
      [{ draft: true, hasConflicts: true, autoApproved: true }, "reserved"],
      [{ draft: true, hasConflicts: false, autoApproved: true }, "approved"]
    ] as const
  )("a filing %j starts %s", (filing, status) => {
    expect(Change.initialStatus(filing)).toBe(status)
    expect(record(filing).status).toBe(status)
  })

  it("make starts at revision 1 with no approvals", () => {
    const r = record({ autoApproved: true })
    expect(r).toMatchObject({
      revision: 1,
      approval_count: 0,
      required_approvals: 1,
      auto_approved: true,
      base_ref: "main-1"
    })
    expect(r.created_at).toEqual(t0)
  })

  it("a revision bumps the number, replaces the ref and paths and restarts the approval count", () => {
    const approved = Change.recordApproval(record(), { approvalCount: 1, requiredApprovals: 2, merged: false, now: t0 })
    const next = Either.getOrThrow(Change.revise(approved, revision()))
    expect(next).toMatchObject({
      revision: 2,
      git_ref: "ref-2",
      base_ref: "main-2",
      touched_paths: ["sales/revenue.sql", "sales/cost.sql"],
      approval_count: 0,
      required_approvals: 2,
      status: "open",
      title: "Fix revenue query",
      number: 7
    })
    expect(next.updated_at).toEqual(t1)
    expect(Either.getOrThrow(Change.revise(approved, revision({ title: "New title" }))).title).toBe("New title")
  })

  it("a draft opens by a revision filed with draft false, and an open change can go back to draft", () => {
    expect(Either.getOrThrow(Change.revise(withStatus("draft"), revision())).status).toBe("open")
    expect(Either.getOrThrow(Change.revise(withStatus("open"), revision({ draft: true }))).status).toBe("draft")
    expect(Either.getOrThrow(Change.revise(withStatus("reserved"), revision())).status).toBe("open")
    expect(Either.getOrThrow(Change.revise(withStatus("open"), revision({ hasConflicts: true }))).status).toBe(
      "reserved"
    )
  })

  it("approved and denied changes cannot be revised", () => {
    expect(conflictMessage(Change.revise(withStatus("approved"), revision()))).toContain("already merged")
    expect(conflictMessage(Change.revise(withStatus("denied"), revision()))).toContain("restore it")
  })

  it("approval starts only on an open or draft change at the reviewed ref", () => {
    expect(Either.isRight(Change.startApproval(withStatus("open"), "ref-1"))).toBe(true)
    expect(Either.isRight(Change.startApproval(withStatus("draft"), "ref-1"))).toBe(true)
    for (const status of ["reserved", "approved", "denied"] as const) {
      expect(conflictMessage(Change.startApproval(withStatus(status), "ref-1"))).toContain(`it is ${status}`)
    }
    expect(conflictMessage(Change.startApproval(withStatus("open"), "ref-0"))).toBe(
      "stale expected_git_ref: change 7 is now at ref-1"
    )
  })

  it("recording an approval merges the change when it is mergeable", () => {
    const pending = Change.recordApproval(withStatus("open"), {
      approvalCount: 1,
      requiredApprovals: 2,
      merged: false,
      now: t1
    })
    expect(pending).toMatchObject({ status: "open", approval_count: 1, required_approvals: 2 })
    const merged = Change.recordApproval(pending, { approvalCount: 2, requiredApprovals: 2, merged: true, now: t1 })
    expect(merged.status).toBe("approved")
  })

  it("reserve parks a change whose merge conflicts, keeping its ref and counts", () => {
    const counted = Change.recordApproval(withStatus("open"), {
      approvalCount: 2,
      requiredApprovals: 2,
      merged: false,
      now: t0
    })
    expect(Change.reserve(counted, t1)).toMatchObject({
      status: "reserved",
      git_ref: "ref-1",
      approval_count: 2,
      updated_at: t1
    })
  })

  it("deny moves open or draft to denied, keeping the git ref", () => {
    for (const status of ["open", "draft"] as const) {
      const denied = Either.getOrThrow(Change.deny(withStatus(status), "ref-1", t1))
      expect(denied).toMatchObject({ status: "denied", git_ref: "ref-1" })
    }
    for (const status of ["reserved", "approved", "denied"] as const) {
      expect(conflictMessage(Change.deny(withStatus(status), "ref-1", t1))).toContain("cannot deny")
    }
    expect(conflictMessage(Change.deny(withStatus("open"), "stale", t1))).toContain("stale expected_git_ref")
  })

  it("restore reopens only denied changes at the reviewed ref", () => {
    expect(Either.getOrThrow(Change.restore(withStatus("denied"), "ref-1", t1))).toMatchObject({
      status: "open",
      revision: 1
    })
    for (const status of ["reserved", "draft", "open", "approved"] as const) {
      expect(conflictMessage(Change.restore(withStatus(status), "ref-1", t1))).toContain("only denied changes")
    }
    expect(conflictMessage(Change.restore(withStatus("denied"), "stale", t1))).toContain("stale expected_git_ref")
  })

  it("toChange serves the record without its internal fields", () => {
    const encoded = Schema.encodeSync(Change.Change)(Change.toChange(record(), {
      capabilities: new Change.Capabilities({
        can_approve: true,
        can_deny: true,
        can_restore: false,
        caller_approved: false
      })
    }))
    expect(Object.keys(encoded).sort()).toEqual([
      "ai_generated",
      "approval_count",
      "author_email",
      "author_id",
      "capabilities",
      "checks",
      "created_at",
      "description",
      "git_ref",
      "id",
      "number",
      "required_approvals",
      "revision",
      "status",
      "title",
      "updated_at"
    ])
    expect(encoded.created_at).toBe("2026-01-01T00:00:00.000Z")
  })
})
