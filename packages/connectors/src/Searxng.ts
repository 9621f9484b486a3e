/**
 * Core's `WebSearch` over a SearXNG instance's JSON API (`GET {baseUrl}/search?q=…&format=json`;
 * the instance must list `json` among its `search.formats`).
 *
 * @since 0.1.0
 */
import { WebSearch, WebSearchError } from "@sightline/core/WebSearch"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Where the instance is.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** The instance's base URL, e.g. `http://127.0.0.1:8888`. */
  readonly baseUrl: string
  /** How long to wait for results (default 10 s). */
  readonly timeoutMillis?: number | undefined
}

interface Answer {
  readonly results?: ReadonlyArray<{ readonly title?: unknown; readonly url?: unknown; readonly content?: unknown }>
}

/**
 * The search over an instance.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): WebSearch.Service =>
  WebSearch.of({
    search: (query, limit) =>
      Effect.tryPromise({
        try: async (signal) => {
          const url = new URL(`${config.baseUrl.replace(/\/+$/, "")}/search`)
          url.searchParams.set("q", query)
          url.searchParams.set("format", "json")
          const response = await fetch(url, {
            headers: { accept: "application/json" },
            signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMillis ?? 10_000)])
          })
          if (!response.ok) {
            throw new Error(
              response.status === 403
                ? "403: the instance does not serve JSON (add json to search.formats)"
                : `${response.status} ${response.statusText}`
            )
          }
          const answer = await response.json() as Answer
          return (answer.results ?? []).slice(0, limit).map((result) => ({
            title: typeof result.title === "string" ? result.title : "",
            url: typeof result.url === "string" ? result.url : "",
            snippet: typeof result.content === "string" ? result.content.slice(0, 500) : ""
          }))
        },
        catch: (cause) =>
          new WebSearchError({
            message: `web search failed: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      }).pipe(Effect.withSpan("Searxng.search"))
  })

/**
 * The search as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: Config): Layer.Layer<WebSearch> => Layer.succeed(WebSearch, make(config))
