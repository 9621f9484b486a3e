/**
 * End users' sessions over the socket (`POST /v2/embed/sessions`): a host's backend mints one per
 * end user with its key; the session chats and views what it names, from the origins it names, with
 * its own rows, and nothing more. Every refusal the embed issue lists is here, and CORS by origin.
 */
import { expect, it } from "vitest"
import { embeddingOrg } from "./utils/embed.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const host = "http://127.0.0.1:4801"
const elsewhere = "http://127.0.0.1:4802"

/** An organization that embeds from `host`. */
const embedding = (server: TestServer) => embeddingOrg(server, [host])

const mint = (server: TestServer, key: string, json: Record<string, unknown>) =>
  server.request("/v2/embed/sessions", { method: "POST", key, json: { allowed_origins: [host], ...json } })

const minted = async (server: TestServer, org: Org, json: Record<string, unknown>) => {
  const response = await mint(server, org.key, json)
  const answer = await body(response)
  expect(response.status, JSON.stringify(answer)).toBe(200)
  return answer as { token: string; expires_at: string; external_user_id: string }
}

/** A request as the widget in the host's page makes it. */
const asWidget = (server: TestServer, token: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  server.request(path, { ...init, key: token, headers: { origin: host, ...init.headers as Record<string, string> } })

/** The rows of the latest answer's table, as the end user reads them. */
const answerRows = async (server: TestServer, token: string, chatId: string) => {
  const cells = await body(await asWidget(server, token, `/v2/chats/${chatId}/cells`))
  const answer = cells.cells.find((cell: any) => cell.role === "assistant" && cell.type === "markdown")
  const rows = (answer.content as string).split("\n").filter((line) => line.startsWith("| ")).slice(2)
  return rows.map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim()))
}

const regionsOf = async (server: TestServer, token: string, chatId: string) =>
  (await answerRows(server, token, chatId)).map((row) => row[0]!).sort()

const amount = (text: string) => Number(text.replace(/,/g, ""))

const ask = (server: TestServer, token: string, question: string, chatId?: string) =>
  asWidget(server, token, "/v2/chats", {
    method: "POST",
    json: { question, ...(chatId === undefined ? {} : { chat_id: chatId }) }
  })

describeServers("/v2/embed", (server) => {
  it("two end users of one key each see their own rows and chats, and the host lists and forgets them", async () => {
    const { connectorId, org } = await embedding(server())
    const eu = await minted(server(), org, {
      external_user_id: "ana",
      client_attributes: { region: "EU" },
      connectors: [connectorId]
    })
    const na = await minted(server(), org, {
      external_user_id: "bo",
      client_attributes: { region: "NA" },
      connectors: [connectorId]
    })
    expect(eu.external_user_id).toBe("ana")
    const lifetime = Date.parse(eu.expires_at) - Date.now()
    expect(lifetime).toBeGreaterThan(14 * 60_000)
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000)

    const question = "What was revenue by region last year?"
    const asked = await Promise.all([ask(server(), eu.token, question), ask(server(), na.token, question)])
    const [euAnswer, naAnswer] = await Promise.all(asked.map((response) => body(response)))
    expect(asked.map((response) => response.status), JSON.stringify(euAnswer)).toEqual([200, 200])
    expect(await regionsOf(server(), eu.token, euAnswer.chat_id)).toEqual(["Europe"])
    const europeTotal = amount((await answerRows(server(), eu.token, euAnswer.chat_id))[0]![1]!)
    expect(await regionsOf(server(), na.token, naAnswer.chat_id)).toEqual(["North America"])

    // A follow-up continues the end user's own chat.
    const followUp = await ask(server(), eu.token, "and per channel?", euAnswer.chat_id)
    expect(followUp.status).toBe(200)
    const perChannel = await body(followUp)
    expect(perChannel.chat_id).toBe(euAnswer.chat_id)
    const channels = await answerRows(server(), eu.token, euAnswer.chat_id)
    expect(channels.length).toBeGreaterThan(1)
    expect(channels.reduce((sum, row) => sum + amount(row[1]!), 0)).toBeCloseTo(europeTotal, 0)

    // Neither reaches the other's chat, even with its id, nor lists it.
    expect((await asWidget(server(), na.token, `/v2/chats/${euAnswer.chat_id}`)).status).toBe(404)
    expect((await ask(server(), na.token, "and in Asia?", euAnswer.chat_id)).status).toBe(404)
    const listed = await body(await asWidget(server(), eu.token, "/v2/chats?external_user_id=bo"))
    expect(listed.chats.map((chat: any) => chat.id)).toEqual([euAnswer.chat_id])

    // The host's key lists each end user's chats, and not among its own.
    const ofAna = await body(await server().request("/v2/chats?external_user_id=ana", { key: org.key }))
    expect(ofAna.chats.map((chat: any) => chat.id)).toEqual([euAnswer.chat_id])
    const own = await body(await server().request("/v2/chats", { key: org.key }))
    expect(own.chats.map((chat: any) => chat.id)).not.toContain(euAnswer.chat_id)

    // The host forgets ana: her chats go, bo's stay.
    const forgotten = await server().request("/v2/embed/users/ana/chats", { method: "DELETE", key: org.key })
    expect(await body(forgotten)).toEqual({ deleted: 1 })
    expect((await body(await asWidget(server(), eu.token, "/v2/chats"))).total_count).toBe(0)
    expect((await asWidget(server(), eu.token, `/v2/chats/${euAnswer.chat_id}`)).status).toBe(404)
    expect((await body(await asWidget(server(), na.token, "/v2/chats"))).total_count).toBe(1)
    // An end user cannot forget anyone, itself included.
    expect((await asWidget(server(), na.token, "/v2/embed/users/bo/chats", { method: "DELETE" })).status).toBe(403)
  })

  it("keeps apart the end users of one id that two host tenants' keys minted", async () => {
    const { org } = await embedding(server())
    const tenantKey = async (tenant: string) =>
      (await body(
        await server().request("/v2/api-keys", {
          method: "POST",
          key: org.key,
          json: { inheritAllRoles: true, name: tenant, expirySeconds: 3600, clientId: JSON.stringify({ tenant }) }
        })
      )).key as string
    const [a, b] = [await tenantKey("a"), await tenantKey("b")]
    const sessionOf = async (key: string) =>
      (await body(await mint(server(), key, { external_user_id: "u1", client_attributes: { region: "EU" } })))
        .token as string
    const [ofA, ofB] = [await sessionOf(a), await sessionOf(b)]
    const chatOfA = (await body(await ask(server(), ofA, "What was revenue by region last year?"))).chat_id
    expect((await asWidget(server(), ofB, `/v2/chats/${chatOfA}`)).status).toBe(404)
    expect((await body(await asWidget(server(), ofB, "/v2/chats"))).total_count).toBe(0)
    expect((await body(await asWidget(server(), ofA, "/v2/chats"))).total_count).toBe(1)
    // Each tenant's key lists its own u1's chats only.
    const listed = async (key: string) =>
      (await body(await server().request("/v2/chats?external_user_id=u1", { key }))).chats.map((c: any) => c.id)
    expect(await listed(a)).toEqual([chatOfA])
    expect(await listed(b)).toEqual([])
    expect(await body(await server().request("/v2/embed/users/u1/chats", { method: "DELETE", key: b }))).toEqual({
      deleted: 0
    })
    expect(await listed(a)).toEqual([chatOfA])
  })

  it("views only the dashboards it names, with its own rows, and describes its session", async () => {
    const { connectorId, org } = await embedding(server())
    const session = await minted(server(), org, {
      external_user_id: "cy",
      client_attributes: { region: "EU" },
      dashboards: ["sales"]
    })
    const list = await body(await asWidget(server(), session.token, "/v2/dashboards"))
    expect(list.dashboards.map((d: any) => d.name)).toEqual(["sales"])
    expect((await asWidget(server(), session.token, "/v2/dashboards/hidden")).status).toBe(404)
    const tiles = await body(
      await asWidget(server(), session.token, "/v2/dashboards/sales/query", { method: "POST", json: {} })
    )
    expect(tiles.tiles[0].status).toBe("ok")
    expect(tiles.tiles[0].rows.map((row: ReadonlyArray<unknown>) => row[0])).toEqual(["Europe"])

    const info = await body(await asWidget(server(), session.token, "/v2/embed/session"))
    expect(info).toMatchObject({
      external_user_id: "cy",
      connectors: [{ id: connectorId, name: "Demo retail" }],
      dashboards: [{ name: "sales", title: "Sales" }]
    })
    expect(info.suggestions.length).toBeGreaterThan(0)
    // The host's key describes no end user's session.
    expect((await server().request("/v2/embed/session", { key: org.key })).status).toBe(403)
  })

  it("mints only for a key, within the key and the organization's origins", async () => {
    const { connectorId, org } = await embedding(server())
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ external_user_id: "x", allowed_origins: [elsewhere] }, /allowed_origins: .*4802 is not among/],
      [{ external_user_id: "x", allowed_origins: ["http://127.0.0.1:4801/path"] }, /an origin is a scheme/],
      [{ external_user_id: "x", allowed_origins: [] }, /at least one origin/],
      [{ external_user_id: "x", ttl_seconds: 7200 }, /ttl_seconds must be between 60 and 3600/],
      [{ external_user_id: "" }, /external_user_id must not be empty/],
      [{ external_user_id: "x", connectors: [connectorId + 1000] }, /connectors: connector .* not found/],
      [{ external_user_id: "x", dashboards: ["nope"] }, /dashboards: no dashboard named nope/],
      [{ external_user_id: "x", models: ["no-such-model"] }, /models: no-such-model not available/],
      [{ external_user_id: "x", role: "admin" }, /role/]
    ]
    for (const [json, message] of refusals) {
      const response = await mint(server(), org.key, json)
      const answer = await body(response)
      expect(response.status, JSON.stringify(json)).toBe(400)
      expect(answer.error.code).toBe("invalid_request")
      expect(answer.error.message).toMatch(message)
    }

    // A key's own client attributes cannot be changed by the session; they are added to.
    const keyed = await body(
      await server().request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "tenant", expirySeconds: 120, clientId: "{\"region\":\"EU\"}" }
      })
    )
    const clash = await mint(server(), keyed.key, { external_user_id: "x", client_attributes: { region: "NA" } })
    expect(clash.status).toBe(400)
    expect((await body(clash)).error.message).toMatch(/client_attributes: region is set by the key/)
    // It ends no later than its key, whatever it asks for.
    const short = await body(await mint(server(), keyed.key, { external_user_id: "x", ttl_seconds: 3600 }))
    expect(Date.parse(short.expires_at)).toBeLessThanOrEqual(Date.now() + 120_000)

    // An end user's session mints nothing.
    const session = await minted(server(), org, { external_user_id: "x" })
    const again = await asWidget(server(), session.token, "/v2/embed/sessions", {
      method: "POST",
      json: { external_user_id: "y", allowed_origins: [host] }
    })
    expect(again.status).toBe(403)
    // Without a key: 401.
    expect((await server().request("/v2/embed/sessions", { method: "POST", json: {} })).status).toBe(401)
  })

  it("refuses a session from another origin, on management routes, for its own SQL, tampered, or past its key", async () => {
    const { connectorId, org } = await embedding(server())
    const key = await body(
      await server().request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "host", expirySeconds: 3600 }
      })
    )
    const session = await minted(server(), { ...org, key: key.key }, {
      external_user_id: "dee",
      client_attributes: { region: "EU" }
    })
    expect((await asWidget(server(), session.token, "/v2/chats")).status).toBe(200)

    // From a page of another origin, or from no page at all.
    const foreign = await server().request("/v2/chats", { key: session.token, headers: { origin: elsewhere } })
    expect(foreign.status).toBe(403)
    expect((await body(foreign)).error.message).toMatch(/not for use from http:\/\/127\.0\.0\.1:4802/)
    expect((await server().request("/v2/chats", { key: session.token })).status).toBe(403)

    // Management, raw SQL and the other surfaces are closed to it.
    for (
      const [path, init] of [
        ["/v2/api-keys", {}],
        ["/v2/connectors", {}],
        ["/v2/organization/settings", {}],
        ["/v2/members", {}],
        ["/v2/playbooks", {}],
        ["/v2/semantic/query", {
          method: "POST",
          json: { connector_id: connectorId, query: { metrics: ["revenue"] } }
        }],
        [`/v2/connectors/${connectorId}/semantic-model`, {}]
      ] as const
    ) {
      const response = await asWidget(server(), session.token, path, init)
      expect(response.status, path).toBe(403)
      expect((await body(response)).error.message).toMatch(/end user's session can only chat/)
    }
    // MCP does not take it.
    const mcp = await server().request("/mcp", {
      method: "POST",
      key: session.token,
      headers: { origin: host, accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" }
    })
    expect(mcp.status).toBe(401)

    // A changed byte of the token is refused.
    const parts = session.token.split(".")
    const last = parts[4]!
    parts[4] = (last[0] === "A" ? "B" : "A") + last.slice(1)
    expect((await asWidget(server(), parts.join("."), "/v2/chats")).status).toBe(401)

    // Taking the origin off the organization's list ends its sessions.
    await server().request("/v2/organization/settings", {
      method: "PATCH",
      key: org.key,
      json: { embed_origins: [elsewhere] }
    })
    expect((await asWidget(server(), session.token, "/v2/chats")).status).toBe(403)
    await server().request("/v2/organization/settings", {
      method: "PATCH",
      key: org.key,
      json: { embed_origins: [host] }
    })
    expect((await asWidget(server(), session.token, "/v2/chats")).status).toBe(200)

    // Revoking the key ends them at once.
    const revoked = await server().request(`/v2/api-keys/${key.api_key.id}`, { method: "DELETE", key: org.key })
    expect(revoked.status).toBe(200)
    const after = await asWidget(server(), session.token, "/v2/chats")
    expect(after.status).toBe(401)
    expect((await body(after)).error.message).toMatch(/session has ended/)
  })

  it("answers CORS for end users' routes from any origin, and for the rest only from configured ones", async () => {
    const preflight = (path: string, method: string) =>
      server().request(path, {
        method: "OPTIONS",
        headers: {
          origin: host,
          "access-control-request-method": method,
          "access-control-request-headers": "authorization"
        }
      })
    const chats = await preflight("/v2/chats/stream", "POST")
    expect(chats.headers.get("access-control-allow-origin")).toBe(host)
    expect(chats.headers.get("access-control-allow-headers")).toMatch(/authorization/)
    const keys = await preflight("/v2/api-keys", "POST")
    expect(keys.headers.get("access-control-allow-origin")).toBeNull()
    const ownSettings = await preflight("/v2/organization/settings", "PATCH")
    expect(ownSettings.headers.get("access-control-allow-origin")).toBeNull()
  })
})
