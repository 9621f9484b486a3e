/**
 * The contract every `FeedbackRepo` implementation satisfies.
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
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Feedback from "../Feedback.js"
import { FeedbackRepo } from "../FeedbackRepo.js"
import { ChatId, ConnectorId, FeedbackId, type MemberId, MessageId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import { type Transaction, withTransaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

const encode = Schema.encodeSync(Feedback.FeedbackRecord)
const at = (iso: string): DateTime.Utc => DateTime.unsafeMake(iso)

const rating = (
  organizationId: OrganizationId,
  memberId: MemberId,
  updatedAt: DateTime.Utc,
  fields: Partial<Feedback.FeedbackRecord> = {}
) =>
  new Feedback.FeedbackRecord({
    id: FeedbackId.make(Fixtures.uuid()),
    organization_id: organizationId,
    chat_id: ChatId.make(Fixtures.uuid()),
    message_id: MessageId.make(Fixtures.uuid()),
    member_id: memberId,
    rating: "up",
    question: "Revenue by region?",
    answer: "EU leads.",
    model: "offline",
    created_at: updatedAt,
    updated_at: updatedAt,
    ...fields
  })

const setup = Effect.gen(function*() {
  const repo = yield* FeedbackRepo
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const other = yield* Fixtures.organization()
  return { repo, org, member, other }
})

/**
 * Registers the `FeedbackRepo` contract suite. The layer must also provide `OrganizationRepo`,
 * `MemberRepo` and `Transaction`.
 *
 * @since 0.1.0
 * @category utils
 */
export const feedbackRepoContract = (
  name: string,
  layer: Layer.Layer<FeedbackRepo | OrganizationRepo | MemberRepo | Transaction, unknown>
): void => {
  describe(`FeedbackRepo contract: ${name}`, () => {
    it.effect("round-trips every field, with optional fields set or absent", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const full = rating(org.id, member.id, at("2026-03-01T10:00:00.123Z"), {
          rating: "down",
          comment: "Wrong quarter — *é😀*",
          connector_id: ConnectorId.make(3),
          sql: "SELECT 1",
          audience: "3f1c0e0d2b",
          updated_at: at("2026-03-01T10:05:00.456Z")
        })
        const minimal = rating(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        for (const r of [full, minimal]) {
          expect(encode(yield* repo.upsert(r))).toEqual(encode(r))
          expect(Option.map(yield* repo.get(org.id, r.id), encode)).toEqual(Option.some(encode(r)))
        }
        expect(yield* repo.get(org.id, FeedbackId.make(Fixtures.uuid()))).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("rating a message again replaces the rating, keeping its id and created_at", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const first = rating(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.upsert(first)
        const again = rating(org.id, member.id, at("2026-03-01T12:00:00.000Z"), {
          chat_id: first.chat_id,
          message_id: first.message_id,
          rating: "down",
          comment: "Changed my mind"
        })
        const stored = yield* repo.upsert(again)
        const expected = new Feedback.FeedbackRecord({ ...again, id: first.id, created_at: first.created_at })
        expect(encode(stored)).toEqual(encode(expected))
        expect(Option.map(yield* repo.get(org.id, first.id), encode)).toEqual(Option.some(encode(expected)))
        expect(yield* repo.get(org.id, again.id)).toEqual(Option.none())
        // Another member's rating of the same message is a rating of its own.
        const colleague = yield* Fixtures.member(org.id)
        const theirs = rating(org.id, colleague.id, at("2026-03-01T13:00:00.000Z"), {
          chat_id: first.chat_id,
          message_id: first.message_id
        })
        expect((yield* repo.upsert(theirs)).id).toBe(theirs.id)
      }).pipe(Effect.provide(layer)))

    it.effect("lists newest updated first, ties by id, in pages, with every filter", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const oldest = rating(org.id, member.id, at("2026-03-01T09:00:00.000Z"), { rating: "down" })
        const tiedA = rating(org.id, member.id, at("2026-03-01T10:00:00.000Z"), {
          connector_id: ConnectorId.make(7),
          audience: "aud-1"
        })
        const tiedB = rating(org.id, member.id, at("2026-03-01T10:00:00.000Z"), { model: "gpt-test" })
        const newest = rating(org.id, member.id, at("2026-03-01T11:00:00.000Z"), {
          rating: "down",
          connector_id: ConnectorId.make(7)
        })
        for (const r of [tiedB, oldest, newest, tiedA]) yield* repo.upsert(r)
        const tied = [tiedA.id, tiedB.id].sort().reverse()
        const all = [newest.id, ...tied, oldest.id]
        const list = (filters: Feedback.Filters) =>
          Fixtures.allIds(2, (after) => repo.list(org.id, filters, { limit: 2, after }))
        expect(yield* list({})).toEqual(all)
        expect(yield* list({ rating: "down" })).toEqual([newest.id, oldest.id])
        expect(yield* list({ connectorId: 7 })).toEqual([newest.id, tiedA.id])
        expect(yield* list({ model: "gpt-test" })).toEqual([tiedB.id])
        expect(yield* list({ audience: "aud-1" })).toEqual([tiedA.id])
        expect(yield* list({ audience: "" })).toEqual(all.filter((id) => id !== tiedA.id))
        expect(yield* list({ rating: "up", connectorId: 7 })).toEqual([tiedA.id])
      }).pipe(Effect.provide(layer)))

    it.effect("a rating of one organization is invisible to another", () =>
      Effect.gen(function*() {
        const { member, org, other, repo } = yield* setup
        const r = rating(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.upsert(r)
        expect(yield* repo.get(other.id, r.id)).toEqual(Option.none())
        expect((yield* repo.list(other.id, {}, { limit: 10 })).items).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no rating behind", () =>
      Effect.gen(function*() {
        const { member, org, repo } = yield* setup
        const kept = rating(org.id, member.id, at("2026-03-01T10:00:00.000Z"))
        yield* repo.upsert(kept)
        const discarded = rating(org.id, member.id, at("2026-03-01T11:00:00.000Z"))
        const exit = yield* Effect.exit(withTransaction(Effect.gen(function*() {
          yield* repo.upsert(discarded)
          yield* repo.upsert(new Feedback.FeedbackRecord({ ...kept, rating: "down" }))
          return yield* Effect.fail("boom")
        })))
        expect(exit._tag).toBe("Failure")
        expect(yield* repo.get(org.id, discarded.id)).toEqual(Option.none())
        expect(Option.map(yield* repo.get(org.id, kept.id), encode)).toEqual(Option.some(encode(kept)))
      }).pipe(Effect.provide(layer)))
  })
}
