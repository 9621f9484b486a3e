/**
 * What one call of the agent's tools gave back: its data, or why it failed.
 *
 * A provider sees text (`text`): what the tool says, or `error: …`. The data travels beside it on the
 * `tool` message (`LanguageModel.Message.structured`, with `isError` and `{ error, reason }` for a
 * failure), as MCP's `structuredContent` does, so that a reader of the conversation (the offline
 * model, the run's provenance) reads the data and never parses the text back.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as LanguageModel from "./LanguageModel.js"

/**
 * Why a call failed: its arguments or the names in them were wrong (`invalid`), the caller may not do
 * it (`refused`), or it ran and failed (`failed`: the database, the sandbox, the network).
 *
 * @since 0.1.0
 * @category models
 */
export type Reason = "invalid" | "refused" | "failed"

/**
 * A tool call's outcome.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolResult = Data.TaggedEnum<{
  /** `text` for the provider; `structured` (JSON) for readers of the conversation, when it has data. */
  Ok: { readonly text: string; readonly structured: unknown }
  Failed: { readonly message: string; readonly reason: Reason }
}>

const { Failed, Ok } = Data.taggedEnum<ToolResult>()

/**
 * Data: the provider reads it as JSON, a reader of the conversation as it is.
 *
 * @since 0.1.0
 * @category constructors
 */
export const data = (structured: object): ToolResult => Ok({ text: JSON.stringify(structured), structured })

/**
 * Text only (a library file, a confirmation).
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): ToolResult => Ok({ text, structured: undefined })

/**
 * A failure.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failed = (message: string, reason: Reason = "failed"): ToolResult => Failed({ message, reason })

/**
 * The `tool` message that carries a result back to the model.
 *
 * @since 0.1.0
 * @category utils
 */
export const toMessage = (result: ToolResult, toolCallId: string): LanguageModel.Message =>
  result._tag === "Ok"
    ? {
      role: "tool",
      toolCallId,
      content: result.text,
      ...(result.structured === undefined ? {} : { structured: result.structured })
    }
    : {
      role: "tool",
      toolCallId,
      content: `error: ${result.message}`,
      isError: true,
      structured: { error: result.message, reason: result.reason }
    }
