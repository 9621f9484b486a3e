/**
 * Core's use cases over the real SQL store, under concurrency and crashes: "nothing lost, nothing
 * doubled". Every operation under test goes through a use case (`Changes.create`/`approve`,
 * `ApiKeys.create`/`revoke`, `Auth.authenticateApiKey`), set up through use cases too
 * (`Organizations`, `Roles`, `Members`, and main seeded by a change its admin files and approves);
 * what reached the database is then read back from the tables themselves.
 *
 * On PostgreSQL, concurrent callers are separate fibers on separate pool connections, so they really
 * race; on PGlite (one session) whole transactions serialize, and the same assertions must hold.
 *
 * How each test was checked to fail (see `utils/sightline.ts`, `SIGHTLINE_E2E_MUTANT`): the mutants
 * swap a guarantee of the store for a broken one, exactly as editing the adapter would (`no-row-lock`
 * is `getForUpdate` without `FOR UPDATE`, `no-transaction` is a `withTransaction` that runs its effect
 * bare), without touching the sources other sessions share. The failures observed are noted on each
 * test.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as ApiKey from "@sightline/core/ApiKey"
import * as ApiKeys from "@sightline/core/ApiKeys"
import { AuditLogRepo } from "@sightline/core/AuditLogRepo"
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import { ChangeRepo } from "@sightline/core/ChangeRepo"
import * as Changes from "@sightline/core/Changes"
import type { ChangeId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as Library from "@sightline/core/Library"
import { decodeText } from "@sightline/core/LibraryDiff"
import { LibraryStore } from "@sightline/core/LibraryStore"
import { MemberRepo } from "@sightline/core/MemberRepo"
import * as Members from "@sightline/core/Members"
import * as Organizations from "@sightline/core/Organizations"
import type * as Policy from "@sightline/core/Policy"
import * as Roles from "@sightline/core/Roles"
import { Fixtures } from "@sightline/core/testing"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase, type TestDatabase } from "./utils/databases.js"
import * as Sightline from "./utils/sightline.js"

/** Approvals the `reports/` rule requires. */
const REQUIRED = 3
/** Eligible approvers racing for them (fewer than the pool's 10 connections, more than `REQUIRED`). */
const APPROVERS = 8

/** Main as its admin files it: two folders owned by `reviewers`, needing 3 and 1 distinct approvals. */
const seedFiles: Record<string, string> = {
  "reports/OWNERS": `owner: role:reviewers\nrule: approvals=${REQUIRED} distinct\n`,
  "reports/revenue.sql": "select 1\n",
  "quick/OWNERS": "owner: role:reviewers\nrule: approvals=1 distinct\n",
  "quick/notes.md": "# Notes\n"
}

const changeBody = (title: string) =>
  Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title, description: `${title} (end-to-end test)` })

const keyBody = (name: string) => Schema.decodeUnknownSync(ApiKey.CreateApiKey)({ name, inheritAllRoles: true })

/** An organization made by `Organizations.create`, with its admin acting through a session. */
const organization = Effect.gen(function*() {
  const tag = Fixtures.uuid().slice(0, 8)
  const created = yield* (yield* Organizations.Organizations).create({
    name: `E2E ${tag}`,
    adminEmail: `admin-${tag}@example.com`
  })
  const orgId = created.organization.id
  const admin = yield* Effect.orDie((yield* Auth.Auth).sessionPrincipal(orgId, created.admin.id))
  return { tag, orgId, admin }
})

/**
 * An organization with an author (a plain member), `reviewerCount` members of the `reviewers` role,
 * and main seeded with `seedFiles` by a change its admin files and approves (change number 1).
 */
const world = (reviewerCount: number) =>
  Effect.gen(function*() {
    const { admin, orgId, tag } = yield* organization
    const auth = yield* Auth.Auth
    const members = yield* Members.Members
    const changes = yield* Changes.Changes
    const session = (id: MemberId) => Effect.orDie(auth.sessionPrincipal(orgId, id))
    const invite = (name: string) =>
      Effect.map(
        Effect.orDie(members.invite(admin, { email: `${name}-${tag}@example.com`, role: "member" })),
        (result) => result.member_id
      )
    const reviewersRole = yield* Effect.orDie((yield* Roles.Roles).create(admin, { name: "reviewers" }))
    const author = yield* session(yield* invite("author"))
    const reviewers = yield* Effect.forEach(Arr.range(1, reviewerCount), (i) =>
      Effect.gen(function*() {
        const id = yield* invite(`reviewer${i}`)
        yield* Effect.orDie(members.assignRole(admin, id, { roleId: reviewersRole.id }))
        return yield* session(id)
      }))
    const seed = yield* Effect.orDie(changes.create(admin, {
      body: changeBody("Seed the library"),
      baseRef: Option.none(),
      edits: Fixtures.edits(seedFiles)
    }))
    const seeded = yield* Effect.orDie(changes.approve(admin, seed.change_id, { expected_git_ref: seed.git_ref }))
    expect(seeded.merged).toBe(true)
    const head = Option.getOrThrow(yield* (yield* LibraryStore).head(orgId))
    return { orgId, admin, author, reviewers, head }
  })

/** Files staged edits (relative to `baseRef`) as a new change. */
const file = (principal: Policy.Principal, baseRef: string, edits: Record<string, string | null>, title: string) =>
  Effect.flatMap(Changes.Changes, (changes) =>
    changes.create(principal, {
      body: changeBody(title),
      baseRef: Option.some(baseRef),
      edits: Fixtures.edits(edits)
    }))

const approve = (principal: Policy.Principal, id: ChangeId, gitRef: string) =>
  Effect.flatMap(Changes.Changes, (changes) => changes.approve(principal, id, { expected_git_ref: gitRef }))

/** A table of the store, by its unprefixed name, and the client to query it (no transforms). */
const tables = Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const prefix = yield* TablePrefix
  return { sql, table: (name: string) => sql(prefix.name(name)) }
})

/** What the tables hold about one change and its organization's main. */
const changeState = (orgId: OrganizationId, changeId: ChangeId) =>
  Effect.gen(function*() {
    const { sql, table } = yield* tables
    const [change] = yield* sql<{ status: string; approval_count: number; revision: number }>`
      SELECT status, approval_count, revision FROM ${table("changes")}
      WHERE organization_id = ${orgId} AND id = ${changeId}`
    const approvals = yield* sql<{ approver_id: string }>`
      SELECT approver_id FROM ${table("change_approvals")}
      WHERE organization_id = ${orgId} AND change_id = ${changeId} ORDER BY approver_id`
    const [head] = yield* sql<{ commit_ref: string }>`
      SELECT commit_ref FROM ${table("library_refs")} WHERE organization_id = ${orgId} AND name = 'main'`
    const merges = yield* sql<{ ref: string; parent_ref: string | null; message: string }>`
      SELECT ref, parent_ref, message FROM ${table("library_commits")}
      WHERE organization_id = ${orgId} AND message LIKE 'Merge change %' ORDER BY created_at`
    const audit = yield* sql<{ merged: string | null }>`
      SELECT details->>'merged' AS merged FROM ${table("audit_logs")}
      WHERE organization_id = ${orgId} AND action = 'change.approve' AND resource_id = ${changeId}`
    return {
      status: change.status,
      approvalCount: change.approval_count,
      approvers: approvals.map((a) => a.approver_id),
      head: head.commit_ref,
      merges,
      approveEntries: audit.map((entry) => entry.merged)
    }
  })

/** The names of the keys, and of the keys named by `api_key.create` audit entries, of an organization. */
const keyState = (orgId: OrganizationId) =>
  Effect.gen(function*() {
    const { sql, table } = yield* tables
    const keys = yield* sql<{ name: string }>`
      SELECT name FROM ${table("api_keys")} WHERE organization_id = ${orgId} ORDER BY name`
    const entries = yield* sql<{ name: string }>`
      SELECT details->>'name' AS name FROM ${table("audit_logs")}
      WHERE organization_id = ${orgId} AND action = 'api_key.create' ORDER BY 1`
    return { keys: keys.map((k) => k.name), entries: entries.map((e) => e.name) }
  })

/** The text of main's files as a member reads them (`Library.snapshotFor`). */
const mainAs = (principal: Policy.Principal) =>
  Effect.gen(function*() {
    const view = yield* Effect.orDie((yield* Library.Library).snapshotFor(principal))
    return {
      ref: Option.getOrThrow(view.ref),
      files: Object.fromEntries(Array.from(HashMap.entries(view.files), ([path, bytes]) => [path, decodeText(bytes)]))
    }
  })

/** Starts `effects` together: each in its own fiber, released at once by one gate. */
const race = <A, E, R>(effects: ReadonlyArray<Effect.Effect<A, E, R>>) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const fibers = yield* Effect.forEach(effects, (effect) =>
      Effect.fork(Effect.zipRight(Deferred.await(gate), Effect.either(effect))))
    yield* Deferred.succeed(gate, undefined)
    return yield* Fiber.joinAll(fibers)
  })

const isDefect = (exit: Exit.Exit<unknown, unknown>) => Exit.isFailure(exit) && Cause.isDie(exit.cause)

/** A switch a test arms so that a wrapped store step crashes or hangs once, and learns that it did. */
interface Trap {
  armed: boolean
  readonly reached: Deferred.Deferred<void>
}
const makeTrap = Effect.map(Deferred.make<void>(), (reached): Trap => ({ armed: false, reached }))

/** Runs `step` (the real write); when the trap is armed, then crashes (`die`) or hangs until interrupted. */
const springs = (trap: Trap, mode: "die" | "hang") => <A>(step: Effect.Effect<A>): Effect.Effect<A> =>
  Effect.suspend(() => {
    if (!trap.armed) return step
    trap.armed = false
    return Effect.zipRight(
      step,
      Effect.zipRight(
        Deferred.succeed(trap.reached, undefined),
        mode === "die" ? Effect.dieMessage("crash after the write") : Effect.never
      )
    )
  })

forEachDatabase((database: TestDatabase) =>
  describe(`core use cases over SQL (${database.name})`, () => {
    const run = <A, E>(
      effect: Effect.Effect<A, E, Sightline.Services>,
      options: { readonly adapt?: Sightline.Adapt } = {}
    ) => Effect.provide(effect, Sightline.layer(database.shared, options))

    describe("approvals from many concurrent callers", () => {
      // Checked to fail on PostgreSQL with `no-row-lock`: the approvers read the change unlocked and each
      // counted only the approvals committed before it (answers counted 1,1,1,1,1,1,1,5 and all eight
      // approvals were kept); with `no-transaction` on both databases (the lock ends with its statement:
      // counts 1,3 on PostgreSQL; on PGlite a late approver hit "the library's main moved").
      it.live(`${APPROVERS} approvers, ${REQUIRED} required: one merge, main moves once, late approvers conflict`, () =>
        run(Effect.gen(function*() {
          const w = yield* world(APPROVERS)
          const filed = yield* file(w.author, w.head, { "reports/revenue.sql": "select 2\n" }, "Net revenue")
          expect(filed).toMatchObject({ status: "open", has_conflicts: false, auto_approved: false })

          const answers = yield* race(w.reviewers.map((r) => approve(r, filed.change_id, filed.git_ref)))

          const successes = Arr.getRights(answers)
          const failures = Arr.getLefts(answers)
          // Each approver saw the approvals before it: the answers count 1, 2, ... up to the merge.
          expect(successes.map((a) => a.approval_count).sort((a, b) => a - b)).toEqual(Arr.range(1, REQUIRED))
          expect(successes.filter((a) => a.merged)).toEqual([
            new Change.ApproveResult({
              merged: true,
              approval_count: REQUIRED,
              required_approvals: REQUIRED,
              already_approved: false
            })
          ])
          expect(successes.every((a) => a.required_approvals === REQUIRED && !a.already_approved)).toBe(true)
          // The late approvers get the documented answer: the change is no longer open.
          expect(failures).toHaveLength(APPROVERS - REQUIRED)
          for (const failure of failures) {
            expect(failure._tag).toBe("Conflict")
            expect(failure.message).toBe(
              `cannot approve change ${filed.change_number}: it is approved (only open or draft changes can be)`
            )
          }

          // The tables: the change approved with the counted approvals, exactly the successful approvers,
          // main moved exactly once (one merge commit on top of the seed), one audit entry per approval.
          const state = yield* changeState(w.orgId, filed.change_id)
          const approvedBy = w.reviewers.filter((_, i) => Either.isRight(answers[i])).map((r) => r.memberId).sort()
          expect(state).toMatchObject({ status: "approved", approvalCount: REQUIRED, approvers: approvedBy })
          expect(state.merges).toHaveLength(2)
          expect(state.merges[1]).toMatchObject({ ref: state.head, parent_ref: w.head })
          expect(state.merges[1].message).toMatch(new RegExp(`^Merge change ${filed.change_number}: `))
          expect(state.approveEntries.sort()).toEqual([...Arr.replicate("false", REQUIRED - 1), "true"])

          // And through the use cases: main holds the change, the change reads as approved.
          const main = yield* mainAs(w.author)
          expect(main.ref).toBe(state.head)
          expect(main.files["reports/revenue.sql"]).toBe("select 2\n")
          const change = yield* (yield* Changes.Changes).get(w.author, filed.change_id, {})
          expect(change).toMatchObject({ status: "approved", approval_count: REQUIRED, required_approvals: REQUIRED })
        })))

      // The primary key of an approval, not the row lock, makes this hold (it passes under `no-row-lock`
      // and `no-transaction`). Checked to fail with `plain-approval-insert`: the repeated approval dies
      // on the duplicate key instead of answering `already_approved`.
      it.live("the same approver approving concurrently counts once", () =>
        run(Effect.gen(function*() {
          const w = yield* world(REQUIRED)
          const filed = yield* file(w.author, w.head, { "reports/costs.sql": "select 3\n" }, "Costs")
          const [first, second, third] = w.reviewers

          const answers = yield* race(Arr.replicate(approve(first, filed.change_id, filed.git_ref), 5))

          const results = answers.map((answer) => Either.getOrThrow(answer))
          expect(results.every((r) => !r.merged && r.approval_count === 1)).toBe(true)
          expect(results.filter((r) => !r.already_approved)).toHaveLength(1)
          const state = yield* changeState(w.orgId, filed.change_id)
          expect(state).toMatchObject({ status: "open", approvalCount: 1, approvers: [first.memberId] })
          expect(state.merges).toHaveLength(1)

          // It still takes two other approvers to merge.
          expect(yield* approve(second, filed.change_id, filed.git_ref)).toMatchObject({
            merged: false,
            approval_count: 2
          })
          expect(yield* approve(third, filed.change_id, filed.git_ref)).toMatchObject({
            merged: true,
            approval_count: 3
          })
        })))
    })

    describe("merges of different changes at once", () => {
      // Not asked by the issue, but the same promise: several changes of one organization merging at
      // once never lose a merge on main, and none of them fails for it: a transaction that lost the
      // race for main is rolled back and run again (`Changes` retries on a moved main). Checked to
      // fail with `no-transaction` on both databases, and on PostgreSQL when the retry is removed
      // (three of the four answers are then conflicts).
      it.live("every merge lands on main, one after the other", () =>
        run(Effect.gen(function*() {
          const count = 4
          const w = yield* world(count)
          const filed = yield* Effect.forEach(
            Arr.range(1, count),
            (i) => file(w.author, w.head, { [`quick/page${i}.md`]: `page ${i}\n` }, `Page ${i}`)
          )
          const answers = yield* race(filed.map((f, i) => approve(w.reviewers[i], f.change_id, f.git_ref)))

          expect(Arr.getLefts(answers)).toEqual([])
          for (const answer of Arr.getRights(answers)) expect(answer.merged).toBe(true)
          // Main holds exactly the merged pages, through a linear chain of merge commits.
          const state = yield* changeState(w.orgId, filed[0].change_id)
          expect(state.merges).toHaveLength(1 + count)
          state.merges.slice(1).forEach((m, i) => expect(m.parent_ref).toBe(state.merges[i].ref))
          expect(state.head).toBe(state.merges[count].ref)
          const files = (yield* mainAs(w.author)).files
          expect(Object.keys(files).filter((p) => p.startsWith("quick/page")).sort()).toEqual(
            filed.map((_, i) => `quick/page${i + 1}.md`).sort()
          )
        })))
    })

    describe("the organization keeps an admin", () => {
      // Two admins deleting each other at the same moment. Reading who holds `admin` is slowed down, so
      // both checks run before either delete commits: without a shared lock each sees another admin
      // left and both commit. The admin role's row lock (taken by every change that can remove an
      // admin) makes the second wait and see the first's outcome. Checked to fail on PostgreSQL with
      // that lock removed from `Members.ensureAdminRemains` (both deletes succeeded, no admin left).
      const slowAdminCheck = Sightline.replace(MemberRepo, (real) =>
        MemberRepo.of({
          ...real,
          membersWithRole: (organizationId, roleId) =>
            Effect.zipLeft(real.membersWithRole(organizationId, roleId), Effect.sleep("300 millis"))
        }))
      it.live("two admins deleting each other concurrently: exactly one succeeds", () =>
        run(
          Effect.gen(function*() {
            const { admin: first, orgId, tag } = yield* organization
            const members = yield* Members.Members
            const invited = yield* members.invite(first, { email: `second-${tag}@example.com`, role: "admin" })
            const second = yield* Effect.orDie((yield* Auth.Auth).sessionPrincipal(orgId, invited.member_id))
            const answers = yield* race([
              members.delete(first, second.memberId, { hard_delete: false }),
              members.delete(second, first.memberId, { hard_delete: false })
            ])
            expect(Arr.getRights(answers)).toHaveLength(1)
            expect(Arr.getLefts(answers).map((e) => e._tag)).toEqual(["Conflict"])
            const sql = yield* SqlClient.SqlClient
            const prefix = yield* TablePrefix
            const admins = yield* sql<{ n: number }>`
              SELECT count(*)::int AS n FROM ${sql(prefix.name("members"))} m
              JOIN ${sql(prefix.name("member_roles"))} mr
                ON mr.organization_id = m.organization_id AND mr.member_id = m.id
              JOIN ${sql(prefix.name("roles"))} r ON r.organization_id = mr.organization_id AND r.id = mr.role_id
              WHERE m.organization_id = ${orgId} AND m.deleted_at IS NULL AND r.is_system AND r.name = 'admin'`
            expect(admins[0]!.n).toBe(1)
          }),
          { adapt: slowAdminCheck }
        ))
    })

    describe("a crash between steps leaves nothing half-written", () => {
      // The audit entry is the second write of `ApiKeys.create`: the wrapped `append` writes it, then
      // the process "crashes" (a defect) or hangs until interrupted, before the transaction commits.
      // Checked to fail with `no-transaction` on both databases: the key and its entry stay in the tables.
      const crashAudit = (trap: Trap, mode: "die" | "hang") =>
        Sightline.replace(AuditLogRepo, (real) =>
          AuditLogRepo.of({
            ...real,
            append: (record) =>
              record.action === "api_key.create" ? springs(trap, mode)(real.append(record)) : real.append(record)
          }))

      it.live("ApiKeys.create: a crash after the key and its audit entry are written keeps neither", () =>
        Effect.gen(function*() {
          const trap = yield* makeTrap
          yield* run(
            Effect.gen(function*() {
              const { admin, orgId } = yield* organization
              const keys = yield* ApiKeys.ApiKeys
              // The control: an undisturbed create leaves its key and its entry.
              yield* keys.create(admin, keyBody("kept"))
              trap.armed = true
              const exit = yield* Effect.exit(keys.create(admin, keyBody("doomed")))
              expect(isDefect(exit)).toBe(true)
              expect(yield* Deferred.isDone(trap.reached)).toBe(true)
              expect(yield* keyState(orgId)).toEqual({ keys: ["kept"], entries: ["kept"] })
            }),
            { adapt: crashAudit(trap, "die") }
          )
        }))

      it.live("ApiKeys.create: a fiber interrupted after both writes leaves nothing", () =>
        Effect.gen(function*() {
          const trap = yield* makeTrap
          yield* run(
            Effect.gen(function*() {
              const { admin, orgId } = yield* organization
              const keys = yield* ApiKeys.ApiKeys
              trap.armed = true
              const fiber = yield* Effect.fork(keys.create(admin, keyBody("interrupted")))
              yield* Deferred.await(trap.reached)
              if (database.name === "postgres") {
                // Written but not committed: another connection sees nothing yet.
                expect(yield* keyState(orgId)).toEqual({ keys: [], entries: [] })
              }
              expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
              expect(yield* keyState(orgId)).toEqual({ keys: [], entries: [] })
              // The organization works on: a new key is stored with its entry.
              yield* keys.create(admin, keyBody("after"))
              expect(yield* keyState(orgId)).toEqual({ keys: ["after"], entries: ["after"] })
            }),
            { adapt: crashAudit(trap, "hang") }
          )
        }))

      // `Changes.approve` writes the approval, the merge commit, main's head, then the change's status.
      // Checked to fail with `no-transaction` on both databases: the status, the approval, the merge
      // commit and main's move stay behind.
      const expectUntouched = (
        w: Effect.Effect.Success<ReturnType<typeof world>>,
        changeId: ChangeId
      ) =>
        Effect.gen(function*() {
          const state = yield* changeState(w.orgId, changeId)
          expect(state).toMatchObject({ status: "open", approvalCount: 0, approvers: [], head: w.head })
          expect(state.merges).toHaveLength(1)
          expect(state.approveEntries).toEqual([])
          expect((yield* mainAs(w.author)).files["quick/notes.md"]).toBe("# Notes\n")
        })

      it.live("Changes.approve: a crash after the approval, the merge and the status write keeps none of them", () =>
        Effect.gen(function*() {
          const trap = yield* makeTrap
          // The last write of the merge: the status `approved`. It runs, then the crash comes.
          const crashStatus = Sightline.replace(ChangeRepo, (real) =>
            ChangeRepo.of({
              ...real,
              update: (change) =>
                change.status === "approved" ? springs(trap, "die")(real.update(change)) : real.update(change)
            }))
          yield* run(
            Effect.gen(function*() {
              const w = yield* world(1)
              const filed = yield* file(w.author, w.head, { "quick/notes.md": "# Notes v2\n" }, "Notes")
              trap.armed = true
              const exit = yield* Effect.exit(approve(w.reviewers[0], filed.change_id, filed.git_ref))
              expect(isDefect(exit)).toBe(true)
              expect(yield* Deferred.isDone(trap.reached)).toBe(true)
              yield* expectUntouched(w, filed.change_id)
              // Nothing was kept, so approving again is a first approval, and it merges.
              expect(yield* approve(w.reviewers[0], filed.change_id, filed.git_ref)).toEqual(
                new Change.ApproveResult({
                  merged: true,
                  approval_count: 1,
                  required_approvals: 1,
                  already_approved: false
                })
              )
              expect((yield* mainAs(w.author)).files["quick/notes.md"]).toBe("# Notes v2\n")
            }),
            { adapt: crashStatus }
          )
        }))

      it.live("Changes.approve: a fiber interrupted after main moved leaves main, the change and its approvals as they were", () =>
        Effect.gen(function*() {
          const trap = yield* makeTrap
          const hangAfterMerge = Sightline.replace(LibraryStore, (real) =>
            LibraryStore.of({
              ...real,
              setHead: (organizationId, expected, next) =>
                springs(trap, "hang")(Effect.orDie(real.setHead(organizationId, expected, next)))
            }))
          yield* run(
            Effect.gen(function*() {
              const w = yield* world(1)
              const filed = yield* file(w.author, w.head, { "quick/notes.md": "# Notes v3\n" }, "Notes")
              trap.armed = true
              const fiber = yield* Effect.fork(approve(w.reviewers[0], filed.change_id, filed.git_ref))
              yield* Deferred.await(trap.reached)
              expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
              yield* expectUntouched(w, filed.change_id)
              expect(yield* approve(w.reviewers[0], filed.change_id, filed.git_ref)).toMatchObject({
                merged: true,
                approval_count: 1,
                already_approved: false
              })
            }),
            { adapt: hangAfterMerge }
          )
        }))
    })

    // Checked to fail on both databases with `auth-cache` (a key found once is remembered):
    // authentications that start after the revoke returned still succeed.
    it.live("revoking a key while requests verify it: nothing that starts after the revoke gets through", () =>
      run(Effect.gen(function*() {
        const { admin } = yield* organization
        const keys = yield* ApiKeys.ApiKeys
        const auth = yield* Auth.Auth
        const target = yield* keys.create(admin, keyBody("revoked under load"))
        const bystander = yield* keys.create(admin, keyBody("bystander"))

        const revoked = yield* Ref.make(false)
        const stop = yield* Ref.make(false)
        const warmedUp = yield* Deferred.make<void>()
        const attempts: Array<{ key: "target" | "bystander"; afterRevoke: boolean; error?: string }> = []
        const successesBefore = () => attempts.filter((a) => a.key === "target" && a.error === undefined).length
        const afterRevoke = () => attempts.filter((a) => a.key === "target" && a.afterRevoke).length

        const verifier = (key: "target" | "bystander", secret: string) =>
          Effect.gen(function*() {
            while (!(yield* Ref.get(stop))) {
              // Read before the request starts: true only if the revoke had already returned.
              const started = yield* Ref.get(revoked)
              const result = yield* Effect.either(auth.authenticateApiKey(secret))
              attempts.push({
                key,
                afterRevoke: started,
                ...(Either.isLeft(result) ? { error: `${result.left._tag}: ${result.left.message}` } : {})
              })
              if (successesBefore() >= 20) yield* Deferred.succeed(warmedUp, undefined)
            }
          })
        const verifiers = yield* Effect.forEach(
          [...Arr.replicate("target" as const, 6), ...Arr.replicate("bystander" as const, 2)],
          (key) => Effect.fork(verifier(key, key === "target" ? target.key : bystander.key))
        )

        yield* Deferred.await(warmedUp)
        expect(yield* keys.revoke(admin, target.api_key.id)).toEqual({ id: target.api_key.id, success: true })
        yield* Ref.set(revoked, true)
        while (afterRevoke() < 60) yield* Effect.sleep("5 millis")
        yield* Ref.set(stop, true)
        yield* Fiber.joinAll(verifiers)

        const after = attempts.filter((a) => a.key === "target" && a.afterRevoke)
        expect(after.length).toBeGreaterThanOrEqual(60)
        expect(Arr.dedupe(after.map((a) => a.error))).toEqual([`Unauthenticated: ${Auth.KEY_NOT_FOUND}`])
        expect(successesBefore()).toBeGreaterThanOrEqual(20)
        // The other key of the same member never stopped working.
        const others = attempts.filter((a) => a.key === "bystander")
        expect(others.length).toBeGreaterThan(0)
        expect(others.filter((a) => a.error !== undefined)).toEqual([])
      })))

    // Checked to fail on PostgreSQL with `unlocked-numbers` (`max(number) + 1`): concurrent filings drew
    // the same number ("change number 3 is already taken"). PGlite serializes the filings, so it passes
    // there; the counter's upsert alone is atomic, so it also passes under `no-transaction`.
    it.live("change numbers stay unique per organization when filed concurrently", () =>
      run(Effect.gen(function*() {
        const filings = 12
        const [one, two] = yield* Effect.all([world(0), world(0)])
        // The same staged edits from many sandboxes at once, in two organizations.
        const answers = yield* race(
          [one, two].flatMap((w) =>
            Arr.replicate(file(w.author, w.head, { "reports/revenue.sql": "select 42\n" }, "Same edit"), filings)
          )
        )
        const results = answers.map((answer) => Either.getOrThrow(answer))
        const { sql, table } = yield* tables
        for (const [i, w] of [one, two].entries()) {
          const mine = results.slice(i * filings, (i + 1) * filings)
          // Number 1 is the seed change.
          expect(mine.map((r) => r.change_number).sort((a, b) => a - b)).toEqual(Arr.range(2, filings + 1))
          expect(mine.every((r) => r.status === "open")).toBe(true)
          const rows = yield* sql<{ number: number; revisions: number }>`
            SELECT c.number, (SELECT count(*)::int FROM ${table("change_revisions")} r
                              WHERE r.organization_id = c.organization_id AND r.change_id = c.id) AS revisions
            FROM ${table("changes")} c WHERE c.organization_id = ${w.orgId} ORDER BY c.number`
          expect(rows.map((r) => r.number)).toEqual(Arr.range(1, filings + 1))
          expect(rows.every((r) => r.revisions === 1)).toBe(true)
        }
      })))
  })
)
