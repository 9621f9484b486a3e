/**
 * The contract every `SandboxRepo` implementation satisfies.
 *
 * Every test creates its own organizations and members, so the suite runs on a shared, non-empty
 * database. Rows are compared through their encoded form, so a timestamp or an optional field that
 * does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ChatId, type MemberId, type OrganizationId, SandboxId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import * as Pagination from "../Pagination.js"
import * as Sandbox from "../Sandbox.js"
import { SandboxRepo } from "../SandboxRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encode = Schema.encodeSync(Sandbox.Sandbox)
const encodeOption = Option.map(encode)
const ids = (page: Pagination.Page<Sandbox.Sandbox>) => page.items.map((s) => s.sandbox_id)

const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const make = (
  organizationId: OrganizationId,
  memberId: MemberId,
  startedAt: DateTime.Utc,
  options: { readonly stopped?: boolean } = {}
): Sandbox.Sandbox => {
  const running = Sandbox.make({
    sandboxId: SandboxId.make(Fixtures.uuid()),
    organizationId,
    memberId,
    at: startedAt
  })
  return options.stopped === true ? Sandbox.stop(running, DateTime.add(startedAt, { minutes: 1 })) : running
}

const setup = Effect.gen(function*() {
  const repo = yield* SandboxRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  return { repo, org, member, other }
})

/**
 * Registers the `SandboxRepo` contract suite. The layer must also provide `OrganizationRepo` and
 * `MemberRepo` (sandboxes reference both) and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const sandboxRepoContract = (
  name: string,
  layer: Layer.Layer<SandboxRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`SandboxRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with optional fields set or absent", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const full = new Sandbox.Sandbox({
          sandbox_id: SandboxId.make(Fixtures.uuid()),
          organization_id: org.id,
          member_id: member.id,
          chat_id: ChatId.make(Fixtures.uuid()),
          status: "stopped",
          started_at: at("2026-03-01T10:00:00.123Z"),
          released_at: at("2026-03-01T11:30:00.456Z"),
          last_seen_at: at("2026-03-01T11:29:59.789Z")
        })
        const minimal = make(org.id, member.id, at("2026-03-02T08:00:00.001Z"))
        yield* repo.create(full)
        yield* repo.create(minimal)
        for (const sandbox of [full, minimal]) {
          expect(encodeOption(yield* repo.get(org.id, sandbox.sandbox_id))).toEqual(Option.some(encode(sandbox)))
          expect(encodeOption(yield* repo.getForUpdate(org.id, sandbox.sandbox_id))).toEqual(
            Option.some(encode(sandbox))
          )
        }
        expect(yield* repo.get(org.id, SandboxId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a second sandbox with the same id", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const sandbox = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(sandbox)
        const error = yield* Effect.flip(repo.create(Sandbox.stop(sandbox, at("2026-03-01T10:05:00.000Z"))))
        expect(error._tag).toBe("Conflict")
        expect(encodeOption(yield* repo.get(org.id, sandbox.sandbox_id))).toEqual(Option.some(encode(sandbox)))
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces the row, clearing optional fields that became absent", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const started = Sandbox.heartbeat(
          make(org.id, member.id, at("2026-03-01T10:00:00.000Z")),
          at("2026-03-01T10:01:00.000Z")
        )
        yield* repo.create(started)
        const stopped = Sandbox.stop(started, at("2026-03-01T10:30:00.000Z"), "unused for 30m")
        yield* repo.update(stopped)
        expect(encodeOption(yield* repo.get(org.id, started.sandbox_id))).toEqual(Option.some(encode(stopped)))
        const restarted = Either.getOrThrow(
          Sandbox.restart(stopped, member.id, at("2026-03-01T12:00:00.000Z"), {
            runnerId: "runner-2",
            libraryRef: "abc"
          })
        )
        expect(restarted.released_at).toBeUndefined()
        expect(restarted.stop_reason).toBeUndefined()
        yield* repo.update(restarted)
        expect(encodeOption(yield* repo.get(org.id, started.sandbox_id))).toEqual(Option.some(encode(restarted)))
        const unknown = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        expect((yield* Effect.flip(repo.update(unknown)))._tag).toBe("NotFound")
        expect(yield* repo.get(org.id, unknown.sandbox_id)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("releaseStale stops the running sandboxes last seen before the cutoff, in every organization", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const otherMember = yield* Fixtures.member(other.id)
        // Dates long before every other test's, so the shared database's other rows are never touched.
        const silent = make(org.id, member.id, at("2001-01-01T00:00:00.000Z"))
        const elsewhere = make(other.id, otherMember.id, at("2001-01-02T00:00:00.000Z"))
        const beating = Sandbox.heartbeat(
          make(org.id, member.id, at("2001-01-01T00:00:00.000Z")),
          at("2001-03-01T00:00:00.000Z")
        )
        const stopped = make(org.id, member.id, at("2001-01-01T00:00:00.000Z"), { stopped: true })
        for (const sandbox of [silent, elsewhere, beating, stopped]) yield* repo.create(sandbox)
        const now = at("2001-04-01T00:00:00.000Z")
        expect(yield* repo.releaseStale(at("2001-02-01T00:00:00.000Z"), now)).toBe(2)
        const stored = (s: Sandbox.Sandbox) => Effect.map(repo.get(s.organization_id, s.sandbox_id), Option.getOrThrow)
        expect(encode(yield* stored(silent))).toEqual(encode(Sandbox.stop(silent, now, Sandbox.RUNNER_GONE)))
        expect(encode(yield* stored(elsewhere))).toEqual(encode(Sandbox.stop(elsewhere, now, Sandbox.RUNNER_GONE)))
        expect(encode(yield* stored(beating))).toEqual(encode(beating))
        expect(encode(yield* stored(stopped))).toEqual(encode(stopped))
        expect(yield* repo.releaseStale(at("2001-02-01T00:00:00.000Z"), now)).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps a sandbox's runner, use, chat and counts, and releases a runner's sandboxes saying why", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const other = yield* Fixtures.member(org.id)
        const runner = `runner-${Fixtures.uuid()}`
        const chatId = ChatId.make(Fixtures.uuid())
        const t0 = at("2002-01-01T00:00:00.000Z")
        const placed = (memberId: MemberId, options: { readonly chat?: boolean } = {}) =>
          Sandbox.make({
            sandboxId: SandboxId.make(Fixtures.uuid()),
            organizationId: org.id,
            memberId,
            ...(options.chat === true ? { chatId } : {}),
            runnerId: runner,
            libraryRef: "0123abcd",
            at: t0
          })
        const forChat = placed(member.id, { chat: true })
        const plain = placed(member.id)
        const others = placed(other.id)
        for (const sandbox of [forChat, plain, others]) yield* repo.create(sandbox)
        const stored = (s: Sandbox.Sandbox) => Effect.map(repo.get(s.organization_id, s.sandbox_id), Option.getOrThrow)
        expect(yield* stored(forChat)).toMatchObject({ runner_id: runner, library_ref: "0123abcd" })
        expect(Option.map(yield* repo.findForChat(org.id, member.id, chatId), (s) => s.sandbox_id)).toEqual(
          Option.some(forChat.sandbox_id)
        )
        expect(yield* repo.findForChat(org.id, other.id, chatId)).toEqual(Option.none())
        expect(yield* repo.countRunning(org.id, member.id)).toEqual({ organization: 3, member: 2 })

        // Used late: no longer idle at the cutoff; the others are (only this test's rows are looked at).
        yield* repo.touch(org.id, plain.sandbox_id, at("2002-01-01T02:00:00.000Z"))
        const idle = (yield* repo.idle(at("2002-01-01T01:00:00.000Z")))
          .filter((s) => s.organization_id === org.id).map((s) => s.sandbox_id).sort()
        expect(idle).toEqual([forChat.sandbox_id, others.sandbox_id].sort())

        yield* repo.heartbeatRunner(runner, at("2002-01-01T03:00:00.000Z"))
        expect((yield* stored(others)).last_seen_at).toEqual(at("2002-01-01T03:00:00.000Z"))
        expect(yield* repo.releaseRunner(runner, at("2002-01-01T04:00:00.000Z"), "drained")).toBe(3)
        expect(yield* stored(plain)).toMatchObject({ status: "stopped", stop_reason: "drained" })
        expect(yield* repo.countRunning(org.id, member.id)).toEqual({ organization: 0, member: 0 })
        expect(yield* repo.findForChat(org.id, member.id, chatId)).toEqual(Option.none())
        expect(yield* repo.releaseRunner(runner, at("2002-01-01T05:00:00.000Z"), "again")).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect("a sandbox of one organization is invisible to every method called for another", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const sandbox = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(sandbox)
        expect(yield* repo.get(other.id, sandbox.sandbox_id)).toEqual(Option.none())
        expect(yield* repo.getForUpdate(other.id, sandbox.sandbox_id)).toEqual(Option.none())
        for (const status of ["running", "stopped", "all"] as const) {
          expect(ids(yield* repo.list(other.id, { status, limit: 200 }))).toEqual([])
          expect(ids(yield* repo.list(other.id, { status, memberId: member.id, limit: 200 }))).toEqual([])
        }
        const hijack = new Sandbox.Sandbox({
          ...Sandbox.stop(sandbox, at("2026-03-01T10:10:00.000Z")),
          organization_id: other.id
        })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(encodeOption(yield* repo.get(org.id, sandbox.sandbox_id))).toEqual(Option.some(encode(sandbox)))
      }).pipe(Effect.provide(layer)))

    it.effect("lists newest first, filtered by status and member", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const colleague = yield* Fixtures.member(org.id)
        const oldest = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const stopped = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"), { stopped: true })
        const newest = make(org.id, colleague.id, at("2026-03-01T12:00:00.000Z"))
        for (const sandbox of [stopped, newest, oldest]) yield* repo.create(sandbox)
        const list = (options: Omit<SandboxRepo.ListOptions, "limit">) =>
          Effect.map(repo.list(org.id, { ...options, limit: 50 }), ids)
        expect(yield* list({ status: "running" })).toEqual([newest.sandbox_id, oldest.sandbox_id])
        expect(yield* list({ status: "stopped" })).toEqual([stopped.sandbox_id])
        expect(yield* list({ status: "all" })).toEqual([newest.sandbox_id, stopped.sandbox_id, oldest.sandbox_id])
        expect(yield* list({ status: "all", memberId: member.id })).toEqual([stopped.sandbox_id, oldest.sandbox_id])
        expect(yield* list({ status: "stopped", memberId: colleague.id })).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("lists by audience, and a sandbox keeps its audience through updates", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const east = new Sandbox.Sandbox({
          ...make(org.id, member.id, at("2026-03-01T10:00:00.000Z")),
          audience: "a".repeat(64)
        })
        const none = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        for (const sandbox of [east, none]) yield* repo.create(sandbox)
        const list = (audience: string) =>
          Effect.map(repo.list(org.id, { status: "all", memberId: member.id, audience, limit: 50 }), ids)
        expect(yield* list("a".repeat(64))).toEqual([east.sandbox_id])
        expect(yield* list("")).toEqual([none.sandbox_id])
        yield* repo.update(Sandbox.stop(east, at("2026-03-01T12:00:00.000Z")))
        const stored = Option.getOrThrow(yield* repo.get(org.id, east.sandbox_id))
        expect([stored.status, stored.audience]).toEqual(["stopped", "a".repeat(64)])
        expect(Option.getOrThrow(yield* repo.get(org.id, none.sandbox_id)).audience).toBeUndefined()
      }).pipe(Effect.provide(layer)))

    it.effect("pages by keyset: ties broken by id, stable under inserts", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const times = ["10:00", "11:00", "11:00", "12:00", "13:00"]
        const rows = times.map((t) => make(org.id, member.id, at(`2026-03-01T${t}:00.000Z`)))
        for (const row of rows) yield* repo.create(row)
        const expected = [...rows]
          .sort((a, b) => Pagination.compareDesc(Sandbox.keyset(a), Sandbox.keyset(b)))
          .map((s) => s.sandbox_id)

        const first = yield* repo.list(org.id, { status: "all", limit: 2 })
        expect(ids(first)).toEqual(expected.slice(0, 2))
        // A newer row lands before the cursor and must not shift the next page; an older one is still ahead.
        const newer = make(org.id, member.id, at("2026-03-01T14:00:00.000Z"))
        const older = make(org.id, member.id, at("2026-03-01T09:00:00.000Z"))
        yield* repo.create(newer)
        yield* repo.create(older)
        const second = yield* repo.list(org.id, { status: "all", limit: 2, after: yield* Fixtures.nextKeyset(first) })
        expect(ids(second)).toEqual(expected.slice(2, 4))
        const third = yield* repo.list(org.id, { status: "all", limit: 2, after: yield* Fixtures.nextKeyset(second) })
        expect(ids(third)).toEqual([expected[4], older.sandbox_id])
        expect(third.nextCursor).toBeUndefined()
        const everything = yield* repo.list(org.id, { status: "all", limit: 10 })
        expect(ids(everything)).toEqual([newer.sandbox_id, ...expected, older.sandbox_id])
        expect(everything.nextCursor).toBeUndefined()
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves neither its creates nor its updates behind", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const kept = make(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(kept)
        const discarded = make(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(discarded)
          yield* repo.update(Sandbox.stop(kept, at("2026-03-01T11:30:00.000Z")))
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.sandbox_id)).toEqual(Option.none())
        expect(encodeOption(yield* repo.get(org.id, kept.sandbox_id))).toEqual(Option.some(encode(kept)))
      }).pipe(Effect.provide(layer)))
  })
}
