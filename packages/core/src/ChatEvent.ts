/**
 * The events of a chat run, as `POST /v2/chats/stream` sends them: each event's data is JSON with a
 * `type` field (`metadata`, `text`, `cell`, `asset`, `clarification`, `done`), and each carries an id (the SSE
 * `id:`) that increases within the run and across the chat's runs, so a client can say where it
 * stopped (`GET /v2/chats/{id}/stream` with `Last-Event-ID`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Asset } from "./Asset.js"
import { ChatCell, RunMetadata } from "./Chat.js"
import * as Clarification from "./Clarification.js"
import * as Provenance from "./Provenance.js"

/**
 * The first event: the run's description.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Metadata = Schema.Struct({ type: Schema.Literal("metadata"), ...RunMetadata.fields })
export type Metadata = typeof Metadata.Type

/**
 * A piece of answer text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Text = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export type Text = typeof Text.Type

/**
 * A step, when it starts (with its SQL or code) and when it ends (outputs, preview, timing).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cell = Schema.Struct({ type: Schema.Literal("cell"), cell: ChatCell })
export type Cell = typeof Cell.Type

/**
 * A generated asset.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssetEvent = Schema.Struct({ type: Schema.Literal("asset"), asset: Asset })
export type AssetEvent = typeof AssetEvent.Type

/**
 * The run asks instead of answering: the question could mean several things. Its choices are
 * complete questions; the asker answers with one's id (`choice`) or with their own words. It comes
 * before the `done` of a completed run, and the answer's message keeps it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ClarificationEvent = Schema.Struct({
  type: Schema.Literal("clarification"),
  ...Clarification.Clarification.fields
})
export type ClarificationEvent = typeof ClarificationEvent.Type

/**
 * An investigation's plan, before its steps run: each step is a semantic query whose cell follows
 * (its `content` is the step's title). A later `plan` event of the same investigation replaces it,
 * with the steps one level deeper that the first results chose.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlanEvent = Schema.Struct({
  type: Schema.Literal("plan"),
  ...Provenance.Plan.fields
})
export type PlanEvent = typeof PlanEvent.Type

/**
 * How a run ended on the stream: `failed` also covers a cancelled run (its `error` says so).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DoneStatus = Schema.Literal("completed", "failed")
export type DoneStatus = typeof DoneStatus.Type

/**
 * The last event. `error` is present when the run failed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Done = Schema.Struct({
  type: Schema.Literal("done"),
  status: DoneStatus,
  error: Schema.optional(Schema.String)
})
export type Done = typeof Done.Type

/**
 * An event of a chat run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatEvent = Schema.Union(Metadata, Text, Cell, AssetEvent, ClarificationEvent, PlanEvent, Done)
export type ChatEvent = typeof ChatEvent.Type

/**
 * An event id as a client sends it back (`Last-Event-ID`, or the `last_event_id` query parameter
 * for clients that cannot set headers): a non-negative integer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EventIdParam = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(0, 2_147_483_647)
).annotations({ message: () => "an event id must be a non-negative integer (the `id:` of an event received)" })

/**
 * An event with its id: ids increase within a run and go on across the chat's runs (a run's
 * `metadata` follows the previous run's `done`), so an id names one event of the chat.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sequenced {
  readonly id: number
  readonly event: ChatEvent
}

/**
 * The `error` of the `done` event of a cancelled run.
 *
 * @since 0.1.0
 * @category constants
 */
export const cancelledMessage = "cancelled: the run was stopped on request"

/**
 * The `error` of the `done` event of a run whose process stopped answering (its heartbeat went stale).
 *
 * @since 0.1.0
 * @category constants
 */
export const abandonedMessage = "failed: the server running this answer stopped before it finished; ask again"

/**
 * Is this the last event of a run?
 *
 * @since 0.1.0
 * @category guards
 */
export const isDone = (event: ChatEvent): event is Done => event.type === "done"
