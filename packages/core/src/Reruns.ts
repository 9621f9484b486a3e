/**
 * Re-running an answer as it was given (`POST /v2/chats/{chat_id}/messages/{message_id}/rerun`):
 * its question asked again, as a fresh chat of the caller, with the same model and connectors, and
 * the library at the commit the answer read (its `Provenance`), whatever main holds now; then its
 * last table (or text) compared with the original's.
 *
 * - **Who.** The chat's reader (its creator), or an administrator (`organization:read`, who already
 *   reads members' questions and answers through feedback); and `chat:write`, to ask.
 * - **Under what.** The caller's own access. An answer that ran under client attributes is re-run
 *   only by a caller under the same ones (the same fingerprint): with other attributes, row-level
 *   security would read other rows, and the comparison would say nothing.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Answers from "./Answers.js"
import * as Asset from "./Asset.js"
import * as Audience from "./Audience.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import { enforce } from "./Decision.js"
import { type Conflict, InvalidRequest, NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as EvalCompare from "./EvalCompare.js"
import * as EvalRun from "./EvalRun.js"
import { ChatId, ConnectorId, MessageId } from "./Ids.js"
import { chatAnswer } from "./internal/chatAnswer.js"
import * as Policy from "./Policy.js"
import { Provenance } from "./Provenance.js"
import * as Traced from "./Traced.js"

/**
 * One side of a re-run: the answer, its first 20 rows, and how it was made.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Side = Schema.Struct({
  chat_id: ChatId,
  message_id: MessageId,
  content: Schema.String,
  rows: Schema.optional(EvalRun.Rows),
  provenance: Schema.optional(Provenance)
}).annotations({ identifier: "RerunSide" })
export type Side = typeof Side.Type

/**
 * The answer of a re-run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RerunResult = Schema.Struct({
  question: Schema.String,
  model: Schema.String,
  /** The library commit both read. */
  library_commit: Schema.optional(Schema.String),
  connector_ids: Schema.Array(ConnectorId),
  original: Side,
  rerun: Side,
  /**
   * Whether the re-run gave the same result: the same rows of its last table (order aside unless
   * its SQL orders them, numbers within 0.5%), or the same text when neither showed a table.
   */
  same: Schema.Boolean,
  /** What differs, when it is not the same. */
  difference: Schema.optional(Schema.String)
}).annotations({ identifier: "RerunResult" })
export type RerunResult = typeof RerunResult.Type

/**
 * The re-run use case.
 *
 * @since 0.1.0
 * @category services
 */
export class Reruns extends Context.Tag("@sightline/core/Reruns")<Reruns, Reruns.Service>() {}

export declare namespace Reruns {
  export interface Service {
    readonly rerun: (
      principal: Policy.Principal,
      chatId: ChatId,
      messageId: MessageId,
      sign: Chats.SignAssetUrl
    ) => Effect.Effect<
      RerunResult,
      Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict
    >
  }
}

const shown = (rows: ReadonlyArray<ReadonlyArray<unknown>> | undefined) =>
  rows === undefined ? {} : { rows: EvalRun.kept(rows) }

/**
 * Whether two answers are the same: by their last tables, or by their text when neither has one.
 *
 * @since 0.1.0
 * @category utils
 */
export const sameAnswer = (
  original: { readonly rows: ReadonlyArray<ReadonlyArray<unknown>> | undefined; readonly text: string },
  rerun: { readonly rows: ReadonlyArray<ReadonlyArray<unknown>> | undefined; readonly text: string },
  ordered: boolean
): EvalCompare.Comparison => {
  if (original.rows === undefined && rerun.rows === undefined) {
    return original.text.trim() === rerun.text.trim()
      ? { passed: true }
      : { passed: false, difference: "neither showed a table, and their texts differ" }
  }
  if (original.rows === undefined) return { passed: false, difference: "only the re-run showed a table" }
  if (rerun.rows === undefined) return { passed: false, difference: "only the original showed a table" }
  // Each way: the comparison lets an answer add columns, and a re-run must neither add nor lose any.
  const forth = EvalCompare.compare(original.rows, rerun.rows, { ordered })
  if (!forth.passed) return forth
  const back = EvalCompare.compare(rerun.rows, original.rows, { ordered })
  return back.passed
    ? { passed: true }
    : { passed: false, difference: `the original lacks what the re-run shows: ${back.difference}` }
}

/**
 * Builds the use case over the chats and the agent loop in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const chats = yield* ChatRepo
  const answers = yield* Answers.Answers

  const rerun = Traced.fn("Reruns.rerun")(function*(
    principal: Policy.Principal,
    chatId: ChatId,
    messageId: MessageId,
    sign: Chats.SignAssetUrl
  ) {
    yield* enforce(Policy.requirePermission(principal, "chat:write"))
    const chat = yield* chats.get(principal.organizationId, chatId)
    if (Option.isNone(chat)) return yield* new NotFound()
    // Whoever sees the organization re-runs any member's answer, but only in its own audience.
    if (!Policy.hasPermission(principal, "organization:read")) {
      yield* enforce(Policy.canRead(principal, "chat", Chats.accessOf(chat.value), yield* DateTime.now))
    } else if (!Policy.inAudience(principal, chat.value.audience)) {
      return yield* new NotFound()
    }
    const { cell: originalCell, message, question, table } = yield* chatAnswer(
      chats,
      principal.organizationId,
      chatId,
      messageId
    )
    const provenance = message.provenance
    if (provenance === undefined) {
      return yield* new InvalidRequest({
        message: "this answer was stored before answers kept their provenance: nothing says how to re-run it"
      })
    }
    const audience = Policy.audienceOf(principal)
    if ((audience === Audience.none ? undefined : audience) !== provenance.client_attributes_hash) {
      return yield* new PermissionDenied({
        message: provenance.client_attributes_hash === undefined
          ? "permission denied: this answer ran under no client attributes, and your key is bound to some: " +
            "re-run it without them"
          : "permission denied: this answer ran under client attributes, and a re-run must run under the same " +
            "ones: use a key bound to them"
      })
    }
    const connectorIds = [
      ...new Set([
        ...provenance.semantic_models.map((m) => m.connector_id),
        ...provenance.tool_calls.flatMap((c) => c.connector_id === undefined ? [] : [c.connector_id])
      ])
    ]
    // The original's last table, as it was shown.
    const originalRows = table?.content === undefined
      ? undefined
      : Option.getOrUndefined(Asset.tableRows(table.content))
    const originalSql = Option.getOrUndefined(Option.flatMapNullable(originalCell, (c) => c.query))

    const handle = yield* answers.ask(
      principal,
      { question, connector_ids: connectorIds, model: provenance.model },
      sign,
      { source: "rerun", ...(provenance.library_commit === undefined ? {} : { commit: provenance.library_commit }) }
    )
    const got = yield* Answers.answered(handle)
    if (got.done?.status !== "completed") {
      return yield* new InvalidRequest({
        message: `the re-run did not complete: ${got.done?.error ?? "it ended without an answer"}`
      })
    }
    const rerunMessages = yield* chats.listMessages(principal.organizationId, handle.metadata.chat_id)
    const rerunMessage = rerunMessages.find((m) => m.id === handle.metadata.id)
    const ordered = originalSql !== undefined && EvalCompare.orders(originalSql)
    const comparison = sameAnswer(
      { rows: originalRows, text: message.content },
      { rows: got.rows, text: got.text },
      ordered
    )
    return {
      question,
      model: provenance.model,
      ...(provenance.library_commit === undefined ? {} : { library_commit: provenance.library_commit }),
      connector_ids: connectorIds,
      original: {
        chat_id: chatId,
        message_id: messageId,
        content: message.content,
        ...shown(originalRows),
        provenance
      },
      rerun: {
        chat_id: handle.metadata.chat_id,
        message_id: handle.metadata.id,
        content: rerunMessage?.content ?? got.text,
        ...shown(got.rows),
        ...(rerunMessage?.provenance === undefined ? {} : { provenance: rerunMessage.provenance })
      },
      same: comparison.passed,
      ...(comparison.difference === undefined ? {} : { difference: comparison.difference })
    } satisfies RerunResult
  })

  return Reruns.of({ rerun })
})

/**
 * The use case over the chats and the agent loop in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Reruns, make)
