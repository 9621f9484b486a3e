/**
 * The contract every `ExecutionRepo` implementation satisfies.
 *
 * Every test creates its own organizations, members and sandboxes, so the suite runs on a shared,
 * non-empty database. Purging is global, so the purge tests work in 1899 and 1900, where no other
 * data lives, and the purge test asserts exact counts there.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Execution from "../Execution.js"
import { ExecutionRepo } from "../ExecutionRepo.js"
import { ExecutionId, type OrganizationId, SandboxId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import * as Sandbox from "../Sandbox.js"
import { SandboxRepo } from "../SandboxRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encodeSync = Schema.encodeSync(Execution.Execution)
const encode = (execution: Execution.Execution) => encodeSync(execution)
const ids = (page: Pagination.Page<Execution.Execution>) => page.items.map((e) => e.id)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

/** A fresh organization with a member and a stopped sandbox (executions outlive their sandbox). */
const sandboxOf = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const sandbox = Sandbox.make({
    sandboxId: SandboxId.make(Fixtures.uuid()),
    organizationId: org.id,
    memberId: member.id,
    at: at("2026-03-01T09:00:00.000Z")
  })
  yield* Effect.orDie((yield* SandboxRepo).create(Sandbox.stop(sandbox, at("2026-03-01T09:30:00.000Z"))))
  return { org, sandboxId: sandbox.sandbox_id }
})

const make = (organizationId: OrganizationId, sandboxId: SandboxId, createdAt: DateTime.Utc) =>
  new Execution.Execution({
    id: ExecutionId.make(`exec-${Fixtures.uuid()}`),
    organization_id: organizationId,
    sandbox_id: sandboxId,
    kind: "python",
    source: "platform_api",
    input: "print(1)",
    output_preview: "1",
    duration_ms: 12,
    created_at: createdAt
  })

/**
 * Registers the `ExecutionRepo` contract suite. The layer must also provide `SandboxRepo`,
 * `OrganizationRepo` and `MemberRepo` (executions reference a sandbox) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const executionRepoContract = (
  name: string,
  layer: Layer.Layer<ExecutionRepo | SandboxRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`ExecutionRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with and without an error", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const failed = new Execution.Execution({
          id: ExecutionId.make(`exec-${Fixtures.uuid()}`),
          organization_id: org.id,
          sandbox_id: sandboxId,
          kind: "sql",
          source: "agent",
          input: "select 'é', '😀'\n  from t -- full input, whitespace kept  ",
          output_preview: Execution.preview("x".repeat(20_000)),
          error: "relation \"t\" does not exist",
          duration_ms: 1234,
          created_at: at("2026-03-01T10:00:00.123Z")
        })
        const succeeded = make(org.id, sandboxId, at("2026-03-01T10:00:01.456Z"))
        yield* repo.record(failed)
        yield* repo.record(succeeded)
        const page = yield* repo.list(org.id, sandboxId, { limit: 10 })
        expect(page.items.map(encode)).toEqual([encode(succeeded), encode(failed)])
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a second execution with the same id", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const execution = make(org.id, sandboxId, at("2026-03-01T10:00:00.000Z"))
        yield* repo.record(execution)
        const duplicate = new Execution.Execution({ ...execution, input: "print(2)" })
        expect((yield* Effect.flip(repo.record(duplicate)))._tag).toBe("Conflict")
        expect((yield* repo.list(org.id, sandboxId, { limit: 10 })).items.map(encode)).toEqual([encode(execution)])
      }).pipe(Effect.provide(layer)))

    it.effect("lists one sandbox's executions, newest first, invisible from another organization", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const elsewhere = yield* sandboxOf
        const older = make(org.id, sandboxId, at("2026-03-01T10:00:00.000Z"))
        const newer = make(org.id, sandboxId, at("2026-03-01T11:00:00.000Z"))
        const foreign = make(elsewhere.org.id, elsewhere.sandboxId, at("2026-03-01T10:30:00.000Z"))
        for (const execution of [older, foreign, newer]) yield* repo.record(execution)
        expect(ids(yield* repo.list(org.id, sandboxId, { limit: 10 }))).toEqual([newer.id, older.id])
        expect(ids(yield* repo.list(elsewhere.org.id, sandboxId, { limit: 10 }))).toEqual([])
        expect(ids(yield* repo.list(org.id, elsewhere.sandboxId, { limit: 10 }))).toEqual([])
        expect(ids(yield* repo.list(elsewhere.org.id, elsewhere.sandboxId, { limit: 10 }))).toEqual([foreign.id])
      }).pipe(Effect.provide(layer)))

    it.effect("pages by keyset: ties broken by id, stable under inserts", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        const times = ["10:00", "11:00", "11:00", "11:00", "12:00"]
        const rows = times.map((t) => make(org.id, sandboxId, at(`2026-03-01T${t}:00.000Z`)))
        for (const row of rows) yield* repo.record(row)
        const expected = [...rows]
          .sort((a, b) => Pagination.compareDesc(Execution.keyset(a), Execution.keyset(b)))
          .map((e) => e.id)

        const first = yield* repo.list(org.id, sandboxId, { limit: 2 })
        expect(ids(first)).toEqual(expected.slice(0, 2))
        const newer = make(org.id, sandboxId, at("2026-03-01T13:00:00.000Z"))
        yield* repo.record(newer)
        const second = yield* repo.list(org.id, sandboxId, { limit: 2, after: yield* Fixtures.nextKeyset(first) })
        expect(ids(second)).toEqual(expected.slice(2, 4))
        const third = yield* repo.list(org.id, sandboxId, { limit: 2, after: yield* Fixtures.nextKeyset(second) })
        expect(ids(third)).toEqual(expected.slice(4))
        expect(third.nextCursor).toBeUndefined()
        expect(ids(yield* repo.list(org.id, sandboxId, { limit: 1 }))).toEqual([newer.id])
      }).pipe(Effect.provide(layer)))

    it.effect("purges every organization's executions strictly older than the cutoff, idempotently", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const a = yield* sandboxOf
        const b = yield* sandboxOf
        const cutoff = at("1900-01-02T00:00:00.000Z")
        const purged = [
          make(a.org.id, a.sandboxId, at("1900-01-01T00:00:00.000Z")),
          make(b.org.id, b.sandboxId, DateTime.subtract(cutoff, { millis: 1 }))
        ]
        const keptA = make(a.org.id, a.sandboxId, cutoff)
        const keptB = make(b.org.id, b.sandboxId, DateTime.add(cutoff, { millis: 1 }))
        for (const execution of [...purged, keptA, keptB]) yield* repo.record(execution)

        expect(yield* repo.purgeOlderThan(cutoff)).toBe(2)
        expect(yield* repo.purgeOlderThan(cutoff)).toBe(0)
        expect(ids(yield* repo.list(a.org.id, a.sandboxId, { limit: 10 }))).toEqual([keptA.id])
        expect(ids(yield* repo.list(b.org.id, b.sandboxId, { limit: 10 }))).toEqual([keptB.id])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction records nothing and purges nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ExecutionRepo
        const { org, sandboxId } = yield* sandboxOf
        // Older than the purge test's rows, and purged again below, so that test's counts stay exact.
        const cutoff = at("1899-07-01T00:00:00.000Z")
        const old = make(org.id, sandboxId, at("1899-06-01T00:00:00.000Z"))
        yield* repo.record(old)
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.record(make(org.id, sandboxId, at("2026-03-01T10:00:00.000Z")))
          expect(yield* repo.purgeOlderThan(cutoff)).toBeGreaterThanOrEqual(1)
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(ids(yield* repo.list(org.id, sandboxId, { limit: 10 }))).toEqual([old.id])
        yield* repo.purgeOlderThan(cutoff)
      }).pipe(Effect.provide(layer)))
  })
}
