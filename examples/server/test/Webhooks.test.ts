/**
 * Outbound events over the socket, received on loopback and verified with the Standard Webhooks
 * library: signed deliveries that are retried until they land (three attempts logged), `410 Gone`
 * disabling an endpoint, secret rotation with both signatures, replay, a scheduled playbook's
 * `playbook.run.completed`, tenant scoping, and two processes over one PostgreSQL delivering each
 * event once.
 */
import { OrganizationId, PlaybookId } from "@sightline/core/Ids"
import * as PlaybookModule from "@sightline/core/Playbook"
import { PlaybookRepo } from "@sightline/core/PlaybookRepo"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterAll, describe, expect, it } from "vitest"
import { newMember } from "./utils/members.js"
import {
  body,
  describeServers,
  type Org,
  postgresProblem,
  postgresUrl,
  randomPrefix,
  startServer,
  type TestServer
} from "./utils/server.js"
import { until } from "./utils/wait.js"

interface Delivery {
  readonly headers: Record<string, string>
  readonly body: string
}

/** What a path answers to its n-th request (1-based); 204 when it says nothing. */
type Script = (n: number) => { readonly status: number; readonly headers?: Record<string, string> } | undefined

// One receiver on loopback; each test uses paths of its own.
const received = new Map<string, Array<Delivery>>()
const scripts = new Map<string, Script>()
const receiver = Http.createServer((req, res) => {
  let text = ""
  req.on("data", (c) => (text += c))
  req.on("end", () => {
    const path = req.url!
    const seen = received.get(path) ?? []
    seen.push({ headers: req.headers as Record<string, string>, body: text })
    received.set(path, seen)
    const reply = scripts.get(path)?.(seen.length) ?? { status: 204 }
    res.writeHead(reply.status, reply.headers ?? {}).end()
  })
})
const receiverPort = await new Promise<number>((resolve) =>
  receiver.listen(0, "127.0.0.1", () => resolve((receiver.address() as AddressInfo).port))
)
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

const newPath = (script?: Script) => {
  const path = `/hooks/${crypto.randomUUID()}`
  if (script !== undefined) scripts.set(path, script)
  return path
}
const urlOf = (path: string) => `http://127.0.0.1:${receiverPort}${path}`
const deliveriesTo = (path: string) => received.get(path) ?? []

/** Verifies a delivery with the library a receiver would use; the parsed payload. */
const verify = (secret: string, delivery: Delivery) =>
  new Webhook(secret).verify(delivery.body, delivery.headers) as any

const register = async (server: TestServer, org: Org, path: string, eventTypes: ReadonlyArray<string>) => {
  const created = await server.request("/v2/webhook-endpoints", {
    method: "POST",
    key: org.key,
    json: { url: urlOf(path), description: "ops", event_types: eventTypes }
  })
  expect(created.status).toBe(201)
  return body(created)
}

const mintKey = async (server: TestServer, org: Org) => {
  const minted = await server.request("/v2/api-keys", { method: "POST", key: org.key, json: { inheritAllRoles: true } })
  expect(minted.status).toBe(201)
  return (await body(minted)).api_key.id as string
}

const options = { worker: { tickMillis: 200, pollMillis: 100 }, webhookAllowPrivate: true }

describeServers("outbound events as Standard Webhooks", (server) => {
  it("delivers a signed event that fails twice exactly once, with three attempts logged", async () => {
    const org = await server().newOrg()
    // Unavailable twice, asking to come back in a second; then accepted.
    const path = newPath((n) => n <= 2 ? { status: 503, headers: { "retry-after": "1" } } : undefined)
    const endpoint = await register(server(), org, path, ["api_key.created", "api_key.revoked"])
    expect(endpoint.secret).toMatch(/^whsec_/)
    expect(endpoint).toMatchObject({
      url: urlOf(path),
      event_types: ["api_key.created", "api_key.revoked"],
      enabled: true
    })
    // The secret is never shown again.
    const listed = await server().request("/v2/webhook-endpoints", { key: org.key })
    expect(await listed.text()).not.toContain(endpoint.secret.slice(6))

    const keyId = await mintKey(server(), org)
    await until("three attempts", async () => deliveriesTo(path).length >= 3 ? true : undefined, 30_000)
    const deliveries = deliveriesTo(path)
    const payloads = deliveries.map((d) => verify(endpoint.secret, d))
    expect(payloads[2]).toEqual({ type: "api_key.created", timestamp: expect.any(String), data: { api_key_id: keyId } })
    // One event: one id and one body, whatever the attempt; each attempt its own timestamp.
    expect(new Set(deliveries.map((d) => d.headers["webhook-id"])).size).toBe(1)
    expect(new Set(deliveries.map((d) => d.body)).size).toBe(1)

    const log = await body(
      await server().request(`/v2/webhook-endpoints/${endpoint.id}/deliveries`, { key: org.key })
    )
    expect(log.deliveries.map((d: any) => [d.attempt, d.succeeded, d.response_status])).toEqual([
      [3, true, 204],
      [2, false, 503],
      [1, false, 503]
    ])
    expect(log.deliveries[1].error).toBe("the endpoint answered 503")
    expect(log.deliveries.every((d: any) => d.event_id === deliveries[0]!.headers["webhook-id"])).toBe(true)
    // Nothing more comes.
    await new Promise((r) => setTimeout(r, 500))
    expect(deliveriesTo(path)).toHaveLength(3)

    // Revoking fires the other subscribed type.
    expect((await server().request(`/v2/api-keys/${keyId}`, { method: "DELETE", key: org.key })).status).toBe(200)
    await until("the revocation", async () => deliveriesTo(path).length === 4 ? true : undefined)
    expect(verify(endpoint.secret, deliveriesTo(path)[3]!)).toMatchObject({
      type: "api_key.revoked",
      data: { api_key_id: keyId }
    })
  })

  it("a 410 disables the endpoint; an admin turns it back on", async () => {
    const org = await server().newOrg()
    const path = newPath((n) => n === 1 ? { status: 410 } : undefined)
    const endpoint = await register(server(), org, path, ["api_key.created"])
    await mintKey(server(), org)
    const disabled = await until("the endpoint disabled", async () => {
      const got = await body(await server().request(`/v2/webhook-endpoints/${endpoint.id}`, { key: org.key }))
      return got.enabled === false ? got : undefined
    })
    expect(disabled.disabled_reason).toBe("the endpoint answered 410 Gone")
    // A disabled endpoint is sent nothing.
    await mintKey(server(), org)
    await new Promise((r) => setTimeout(r, 700))
    expect(deliveriesTo(path)).toHaveLength(1)

    const enabled = await server().request(`/v2/webhook-endpoints/${endpoint.id}`, {
      method: "PATCH",
      key: org.key,
      json: { enabled: true }
    })
    expect(await body(enabled)).toMatchObject({ enabled: true })
    const keyId = await mintKey(server(), org)
    await until("a delivery after re-enabling", async () => deliveriesTo(path).length === 2 ? true : undefined)
    expect(verify(endpoint.secret, deliveriesTo(path)[1]!).data).toEqual({ api_key_id: keyId })
  })

  it("after a rotation both secrets verify; a replay sends the same event again", async () => {
    const org = await server().newOrg()
    const path = newPath()
    const endpoint = await register(server(), org, path, ["api_key.created"])
    const rotated = await body(
      await server().request(`/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, { method: "POST", key: org.key })
    )
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(endpoint.secret)
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000)
    await mintKey(server(), org)
    await until("the delivery", async () => deliveriesTo(path).length === 1 ? true : undefined)
    const [first] = deliveriesTo(path)
    expect(first!.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
    expect(verify(rotated.secret, first!)).toEqual(verify(endpoint.secret, first!))
    const stranger = `whsec_${Buffer.alloc(32, 9).toString("base64")}`
    expect(() => verify(stranger, first!)).toThrow(/No matching signature/)

    const eventId = first!.headers["webhook-id"]!
    const replayed = await server().request(`/v2/webhook-endpoints/${endpoint.id}/events/${eventId}/replay`, {
      method: "POST",
      key: org.key
    })
    expect(replayed.status).toBe(202)
    expect(await body(replayed)).toEqual({ endpoint_id: endpoint.id, event_id: eventId, queued: true })
    await until("the replay", async () => deliveriesTo(path).length === 2 ? true : undefined)
    expect(deliveriesTo(path)[1]!.headers["webhook-id"]).toBe(eventId)
    expect(deliveriesTo(path)[1]!.body).toBe(first!.body)
    const log = await body(
      await server().request(
        `/v2/webhook-endpoints/${endpoint.id}/deliveries?event_id=${eventId}&limit=5`,
        { key: org.key }
      )
    )
    expect(log.deliveries.map((d: any) => d.attempt)).toEqual([1, 1])
  })

  it("a scheduled playbook's run reaches its endpoint as a signed playbook.run.completed", async () => {
    const org = await server().newOrg()
    const path = newPath()
    const endpoint = await register(server(), org, path, ["playbook.run.completed", "playbook.run.failed"])
    const connector = await body(
      await server().request("/v2/connectors", {
        method: "POST",
        key: org.key,
        json: { config: { connector_type: "DEMO", name: "Demo retail", demo: {} } }
      })
    )
    const created = await body(await server().request("/v2/playbooks", { method: "POST", key: org.key }))
    const patched = await server().request(`/v2/playbooks/${created.id}`, {
      method: "PATCH",
      key: org.key,
      json: {
        prompt: "Number of orders",
        connector_ids: [connector.id],
        email_addresses: ["ops@example.com"],
        cron_string: "0 9 * * *"
      }
    })
    expect(patched.status).toBe(200)
    expect((await server().request(`/v2/playbooks/${created.id}/deploy`, { method: "POST", key: org.key })).status)
      .toBe(200)
    // Its time comes now rather than tomorrow at nine.
    await server().run(Effect.gen(function*() {
      const repo = yield* PlaybookRepo
      const organizationId = OrganizationId.make(org.organizationId)
      const stored = Option.getOrThrow(yield* repo.get(organizationId, PlaybookId.make(created.id)))
      yield* Effect.orDie(repo.update(
        new PlaybookModule.PlaybookRecord({ ...stored, next_run_at: DateTime.unsafeMake(Date.now() - 60_000) })
      ))
    }))
    await until("the event", async () => deliveriesTo(path).length > 0 ? true : undefined, 60_000)
    const payload = verify(endpoint.secret, deliveriesTo(path)[0]!)
    const playbook = await body(await server().request(`/v2/playbooks/${created.id}`, { key: org.key }))
    expect(payload).toEqual({
      type: "playbook.run.completed",
      timestamp: expect.any(String),
      data: { playbook_id: created.id, chat_id: expect.any(String), report_id: playbook.reports[0].id }
    })
    // The receiver fetches the details with its own key.
    expect((await server().request(`/v2/chats/${payload.data.chat_id}`, { key: org.key })).status).toBe(200)
  })

  it("tells a completed answer as chat.completed", async () => {
    const org = await server().newOrg()
    const path = newPath()
    const endpoint = await register(server(), org, path, ["chat.completed"])
    const asked = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "how many orders?", model: "offline" }
    })
    expect(asked.status).toBe(200)
    const answer = await body(asked)
    await until("the event", async () => deliveriesTo(path).length > 0 ? true : undefined)
    expect(verify(endpoint.secret, deliveriesTo(path)[0]!)).toEqual({
      type: "chat.completed",
      timestamp: expect.any(String),
      data: { chat_id: answer.chat_id, message_id: answer.id }
    })
  })

  it("is for admins of the organization, with valid input only", async () => {
    const org = await server().newOrg()
    const endpoint = await register(server(), org, newPath(), ["chat.completed"])
    const member = await newMember(server(), org)
    expect((await server().request("/v2/webhook-endpoints", { key: member.key })).status).toBe(403)
    const other = await server().newOrg()
    for (
      const [path, method] of [
        [`/v2/webhook-endpoints/${endpoint.id}`, "GET"],
        [`/v2/webhook-endpoints/${endpoint.id}`, "DELETE"],
        [`/v2/webhook-endpoints/${endpoint.id}/deliveries`, "GET"],
        [`/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, "POST"]
      ] as const
    ) {
      const answer = await server().request(path, { method, key: other.key })
      expect(answer.status, `${method} ${path}`).toBe(404)
    }
    for (
      const json of [
        { url: urlOf("/x"), event_types: [] },
        { url: urlOf("/x"), event_types: ["chat.exploded"] },
        { url: "ftp://example.com/x", event_types: ["chat.completed"] },
        { url: "https://user:pass@example.com/x", event_types: ["chat.completed"] },
        { url: urlOf("/x"), event_types: ["chat.completed"], secret: "mine" }
      ]
    ) {
      const answer = await server().request("/v2/webhook-endpoints", { method: "POST", key: org.key, json })
      expect(answer.status, JSON.stringify(json)).toBe(400)
      expect((await body(answer)).error.code).toBe("invalid_request")
    }
    const removed = await server().request(`/v2/webhook-endpoints/${endpoint.id}`, { method: "DELETE", key: org.key })
    expect(await body(removed)).toEqual({ id: endpoint.id, success: true })
    expect((await server().request(`/v2/webhook-endpoints/${endpoint.id}`, { key: org.key })).status).toBe(404)
  })
}, options)

const suite = postgresProblem === undefined ? describe : describe.skip
if (postgresProblem !== undefined) {
  console.warn(`postgres: webhooks: PostgreSQL unreachable at ${postgresUrl}: skipped`)
}

suite("postgres: outbound events from two processes over one database", () => {
  it("are each delivered once", { timeout: 90_000 }, async () => {
    const prefix = randomPrefix()
    const a = await startServer("postgres", { ...options, prefix })
    const b = await startServer("postgres", { ...options, prefix })
    try {
      const org = await a.newOrg()
      const path = newPath()
      const endpoint = await register(a, org, path, ["api_key.created"])
      const minted: Array<string> = []
      for (let i = 0; i < 12; i++) minted.push(await mintKey(i % 2 === 0 ? a : b, org))
      await until("twelve deliveries", async () => deliveriesTo(path).length >= 12 ? true : undefined, 30_000)
      // Both workers had time to deliver anything twice.
      await new Promise((r) => setTimeout(r, 1_000))
      const deliveries = deliveriesTo(path)
      expect(deliveries).toHaveLength(12)
      expect(new Set(deliveries.map((d) => d.headers["webhook-id"])).size).toBe(12)
      expect(new Set(deliveries.map((d) => verify(endpoint.secret, d).data.api_key_id))).toEqual(new Set(minted))
    } finally {
      await b.stop({ keepTables: true })
      await a.stop()
    }
  })
})
