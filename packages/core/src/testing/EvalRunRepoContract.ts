/**
 * The contract every `EvalRunRepo` implementation satisfies.
 *
 * Every test creates its own organizations and members, so the suite runs on a shared, non-empty
 * database. Rows are compared through their encoded form, so a timestamp, a case result or an
 * optional field that does not survive storage fails the comparison.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { EvalRun } from "../EvalRun.js"
import { EvalRunRepo } from "../EvalRunRepo.js"
import { ChangeId, ChatId, ConnectorId, EvalRunId, type MemberId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encode = Schema.encodeSync(EvalRun)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const run = (
  organizationId: OrganizationId,
  createdBy: MemberId,
  createdAt: DateTime.Utc,
  fields: Partial<EvalRun> = {}
) =>
  new EvalRun({
    id: EvalRunId.make(Fixtures.uuid()),
    organization_id: organizationId,
    set: "evals/revenue.yaml",
    connector_id: ConnectorId.make(1),
    model: "offline",
    status: "queued",
    created_by: createdBy,
    cases_total: 2,
    results: [],
    created_at: createdAt,
    ...fields
  })

const setup = Effect.gen(function*() {
  const repo = yield* EvalRunRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  return { repo, org, member, other }
})

/**
 * Registers the `EvalRunRepo` contract suite. The layer must also provide `OrganizationRepo`,
 * `MemberRepo` and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const evalRunRepoContract = (
  name: string,
  layer: Layer.Layer<EvalRunRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`EvalRunRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with optional fields set or absent, and refuses a second id", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const full = run(org.id, member.id, at("2026-03-01T10:00:00.123Z"), {
          commit: "a".repeat(40),
          change_id: ChangeId.make(Fixtures.uuid()),
          status: "completed",
          results: [
            {
              question: "Revenue in 2025? é😀",
              tags: ["revenue", "year"],
              passed: true,
              sql: "SELECT sum(x) FROM t",
              expected: [["EU", 1.5, true, null]],
              got: [["EU", 1.5, true, null]],
              latency_ms: 12.5,
              input_tokens: 120,
              output_tokens: 30,
              chat_id: ChatId.make(Fixtures.uuid())
            },
            { question: "Orders?", tags: [], passed: false, difference: "1 row missing", latency_ms: 3 },
            { question: "Broken?", tags: [], passed: false, error: "the right answer's SQL failed", latency_ms: 0 }
          ],
          accuracy: 1 / 3,
          regressions: ["Orders?"],
          compared_with: EvalRunId.make(Fixtures.uuid()),
          error: "one case could not be judged",
          started_at: at("2026-03-01T10:00:01.456Z"),
          finished_at: at("2026-03-01T10:00:09.789Z")
        })
        const minimal = run(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        yield* repo.create(full)
        yield* repo.create(minimal)
        for (const r of [full, minimal]) {
          expect(Option.map(yield* repo.get(org.id, r.id), encode)).toEqual(Option.some(encode(r)))
          expect(Option.map(yield* repo.getForUpdate(org.id, r.id), encode)).toEqual(Option.some(encode(r)))
        }
        expect((yield* Effect.flip(repo.create(new EvalRun({ ...minimal, model: "other" }))))._tag).toBe("Conflict")
        expect(yield* repo.get(org.id, EvalRunId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("lists newest first, ties by id, in pages, of one set when asked", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const oldest = run(org.id, member.id, at("2026-03-01T09:00:00.000Z"))
        const tiedA = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { set: "semantic/demo.yaml" })
        const tiedB = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        const newest = run(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        for (const r of [tiedB, oldest, newest, tiedA]) yield* repo.create(r)
        const tied = [tiedA.id, tiedB.id].sort().reverse()
        expect(yield* Fixtures.allIds(2, (after) => repo.list(org.id, { limit: 2, after }))).toEqual(
          [newest.id, ...tied, oldest.id]
        )
        expect(yield* Fixtures.allIds(1, (after) => repo.list(org.id, { limit: 1, after }, "evals/revenue.yaml")))
          .toEqual([newest.id, tiedB.id, oldest.id])
      }).pipe(Effect.provide(layer)))

    it.effect("lastCompleted is the newest completed run of the key before a moment, not a change's", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const key = { set: "evals/revenue.yaml", connectorId: ConnectorId.make(1), model: "offline" }
        const older = run(org.id, member.id, at("2026-03-01T09:00:00.000Z"), { status: "completed" })
        const newer = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { status: "completed" })
        const failed = run(org.id, member.id, at("2026-03-01T10:30:00.000Z"), { status: "failed" })
        const ofChange = run(org.id, member.id, at("2026-03-01T10:40:00.000Z"), {
          status: "completed",
          change_id: ChangeId.make(Fixtures.uuid())
        })
        const otherModel = run(org.id, member.id, at("2026-03-01T10:50:00.000Z"), {
          status: "completed",
          model: "gpt-test"
        })
        const otherConnector = run(org.id, member.id, at("2026-03-01T10:55:00.000Z"), {
          status: "completed",
          connector_id: ConnectorId.make(2)
        })
        const later = run(org.id, member.id, at("2026-03-01T12:00:00.000Z"), { status: "completed" })
        for (const r of [older, newer, failed, ofChange, otherModel, otherConnector, later]) yield* repo.create(r)
        const last = (before: string) =>
          Effect.map(repo.lastCompleted(org.id, key, at(before)), Option.map((r) => r.id))
        expect(yield* last("2026-03-01T11:00:00.000Z")).toEqual(Option.some(newer.id))
        expect(yield* last("2026-03-01T10:00:00.000Z")).toEqual(Option.some(older.id))
        expect(yield* last("2026-03-01T09:00:00.000Z")).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("update replaces a stored run; one that is not there is NotFound", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const queued = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(queued)
        const running = new EvalRun({ ...queued, status: "running", started_at: at("2026-03-01T10:00:05.000Z") })
        yield* repo.update(running)
        expect(Option.map(yield* repo.get(org.id, queued.id), encode)).toEqual(Option.some(encode(running)))
        const missing = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        expect((yield* Effect.flip(repo.update(missing)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("a run of one organization is invisible to every method called for another", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const r = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { status: "completed" })
        yield* repo.create(r)
        expect(yield* repo.get(other.id, r.id)).toEqual(Option.none())
        expect(yield* repo.getForUpdate(other.id, r.id)).toEqual(Option.none())
        expect((yield* repo.list(other.id, { limit: 10 })).items).toEqual([])
        const key = { set: r.set, connectorId: r.connector_id, model: r.model }
        expect(yield* repo.lastCompleted(other.id, key, at("2027-01-01T00:00:00.000Z"))).toEqual(Option.none())
        expect((yield* Effect.flip(repo.update(new EvalRun({ ...r, organization_id: other.id }))))._tag).toBe(
          "NotFound"
        )
        expect(Option.map(yield* repo.get(org.id, r.id), encode)).toEqual(Option.some(encode(r)))
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no create or update behind", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const kept = run(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.create(kept)
        const discarded = run(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.create(discarded)
          yield* repo.update(new EvalRun({ ...kept, status: "running" }))
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.id)).toEqual(Option.none())
        expect(Option.map(yield* repo.get(org.id, kept.id), encode)).toEqual(Option.some(encode(kept)))
      }).pipe(Effect.provide(layer)))
  })
}
