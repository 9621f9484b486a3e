/**
 * Chat-channel webhooks against a real HTTP receiver on loopback: Slack-compatible messages,
 * retries that deliver once, and the SSRF rules that keep posts out of private networks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as ChatWebhook from "../src/ChatWebhook.js"

/** A receiver that answers each request with the next status of `statuses` (then 200). */
const receiver = (statuses: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; received: Array<any>; server: Http.Server }>((resume) => {
      const received: Array<any> = []
      const server = Http.createServer((req, res) => {
        let body = ""
        req.on("data", (c) => (body += c))
        req.on("end", () => {
          received.push(JSON.parse(body))
          const status = statuses[received.length - 1] ?? 200
          res.writeHead(status, status === 429 ? { "retry-after": "0" } : {}).end(status === 200 ? "ok" : "no")
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/B000/secret`,
          received,
          server
        })))
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

describe("ChatWebhook", () => {
  it("builds a Slack message with a header, escaped sections, dividers and a text fallback", () => {
    const message = ChatWebhook.slackMessage("Weekly <revenue>", "Revenue grew", [
      { type: "hero", heading: "Up 5%", content: "a & b" },
      { type: "divider" },
      { type: "list", items: ["<one>", "two"] },
      { type: "image", image_url: "chart:1", image_alt: "Revenue by week" }
    ])
    expect(message.text).toBe("Weekly <revenue>\n\nRevenue grew")
    expect(message.blocks).toEqual([
      { type: "header", text: { type: "plain_text", text: "Weekly <revenue>" } },
      { type: "section", text: { type: "mrkdwn", text: "*Up 5%*" } },
      { type: "section", text: { type: "mrkdwn", text: "a &amp; b" } },
      { type: "divider" },
      { type: "section", text: { type: "mrkdwn", text: "• &lt;one&gt;\n• two" } },
      { type: "section", text: { type: "mrkdwn", text: "_Revenue by week_" } }
    ])
  })

  // Live clock: the backoff between attempts really sleeps.
  it.scopedLive("retries 503 and 429 with backoff and posts once it is accepted", () =>
    Effect.gen(function*() {
      const hook = yield* receiver([503, 429])
      const poster = ChatWebhook.make({ allowPrivate: true, backoffMillis: 10 })
      yield* poster.post(hook.url, { text: "hello" })
      expect(hook.received).toEqual([{ text: "hello" }, { text: "hello" }, { text: "hello" }])
    }))

  it.scopedLive("does not retry a refusal, and gives up after its attempts", () =>
    Effect.gen(function*() {
      const refused = yield* receiver([404])
      const poster = ChatWebhook.make({ allowPrivate: true, backoffMillis: 10, attempts: 2 })
      expect(yield* Effect.flip(poster.post(refused.url, { text: "x" }))).toBe("the chat webhook answered 404")
      expect(refused.received).toHaveLength(1)
      const down = yield* receiver([500, 500, 500])
      expect(yield* Effect.flip(poster.post(down.url, { text: "x" }))).toBe("the chat webhook answered 500")
      expect(down.received).toHaveLength(2)
    }))

  it.scopedLive("without allowPrivate, refuses http, private addresses and names that resolve to them, before connecting", () =>
    Effect.gen(function*() {
      const hook = yield* receiver([])
      const poster = ChatWebhook.make({ backoffMillis: 10 })
      const port = new URL(hook.url).port
      expect(yield* Effect.flip(poster.post(hook.url, {}))).toBe("the webhook URL must be https")
      expect(yield* Effect.flip(poster.post(`https://127.0.0.1:${port}/x`, {})))
        .toBe("the webhook URL points into a private network")
      expect(yield* Effect.flip(poster.post(`https://[::ffff:7f00:1]:${port}/x`, {})))
        .toBe("the webhook URL points into a private network")
      expect(yield* Effect.flip(poster.post(`https://localhost:${port}/x`, {})))
        .toMatch(/^the chat webhook was refused: localhost is not a public address/)
      expect(hook.received).toEqual([])
    }))
})
