/**
 * The web search port: what the agent's `web_search` tool asks. It is optional: a deployment without
 * one never offers the tool. Adapters: SearXNG's JSON API in `@sightline/connectors`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * One result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly title: string
  readonly url: string
  readonly snippet: string
}

/**
 * A search that could not be carried out (it goes back to the model as the tool's result).
 *
 * @since 0.1.0
 * @category errors
 */
export class WebSearchError extends Schema.TaggedError<WebSearchError>()("WebSearchError", {
  message: Schema.String
}) {}

/**
 * Searches the web.
 *
 * @since 0.1.0
 * @category services
 */
export class WebSearch extends Context.Tag("@sightline/core/WebSearch")<WebSearch, WebSearch.Service>() {}

export declare namespace WebSearch {
  /** The search. */
  export interface Service {
    /** At most `limit` results for `query`, best first. */
    readonly search: (query: string, limit: number) => Effect.Effect<ReadonlyArray<Result>, WebSearchError>
  }
}

/**
 * The results a search gives the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultLimit = 5

/**
 * Fixed results for unit tests: every query gets them.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (results: ReadonlyArray<Result>): Layer.Layer<WebSearch> =>
  Layer.succeed(WebSearch, WebSearch.of({ search: (_, limit) => Effect.succeed(results.slice(0, limit)) }))
