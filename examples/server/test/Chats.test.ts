import { expect, it } from "@effect/vitest"
import { AssetId } from "@sightline/core/Ids"
import * as AssetUrls from "@sightline/http/AssetUrls"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { chartBytes, seedChat, statuses } from "./utils/content.js"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers } from "./utils/server.js"

// The server signs with this key, so the tests can sign URLs the way another process sharing it would.
const assetSecret = Redacted.make("test-asset-secret")

const signWith = (options: Omit<AssetUrls.Options, "secret">, id: string) =>
  Effect.runPromise(
    Effect.flatMap(AssetUrls.make({ secret: assetSecret, ...options }), (urls) => urls.sign(AssetId.make(id)))
  )

describeServers("/v2 chats and models", (server) => {
  it("lists the caller's chats", async () => {
    const org = await server().newOrg()
    const first = await seedChat(server(), org, "How did revenue move?")
    const second = await seedChat(server(), org, "Which region grew most?")
    const response = await server().request("/v2/chats?limit=5&sort_by=created_at&sort_direction=asc", {
      key: org.key
    })
    expect(response.status).toBe(200)
    const list = await body(response)
    expect(list.total_count).toBe(2)
    expect(list.chats.map((c: any) => [c.id, c.preview, c.is_running])).toEqual([
      [first.chatId, "How did revenue move?", false],
      [second.chatId, "Which region grew most?", false]
    ])
    const page = await body(
      await server().request("/v2/chats?limit=1&offset=1&sort_direction=asc&sort_by=created_at", {
        key: org.key
      })
    )
    expect(page).toMatchObject({ total_count: 2, chats: [{ id: second.chatId }] })
    const searched = await body(await server().request("/v2/chats?search_term=region", { key: org.key }))
    expect(searched.chats.map((c: any) => c.id)).toEqual([second.chatId])
  })

  it("reads a chat with its messages and assets, stored ones with a freshly signed URL", async () => {
    const org = await server().newOrg()
    const { cellId, chartId, chatId, tableId } = await seedChat(server(), org, "How did revenue move?")
    const response = await server().request(`/v2/chats/${chatId}`, { key: org.key })
    expect(response.status).toBe(200)
    const chat = await body(response)
    expect(chat.chat).toEqual({ id: chatId, model: "offline" })
    expect(chat.messages.map((m: any) => [m.role, m.content])).toEqual([
      ["user", "How did revenue move?"],
      ["assistant", "The answer to How did revenue move?"]
    ])
    const chart = chat.assets.find((a: any) => a.name === "chart.png")
    expect(chart).toMatchObject({ type: "chart", cell_id: cellId, message_cell_id: expect.any(String) })
    expect(chart.url).toMatch(new RegExp(`^/v2/assets/${chartId}\\?expires=\\d+&signature=[0-9a-f]{64}$`))
    const table = chat.assets.find((a: any) => a.name === "by region.csv")
    expect(table).toMatchObject({ type: "table", content: "region,amount\nEU,10\n" })
    expect(table).not.toHaveProperty("url")
    expect(chat.messages[1].assets.map((a: any) => a.name).sort()).toEqual(["by region.csv", "chart.png"])
    expect(JSON.stringify(chat)).not.toContain("storage_key")
    expect(JSON.stringify(chat)).not.toContain(tableId)
  })

  it("pages a chat's cells and reads one cell", async () => {
    const org = await server().newOrg()
    const { cellId, chatId } = await seedChat(server(), org, "How did revenue move?")
    const response = await server().request(`/v2/chats/${chatId}/cells`, { key: org.key })
    expect(response.status).toBe(200)
    const cells = await body(response)
    expect(cells).toMatchObject({ chat_id: chatId, has_more: false })
    expect(cells.cells.map((c: any) => c.id)).toContain(cellId)
    const sql = cells.cells.find((c: any) => c.id === cellId)
    expect(sql.assets.map((a: any) => a.name).sort()).toEqual(["by region.csv", "chart.png"])
    const paged = await body(await server().request(`/v2/chats/${chatId}/cells?limit=1`, { key: org.key }))
    expect(paged.cells).toHaveLength(1)
    expect(paged.has_more).toBe(true)

    const one = await server().request(`/v2/chats/${chatId}/cells/${cellId}`, { key: org.key })
    expect(one.status).toBe(200)
    expect(await body(one)).toMatchObject({
      id: cellId,
      type: "sql",
      status: "completed",
      query: "SELECT 1",
      output: ["1"]
    })
  })

  it("lists the models the caller may use, with the default", async () => {
    const org = await server().newOrg()
    const response = await server().request("/v2/models", { key: org.key })
    expect(response.status).toBe(200)
    const { models } = await body(response)
    expect(models.map((m: any) => [m.id, m.number, m.default])).toEqual([["offline", 1, true], [
      "offline-fast",
      2,
      false
    ]])
    for (const model of models) {
      expect(model).toEqual({
        id: expect.any(String),
        number: expect.any(Number),
        provider: expect.any(String),
        supports_fast_mode: expect.any(Boolean),
        default: expect.any(Boolean)
      })
    }
  })

  it("is 400 for bad queries and ids, 401 without a valid key, 403 without chat:read", async () => {
    const org = await server().newOrg()
    const { cellId, chatId } = await seedChat(server(), org, "q")
    expect(
      await statuses(server(), org.key, [
        ["GET", "/v2/chats?limit=101"],
        ["GET", "/v2/chats?limit=0"],
        ["GET", "/v2/chats?offset=-1"],
        ["GET", "/v2/chats?sort_by=size"],
        ["GET", "/v2/chats?sort_direction=up"],
        ["GET", "/v2/chats/not-a-uuid"],
        ["GET", `/v2/chats/${chatId}/cells/not-a-uuid`]
      ])
    ).toEqual([
      ["GET", "/v2/chats?limit=101", 400, "invalid_request"],
      ["GET", "/v2/chats?limit=0", 400, "invalid_request"],
      ["GET", "/v2/chats?offset=-1", 400, "invalid_request"],
      ["GET", "/v2/chats?sort_by=size", 400, "invalid_request"],
      ["GET", "/v2/chats?sort_direction=up", 400, "invalid_request"],
      ["GET", "/v2/chats/not-a-uuid", 400, "invalid_request"],
      ["GET", `/v2/chats/${chatId}/cells/not-a-uuid`, 400, "invalid_request"]
    ])
    const calls = [
      ["GET", "/v2/chats"],
      ["GET", `/v2/chats/${chatId}`],
      ["GET", `/v2/chats/${chatId}/cells`],
      ["GET", `/v2/chats/${chatId}/cells/${cellId}`],
      ["GET", "/v2/models"]
    ] as const
    for (const key of [undefined, "not-a-key"]) {
      expect(await statuses(server(), key, calls)).toEqual(
        calls.map(([method, path]) => [method, path, 401, "unauthenticated"])
      )
    }
    const scoped = await scopedKey(server(), org, ["playbook:read"])
    expect(await statuses(server(), scoped.key, calls.slice(0, 4))).toEqual(
      calls.slice(0, 4).map(([method, path]) => [method, path, 403, "permission_denied"])
    )
  })

  it("is 404 for an unknown chat or cell, another member's chat and another organization's", async () => {
    const org = await server().newOrg()
    const { cellId, chatId } = await seedChat(server(), org, "private")
    const member = await newMember(server(), org)
    const other = await server().newOrg("Other")
    const unknown = crypto.randomUUID()
    expect(
      await statuses(server(), org.key, [
        ["GET", `/v2/chats/${unknown}`],
        ["GET", `/v2/chats/${unknown}/cells`],
        ["GET", `/v2/chats/${unknown}/cells/${cellId}`],
        ["GET", `/v2/chats/${chatId}/cells/${unknown}`]
      ])
    ).toEqual([
      ["GET", `/v2/chats/${unknown}`, 404, "not_found"],
      ["GET", `/v2/chats/${unknown}/cells`, 404, "not_found"],
      ["GET", `/v2/chats/${unknown}/cells/${cellId}`, 404, "not_found"],
      ["GET", `/v2/chats/${chatId}/cells/${unknown}`, 404, "not_found"]
    ])
    const calls = [
      ["GET", `/v2/chats/${chatId}`],
      ["GET", `/v2/chats/${chatId}/cells`],
      ["GET", `/v2/chats/${chatId}/cells/${cellId}`]
    ] as const
    for (const key of [member.key, other.key]) {
      expect(await statuses(server(), key, calls)).toEqual(
        calls.map(([method, path]) => [method, path, 404, "not_found"])
      )
      expect((await body(await server().request("/v2/chats", { key }))).total_count).toBe(0)
    }
  })
}, { assetSecret })

describeServers("/v2/assets (signed URLs)", (server) => {
  it("serves inline content through a signed URL, without a bearer token", async () => {
    const org = await server().newOrg()
    const { tableId } = await seedChat(server(), org, "q")
    const url = await signWith({}, tableId)
    const response = await server().request(url)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("content-security-policy")).toBe("sandbox allow-scripts")
    expect(await response.text()).toBe("region,amount\nEU,10\n")
    // A bearer token changes nothing, even one of another organization: the signature is the credential.
    const other = await server().newOrg("Other")
    expect((await server().request(url, { key: other.key })).status).toBe(200)
  })

  it("accepts the URLs Get Chat signs and serves stored bytes exactly, with their content type", async () => {
    const org = await server().newOrg()
    const { chatId } = await seedChat(server(), org, "q")
    const chat = await body(await server().request(`/v2/chats/${chatId}`, { key: org.key }))
    const chart = chat.assets.find((a: any) => a.name === "chart.png")
    const response = await server().request(chart.url)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("image/png")
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(chartBytes)
  })

  it("is 403 for an altered or expired signature, or one made with another key", async () => {
    const org = await server().newOrg()
    const { chartId, tableId } = await seedChat(server(), org, "q")
    const valid = new URL(await signWith({}, tableId), "http://x")
    const expires = valid.searchParams.get("expires")!
    const signature = valid.searchParams.get("signature")!
    const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1)
    const expired = await signWith({ ttlSeconds: -60 }, tableId)
    const foreignKey = await Effect.runPromise(
      Effect.flatMap(AssetUrls.make({ secret: Redacted.make("another-key") }), (urls) => urls.sign(tableId as never))
    )
    const urls = [
      `/v2/assets/${tableId}?expires=${expires}&signature=${flipped}`,
      `/v2/assets/${tableId}?expires=${Number(expires) + 3600}&signature=${signature}`,
      `/v2/assets/${chartId}?expires=${expires}&signature=${signature}`,
      `/v2/assets/${tableId}?expires=${expires}&signature=${signature.slice(0, 32)}`,
      `/v2/assets/${tableId}?expires=soon&signature=${signature}`,
      expired,
      foreignKey
    ]
    for (const url of urls) {
      const response = await server().request(url)
      expect([url, response.status]).toEqual([url, 403])
      expect((await body(response)).error.code).toBe("permission_denied")
    }
    // A well-signed URL for an asset that does not exist is 404; an unsigned one is 400.
    const ghost = crypto.randomUUID()
    expect(
      await statuses(server(), undefined, [
        ["GET", await signWith({}, ghost)],
        ["GET", `/v2/assets/${tableId}`],
        ["GET", `/v2/assets/${tableId}?expires=${expires}`]
      ])
    ).toEqual([
      ["GET", expect.any(String), 404, "not_found"],
      ["GET", `/v2/assets/${tableId}`, 400, "invalid_request"],
      ["GET", `/v2/assets/${tableId}?expires=${expires}`, 400, "invalid_request"]
    ])
  })
}, { assetSecret })
