/**
 * Outbound events against a real HTTP receiver on loopback, verified with the Standard Webhooks
 * library itself: the signed headers, both signatures during a rotation, what an answer reports,
 * and the network rule.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import * as EventWebhook from "../src/EventWebhook.js"

interface Received {
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/** A receiver that answers with `answer`'s status and headers, or never when it returns undefined. */
const receiver = (answer: (n: number) => { status: number; headers?: Record<string, string> } | undefined) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; received: Array<Received>; server: Http.Server }>((resume) => {
      const received: Array<Received> = []
      const server = Http.createServer((req, res) => {
        let body = ""
        req.on("data", (c) => (body += c))
        req.on("end", () => {
          received.push({ headers: req.headers, body })
          const reply = answer(received.length)
          if (reply !== undefined) res.writeHead(reply.status, reply.headers ?? {}).end()
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
          received,
          server
        })))
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

const oldSecret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`
const newSecret = `whsec_${Buffer.alloc(32, 2).toString("base64")}`
const body = JSON.stringify({
  type: "api_key.revoked",
  timestamp: "2026-11-27T00:00:00.000Z",
  data: { api_key_id: "k" }
})

describe("EventWebhook", () => {
  it.scopedLive("signs with every secret it is given; the receiver verifies with either", () =>
    Effect.gen(function*() {
      const hook = yield* receiver(() => ({ status: 204 }))
      const sender = EventWebhook.make({ allowPrivate: true })
      const response = yield* sender.send({
        url: hook.url,
        id: "0b5d6a52-4f1e-4a8e-9d51-7c7c3b7f9f10",
        timestamp: new Date(),
        body,
        secrets: [newSecret, oldSecret]
      })
      expect(response.status).toBe(204)
      expect(response.latencyMillis).toBeGreaterThanOrEqual(0)
      const [received] = hook.received
      expect(received!.body).toBe(body)
      expect(received!.headers["webhook-id"]).toBe("0b5d6a52-4f1e-4a8e-9d51-7c7c3b7f9f10")
      expect(String(received!.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      const headers = received!.headers as Record<string, string>
      expect(new Webhook(newSecret).verify(received!.body, headers)).toEqual(JSON.parse(body))
      expect(new Webhook(oldSecret).verify(received!.body, headers)).toEqual(JSON.parse(body))
      const stranger = `whsec_${Buffer.alloc(32, 3).toString("base64")}`
      expect(() => new Webhook(stranger).verify(received!.body, headers)).toThrow(/No matching signature/)
    }))

  it.scopedLive("reports the status and Retry-After, follows no redirect, and times out", () =>
    Effect.gen(function*() {
      const hook = yield* receiver((n) =>
        n === 1
          ? { status: 429, headers: { "retry-after": "30" } }
          : n === 2
          ? { status: 302, headers: { location: "http://127.0.0.1:1/elsewhere" } }
          : undefined
      )
      const sender = EventWebhook.make({ allowPrivate: true, timeoutMillis: 300 })
      const send = sender.send({ url: hook.url, id: "id-1", timestamp: new Date(), body, secrets: [newSecret] })
      const throttled = yield* send
      expect(throttled.status).toBe(429)
      expect(throttled.retryAfterMillis).toBe(30_000)
      expect((yield* send).status).toBe(302)
      expect(hook.received).toHaveLength(2)
      const timedOut = yield* send
      expect(timedOut.status).toBeUndefined()
      expect(timedOut.error).toMatch(/could not be reached: no answer within 300 ms/)
    }))

  it.live("gives up at its deadline on a receiver that answers a byte at a time", () =>
    Effect.gen(function*() {
      const answer = Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
      const server = Net.createServer((socket) => {
        let sent = 0
        const drip = setInterval(() => {
          if (sent < answer.length) socket.write(answer.subarray(sent, ++sent))
        }, 100)
        socket.on("close", () => clearInterval(drip))
        socket.on("error", () => clearInterval(drip))
      })
      const port = yield* Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
      })
      const sender = EventWebhook.make({ allowPrivate: true, timeoutMillis: 300 })
      const started = Date.now()
      const result = yield* sender.send({
        url: `http://127.0.0.1:${port}/hook`,
        id: "id-2",
        timestamp: new Date(),
        body,
        secrets: [newSecret]
      })
      const took = Date.now() - started
      server.close()
      expect(result.status).toBeUndefined()
      expect(result.error).toMatch(/no answer within 300 ms/)
      // A byte every 100 ms would have taken over 4 s to send the status line and headers.
      expect(took).toBeLessThan(2_000)
    }))

  it.effect("refuses plain http and private addresses unless the operator allows them", () =>
    Effect.gen(function*() {
      const sender = EventWebhook.make()
      expect(sender.urlProblem("http://hooks.example.com/x")).toMatch(/https/)
      expect(sender.urlProblem("https://10.0.0.7/x")).toMatch(/private network/)
      expect(sender.urlProblem("https://hooks.example.com/x")).toBeUndefined()
      const refused = yield* sender.send({
        url: "https://127.0.0.1:9/x",
        id: "id",
        timestamp: new Date(),
        body,
        secrets: [newSecret]
      })
      expect(refused.status).toBeUndefined()
      expect(refused.error).toMatch(/private network/)
      expect(EventWebhook.make({ allowPrivate: true }).urlProblem("http://127.0.0.1:9/x")).toBeUndefined()
    }))
})
