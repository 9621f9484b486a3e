import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Change from "@sightline/core/Change"
import { ChangeRepo, keysetOf } from "@sightline/core/ChangeRepo"
import { Conflict } from "@sightline/core/Errors"
import { ChangeId, ChatId, MemberId, type OrganizationId } from "@sightline/core/Ids"
import { Fixtures } from "@sightline/core/testing"
import { withTransaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as PostgresClient from "../src/PostgresClient.js"
import * as SqlStore from "../src/SqlStore.js"
import * as TablePrefix from "../src/TablePrefix.js"
import { forEachDatabase, postgresUrl, type StoreServices, type TestDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const newChange = (
  organizationId: OrganizationId,
  number: number,
  fields: Partial<ConstructorParameters<typeof Change.ChangeRecord>[0]> = {}
) =>
  new Change.ChangeRecord({
    ...Change.make({
      id: ChangeId.make(Fixtures.uuid()),
      organizationId,
      number,
      authorId: MemberId.make(Fixtures.uuid()),
      authorEmail: "author@example.com",
      title: `change ${number}`,
      description: "description",
      gitRef: `ref-${number}`,
      touchedPaths: ["docs/a.md"],
      aiGenerated: false,
      requiredApprovals: 1,
      draft: false,
      hasConflicts: false,
      autoApproved: false,
      now: at("2024-01-01T00:00:00.000Z")
    }),
    ...fields
  })

/**
 * The services of the shared store, and, on PostgreSQL, of a second store over its own connection
 * pool under the same prefix: a second server process working on the same tables.
 */
const twoProcesses = (database: TestDatabase) =>
  Effect.gen(function*() {
    const first = yield* Effect.context<StoreServices>()
    if (database.name !== "postgres") return [first, first] as const
    const prefix = (yield* TablePrefix.TablePrefix).prefix
    const second = yield* Layer.build(
      SqlStore.layer.pipe(
        Layer.provideMerge(TablePrefix.layer(prefix)),
        Layer.provideMerge(PostgresClient.layer({ url: postgresUrl, maxConnections: 5 }))
      )
    )
    return [first, second as Context.Context<StoreServices>] as const
  })

forEachDatabase((database) =>
  describe(`ChangeRepoSql (${database.name})`, () => {
    it.effect("round-trips absent optional fields as NULL columns, and update clears them", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        const { base_ref: _, chat_id: __, ...bare } = newChange(org.id, 1)
        const record = new Change.ChangeRecord(bare)
        yield* repo.create(record)
        const read = Option.getOrThrow(yield* repo.get(org.id, record.id))
        expect(read).toEqual(record)
        expect("chat_id" in read).toBe(false)
        expect("base_ref" in read).toBe(false)

        const full = new Change.ChangeRecord({
          ...record,
          chat_id: ChatId.make(Fixtures.uuid()),
          base_ref: "b".repeat(40),
          touched_paths: ["a b/ü.md", "x,y\"z.sql", "{braces}"],
          updated_at: at("2024-02-03T04:05:06.789Z")
        })
        yield* repo.update(full)
        expect(yield* repo.get(org.id, record.id)).toEqual(Option.some(full))
        expect(Schema.encodeSync(Change.ChangeRecord)(full).updated_at).toBe("2024-02-03T04:05:06.789Z")
        yield* repo.update(record)
        expect(yield* repo.get(org.id, record.id)).toEqual(Option.some(record))
      }).pipe(Effect.provide(database.shared)))

    it.effect("a Conflict inside a transaction leaves the transaction usable", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        yield* repo.create(newChange(org.id, 1))
        const later = newChange(org.id, 2)
        yield* withTransaction(Effect.gen(function*() {
          expect(yield* Effect.flip(repo.create(newChange(org.id, 1)))).toBeInstanceOf(Conflict)
          yield* repo.create(later)
        }))
        expect(Option.isSome(yield* repo.get(org.id, later.id))).toBe(true)
      }).pipe(Effect.provide(database.shared)))

    it.effect("a cursor that is not one of ours names no row: its page is empty", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        const change = newChange(org.id, 1)
        yield* repo.create(change)
        const page = (after: { at: string; id: string }) =>
          repo.list(org.id, { includeAutoApproved: true, readable: () => true, statuses: [], limit: 5, after })
        expect((yield* page({ at: "not a time", id: change.id })).items).toEqual([])
        expect((yield* page({ at: "2030-01-01T00:00:00.000Z", id: "'; DROP TABLE x; --" })).items).toEqual([])
        // A well-formed cursor still works: everything strictly older than the position.
        const { at: when } = keysetOf(change)
        expect((yield* page({ at: when, id: "f".repeat(8) + "-ffff-ffff-ffff-" + "f".repeat(12) })).items)
          .toEqual([change])
      }).pipe(Effect.provide(database.shared)))

    it.effect("a listing that most rows fail reads on in batches and still fills its page", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        // 120 changes, of which only every 40th is readable: the page needs several growing batches.
        yield* Effect.forEach(Arr.range(1, 120), (n) =>
          repo.create(newChange(org.id, n, {
            touched_paths: [n % 40 === 0 ? "open/x" : "hidden/x"],
            created_at: DateTime.unsafeMake(Date.UTC(2024, 0, 1, 0, n))
          })))
        const readable = (c: Change.ChangeRecord) => c.touched_paths[0] === "open/x"
        const page = yield* repo.list(org.id, { includeAutoApproved: true, readable, statuses: [], limit: 2 })
        expect(page.items.map((c) => c.number)).toEqual([120, 80])
        expect(page.nextCursor).toBeDefined()
        expect(yield* repo.counts(org.id, { includeAutoApproved: true, readable })).toEqual({
          ...Change.emptyCounts,
          open: 3
        })
      }).pipe(Effect.provide(database.shared)))

    // `getByNumber` is served by the unique constraint `changes_number_key`; on nearly empty tables
    // the planner may pick any index of the organization for it, so it is not asserted here.
    it.effect("the statements of listings, revisions and approvals read an index (in order for listings)", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const sql = yield* SqlClient.SqlClient
        const prefix = (yield* TablePrefix.TablePrefix).prefix
        const org = yield* Fixtures.organization()
        const change = newChange(org.id, 1)
        yield* repo.create(change)
        const after = keysetOf(change)
        const all = { includeAutoApproved: true, readable: () => true, statuses: [], limit: 10 } as const
        const cases: ReadonlyArray<readonly [string, Effect.Effect<unknown>, boolean]> = [
          ["changes_created_idx", repo.list(org.id, { ...all, after }), true],
          ["changes_reviewed_created_idx", repo.list(org.id, { ...all, includeAutoApproved: false, after }), true],
          ["changes_status_created_idx", repo.list(org.id, { ...all, statuses: ["open"], after }), true],
          [
            "changes_reviewed_created_idx",
            repo.counts(org.id, { includeAutoApproved: false, readable: () => true }),
            true
          ],
          ["change_revisions_pkey", repo.revisions(org.id, change.id), true],
          // A change has a handful of approvals: sorting them by time is fine.
          ["change_approvals_pkey", repo.approvals(org.id, change.id), false]
        ]
        for (const [index, effect, ordered] of cases) {
          // The tables of a test database are small: without this, a sequential scan would win.
          const { plans } = yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`SET LOCAL enable_seqscan = off`
            yield* sql`SET LOCAL enable_sort = off`
            return yield* capturePlans(effect)
          }))
          expect(plans).toHaveLength(1)
          const plan = plans[0]!.plan
          expect(plan, plan).toMatch(new RegExp(`Index (Only )?Scan( Backward)? using ${prefix}${index}\\b`))
          expect(plan, plan).not.toMatch(ordered ? /Seq Scan|Sort/ : /Seq Scan/)
        }
      }).pipe(Effect.provide(database.shared)))

    it.live("N concurrent creations, each taking the next number, get N distinct numbers", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        const processes = yield* twoProcesses(database)
        const create = (i: number) =>
          withTransaction(Effect.gen(function*() {
            const repo = yield* ChangeRepo
            const number = yield* repo.nextNumber(org.id)
            yield* repo.create(newChange(org.id, number))
            return number
          })).pipe(Effect.provide(processes[i % 2]!))
        const numbers = yield* Effect.all(Arr.makeBy(24, create), { concurrency: "unbounded" })
        expect(new Set(numbers).size).toBe(24)
        const repo = yield* ChangeRepo
        const stored = yield* repo.list(org.id, {
          includeAutoApproved: true,
          readable: () => true,
          statuses: [],
          limit: 100
        })
        expect(stored.items.map((c) => c.number).sort((a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b))
        expect(yield* repo.nextNumber(org.id)).toBeGreaterThan(Math.max(...numbers))
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.live("concurrent approvals by the same approver record one row; the others are already approved", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        const change = newChange(org.id, 1)
        yield* repo.create(change)
        const approver = MemberId.make(Fixtures.uuid())
        const processes = yield* twoProcesses(database)
        const approve = (i: number) =>
          Effect.flatMap(ChangeRepo, (r) =>
            r.addApproval(
              new Change.ApprovalRecord({
                organization_id: org.id,
                change_id: change.id,
                revision: 1,
                approver_id: approver,
                created_at: DateTime.unsafeMake(Date.UTC(2024, 0, 1, 0, i))
              })
            )).pipe(Effect.provide(processes[i % 2]!))
        const results = yield* Effect.all(Arr.makeBy(16, approve), { concurrency: "unbounded" })
        expect(results.filter((r) => !r.alreadyApproved)).toHaveLength(1)
        expect(results.filter((r) => r.alreadyApproved)).toHaveLength(15)
        const rows = yield* repo.approvals(org.id, change.id)
        expect(rows.map((a) => a.approver_id)).toEqual([approver])
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.live("concurrent approvers under getForUpdate: counted once each, merged exactly once", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const org = yield* Fixtures.organization()
        const required = 4
        const change = newChange(org.id, 1, { required_approvals: required })
        yield* repo.create(change)
        const processes = yield* twoProcesses(database)
        const approvers = Arr.makeBy(10, () => MemberId.make(Fixtures.uuid()))
        let merges = 0
        // What an approval use case does: lock the change, record, recount, and merge at the threshold.
        const approve = (approver: MemberId, i: number) =>
          withTransaction(Effect.gen(function*() {
            const r = yield* ChangeRepo
            const current = Option.getOrThrow(yield* r.getForUpdate(org.id, change.id))
            if (current.status !== "open") return "closed" as const
            const { alreadyApproved } = yield* r.addApproval(
              new Change.ApprovalRecord({
                organization_id: org.id,
                change_id: change.id,
                revision: current.revision,
                approver_id: approver,
                created_at: DateTime.unsafeMake(Date.UTC(2024, 0, 1, 0, 0, i))
              })
            )
            const count = (yield* r.approvals(org.id, change.id)).filter((a) => a.revision === current.revision).length
            const merged = count >= required
            if (merged) merges++
            yield* r.update(
              new Change.ChangeRecord({ ...current, approval_count: count, status: merged ? "approved" : "open" })
            )
            return alreadyApproved ? "again" as const : "recorded" as const
          })).pipe(Effect.provide(processes[i % 2]!))
        // Every approver twice, all at once.
        const calls = [...approvers, ...approvers].map(approve)
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        expect(merges).toBe(1)
        expect(results.filter((r) => r === "recorded")).toHaveLength(required)
        const final = Option.getOrThrow(yield* repo.get(org.id, change.id))
        expect(final.status).toBe("approved")
        expect(final.approval_count).toBe(required)
        expect(new Set((yield* repo.approvals(org.id, change.id)).map((a) => a.approver_id)).size).toBe(required)
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.live("concurrent number reservations that roll back never break uniqueness", () =>
      Effect.gen(function*() {
        const org = yield* Fixtures.organization()
        const processes = yield* twoProcesses(database)
        const attempt = (i: number) =>
          withTransaction(Effect.gen(function*() {
            const repo = yield* ChangeRepo
            const number = yield* repo.nextNumber(org.id)
            yield* repo.create(newChange(org.id, number))
            if (i % 3 === 0) return yield* Effect.fail("crash" as const)
            return number
          })).pipe(Effect.exit, Effect.provide(processes[i % 2]!))
        const exits = yield* Effect.all(Arr.makeBy(18, attempt), { concurrency: "unbounded" })
        const committed = exits.filter(Exit.isSuccess).map((exit) => exit.value)
        expect(committed).toHaveLength(12)
        const repo = yield* ChangeRepo
        const stored = yield* repo.list(org.id, {
          includeAutoApproved: true,
          readable: () => true,
          statuses: [],
          limit: 50
        })
        // Exactly the committed changes exist: the rolled-back ones left no row behind.
        expect(stored.items.map((c) => c.number).sort((a, b) => a - b)).toEqual(committed.sort((a, b) => a - b))
      }).pipe(Effect.scoped, Effect.provide(database.shared)))

    it.effect("deleting an organization removes its changes, revisions, approvals and counter", () =>
      Effect.gen(function*() {
        const repo = yield* ChangeRepo
        const sql = yield* SqlClient.SqlClient
        const prefix = yield* TablePrefix.TablePrefix
        const org = yield* Fixtures.organization()
        const change = newChange(org.id, yield* repo.nextNumber(org.id))
        yield* repo.create(change)
        yield* repo.addRevision(
          new Change.Revision({
            organization_id: org.id,
            change_id: change.id,
            revision: 1,
            git_ref: "r",
            touched_paths: [],
            created_at: change.created_at
          })
        )
        yield* repo.addApproval(
          new Change.ApprovalRecord({
            organization_id: org.id,
            change_id: change.id,
            revision: 1,
            approver_id: MemberId.make(Fixtures.uuid()),
            created_at: change.created_at
          })
        )
        yield* sql`DELETE FROM ${sql(prefix.name("organizations"))} WHERE id = ${org.id}`
        for (const table of ["changes", "change_revisions", "change_approvals", "change_counters"]) {
          const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(prefix.name(table))}
            WHERE organization_id = ${org.id}`
          expect(row!.n, table).toBe(0)
        }
      }).pipe(Effect.provide(database.shared)))
  })
)
