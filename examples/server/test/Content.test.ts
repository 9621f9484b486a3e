import { expect, it } from "@effect/vitest"
import * as Asset from "@sightline/core/Asset"
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import * as ChatRuns from "@sightline/core/ChatRuns"
import { AssetId, CellId } from "@sightline/core/Ids"
import { Fixtures } from "@sightline/core/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const postgresConfig = (name: string, password = "s3cret-pw") => ({
  connector_type: "POSTGRES",
  name,
  postgres: { host: "db.internal", user: "analyst", password, database: "sales" }
})

/** A finished chat of the organization's admin: a question, a SQL cell with an asset, an answer. */
const seedChat = (server: TestServer, org: Org, question: string) =>
  server.run(Effect.gen(function*() {
    const principal = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const runs = yield* ChatRuns.ChatRuns
    const { run } = yield* runs.start(principal, { question })
    const cellId = CellId.make(crypto.randomUUID())
    yield* runs.appendCell(run, {
      id: cellId,
      type: "sql",
      status: "completed",
      created_at: yield* DateTime.now,
      query: "SELECT 1",
      output: ["1"]
    })
    const assetId = AssetId.make(crypto.randomUUID())
    yield* runs.addAsset(run, {
      id: assetId,
      cell_id: cellId,
      name: "chart.png",
      type: "chart",
      mime_type: "image/png",
      storage_key: Asset.storageKey({ organization_id: run.organizationId, chat_id: run.chatId, id: assetId })
    })
    yield* runs.complete(run, `The answer to ${question}`, [])
    return { chatId: run.chatId as string, cellId: cellId as string, assetId: assetId as string }
  }))

/** An open library change by the admin, on top of a seeded library. */
const seedChange = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const changes = yield* Changes.Changes
    const body = (title: string) =>
      Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title, description: `${title}.` })
    const seed = yield* changes.create(admin, {
      body: body("Seed"),
      baseRef: Option.none(),
      edits: Fixtures.edits({ "sql/revenue.sql": "SELECT 1\n" })
    })
    yield* changes.approve(admin, seed.change_id, { expected_git_ref: seed.git_ref })
    const head = yield* changes.get(admin, seed.change_id, {})
    const open = yield* changes.create(admin, {
      body: body("Revenue by region"),
      baseRef: Option.some(head.git_ref),
      edits: Fixtures.edits({ "sql/revenue.sql": "SELECT region, sum(amount) FROM sales GROUP BY 1\n" })
    })
    return { id: open.change_id as string, gitRef: open.git_ref, status: open.status }
  }))

describeServers("/v2 connectors, chats, changes and agents", (server) => {
  it("manages connectors without ever returning a password", async () => {
    const org = await server().newOrg()
    const types = await body(await server().request("/v2/connectors/types", { key: org.key }))
    expect(types.types.map((t: any) => t.connector_type)).toEqual(expect.arrayContaining(["POSTGRES", "DEMO"]))
    const password = types.types.find((t: any) => t.connector_type === "POSTGRES").fields.find((f: any) =>
      f.name === "password"
    )
    expect(password).toMatchObject({ confidential: true })

    const created = await server().request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: { config: postgresConfig("Sales") }
    })
    expect(created.status).toBe(201)
    const connector = await body(created)
    expect(connector).toEqual({ id: expect.any(Number), name: "Sales", type: "POSTGRES" })

    const updated = await server().request(`/v2/connectors/${connector.id}`, {
      method: "PATCH",
      key: org.key,
      json: { config: { ...postgresConfig("Sales EU"), postgres: { host: "db.eu", user: "a", database: "sales" } } }
    })
    expect(updated.status).toBe(200)
    expect((await body(updated)).name).toBe("Sales EU")
    const tested = await server().request("/v2/connectors/test", {
      method: "POST",
      key: org.key,
      json: { config: postgresConfig("probe"), connector_id: connector.id }
    })
    expect(tested.status).toBe(200)
    expect(typeof (await body(tested)).success).toBe("boolean")

    const access = await server().request(`/v2/connectors/${connector.id}/access`, { key: org.key })
    expect(access.status).toBe(200)
    const member = await newMember(server(), org)
    const put = await server().request(`/v2/connectors/${connector.id}/access`, {
      method: "PUT",
      key: org.key,
      json: { is_public: false, grants: [{ member_id: member.memberId, access_type: "viewer" }] }
    })
    expect(put.status).toBe(200)
    const grants = (await body(put)).grants
    expect(grants.map((g: any) => [g.member_id, g.access_type]).sort()).toEqual(
      [[member.memberId, "viewer"], [org.memberId, "owner"]].sort()
    )

    const listed = await server().request("/v2/connectors", { key: member.key })
    expect((await body(listed)).map((c: any) => c.id)).toEqual([connector.id])
    // Every answer about the connector, read raw: the password never comes back.
    const raw = await Promise.all([
      server().request(`/v2/connectors/${connector.id}/access`, { key: org.key }).then((r) => r.text()),
      server().request("/v2/connectors", { key: org.key }).then((r) => r.text()),
      server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("B") } })
        .then((r) => r.text())
    ])
    for (const text of raw) {
      expect(text.length).toBeGreaterThan(2)
      expect(text).not.toContain("s3cret-pw")
    }

    const deleted = await server().request(`/v2/connectors/${connector.id}`, { method: "DELETE", key: org.key })
    expect(await body(deleted)).toEqual({ id: connector.id, success: true })
    expect((await server().request(`/v2/connectors/${connector.id}/access`, { key: org.key })).status).toBe(404)
  })

  it("answers connector errors: bad config, non-integer id, permissions, other organizations", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg("Other")
    const member = await newMember(server(), org)
    const noType = await server().request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: { config: { connector_type: "ORACLE", name: "x" } }
    })
    expect(noType.status).toBe(400)
    expect((await body(noType)).error.code).toBe("invalid_request")
    expect((await server().request("/v2/connectors/abc/access", { key: org.key })).status).toBe(400)
    const byMember = await server().request("/v2/connectors", {
      method: "POST",
      key: member.key,
      json: { config: postgresConfig("Mine") }
    })
    expect(byMember.status).toBe(403)

    const connector = await body(
      await server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("S") } })
    )
    for (
      const [method, path, json] of [
        ["PATCH", `/v2/connectors/${connector.id}`, { config: postgresConfig("T") }],
        ["DELETE", `/v2/connectors/${connector.id}`, undefined],
        ["GET", `/v2/connectors/${connector.id}/access`, undefined],
        ["PUT", `/v2/connectors/${connector.id}/access`, { is_public: true, grants: [] }]
      ] as const
    ) {
      const response = await server().request(path, { method, key: other.key, ...(json ? { json } : {}) })
      expect([path, method, response.status]).toEqual([path, method, 404])
    }
    expect(await body(await server().request("/v2/connectors", { key: other.key }))).toEqual([])
  })

  it("reads chats, cells and models, with freshly signed asset URLs", async () => {
    const org = await server().newOrg()
    const { assetId, cellId, chatId } = await seedChat(server(), org, "How did revenue move?")

    const list = await body(await server().request("/v2/chats?limit=5", { key: org.key }))
    expect(list.total_count).toBe(1)
    expect(list.chats[0]).toMatchObject({ id: chatId, preview: "How did revenue move?", is_running: false })

    const chat = await body(await server().request(`/v2/chats/${chatId}`, { key: org.key }))
    expect(chat.chat).toMatchObject({ id: chatId, model: "offline" })
    expect(chat.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
    const asset = chat.assets.find((a: any) => a.name === "chart.png")
    expect(asset.url).toMatch(new RegExp(`^/v2/assets/${assetId}\\?expires=\\d+&signature=[0-9a-f]{64}$`))
    expect(JSON.stringify(chat)).not.toContain("storage_key")

    const cells = await body(await server().request(`/v2/chats/${chatId}/cells`, { key: org.key }))
    expect(cells.chat_id).toBe(chatId)
    expect(cells.has_more).toBe(false)
    expect(cells.cells.map((c: any) => c.id)).toContain(cellId)
    const cell = await body(await server().request(`/v2/chats/${chatId}/cells/${cellId}`, { key: org.key }))
    expect(cell).toMatchObject({ id: cellId, type: "sql", status: "completed", query: "SELECT 1", output: ["1"] })

    const models = await body(await server().request("/v2/models", { key: org.key }))
    expect(models.models.map((m: any) => [m.id, m.number, m.default])).toEqual([["offline", 1, true], [
      "offline-fast",
      2,
      false
    ]])

    // Errors: bad query, unknown chat or cell, another member's or organization's chat, no chat:read.
    expect((await server().request("/v2/chats?limit=101", { key: org.key })).status).toBe(400)
    expect((await server().request("/v2/chats?sort_by=size", { key: org.key })).status).toBe(400)
    expect((await server().request(`/v2/chats/${crypto.randomUUID()}`, { key: org.key })).status).toBe(404)
    expect((await server().request(`/v2/chats/${chatId}/cells/${crypto.randomUUID()}`, { key: org.key })).status)
      .toBe(404)
    const member = await newMember(server(), org)
    const other = await server().newOrg("Other")
    for (const key of [member.key, other.key]) {
      for (const path of [`/v2/chats/${chatId}`, `/v2/chats/${chatId}/cells`, `/v2/chats/${chatId}/cells/${cellId}`]) {
        const response = await server().request(path, { key })
        expect([path, response.status]).toEqual([path, 404])
      }
    }
    const scoped = await scopedKey(server(), org, ["playbook:read"])
    expect((await server().request("/v2/chats", { key: scoped.key })).status).toBe(403)
  })

  it("lists, reads, approves, denies and restores library changes", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    expect(open.status).toBe("open")

    const list = await body(await server().request("/v2/changes?status=open", { key: org.key }))
    expect(list.changes.map((c: any) => c.id)).toEqual([open.id])
    expect(list.counts).toMatchObject({ open: 1, approved: 1 })

    const got = await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))
    expect(got).toMatchObject({ id: open.id, status: "open", git_ref: open.gitRef, title: "Revenue by region" })
    expect(got.diffs).toEqual([expect.objectContaining({ new_path: "sql/revenue.sql", additions: 1, deletions: 1 })])
    expect(got.capabilities).toMatchObject({ can_approve: true, can_deny: true, can_restore: false })

    const stale = await server().request(`/v2/changes/${open.id}/deny`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: "0".repeat(40) }
    })
    expect(stale.status).toBe(409)
    expect((await body(stale)).error.code).toBe("conflict")
    const notDenied = await server().request(`/v2/changes/${open.id}/restore`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(notDenied.status).toBe(409)

    const denied = await server().request(`/v2/changes/${open.id}/deny`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(await body(denied)).toEqual({ success: true })
    const restored = await server().request(`/v2/changes/${open.id}/restore`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(await body(restored)).toEqual({ success: true })
    const approved = await server().request(`/v2/changes/${open.id}/approve`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(approved.status).toBe(200)
    expect(await body(approved)).toEqual({
      merged: true,
      approval_count: 1,
      required_approvals: 1,
      already_approved: false
    })

    expect(
      (await server().request(`/v2/changes/${open.id}/approve`, { method: "POST", key: org.key, json: {} })).status
    )
      .toBe(400)
    expect((await server().request("/v2/changes?status=merged", { key: org.key })).status).toBe(400)
    const other = await server().newOrg("Other")
    for (
      const [method, path, json] of [
        ["GET", `/v2/changes/${open.id}`, undefined],
        ["POST", `/v2/changes/${open.id}/approve`, { expected_git_ref: open.gitRef }],
        ["POST", `/v2/changes/${open.id}/deny`, { expected_git_ref: open.gitRef }],
        ["POST", `/v2/changes/${open.id}/restore`, { expected_git_ref: open.gitRef }]
      ] as const
    ) {
      const response = await server().request(path, { method, key: other.key, ...(json ? { json } : {}) })
      expect([path, response.status]).toEqual([path, 404])
    }
    expect((await body(await server().request("/v2/changes", { key: other.key }))).changes).toEqual([])
  })

  it("manages agents, hidden from callers without access to their connectors", async () => {
    const org = await server().newOrg()
    const connector = await body(
      await server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("S") } })
    )
    const created = await server().request("/v2/agents", {
      method: "POST",
      key: org.key,
      json: {
        name: "Daily digest",
        prompt: "Summarize sales",
        connector_ids: [connector.id],
        cron_strings: ["0 8 * * *"]
      }
    })
    expect(created.status).toBe(201)
    const agent = await body(created)
    expect(agent).toMatchObject({ name: "Daily digest", owner_id: org.memberId, connector_ids: [connector.id] })
    expect(agent.webhook_trigger_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(agent).not.toHaveProperty("organization_id")

    expect((await body(await server().request("/v2/agents", { key: org.key }))).agents.map((a: any) => a.id)).toEqual([
      agent.id
    ])
    const patched = await server().request(`/v2/agents/${agent.id}`, {
      method: "PATCH",
      key: org.key,
      json: { prompt: "Summarize sales by region" }
    })
    expect((await body(patched)).prompt).toBe("Summarize sales by region")
    const runs = await body(await server().request(`/v2/agents/${agent.id}/runs`, { key: org.key }))
    expect(runs.runs).toEqual([])
    expect((await server().request(`/v2/agent-runs/${crypto.randomUUID()}`, { key: org.key })).status).toBe(404)

    // A member without access to the agent's connector does not see it at all.
    const member = await newMember(server(), org)
    expect((await body(await server().request("/v2/agents", { key: member.key }))).agents).toEqual([])
    expect((await server().request(`/v2/agents/${agent.id}`, { key: member.key })).status).toBe(404)
    const foreign = await server().request("/v2/agents", {
      method: "POST",
      key: member.key,
      json: { name: "Sneaky", prompt: "x", connector_ids: [connector.id] }
    })
    expect(foreign.status).toBe(400)
    expect((await server().request("/v2/agents", { method: "POST", key: org.key, json: { name: "x" } })).status).toBe(
      400
    )

    const other = await server().newOrg("Other")
    for (
      const [method, path, json] of [
        ["GET", `/v2/agents/${agent.id}`, undefined],
        ["PATCH", `/v2/agents/${agent.id}`, { name: "Mine" }],
        ["DELETE", `/v2/agents/${agent.id}`, undefined],
        ["GET", `/v2/agents/${agent.id}/runs`, undefined]
      ] as const
    ) {
      const response = await server().request(path, { method, key: other.key, ...(json ? { json } : {}) })
      expect([path, response.status]).toEqual([path, 404])
    }

    const deleted = await server().request(`/v2/agents/${agent.id}`, { method: "DELETE", key: org.key })
    expect(await body(deleted)).toEqual({ id: agent.id, success: true })
    expect((await server().request(`/v2/agents/${agent.id}`, { key: org.key })).status).toBe(404)
  })
})
