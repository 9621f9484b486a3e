/**
 * End users behind one member, kept apart, over the socket. A host mints keys of one member for its
 * end users, each with its own client attributes; what one end user's key makes (chats, playbooks,
 * sandboxes, feedback) no other end user's key reaches, by the API or by MCP, and neither does the
 * member's own key without attributes (nor the end users what the member made). Work that runs on
 * its own, as the member and without the attributes (a deployed playbook, an agent), cannot be set up
 * by an end user's key.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Audience from "@sightline/core/Audience"
import { MemberId, OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Sandbox from "@sightline/core/Sandbox"
import { SandboxRepo } from "@sightline/core/SandboxRepo"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { afterEach, expect, it } from "vitest"
import { demoConnector } from "./utils/content.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const clients: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

/** A key of the org's admin, bound to `clientId` when given. */
const mintKey = async (server: TestServer, org: Org, clientId?: string) => {
  const created = await server.request("/v2/api-keys", {
    method: "POST",
    key: org.key,
    json: {
      inheritAllRoles: true,
      name: "end user",
      expirySeconds: 3600,
      ...(clientId === undefined ? {} : { clientId })
    }
  })
  expect(created.status).toBe(201)
  return (await body(created)).key as string
}

/** The org's member key, and keys of the same member for end users in regions A and B. */
const endUsers = async (server: TestServer) => {
  const org = await server.newOrg()
  const connectorId = await demoConnector(server, org)
  return {
    org,
    connectorId,
    a: await mintKey(server, org, "{\"region\":\"East\",\"tenant\":\"a\"}"),
    // The same attributes in another key order: the same end user.
    a2: await mintKey(server, org, "{\"tenant\":\"a\", \"region\":\"East\"}"),
    b: await mintKey(server, org, "{\"region\":\"West\",\"tenant\":\"b\"}")
  }
}

const ask = async (server: TestServer, key: string, connectorId: number, chatId?: string) => {
  const response = await server.request("/v2/chats", {
    method: "POST",
    key,
    json: {
      question: "How many orders were there in 2025?",
      connector_ids: [connectorId],
      ...(chatId === undefined ? {} : { chat_id: chatId })
    }
  })
  return { status: response.status, body: await body(response) }
}

const chatIds = async (server: TestServer, key: string) =>
  (await body(await server.request("/v2/chats?limit=100", { key }))).chats.map((chat: any) => chat.id)

const mcp = async (server: TestServer, key: string) => {
  const client = new Client({ name: "sightline-test", version: "1.0.0" })
  clients.push(client)
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    })
  )
  return client
}

describeServers("end users behind one member", (server) => {
  it("a chat is its end user's alone: listed, read, continued, rated and cancelled by no other key", async () => {
    const { a, a2, b, connectorId, org } = await endUsers(server())
    const asked = await ask(server(), a, connectorId)
    expect(asked.status).toBe(200)
    const chatId = asked.body.chat_id as string
    const mine = await ask(server(), org.key, connectorId)
    expect(mine.status).toBe(200)

    // The end user sees it, with either of its keys; the other end user and the member do not.
    expect(await chatIds(server(), a)).toEqual([chatId])
    expect(await chatIds(server(), a2)).toEqual([chatId])
    expect(await chatIds(server(), b)).toEqual([])
    expect(await chatIds(server(), org.key)).toEqual([mine.body.chat_id])
    expect((await body(await server().request("/v2/chats", { key: b }))).total_count).toBe(0)

    const read = await server().request(`/v2/chats/${chatId}`, { key: a2 })
    expect(read.status).toBe(200)
    for (const key of [b, org.key]) {
      for (const path of [`/v2/chats/${chatId}`, `/v2/chats/${chatId}/cells`]) {
        const response = await server().request(path, { key })
        expect(response.status).toBe(404)
        // Not a row of the answer in the refusal.
        expect(JSON.stringify(await body(response))).not.toContain(asked.body.response)
      }
      expect((await ask(server(), key, connectorId, chatId)).status).toBe(404)
      expect((await server().request(`/v2/chats/${chatId}/cancel`, { method: "POST", key })).status).toBe(404)
      expect(
        (await server().request(`/v2/chats/${chatId}/messages/${asked.body.id}/feedback`, {
          method: "PUT",
          key,
          json: { rating: "up" }
        })).status
      ).toBe(404)
    }
    // Nor does an end user reach what the member made without attributes.
    expect((await server().request(`/v2/chats/${mine.body.chat_id}`, { key: a })).status).toBe(404)
    // The end user continues its own chat.
    expect((await ask(server(), a2, connectorId, chatId)).status).toBe(200)

    // Through MCP, the other end user cannot continue it either.
    const client = await mcp(server(), b)
    const refused = await client.callTool({
      name: "ask",
      arguments: { question: "and in 2024?", chat_id: chatId, connector_ids: [connectorId] }
    })
    expect(refused.isError).toBe(true)
    expect(JSON.stringify(refused.content)).toMatch(/not found/i)
    expect(await chatIds(server(), a)).toEqual([chatId])
  })

  it("feedback is listed and promoted only in its end user's audience", async () => {
    const { a, b, connectorId, org } = await endUsers(server())
    const asked = await ask(server(), a, connectorId)
    const rated = await server().request(`/v2/chats/${asked.body.chat_id}/messages/${asked.body.id}/feedback`, {
      method: "PUT",
      key: a,
      json: { rating: "down", comment: "East only" }
    })
    expect(rated.status).toBe(200)
    const rating = await body(rated)
    expect(rating).not.toHaveProperty("audience")
    const listed = async (key: string) =>
      (await body(await server().request("/v2/feedback", { key }))).feedback.map((f: any) => f.id)
    expect(await listed(a)).toEqual([rating.id])
    expect(await listed(b)).toEqual([])
    expect(await listed(org.key)).toEqual([])
    for (const key of [b, org.key]) {
      const promoted = await server().request(`/v2/feedback/${rating.id}/promote`, {
        method: "POST",
        key,
        json: { as: "eval_case" }
      })
      expect(promoted.status).toBe(404)
    }
  })

  it("a playbook is its end user's alone, by the API and MCP, and an end user's key cannot deploy one", async () => {
    const { a, b, connectorId, org } = await endUsers(server())
    const made = async (key: string, name: string) => {
      const created = await body(await server().request("/v2/playbooks", { method: "POST", key }))
      const patched = await server().request(`/v2/playbooks/${created.id}`, {
        method: "PATCH",
        key,
        json: { name, prompt: "Orders by region last year", connector_ids: [connectorId], cron_string: "0 9 * * 1" }
      })
      expect(patched.status).toBe(200)
      return created.id as string
    }
    const east = await made(a, "East weekly")
    const members = await made(org.key, "Everyone's weekly")
    const listed = async (key: string) =>
      (await body(await server().request("/v2/playbooks", { key }))).playbooks.map((p: any) => p.id)
    expect(await listed(a)).toEqual([east])
    expect(await listed(b)).toEqual([])
    expect(await listed(org.key)).toEqual([members])
    for (const key of [b, org.key]) {
      expect((await server().request(`/v2/playbooks/${east}`, { key })).status).toBe(404)
      expect(
        (await server().request(`/v2/playbooks/${east}/run`, { method: "POST", key, json: { dry_run: true } })).status
      ).toBe(404)
    }
    expect((await server().request(`/v2/playbooks/${members}`, { key: a })).status).toBe(404)

    // A deployed playbook fires as its owner without the attributes: the end user's key may not deploy.
    const deploy = await server().request(`/v2/playbooks/${east}/deploy`, { method: "POST", key: a })
    expect(deploy.status).toBe(403)
    expect((await body(deploy)).error.message).toMatch(/client attributes/)
    expect((await body(await server().request(`/v2/playbooks/${east}`, { key: a }))).playbook.status).toBe("draft")
    // Its manual run is its own, filtered by its attributes.
    expect(
      (await server().request(`/v2/playbooks/${east}/run`, { method: "POST", key: a, json: { dry_run: true } })).status
    ).toBe(200)

    const client = await mcp(server(), b)
    const overMcp = await client.callTool({ name: "list_playbooks", arguments: {} })
    expect((overMcp.structuredContent as any).playbooks).toEqual([])
    const run = await client.callTool({ name: "run_playbook", arguments: { playbook_id: east, dry_run: true } })
    expect(run.isError).toBe(true)
  })

  it("an end user's key neither makes nor sees agents, which run as the member", async () => {
    const { a, connectorId, org } = await endUsers(server())
    const json = {
      name: "Nightly",
      prompt: "Orders",
      connector_ids: [connectorId],
      cron_strings: [],
      email_addresses: []
    }
    const refused = await server().request("/v2/agents", { method: "POST", key: a, json })
    expect(refused.status).toBe(403)
    expect((await body(refused)).error.message).toMatch(/client attributes/)
    const created = await server().request("/v2/agents", { method: "POST", key: org.key, json })
    expect(created.status).toBe(201)
    const agent = await body(created)
    expect((await body(await server().request("/v2/agents", { key: a }))).agents).toEqual([])
    expect((await server().request(`/v2/agents/${agent.id}`, { key: a })).status).toBe(404)
    expect((await server().request(`/v2/agents/${agent.id}/runs`, { key: a })).status).toBe(404)
    expect((await server().request(`/v2/agents/${agent.id}/run`, { method: "POST", key: a })).status).toBe(404)
    expect((await server().request(`/v2/agents/${agent.id}`, { key: org.key })).status).toBe(200)
  })

  it("a sandbox is its end user's alone, even for a key that sees every member's", async () => {
    const { a, b, org } = await endUsers(server())
    const memberId = (await body(await server().request("/v2/members/me", { key: a }))).member_id as string
    const seeded = await server().run(Effect.gen(function*() {
      const sandbox = Sandbox.make({
        sandboxId: SandboxId.make(crypto.randomUUID()),
        organizationId: OrganizationId.make(org.organizationId),
        memberId: MemberId.make(memberId),
        audience: Audience.of(OrganizationId.make(org.organizationId), "{\"region\":\"East\",\"tenant\":\"a\"}"),
        at: yield* DateTime.now
      })
      yield* (yield* SandboxRepo).create(sandbox)
      return sandbox.sandbox_id as string
    }))
    const listed = async (key: string) =>
      (await body(await server().request("/v2/sandcastles", { key }))).sandboxes.map((s: any) => s.sandbox_id)
    expect(await listed(a)).toEqual([seeded])
    // These keys hold `organization:read` (an admin's), which lists every member's sandboxes.
    expect(await listed(b)).toEqual([])
    expect(await listed(org.key)).toEqual([])
    for (const key of [b, org.key]) {
      expect((await server().request(`/v2/sandcastles/${seeded}`, { key })).status).toBe(404)
      expect((await server().request(`/v2/sandcastles/${seeded}/executions`, { key })).status).toBe(404)
      expect(
        (await server().request(`/v2/sandcastles/${seeded}/execute`, { method: "POST", key, json: { code: "1" } }))
          .status
      ).toBe(404)
      expect((await server().request("/v2/sandcastles", { method: "POST", key, json: { sandbox_id: seeded } })).status)
        .toBe(404)
    }
  })
})
