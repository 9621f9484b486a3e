/**
 * Core's `EventSender` port: outbound events posted as Standard Webhooks.
 *
 * Each attempt is signed with the maintained `standardwebhooks` library: the `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` headers, with one `v1,` signature per secret (the
 * current one, and the previous one during a rotation's grace). It connects under the same network
 * rule as chat webhooks (`internal/guard.ts`): https only and public addresses checked at
 * connection time unless `allowPrivate` is set, no redirects followed, and a timeout per attempt.
 *
 * @since 0.1.0
 */
import { EventSender } from "@sightline/core/EventSender"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Webhook } from "standardwebhooks"
import { urlProblem } from "./ChatWebhook.js"
import * as Guard from "./internal/guard.js"
import * as Post from "./internal/post.js"

/**
 * Options of the sender.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Allow http and private or loopback addresses (development and tests only). */
  readonly allowPrivate?: boolean | undefined
  /** The timeout of one attempt (default 15 s, the Standard Webhooks recommendation). */
  readonly timeoutMillis?: number | undefined
}

/**
 * Builds the sender.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): EventSender.Service => {
  const allowPrivate = options.allowPrivate === true
  const lookup = Guard.lookup(allowPrivate)
  const timeoutMillis = options.timeoutMillis ?? 15_000

  const problem = (text: string) => {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      return "the webhook URL is not a URL"
    }
    return urlProblem(url, allowPrivate)
  }

  return EventSender.of({
    urlProblem: problem,
    send: (request) =>
      Effect.gen(function*() {
        const refused = problem(request.url)
        if (refused !== undefined) return { latencyMillis: 0, error: refused }
        const signature = request.secrets
          .map((secret) => new Webhook(secret).sign(request.id, request.timestamp, request.body))
          .join(" ")
        const headers = {
          "webhook-id": request.id,
          "webhook-timestamp": String(Math.floor(request.timestamp.getTime() / 1000)),
          "webhook-signature": signature,
          "user-agent": "Sightline-Webhooks/1"
        }
        const started = yield* Clock.currentTimeMillis
        const answered = yield* Effect.either(
          Post.post(new URL(request.url), request.body, headers, { lookup, timeoutMillis })
        )
        const latencyMillis = (yield* Clock.currentTimeMillis) - started
        return answered._tag === "Right"
          ? { status: answered.right.status, retryAfterMillis: answered.right.retryAfterMillis, latencyMillis }
          : {
            latencyMillis,
            error: answered.left.refused
              ? `the endpoint was refused: ${answered.left.message}`
              : `the endpoint could not be reached: ${answered.left.message}`
          }
      })
  })
}

/**
 * The sender as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<EventSender> => Layer.succeed(EventSender, make(options))
