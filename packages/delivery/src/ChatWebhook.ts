/**
 * Posting reports to chat channels: Slack-compatible incoming webhooks (Slack, Mattermost,
 * Rocket.Chat, Discord's `/slack` endpoint), with blocks and a text fallback.
 *
 * The server posts to URLs that users registered, so it must not become a way into the private
 * network (SSRF). Unless `allowPrivate` is set (`SIGHTLINE_WEBHOOK_ALLOW_PRIVATE=1`, for
 * development and tests), a webhook must be https, and every address its host resolves to must be
 * public: the check runs in the socket's own DNS lookup, so the address that is checked is the
 * address that is connected to (a name that resolves to a public address once and a private one
 * the next time gains nothing). Redirects are not followed.
 *
 * A post that fails for a reason that can pass (a 429 or 5xx answer, a network error, a timeout) is
 * retried with exponential backoff and jitter, waiting at least what `Retry-After` asks.
 *
 * @since 0.1.0
 */
import type * as Report from "@sightline/core/Report"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Guard from "./internal/guard.js"
import * as Post from "./internal/post.js"

/**
 * Options of the poster.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Allow http and private or loopback addresses (development and tests only). */
  readonly allowPrivate?: boolean | undefined
  /** Attempts per post (default 3). */
  readonly attempts?: number | undefined
  /** The first backoff (default 500 ms); it doubles, with jitter. */
  readonly backoffMillis?: number | undefined
  /** The timeout of one attempt (default 10 s). */
  readonly timeoutMillis?: number | undefined
}

/**
 * A post that failed, and whether trying again could help.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostError {
  readonly reason: string
  readonly transient: boolean
  /** What the receiver asked for with `Retry-After`, in milliseconds. */
  readonly retryAfterMillis?: number | undefined
}

/**
 * Why a URL cannot be posted to before any connection, or `undefined` when it can.
 *
 * @since 0.1.0
 * @category utils
 */
export const urlProblem = (url: URL, allowPrivate: boolean): string | undefined => {
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return "the webhook URL must be https"
  }
  if (Guard.refusedLiteral(url, allowPrivate)) return "the webhook URL points into a private network"
  return undefined
}

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const clip = (text: string, max: number) => text.length > max ? `${text.slice(0, max - 1)}…` : text

const blockText = (block: Report.Block): ReadonlyArray<string> => {
  switch (block.type) {
    case "hero":
      return [`*${escape(block.heading ?? "")}*`, ...(block.content === undefined ? [] : [escape(block.content)])]
    case "text":
    case "image_text":
      return [...(block.heading === undefined ? [] : [`*${escape(block.heading)}*`]), escape(block.content ?? "")]
    case "list":
      return [
        ...(block.heading === undefined ? [] : [`*${escape(block.heading)}*`]),
        (block.items ?? []).map((item) => `• ${escape(item)}`).join("\n")
      ]
    case "card":
      return [
        ...(block.heading === undefined ? [] : [`*${escape(block.heading)}*`]),
        ...(block.content === undefined ? [] : [escape(block.content)]),
        ...(block.blocks ?? []).flatMap(blockText)
      ]
    case "image":
      return block.image_alt === undefined ? [] : [`_${escape(block.image_alt)}_`]
    case "divider":
    case "spacer":
      return []
  }
}

/**
 * A report as a Slack message: a header, a section per block (mrkdwn, escaped), dividers, and the
 * plain text as the fallback that notifications show. Charts are not posted: they live behind
 * signed URLs that expire, so the message names them.
 *
 * @since 0.1.0
 * @category utils
 */
export const slackMessage = (subject: string, text: string, blocks: ReadonlyArray<Report.Block>) => ({
  text: clip(`${subject}\n\n${text}`, 3000),
  blocks: [
    { type: "header", text: { type: "plain_text", text: clip(subject, 150) } },
    ...blocks.flatMap((block) =>
      block.type === "divider"
        ? [{ type: "divider" }]
        : blockText(block).filter((t) => t.trim() !== "").map((t) => ({
          type: "section",
          text: { type: "mrkdwn", text: clip(t, 3000) }
        }))
    )
  ].slice(0, 50)
})

/**
 * Posts JSON to webhooks under the SSRF rules.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}) => {
  const allowPrivate = options.allowPrivate === true
  const timeout = options.timeoutMillis ?? 10_000

  // The socket's lookup: resolves every address and refuses the name if any one is private.
  const lookup = Guard.lookup(allowPrivate)

  const once = (url: URL, body: string): Effect.Effect<void, PostError> =>
    Post.post(url, body, {}, { lookup, timeoutMillis: timeout }).pipe(
      Effect.mapError((error): PostError => ({
        reason: error.refused
          ? `the chat webhook was refused: ${error.message}`
          : `the chat webhook could not be reached: ${error.message}`,
        transient: !error.refused
      })),
      Effect.flatMap((answer) =>
        answer.status >= 200 && answer.status < 300 ? Effect.void : Effect.fail({
          reason: `the chat webhook answered ${answer.status}`,
          transient: answer.status === 429 || answer.status >= 500,
          retryAfterMillis: answer.retryAfterMillis
        })
      )
    )

  const base = options.backoffMillis ?? 500

  /** Posts `payload` to `webhookUrl`, retrying what can pass; fails with a reason safe to show. */
  const post = (webhookUrl: string, payload: unknown): Effect.Effect<void, string> => {
    let url: URL
    try {
      url = new URL(webhookUrl)
    } catch {
      return Effect.fail("the webhook URL is not a URL")
    }
    const problem = urlProblem(url, allowPrivate)
    if (problem !== undefined) return Effect.fail(problem)
    const body = JSON.stringify(payload)
    const attempt = (n: number): Effect.Effect<void, PostError> =>
      Effect.catchAll(once(url, body), (error) => {
        if (!error.transient || n >= (options.attempts ?? 3)) return Effect.fail(error)
        // Exponential with jitter, or longer when the receiver asked for it (capped at a minute).
        const delay = Effect.map(
          Random.nextRange(0.8, 1.2),
          (jitter) => Math.max(base * 2 ** (n - 1) * jitter, Math.min(error.retryAfterMillis ?? 0, 60_000))
        )
        return Effect.flatMap(delay, (millis) => Effect.zipRight(Effect.sleep(Duration.millis(millis)), attempt(n + 1)))
      })
    return Effect.mapError(attempt(1), (error) => error.reason)
  }

  return { post }
}
