/**
 * Feedback: a member's rating of an assistant message (up or down, with a comment), kept with what
 * it rated (the question, the answer, the model, and the SQL and connector of its last table), so
 * that admins can read it after the chat moved on and promote it: a good answer into a verified
 * query of the connector's semantic model, any answer into an evaluation case, each as a library
 * change reviewed under OWNERS.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { ChangeId, ChatId, ConnectorId, FeedbackId, MemberId, MessageId, OrganizationId } from "./Ids.js"
import * as Pagination from "./Pagination.js"

/**
 * Up or down.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rating = Schema.Literal("up", "down")
export type Rating = typeof Rating.Type

/**
 * The most characters of a comment.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxCommentLength = 2_000

/**
 * The most characters of the answer a rating keeps.
 *
 * @since 0.1.0
 * @category constants
 */
export const keptAnswerLength = 4_000

const fields = {
  id: FeedbackId,
  chat_id: ChatId,
  message_id: MessageId,
  member_id: MemberId,
  rating: Rating,
  comment: Schema.optional(Schema.String),
  /** The question the message answered. */
  question: Schema.String,
  /** The answer's text (its first `keptAnswerLength` characters). */
  answer: Schema.String,
  model: Schema.String,
  /** The connector and SQL of the answer's last table, when it had one. */
  connector_id: Schema.optional(ConnectorId),
  sql: Schema.optional(Schema.String),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}

/**
 * A rating as stored: one per member and message (rating again replaces it).
 *
 * @since 0.1.0
 * @category models
 */
export class FeedbackRecord extends Schema.Class<FeedbackRecord>("@sightline/core/FeedbackRecord")({
  ...fields,
  organization_id: OrganizationId,
  /**
   * The audience of the rated chat (`Audience`); absent or `""` without client attributes. Only
   * callers of that audience list or promote the rating.
   */
  audience: Schema.optional(Schema.String)
}) {}

/**
 * A rating as served.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct(fields).annotations({ identifier: "Feedback" })
export type View = typeof View.Type

/**
 * The served form of a stored rating.
 *
 * @since 0.1.0
 * @category utils
 */
export const toView = (record: FeedbackRecord): View => Struct.omit(record, "organization_id", "audience")

/**
 * The body of `PUT /v2/chats/{chat_id}/messages/{message_id}/feedback`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RateRequest = Schema.Struct({
  rating: Rating,
  comment: Schema.optional(Schema.String.pipe(Schema.maxLength(maxCommentLength)))
}).annotations({ identifier: "RateMessageRequest" })
export type RateRequest = typeof RateRequest.Type

/**
 * Query of `GET /v2/feedback`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListParams = Schema.Struct({
  limit: Pagination.limitParam(1, 200, 50),
  cursor: Schema.optional(Schema.String),
  rating: Schema.optional(Rating),
  connector_id: Schema.optional(Schema.compose(Schema.NumberFromString, ConnectorId)),
  model: Schema.optional(Schema.String)
})
export type ListParams = typeof ListParams.Type

/**
 * What `FeedbackRepo.list` keeps to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Filters {
  readonly rating?: Rating | undefined
  readonly connectorId?: number | undefined
  readonly model?: string | undefined
  /** Only ratings of this audience (`Audience`; `""` is the audience without attributes). */
  readonly audience?: string | undefined
}

/**
 * Whether a rating passes the filters (the memory repository's, and the SQL's `WHERE`).
 *
 * @since 0.1.0
 * @category utils
 */
export const matches = (record: FeedbackRecord, filters: Filters): boolean =>
  (filters.rating === undefined || record.rating === filters.rating) &&
  (filters.connectorId === undefined || record.connector_id === filters.connectorId) &&
  (filters.model === undefined || record.model === filters.model) &&
  (filters.audience === undefined || (record.audience ?? "") === filters.audience)

/**
 * Response of `GET /v2/feedback`, newest first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  feedback: Schema.Array(View),
  next_cursor: Schema.optional(Schema.String)
}).annotations({ identifier: "FeedbackList" })
export type ListResponse = typeof ListResponse.Type

/**
 * The keyset position of a rating in listings (newest update first).
 *
 * @since 0.1.0
 * @category utils
 */
export const keyset = (record: FeedbackRecord): Pagination.Keyset => ({
  at: DateTime.formatIso(record.updated_at),
  id: record.id
})

/**
 * The body of `POST /v2/feedback/{id}/promote`:
 * - `verified_query`: a verified query of the connector's library model, with `name` and `sql` over
 *   its logical tables (`__orders`), `:name` parameters declared in `parameters`;
 * - `eval_case`: a case of `evals/feedback.yaml`, whose right answer is `sql` or `expected`, or else
 *   the rated answer's own rows (for an answer rated up).
 *
 * @since 0.1.0
 * @category schemas
 */
export const PromoteRequest = Schema.Union(
  Schema.Struct({
    as: Schema.Literal("verified_query"),
    name: Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_]*$/, { message: () => "a name is snake_case" })),
    sql: Schema.NonEmptyTrimmedString,
    question: Schema.optional(Schema.NonEmptyTrimmedString)
  }),
  Schema.Struct({
    as: Schema.Literal("eval_case"),
    sql: Schema.optional(Schema.NonEmptyTrimmedString),
    expected: Schema.optional(
      Schema.Array(Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)))
    ),
    question: Schema.optional(Schema.NonEmptyTrimmedString)
  })
).annotations({ identifier: "PromoteFeedbackRequest" })
export type PromoteRequest = typeof PromoteRequest.Type

/**
 * Response of `POST /v2/feedback/{id}/promote`: the library change filed, to review like any other.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PromoteResponse = Schema.Struct({
  change_id: ChangeId,
  path: Schema.String
}).annotations({ identifier: "PromoteFeedbackResponse" })
export type PromoteResponse = typeof PromoteResponse.Type
