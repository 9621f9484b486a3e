/**
 * The feedback repository port: one rating per member and message.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Feedback from "./Feedback.js"
import type { FeedbackId, MemberId, MessageId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"
import { MemoryState } from "./Transaction.js"

/**
 * Stores ratings.
 *
 * @since 0.1.0
 * @category services
 */
export class FeedbackRepo extends Context.Tag("@sightline/core/FeedbackRepo")<FeedbackRepo, FeedbackRepo.Service>() {}

export declare namespace FeedbackRepo {
  export interface Service {
    /**
     * Stores the member's rating of the message, replacing the one it gave before (which keeps its id
     * and `created_at`); returns the rating as stored.
     */
    readonly upsert: (record: Feedback.FeedbackRecord) => Effect.Effect<Feedback.FeedbackRecord>
    readonly get: (
      organizationId: OrganizationId,
      id: FeedbackId
    ) => Effect.Effect<Option.Option<Feedback.FeedbackRecord>>
    /** A page of the organization's ratings that pass the filters, newest `updated_at` first, then id descending. */
    readonly list: (
      organizationId: OrganizationId,
      filters: Feedback.Filters,
      page: Pagination.PageRequest
    ) => Effect.Effect<Pagination.Page<Feedback.FeedbackRecord>>
  }
}

/**
 * Ratings in memory.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<FeedbackRepo, never, MemoryState> = Layer.effect(
  FeedbackRepo,
  Effect.gen(function*() {
    const state = yield* MemoryState
    const rows = yield* state.table(HashMap.empty<FeedbackId, Feedback.FeedbackRecord>())
    const findBy = (organizationId: OrganizationId, messageId: MessageId, memberId: MemberId) =>
      Effect.map(Ref.get(rows), (all) =>
        Option.fromNullable(
          Array.from(HashMap.values(all)).find((r) =>
            r.organization_id === organizationId && r.message_id === messageId && r.member_id === memberId
          )
        ))
    return FeedbackRepo.of({
      upsert: (record) =>
        state.run(Effect.gen(function*() {
          const before = yield* findBy(record.organization_id, record.message_id, record.member_id)
          const stored = Option.match(before, {
            onNone: () => record,
            onSome: (old) => new Feedback.FeedbackRecord({ ...record, id: old.id, created_at: old.created_at })
          })
          yield* Ref.update(rows, HashMap.set(stored.id, stored))
          return stored
        })),
      get: (organizationId, id) =>
        state.run(
          Effect.map(Ref.get(rows), (all) =>
            Option.filter(HashMap.get(all, id), (r) => r.organization_id === organizationId))
        ),
      list: (organizationId, filters, page) =>
        state.run(Effect.map(Ref.get(rows), (all) => {
          const { after } = page
          const matching = Array.from(HashMap.values(all)).filter((row) =>
            row.organization_id === organizationId && Feedback.matches(row, filters) &&
            (after === undefined || Pagination.compareDesc(Feedback.keyset(row), after) > 0)
          )
          matching.sort((a, b) => Pagination.compareDesc(Feedback.keyset(a), Feedback.keyset(b)))
          return Pagination.pageFromRows(matching.slice(0, page.limit + 1), page.limit, Feedback.keyset)
        }))
    })
  })
)
