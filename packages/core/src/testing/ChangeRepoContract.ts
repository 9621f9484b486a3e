/**
 * The contract every `ChangeRepo` implementation must pass.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Change from "../Change.js"
import { ChangeRepo } from "../ChangeRepo.js"
import { ChangeId, ChatId, type MemberId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import { Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * The ports the suite needs: the repository, organizations and members (foreign keys), transactions.
 *
 * @since 0.1.0
 * @category models
 */
export type Needed = ChangeRepo | OrganizationRepo | MemberRepo | Transaction

const at = (minute: number) => DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, minute))

interface ChangeOptions {
  readonly number: number
  readonly minute?: number
  readonly status?: Change.ChangeStatus
  readonly autoApproved?: boolean
  readonly touchedPaths?: ReadonlyArray<string>
}

const change = (organizationId: OrganizationId, authorId: MemberId, options: ChangeOptions) =>
  new Change.ChangeRecord({
    ...Change.make({
      id: ChangeId.make(Fixtures.uuid()),
      organizationId,
      number: options.number,
      authorId,
      authorEmail: "author@example.com",
      title: `change ${options.number}`,
      description: "description",
      gitRef: `ref-${options.number}`,
      baseRef: "base",
      touchedPaths: options.touchedPaths ?? ["docs/a.md"],
      aiGenerated: true,
      chatId: ChatId.make(Fixtures.uuid()),
      requiredApprovals: 2,
      draft: false,
      hasConflicts: false,
      autoApproved: options.autoApproved ?? false,
      now: at(options.minute ?? 0)
    }),
    ...(options.status === undefined ? {} : { status: options.status })
  })

const setup = Effect.gen(function*() {
  const repo = yield* ChangeRepo
  const org = yield* Fixtures.organization()
  const author = yield* Fixtures.member(org.id)
  const create = (options: ChangeOptions) => {
    const record = change(org.id, author.id, options)
    return Effect.as(Effect.orDie(repo.create(record)), record)
  }
  return { repo, org, author, create }
})

const everything: ChangeRepo.Filter = { includeAutoApproved: true, readable: () => true }

/**
 * Registers the `ChangeRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const changeRepoContract = (name: string, layer: Layer.Layer<Needed, unknown>): void => {
  describe(`ChangeRepo contract: ${name}`, () => {
    it.effect("create, get and getByNumber round-trip every field", () =>
      Effect.gen(function*() {
        const { author, org, repo } = yield* setup
        const record = change(org.id, author.id, { number: 1, touchedPaths: ["a.md", "b/c.sql"] })
        yield* repo.create(record)
        expect(yield* repo.get(org.id, record.id)).toEqual(Option.some(record))
        expect(yield* repo.getForUpdate(org.id, record.id)).toEqual(Option.some(record))
        expect(yield* repo.getByNumber(org.id, 1)).toEqual(Option.some(record))
        expect(yield* repo.getByNumber(org.id, 2)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("numbers are unique per organization", () =>
      Effect.gen(function*() {
        const { author, create, org, repo } = yield* setup
        yield* create({ number: 5 })
        const clash = yield* Effect.flip(repo.create(change(org.id, author.id, { number: 5 })))
        expect(clash._tag).toBe("Conflict")
        const other = yield* Fixtures.organization()
        const otherAuthor = yield* Fixtures.member(other.id)
        yield* repo.create(change(other.id, otherAuthor.id, { number: 5 }))
      }).pipe(Effect.provide(layer)))

    it.effect("nextNumber is increasing and never handed out twice, even concurrently", () =>
      Effect.gen(function*() {
        const { org, repo } = yield* setup
        const first = yield* repo.nextNumber(org.id)
        const concurrent = yield* Effect.all(Array.from({ length: 20 }, () => repo.nextNumber(org.id)), {
          concurrency: "unbounded"
        })
        expect(new Set(concurrent).size).toBe(20)
        expect(Math.min(...concurrent)).toBeGreaterThan(first)
        const last = yield* repo.nextNumber(org.id)
        expect(last).toBeGreaterThan(Math.max(...concurrent))
        const other = yield* Fixtures.organization()
        expect(yield* repo.nextNumber(other.id)).toBe(1)
      }).pipe(Effect.provide(layer)))

    it.effect("nextNumber stays above numbers already stored", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        yield* create({ number: 41 })
        expect(yield* repo.nextNumber(org.id)).toBeGreaterThan(41)
      }).pipe(Effect.provide(layer)))

    it.effect("another organization's change is simply absent", () =>
      Effect.gen(function*() {
        const { create, repo } = yield* setup
        const mine = yield* create({ number: 1 })
        const other = yield* Fixtures.organization()
        expect(yield* repo.get(other.id, mine.id)).toEqual(Option.none())
        expect(yield* repo.getForUpdate(other.id, mine.id)).toEqual(Option.none())
        expect(yield* repo.getByNumber(other.id, 1)).toEqual(Option.none())
        expect((yield* repo.list(other.id, { ...everything, statuses: [], limit: 10 })).items).toEqual([])
        expect(yield* repo.counts(other.id, everything)).toEqual(Change.emptyCounts)
        yield* repo.update(new Change.ChangeRecord({ ...mine, organization_id: other.id, title: "hijacked" }))
        expect(Option.getOrThrow(yield* repo.get(mine.organization_id, mine.id)).title).toBe("change 1")
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces the stored change", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        const created = yield* create({ number: 1 })
        const updated = new Change.ChangeRecord({ ...created, status: "denied", approval_count: 1, updated_at: at(9) })
        yield* repo.update(updated)
        expect(yield* repo.get(org.id, created.id)).toEqual(Option.some(updated))
      }).pipe(Effect.provide(layer)))

    it.effect("list is newest first and filters by status, auto-approval and readability", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        yield* create({ number: 1, minute: 1 })
        yield* create({ number: 2, minute: 2, status: "draft" })
        yield* create({ number: 3, minute: 3, status: "approved", autoApproved: true })
        yield* create({ number: 4, minute: 4, touchedPaths: ["hidden/x.md"] })
        yield* create({ number: 5, minute: 5, status: "denied" })
        const numbers = (options: Partial<ChangeRepo.ListOptions>) =>
          Effect.map(
            repo.list(org.id, { ...everything, statuses: [], limit: 10, ...options }),
            (page) => page.items.map((c) => c.number)
          )
        expect(yield* numbers({})).toEqual([5, 4, 3, 2, 1])
        expect(yield* numbers({ includeAutoApproved: false })).toEqual([5, 4, 2, 1])
        expect(yield* numbers({ statuses: ["open", "draft"] })).toEqual([4, 2, 1])
        const readable = (c: Change.ChangeRecord) => c.touched_paths.every((p) => !p.startsWith("hidden/"))
        expect(yield* numbers({ readable })).toEqual([5, 3, 2, 1])
        expect(yield* repo.counts(org.id, { includeAutoApproved: false, readable })).toEqual({
          reserved: 0,
          draft: 1,
          open: 1,
          approved: 0,
          denied: 1
        })
        expect(yield* repo.counts(org.id, everything)).toEqual({
          reserved: 0,
          draft: 1,
          open: 2,
          approved: 1,
          denied: 1
        })
      }).pipe(Effect.provide(layer)))

    it.effect("keyset pages are full despite read filtering and stable under inserts", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        for (let n = 1; n <= 7; n++) {
          yield* create({ number: n, minute: n, touchedPaths: [n % 3 === 0 ? "hidden/x" : "open/x"] })
        }
        const filter = {
          ...everything,
          statuses: [],
          readable: (c: Change.ChangeRecord) => c.touched_paths[0] === "open/x"
        }
        const first = yield* repo.list(org.id, { ...filter, limit: 2 })
        expect(first.items.map((c) => c.number)).toEqual([7, 5])
        // A newer change arrives between the pages: the next page still continues after the cursor.
        yield* create({ number: 8, minute: 8, touchedPaths: ["open/x"] })
        const after = yield* Pagination.decodeCursor(first.nextCursor!)
        const second = yield* repo.list(org.id, { ...filter, limit: 2, after })
        expect(second.items.map((c) => c.number)).toEqual([4, 2])
        const third = yield* repo.list(org.id, {
          ...filter,
          limit: 2,
          after: yield* Pagination.decodeCursor(second.nextCursor!)
        })
        expect(third.items.map((c) => c.number)).toEqual([1])
        expect(third.nextCursor).toBeUndefined()
      }).pipe(Effect.provide(layer)))

    it.effect("equal timestamps page by id without skipping or repeating", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        for (let n = 1; n <= 5; n++) yield* create({ number: n, minute: 0 })
        const seen: Array<number> = []
        let after: Pagination.Keyset | undefined
        for (let page = 0; page < 5; page++) {
          const result = yield* repo.list(org.id, { ...everything, statuses: [], limit: 2, after })
          seen.push(...result.items.map((c) => c.number))
          if (result.nextCursor === undefined) break
          after = yield* Pagination.decodeCursor(result.nextCursor)
        }
        expect([...seen].sort()).toEqual([1, 2, 3, 4, 5])
      }).pipe(Effect.provide(layer)))

    it.effect("revisions are listed oldest first and unique per change", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        const c = yield* create({ number: 1 })
        const revision = (n: number) =>
          new Change.Revision({
            organization_id: org.id,
            change_id: c.id,
            revision: n,
            git_ref: `ref-${n}`,
            base_ref: "base",
            touched_paths: ["a.md"],
            created_at: at(n)
          })
        yield* repo.addRevision(revision(2))
        yield* repo.addRevision(revision(1))
        expect(yield* repo.revisions(org.id, c.id)).toEqual([revision(1), revision(2)])
        expect((yield* Effect.flip(repo.addRevision(revision(2))))._tag).toBe("Conflict")
        const other = yield* Fixtures.organization()
        expect(yield* repo.revisions(other.id, c.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("an approval is recorded once per change, revision and approver", () =>
      Effect.gen(function*() {
        const { create, org, repo } = yield* setup
        const c = yield* create({ number: 1 })
        const approver = yield* Fixtures.member(org.id)
        const approval = (revision: number, minute: number) =>
          new Change.ApprovalRecord({
            organization_id: org.id,
            change_id: c.id,
            revision,
            approver_id: approver.id,
            created_at: at(minute)
          })
        expect(yield* repo.addApproval(approval(1, 1))).toEqual({ alreadyApproved: false })
        expect(yield* repo.addApproval(approval(1, 2))).toEqual({ alreadyApproved: true })
        expect(yield* repo.addApproval(approval(2, 3))).toEqual({ alreadyApproved: false })
        expect(yield* repo.approvals(org.id, c.id)).toEqual([approval(1, 1), approval(2, 3)])
        const other = yield* Fixtures.organization()
        expect(yield* repo.approvals(other.id, c.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves nothing behind", () =>
      Effect.gen(function*() {
        const { author, org, repo } = yield* setup
        const record = change(org.id, author.id, { number: 1 })
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(record)
          yield* repo.addRevision(
            new Change.Revision({
              organization_id: org.id,
              change_id: record.id,
              revision: 1,
              git_ref: "r",
              touched_paths: [],
              created_at: at(0)
            })
          )
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, record.id)).toEqual(Option.none())
        expect(yield* repo.revisions(org.id, record.id)).toEqual([])
        yield* repo.create(record)
      }).pipe(Effect.provide(layer)))
  })
}
