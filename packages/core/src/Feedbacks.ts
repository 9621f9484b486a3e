/**
 * The feedback use cases.
 *
 * - **Rating** an assistant message takes `chat:write` on a chat the caller may read (its creator's:
 *   chats are personal). Rating again replaces the rating.
 * - **Reading** ratings takes `organization:read` (an administrator's): they hold members' questions
 *   and answers.
 * - **Promoting** one takes `organization:read` too, and files a library change as the caller (so
 *   `change:write` and the OWNERS rules apply, as to any change): a verified query added to the
 *   connector's library model, or a case added to `evals/feedback.yaml`. Nothing merges unreviewed.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Asset from "./Asset.js"
import * as Change from "./Change.js"
import { Changes } from "./Changes.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { enforce } from "./Decision.js"
import type { Conflict } from "./Errors.js"
import { InvalidRequest, NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as Feedback from "./Feedback.js"
import { FeedbackRepo } from "./FeedbackRepo.js"
import { IdGenerator } from "./IdGenerator.js"
import { type ChatId, FeedbackId, type MessageId } from "./Ids.js"
import { chatAnswer } from "./internal/chatAnswer.js"
import * as YamlFile from "./internal/yamlFile.js"
import { Library } from "./Library.js"
import * as Pagination from "./Pagination.js"
import * as Policy from "./Policy.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as Traced from "./Traced.js"

/**
 * The set promoted cases go to.
 *
 * @since 0.1.0
 * @category constants
 */
export const feedbackSetPath = "evals/feedback.yaml"

/**
 * The feedback use cases.
 *
 * @since 0.1.0
 * @category services
 */
export class Feedbacks extends Context.Tag("@sightline/core/Feedbacks")<Feedbacks, Feedbacks.Service>() {}

export declare namespace Feedbacks {
  export interface Service {
    /** `PUT /v2/chats/{chat_id}/messages/{message_id}/feedback`. */
    readonly rate: (
      principal: Policy.Principal,
      chatId: ChatId,
      messageId: MessageId,
      request: Feedback.RateRequest
    ) => Effect.Effect<Feedback.View, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/feedback`: newest first. */
    readonly list: (
      principal: Policy.Principal,
      params: Feedback.ListParams
    ) => Effect.Effect<Feedback.ListResponse, Unauthenticated | PermissionDenied | InvalidRequest>
    /** `POST /v2/feedback/{id}/promote`: files the library change. */
    readonly promote: (
      principal: Policy.Principal,
      id: FeedbackId,
      request: Feedback.PromoteRequest
    ) => Effect.Effect<
      Feedback.PromoteResponse,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
  }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Builds the use cases over the services in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repo = yield* FeedbackRepo
  const chats = yield* ChatRepo
  const connectors = yield* ConnectorRepo
  const library = yield* Library
  const changes = yield* Changes
  const ids = yield* IdGenerator

  const rate = Traced.fn("Feedbacks.rate")(function*(
    principal: Policy.Principal,
    chatId: ChatId,
    messageId: MessageId,
    request: Feedback.RateRequest
  ) {
    yield* enforce(Policy.requirePermission(principal, "chat:write"))
    const chat = yield* chats.get(principal.organizationId, chatId)
    if (Option.isNone(chat)) return yield* new NotFound()
    const now = yield* DateTime.now
    yield* enforce(Policy.canRead(principal, "chat", Chats.accessOf(chat.value), now))
    // The answer's last table, and the SQL and connector of its cell.
    const { cell, message, question } = yield* chatAnswer(chats, principal.organizationId, chatId, messageId)
    const sql = Option.flatMapNullable(cell, (c) => c.query)
    const connectorId = Option.flatMapNullable(cell, (c) => c.connector_id)
    const stored = yield* repo.upsert(
      new Feedback.FeedbackRecord({
        id: FeedbackId.make(yield* ids.uuid),
        organization_id: principal.organizationId,
        chat_id: chatId,
        message_id: messageId,
        member_id: principal.memberId,
        ...(chat.value.audience === undefined || chat.value.audience === "" ? {} : { audience: chat.value.audience }),
        rating: request.rating,
        ...(request.comment === undefined || request.comment.trim() === "" ? {} : { comment: request.comment }),
        question,
        answer: message.content.slice(0, Feedback.keptAnswerLength),
        model: chat.value.model,
        ...(Option.isSome(connectorId) ? { connector_id: connectorId.value } : {}),
        ...(Option.isSome(sql) ? { sql: sql.value } : {}),
        created_at: now,
        updated_at: now
      })
    )
    return Feedback.toView(stored)
  })

  const list = Traced.fn("Feedbacks.list")(function*(principal: Policy.Principal, params: Feedback.ListParams) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const after = params.cursor === undefined ? undefined : yield* Pagination.decodeCursor(params.cursor, Schema.UUID)
    const page = yield* repo.list(principal.organizationId, {
      rating: params.rating,
      connectorId: params.connector_id,
      model: params.model,
      audience: Policy.audienceOf(principal)
    }, { limit: params.limit, after })
    return {
      feedback: page.items.map(Feedback.toView),
      ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
    }
  })

  // The rows of the rated answer's last table, for a case whose right answer is the answer itself.
  const answerRows = (record: Feedback.FeedbackRecord) =>
    Effect.gen(function*() {
      const messages = yield* chats.listMessages(record.organization_id, record.chat_id)
      const message = messages.find((m) => m.id === record.message_id)
      if (message === undefined) return Option.none<ReadonlyArray<ReadonlyArray<unknown>>>()
      const table = (yield* chats.listAssets(record.organization_id, record.chat_id))
        .filter((asset) => asset.message_cell_id === message.cell_id && asset.type === "table").at(-1)
      if (table?.content === undefined) return Option.none<ReadonlyArray<ReadonlyArray<unknown>>>()
      return Asset.tableRows(table.content)
    })

  const promote = Traced.fn("Feedbacks.promote")(function*(
    principal: Policy.Principal,
    id: FeedbackId,
    request: Feedback.PromoteRequest
  ) {
    yield* enforce(Policy.requirePermission(principal, "organization:read"))
    const found = yield* repo.get(principal.organizationId, id)
    if (Option.isNone(found) || !Policy.inAudience(principal, found.value.audience)) {
      return yield* new NotFound({ message: `feedback ${id} not found` })
    }
    const record = found.value
    const question = request.question ?? record.question
    if (question.trim() === "") return yield* new InvalidRequest({ message: "the rated message answered no question" })
    const main = yield* library.main(principal.organizationId)
    const textAt = (path: string) =>
      Option.getOrUndefined(Option.map(HashMap.get(main.files, path), (b) => decoder.decode(b)))
    let path: string
    let edited: Option.Option<string>
    if (request.as === "verified_query") {
      if (record.connector_id === undefined) {
        return yield* new InvalidRequest({ message: "the rated answer ran no query on a connector" })
      }
      const connector = yield* connectors.get(principal.organizationId, record.connector_id)
      if (Option.isNone(connector)) return yield* new InvalidRequest({ message: "the answer's connector was deleted" })
      const governing = SemanticLayer.governingModel(SemanticLayer.libraryModels(main.files), connector.value)
      if (governing === undefined || !("file" in governing)) {
        return yield* new InvalidRequest({
          message:
            `connector ${record.connector_id} has no library semantic model that reads: file one first (semantic/<name>.yaml)`
        })
      }
      path = governing.path
      const today = DateTime.formatIso(yield* DateTime.now).slice(0, 10)
      edited = YamlFile.appendTo(textAt(path), "verified_queries", {
        name: request.name,
        question,
        verified_by: principal.email ?? principal.memberId,
        verified_at: today,
        sql: request.sql
      }, {})
    } else {
      path = feedbackSetPath
      const expected = request.sql !== undefined
        ? { sql: request.sql }
        : request.expected !== undefined
        ? { expected: request.expected }
        : yield* Effect.map(
          answerRows(record),
          Option.match({
            onNone: () => undefined,
            onSome: (rows) => ({ expected: rows })
          })
        )
      if (expected === undefined) {
        return yield* new InvalidRequest({
          message: "the rated answer has no table to take as the right answer: give sql or expected"
        })
      }
      if (record.rating === "down" && request.sql === undefined && request.expected === undefined) {
        return yield* new InvalidRequest({
          message: "an answer rated down is no right answer: give the right one as sql or expected"
        })
      }
      edited = YamlFile.appendTo(textAt(path), "cases", { question, ...expected, tags: ["feedback"] }, {
        name: "feedback",
        description: "Cases promoted from members' ratings of answers.",
        cases: []
      })
    }
    if (Option.isNone(edited)) {
      return yield* new InvalidRequest({ message: `${path} on main does not read as YAML with a list to add to` })
    }
    const filed = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({
        title: request.as === "verified_query" ? `Verified query ${request.name}` : "An evaluation case from feedback",
        description: `Promoted from a rating (${record.rating}) of an answer to: ${question}`
      }),
      baseRef: main.head,
      edits: HashMap.make([path, Option.some(encoder.encode(edited.value))])
    })
    return { change_id: filed.change_id, path }
  })

  return Feedbacks.of({ rate, list, promote })
})

/**
 * The feedback use cases over the services in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Feedbacks, make)
