/**
 * The MCP server at `/mcp`, driven by the official MCP TypeScript client over a real socket, on
 * PGlite and PostgreSQL: the tools it lists and what each answers, the caller's permissions and
 * key, the audit, and bad input answered as protocol errors, never a 5xx.
 */
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2
} from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as NodeHttp from "node:http"
import { afterEach, expect, it } from "vitest"
import { demoConnector, mergeFiles } from "./utils/content.js"
import { scopedKey } from "./utils/members.js"
import { body, describeServers, postgresProblem, type TestServer } from "./utils/server.js"
import { createSales, regionPolicy, withWarehouse } from "./utils/warehouse.js"

const clients: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
})

/** An MCP client of the server with `key` as its bearer token. */
const connect = async (server: TestServer, key: string) => {
  const client = new Client({ name: "sightline-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } }
  })
  // Closed after the test even when connecting fails: an open client would keep the server up.
  clients.push(client)
  await client.connect(transport)
  return client
}

/** A tool's structured result, failing the test with its text when the tool answered an error. */
const structured = (result: Awaited<ReturnType<Client["callTool"]>>): any => {
  if (result.isError === true) throw new Error(`the tool failed: ${JSON.stringify(result.content)}`)
  const [first] = result.content as Array<{ type: string; text: string }>
  expect(JSON.parse(first!.text)).toEqual(result.structuredContent)
  return result.structuredContent
}

const errorText = (result: Awaited<ReturnType<Client["callTool"]>>): string => {
  expect(result.isError).toBe(true)
  return (result.content as Array<{ text: string }>)[0]!.text
}

/** A raw JSON-RPC POST to `/mcp`. */
const post = (server: TestServer, key: string | undefined, payload: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...headers
    },
    body: typeof payload === "string" ? payload : JSON.stringify(payload)
  })

const listTools = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }

describeServers("the MCP server", (server) => {
  it("lists its tools, and each answers as its endpoint does, for the caller", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const client = await connect(server(), org.key)
    expect(client.getServerVersion()?.name).toBe("sightline")

    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(
      [
        "list_connectors",
        "describe_data",
        "query_metrics",
        "investigate",
        "list_dashboards",
        "query_dashboard",
        "run_verified_query",
        "run_sql",
        "search_library",
        "read_library_file",
        "list_playbooks",
        "run_playbook",
        "ask"
      ]
    )
    const askTool = tools.find((tool) => tool.name === "ask")!
    // A question, or the choice of a clarification (with its chat).
    expect(askTool.inputSchema).toMatchObject({ type: "object" })
    expect(Object.keys((askTool.inputSchema as any).properties)).toEqual([
      "question",
      "connector_ids",
      "chat_id",
      "choice"
    ])
    expect((askTool.inputSchema as any).required ?? []).toEqual([])
    expect(JSON.stringify(tools)).not.toContain("$ref")

    const listed = structured(await client.callTool({ name: "list_connectors", arguments: {} }))
    expect(listed.connectors).toContainEqual({ id: connectorId, name: "Demo retail", type: "DEMO" })

    const described = structured(
      await client.callTool({
        name: "describe_data",
        arguments: { connector_id: connectorId }
      })
    )
    expect(described.source.kind).toBe("library")
    expect(JSON.stringify(described.model)).toContain("revenue")

    const queried = structured(
      await client.callTool({
        name: "query_metrics",
        arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["region"] }
      })
    )
    const semantic = await body(
      await server().request("/v2/semantic/query", {
        method: "POST",
        key: org.key,
        json: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["region"] }
      })
    )
    expect(queried.rows).toEqual(semantic.rows)
    expect(queried.rows.length).toBeGreaterThan(1)

    // Where revenue changed from one year to the next: its totals are the semantic query's, by year.
    const year = new Date().getUTCFullYear() - 1
    const investigated = structured(
      await client.callTool({
        name: "investigate",
        arguments: {
          connector_id: connectorId,
          metric: "revenue",
          period: { start: `${year}-01-01`, end: `${year + 1}-01-01` },
          compared_with: { start: `${year - 1}-01-01`, end: `${year}-01-01` },
          drivers: ["region", "channel"]
        }
      })
    )
    const yearly = await body(
      await server().request("/v2/semantic/query", {
        method: "POST",
        key: org.key,
        json: { connector_id: connectorId, metrics: ["revenue"], time: { grain: "year", start: `${year - 1}-01-01` } }
      })
    )
    expect(investigated.total.before).toBeCloseTo(Number(yearly.rows[0][1]), 2)
    expect(investigated.total.after).toBeCloseTo(Number(yearly.rows[1][1]), 2)
    expect(investigated.steps.map((step: any) => step.id)).toEqual(
      expect.arrayContaining(["total", "by_region", "by_channel"])
    )
    const byRegion = investigated.steps.find((step: any) => step.id === "by_region")
    expect(byRegion.parts.reduce((sum: number, part: any) => sum + part.change, 0)).toBeCloseTo(
      investigated.total.change,
      2
    )
    expect(investigated.summary).toContain("the data does not say why")
    expect(errorText(
      await client.callTool({
        name: "investigate",
        arguments: {
          connector_id: connectorId,
          metric: "revenue_share",
          period: { start: `${year}-01-01`, end: `${year + 1}-01-01` }
        }
      })
    )).toContain("is not a sum, a count")

    const ran = structured(
      await client.callTool({
        name: "run_sql",
        arguments: { connector_id: connectorId, sql: "SELECT name FROM regions ORDER BY name", max_rows: 2 }
      })
    )
    expect(ran.columns.map((column: any) => column.name)).toEqual(["name"])
    expect(ran.rows).toHaveLength(2)
    expect(ran.truncated).toBe(true)
    // Read-only, enforced by the database: a write is a tool error, and nothing changed.
    expect(errorText(
      await client.callTool({
        name: "run_sql",
        arguments: { connector_id: connectorId, sql: "DELETE FROM regions" }
      })
    )).toMatch(/read-only|query failed/i)
    expect(
      structured(
        await client.callTool({
          name: "run_sql",
          arguments: { connector_id: connectorId, sql: "SELECT count(*) AS n FROM regions" }
        })
      ).rows[0][0]
    ).toBeGreaterThan(0)

    const asked = structured(
      await client.callTool({
        name: "ask",
        arguments: { question: "What were the top 5 products by revenue last year?", connector_ids: [connectorId] }
      })
    )
    expect(asked.chat_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(asked.answer).toMatch(/I read this as/)
    expect(asked.sql).toMatch(/SELECT/i)
    expect(asked.rows).toHaveLength(5)
    expect(asked.reading).toMatch(/revenue/i)
    // The same answer the API gives: the chat is the caller's, with the question and the answer.
    const chat = await body(await server().request(`/v2/chats/${asked.chat_id}`, { key: org.key }))
    expect(chat.messages.map((message: any) => message.role)).toEqual(["user", "assistant"])
    expect(chat.messages[1].content).toBe(asked.answer)

    // A question it cannot place is a plain answer that says so, not a tool error.
    const declined = structured(
      await client.callTool({
        name: "ask",
        arguments: { question: "How many unicorns did we sell?", connector_ids: [connectorId] }
      })
    )
    expect(declined.answer).toMatch(/unicorn/i)

    // A question that could mean several rows asks back: its choices are in the structured result,
    // and `choice` with the chat answers the one meant.
    const top = structured(
      await client.callTool({
        name: "ask",
        arguments: { question: "Top 3 regions by revenue last year", connector_ids: [connectorId] }
      })
    )
    const unclear = structured(
      await client.callTool({
        name: "ask",
        arguments: { question: "how many orders did it get last year?", chat_id: top.chat_id }
      })
    )
    expect(unclear.clarification.question).toBe("Which region do you mean by \"it\"?")
    expect(unclear.clarification.choices.map((choice: any) => choice.label)).toEqual(
      top.rows.map((row: ReadonlyArray<unknown>) => row[0])
    )
    expect(unclear.rows).toBeUndefined()
    const chosen = structured(
      await client.callTool({ name: "ask", arguments: { chat_id: top.chat_id, choice: "3" } })
    )
    expect(chosen.answer).toContain(`I took "third one" for "${top.rows[2][0]}"`)
    expect(chosen.rows).toHaveLength(1)
    expect(errorText(await client.callTool({ name: "ask", arguments: { choice: "1" } })))
      .toMatch(/choice answers the clarification of chat_id/)

    // The Context Library, as the caller may read it.
    const searched = structured(await client.callTool({ name: "search_library", arguments: { query: "revenue" } }))
    expect(searched.files.map((file: any) => file.path)).toContain("semantic/demo.yaml")
    const read = structured(
      await client.callTool({
        name: "read_library_file",
        arguments: { path: "semantic/demo.yaml" }
      })
    )
    expect(read.content).toContain("revenue")
    expect(errorText(await client.callTool({ name: "read_library_file", arguments: { path: "nowhere.sql" } })))
      .toMatch(/no file nowhere.sql/)

    // Playbooks: listed, and run (here a dry run, which checks it could run).
    const created = await body(await server().request("/v2/playbooks", { method: "POST", key: org.key }))
    await server().request(`/v2/playbooks/${created.id}`, {
      method: "PATCH",
      key: org.key,
      json: { name: "Top products", prompt: "Top 5 products by revenue last year", connector_ids: [connectorId] }
    })
    const playbooks = structured(await client.callTool({ name: "list_playbooks", arguments: {} }))
    expect(playbooks.playbooks).toContainEqual(expect.objectContaining({ id: created.id, name: "Top products" }))
    expect(structured(
      await client.callTool({
        name: "run_playbook",
        arguments: { playbook_id: created.id, dry_run: true }
      })
    )).toEqual({ playbook_id: created.id, dry_run: true, valid: true })

    // Every call is in the audit log, with the key that made it.
    const audit = await body(await server().request("/v2/audit-logs?page_size=50", { key: org.key }))
    const calls = audit.entries.filter((entry: any) => entry.action === "mcp.tool_call")
    expect(calls.map((entry: any) => entry.details.tool).sort()).toEqual(
      [
        // Two questions, the conversation with its clarification and choice, and the refused choice.
        ...Array.from({ length: 6 }, () => "ask"),
        "describe_data",
        "investigate",
        "investigate",
        "list_connectors",
        "list_playbooks",
        "query_metrics",
        "read_library_file",
        "read_library_file",
        "run_playbook",
        "run_sql",
        "run_sql",
        "run_sql",
        "search_library"
      ]
    )
    expect(calls[0]).toMatchObject({ actor_id: org.memberId, auth_method: "api_key" })
    expect(calls[0].details.api_key_id).toMatch(/^[0-9a-f-]{36}$/)
  }, 120_000)

  it("pages large results with a continuation token, and runs verified queries as the API does", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const client = await connect(server(), org.key)

    // run_sql: max_rows is the page; the pages together are the whole ordered result.
    const sql = "SELECT name FROM regions ORDER BY name"
    const all = structured(await client.callTool({ name: "run_sql", arguments: { connector_id: connectorId, sql } }))
    expect(all.next_cursor).toBeUndefined()
    const pages: Array<Array<unknown>> = []
    let cursor: string | undefined
    do {
      const page = structured(
        await client.callTool({
          name: "run_sql",
          arguments: { connector_id: connectorId, sql, max_rows: 2, ...(cursor === undefined ? {} : { cursor }) }
        })
      )
      expect(page.rows.length).toBeLessThanOrEqual(2)
      pages.push(page.rows)
      cursor = page.next_cursor
    } while (cursor !== undefined)
    expect(pages.length).toBeGreaterThan(1)
    expect(pages.flat()).toEqual(all.rows)
    // A token pages only the arguments it came from.
    const first = structured(
      await client.callTool({ name: "run_sql", arguments: { connector_id: connectorId, sql, max_rows: 2 } })
    )
    expect(errorText(
      await client.callTool({
        name: "run_sql",
        arguments: { connector_id: connectorId, sql: "SELECT 1", max_rows: 2, cursor: first.next_cursor }
      })
    )).toMatch(/cursor: not a cursor of these arguments/)
    expect(errorText(
      await client.callTool({ name: "run_sql", arguments: { connector_id: connectorId, sql, cursor: "garbage" } })
    )).toMatch(/cursor/)

    // query_metrics: pages of 100 rows, together the API's rows.
    const query = { connector_id: connectorId, metrics: ["revenue"], dimensions: ["customer"] }
    const whole = await body(
      await server().request("/v2/semantic/query", { method: "POST", key: org.key, json: query })
    )
    expect(whole.rows.length).toBeGreaterThan(100)
    const metricPages: Array<any> = []
    cursor = undefined
    do {
      const page = structured(
        await client.callTool({
          name: "query_metrics",
          arguments: { ...query, ...(cursor === undefined ? {} : { cursor }) }
        })
      )
      metricPages.push(page)
      cursor = page.next_cursor
    } while (cursor !== undefined)
    expect(metricPages[0].rows).toHaveLength(100)
    expect(metricPages[0].reading.text).toBe(whole.reading.text)
    expect(metricPages.flatMap((page) => page.rows)).toEqual(whole.rows)

    // run_verified_query: the same rows as POST /v2/semantic/verified-query, with what vouches for them.
    const verified = { connector_id: connectorId, name: "revenue_by_month", params: { year: 2025 } }
    const api = await body(
      await server().request("/v2/semantic/verified-query", { method: "POST", key: org.key, json: verified })
    )
    expect(api.rows).toHaveLength(12)
    const ran = structured(await client.callTool({ name: "run_verified_query", arguments: verified }))
    expect(ran.rows).toEqual(api.rows)
    expect(ran.question).toBe("What was revenue by month in a given year?")
    expect(ran.trusted).toMatchObject({ kind: "verified_query", name: "revenue_by_month", path: "semantic/demo.yaml" })
    expect(errorText(
      await client.callTool({ name: "run_verified_query", arguments: { connector_id: connectorId, name: "nope" } })
    )).toMatch(/no verified query named nope/)
    expect(errorText(
      await client.callTool({
        name: "run_verified_query",
        arguments: { connector_id: connectorId, name: "revenue_by_month" }
      })
    )).toMatch(/missing values for parameters: year/)
  }, 120_000)

  it("lists the dashboards the caller may read, and runs one's tiles under the caller's filters", async () => {
    const org = await server().newOrg()
    await demoConnector(server(), org)
    await mergeFiles(server(), org, {
      "dashboards/channels.yaml": `title: Channels
connector: Demo retail
filters:
  dimensions: [{ dimension: channel }]
tiles:
  - title: Orders by channel
    query: { semantic: { metrics: [orders], dimensions: [channel] } }
    visualization: { type: bar }
    layout: { x: 0, y: 0, w: 6, h: 4 }
`
    })
    const client = await connect(server(), org.key)
    const listed = structured(await client.callTool({ name: "list_dashboards", arguments: {} }))
    expect(listed.dashboards).toEqual([
      { name: "channels", path: "dashboards/channels.yaml", title: "Channels", connector: "Demo retail", tiles: 1 }
    ])
    const all = structured(await client.callTool({ name: "query_dashboard", arguments: { name: "channels" } }))
    expect(all.tiles[0].rows.map((row: Array<unknown>) => row[0]).sort()).toEqual(["partner", "store", "web"])
    expect(all.tiles[0].reading.text).toMatch(/^Orders .* by channel/)
    expect(all.tiles[0]).not.toHaveProperty("chart")
    const web = structured(
      await client.callTool({
        name: "query_dashboard",
        arguments: { name: "channels", filters: { dimensions: { channel: ["web"] } } }
      })
    )
    expect(web.tiles[0].rows).toEqual([all.tiles[0].rows.find((row: Array<unknown>) => row[0] === "web")])
    expect(errorText(await client.callTool({ name: "query_dashboard", arguments: { name: "nowhere" } })))
      .toContain("no dashboard named nowhere")
  })

  it("lets an admin turn run_sql off for the organization: it is no longer listed, and refused", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    expect(await body(await server().request("/v2/organization/settings", { key: org.key }))).toEqual({
      mcp_run_sql: true,
      embed_origins: []
    })
    // Only an admin changes settings, and a setting must be one there is.
    const member = await scopedKey(server(), org, ["chat:read", "chat:write", "connector:read"])
    const denied = await server().request("/v2/organization/settings", {
      method: "PATCH",
      key: member.key,
      json: { mcp_run_sql: false }
    })
    expect(denied.status).toBe(403)
    const unknown = await server().request("/v2/organization/settings", {
      method: "PATCH",
      key: org.key,
      json: { mcp_run_python: false }
    })
    expect(unknown.status).toBe(400)
    const off = await server().request("/v2/organization/settings", {
      method: "PATCH",
      key: org.key,
      json: { mcp_run_sql: false }
    })
    expect(off.status).toBe(200)
    expect(await body(off)).toEqual({ mcp_run_sql: false, embed_origins: [] })

    const client = await connect(server(), org.key)
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).not.toContain("run_sql")
    expect(names).toContain("query_metrics")
    expect(errorText(
      await client.callTool({ name: "run_sql", arguments: { connector_id: connectorId, sql: "SELECT 1" } })
    )).toMatch(/turned off for this organization/)
    // Other organizations keep theirs.
    const other = await server().newOrg("Other")
    expect((await (await connect(server(), other.key)).listTools()).tools.map((tool) => tool.name)).toContain(
      "run_sql"
    )
    const audit = await body(
      await server().request("/v2/audit-logs?action=organization.settings_update", { key: org.key })
    )
    expect(audit.entries).toHaveLength(1)
    expect(audit.entries[0].details).toEqual({ mcp_run_sql: false })
    await server().request("/v2/organization/settings", { method: "PATCH", key: org.key, json: { mcp_run_sql: true } })
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("run_sql")
  }, 60_000)

  it(
    "speaks the stateless revision (2026-07-28) to a client that asks for it, and the 2025 ones to others",
    async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const modern = (mode: "auto" | { readonly pin: string }) => {
        const client = new ClientV2({ name: "sightline-test-v2", version: "1.0.0" }, { versionNegotiation: { mode } })
        clients.push(client)
        return client.connect(
          new StreamableHTTPClientTransportV2(new URL(`${server().baseUrl}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${org.key}` } }
          })
        ).then(() => client)
      }
      const pinned = await modern({ pin: "2026-07-28" })
      expect(pinned.getNegotiatedProtocolVersion()).toBe("2026-07-28")
      expect((await pinned.listTools()).tools.map((tool) => tool.name)).toContain("run_verified_query")
      const queried = await pinned.callTool({
        name: "query_metrics",
        arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["region"] }
      })
      expect(queried.isError).toBeFalsy()
      expect((queried.structuredContent as any).rows.length).toBeGreaterThan(1)
      // Progress reaches a modern client too: the answer upgrades to an event stream.
      const progress: Array<unknown> = []
      const asked = await pinned.callTool(
        { name: "ask", arguments: { question: "revenue by region", connector_ids: [connectorId] } },
        { onprogress: (notification) => progress.push(notification) }
      )
      expect(asked.isError).toBeFalsy()
      expect(progress.length).toBeGreaterThan(1)
      // A client that negotiates finds the stateless revision; a 2025 client still gets its own.
      expect((await modern("auto")).getNegotiatedProtocolVersion()).toBe("2026-07-28")
      const legacy = await connect(server(), org.key)
      expect(legacy.getServerVersion()?.name).toBe("sightline")
    },
    60_000
  )

  it("reports an answer's progress as its steps run, and gives its chart beside the table", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const client = await connect(server(), org.key)
    const progress: Array<{ progress: number; message?: string | undefined }> = []
    const result = await client.callTool(
      { name: "ask", arguments: { question: "revenue by region", connector_ids: [connectorId] } },
      undefined,
      { onprogress: (notification) => progress.push(notification) }
    )
    const asked = structured(result)
    expect(asked.rows.length).toBeGreaterThan(1)
    expect(progress.length).toBeGreaterThan(1)
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1))
    expect(progress.some((p) => /^sql (running|completed)/.test(p.message ?? ""))).toBe(true)
    // The chart, rendered to PNG (the server renders charts; without a renderer it is the Vega-Lite spec).
    expect(asked.chart.title).toEqual(expect.any(String))
    const chart = (result.content as Array<any>)[1]
    expect(chart).toMatchObject({ type: "image", mimeType: "image/png" })
    expect(Buffer.from(chart.data, "base64").subarray(1, 4).toString()).toBe("PNG")
  }, 60_000)

  it.skipIf(postgresProblem !== undefined)(
    "a key with clientId {\"region\":\"EU\"} sees EU rows only, through query_metrics, investigate, run_sql and ask",
    async () => {
      const org = await server().newOrg()
      await withWarehouse(
        server(),
        org,
        (schema) => [...createSales(`${schema}.secured`), ...regionPolicy(`${schema}.secured`)],
        async ({ connectorId, euKey, schema }) => {
          const client = await connect(server(), euKey)
          const described = structured(
            await client.callTool({
              name: "describe_data",
              arguments: { connector_id: connectorId }
            })
          )
          expect(described.source.kind).toBe("derived")
          // The policy lets the key's signed region through, and nothing else.
          const queried = structured(
            await client.callTool({
              name: "query_metrics",
              arguments: { connector_id: connectorId, metrics: ["amount"], dimensions: ["region"] }
            })
          )
          expect(queried.rows).toEqual([["EU", 15]])
          // An investigation sees the key's region only: its parts and its total are EU's.
          const investigated = structured(
            await client.callTool({
              name: "investigate",
              arguments: { connector_id: connectorId, metric: "amount", drivers: ["region"] }
            })
          )
          expect(investigated.total.after).toBe(15)
          expect(
            investigated.steps.find((step: any) => step.id === "by_region").parts.map((
              part: any
            ) => [part.value, part.after])
          ).toEqual([["EU", 15]])
          expect(
            structured(
              await client.callTool({
                name: "run_sql",
                arguments: {
                  connector_id: connectorId,
                  sql: `SELECT region, sum(amount) FROM ${schema}.secured GROUP BY 1`
                }
              })
            ).rows
          ).toEqual([["EU", 15]])
          const asked = structured(
            await client.callTool({
              name: "ask",
              arguments: { question: "amount by region", connector_ids: [connectorId] }
            })
          )
          expect(asked.rows).toEqual([["EU", 15]])
          expect(JSON.stringify(asked)).not.toMatch(/"(US|APAC)"/)
          // Where the database does not enforce the attributes (the DEMO connector), the key writes no SQL.
          const demo = await demoConnector(server(), org)
          expect(errorText(
            await client.callTool({
              name: "run_sql",
              arguments: { connector_id: demo, sql: "SELECT count(*) FROM orders" }
            })
          )).toMatch(/does not enforce this key's client attributes/)
          // Another customer's key, the same tool: that customer's rows.
          const us = await body(
            await server().request("/v2/api-keys", {
              method: "POST",
              key: org.key,
              json: { inheritAllRoles: true, name: "us", clientId: "{\"region\":\"US\"}" }
            })
          )
          const usClient = await connect(server(), us.key)
          expect(
            structured(
              await usClient.callTool({
                name: "query_metrics",
                arguments: { connector_id: connectorId, metrics: ["amount"], dimensions: ["region"] }
              })
            ).rows
          ).toEqual([["US", 20]])
        }
      )
    }
  )

  it(
    "a tool the caller's roles do not allow is a tool error that shows no data; another org's connector is unknown",
    async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const other = await server().newOrg("Other")
      const client = await connect(server(), other.key)
      expect(errorText(await client.callTool({ name: "describe_data", arguments: { connector_id: connectorId } })))
        .not.toContain("revenue")
      const queried = await client.callTool({
        name: "query_metrics",
        arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["region"] }
      })
      expect(errorText(queried)).not.toMatch(/\d{4,}/)
      expect(structured(await client.callTool({ name: "list_connectors", arguments: {} })).connectors).not
        .toContainEqual(expect.objectContaining({ id: connectorId }))

      // A key whose role cannot read connectors.
      const narrow = await scopedKey(server(), org, ["chat:read"])
      const limited = await connect(server(), narrow.key)
      expect(errorText(await limited.callTool({ name: "list_connectors", arguments: {} }))).toMatch(/permission/i)
    },
    60_000
  )

  it("refuses without a key, with a revoked key, and from another site's page, with a challenge and no OAuth metadata", async () => {
    const org = await server().newOrg()
    const none = await post(server(), undefined, listTools)
    expect(none.status).toBe(401)
    expect(none.headers.get("www-authenticate")).toBe("Bearer realm=\"sightline\"")
    expect(none.headers.get("www-authenticate")).not.toContain("resource_metadata")
    expect(((await none.json()) as any).error.message).toMatch(/Authentication required/)
    expect((await fetch(`${server().baseUrl}/.well-known/oauth-protected-resource`)).status).toBe(404)

    const minted = await body(
      await server().request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "to revoke" }
      })
    )
    expect((await post(server(), minted.key, listTools)).status).toBe(200)
    const revoked = await server().request(`/v2/api-keys/${minted.api_key.id}`, { method: "DELETE", key: org.key })
    expect(revoked.status).toBe(200)
    const refused = await post(server(), minted.key, listTools)
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/)

    const foreign = await post(server(), org.key, listTools, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    const own = await post(server(), org.key, listTools, { origin: server().baseUrl })
    expect(own.status).toBe(200)
    // DNS rebinding: a foreign page whose name now resolves to this server sends its own name as
    // both `Origin` and `Host`; the origin is still not the deployment's.
    const port = new URL(server().baseUrl).port
    const rebound = await new Promise<number>((resolve, reject) => {
      const sent = JSON.stringify(listTools)
      const request = NodeHttp.request({
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          host: `rebound.example:${port}`,
          origin: `http://rebound.example:${port}`,
          authorization: `Bearer ${org.key}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(sent)
        }
      }, (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      })
      request.on("error", reject)
      request.end(sent)
    })
    expect(rebound).toBe(403)
    // Stateless: no server stream to open, no session to end.
    for (const method of ["GET", "DELETE"]) {
      const other = await fetch(`${server().baseUrl}/mcp`, { method, headers: { authorization: `Bearer ${org.key}` } })
      expect(other.status).toBe(405)
      expect(other.headers.get("allow")).toBe("POST")
    }
  })

  it(
    "serves local agents over stdio (`sightline mcp`), relayed to the server with the key in SVC_API_KEY",
    async () => {
      const org = await server().newOrg()
      const connectorId = await demoConnector(server(), org)
      const bin = new URL("../dist/bin.js", import.meta.url).pathname
      const stdio = (key: string) => {
        const client = new Client({ name: "sightline-stdio-test", version: "1.0.0" })
        clients.push(client)
        return client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [bin, "mcp", "--url", server().baseUrl],
            env: { PATH: process.env.PATH ?? "", SVC_API_KEY: key },
            stderr: "pipe"
          })
        ).then(() => client)
      }
      const client = await stdio(org.key)
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("query_metrics")
      const listed = structured(await client.callTool({ name: "list_connectors", arguments: {} }))
      expect(listed.connectors).toContainEqual({ id: connectorId, name: "Demo retail", type: "DEMO" })
      // A key the server refuses: the agent is told so, as an error of its request.
      await expect(stdio("not-a-key")).rejects.toThrow(/invalid API key|Authentication|401/i)
    },
    60_000
  )

  it("answers malformed JSON-RPC, unknown tools, bad and oversized arguments as protocol or tool errors, never a 5xx", async () => {
    const org = await server().newOrg()
    const malformed = await post(server(), org.key, "{not json")
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as any).error.code).toBe(-32700)

    const notRpc = await post(server(), org.key, { hello: "world" })
    expect(notRpc.status).toBe(400)

    const unknown = await post(server(), org.key, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "drop_tables", arguments: {} }
    })
    expect(unknown.status).toBeLessThan(500)
    expect(((await unknown.json()) as any).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/Unknown tool: drop_tables/)
    })

    const client = await connect(server(), org.key)
    expect(errorText(await client.callTool({ name: "describe_data", arguments: { connector_id: "one" } })))
      .toMatch(/Invalid arguments/)
    expect(errorText(await client.callTool({ name: "ask", arguments: { question: "" } }))).toMatch(/Invalid arguments/)

    const oversized = await post(server(), org.key, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "ask", arguments: { question: "x".repeat(2 * 1024 * 1024) } }
    })
    expect(oversized.status).toBe(413)
  })
})

describeServers("MCP rate limit", (server) => {
  it("a JSON-RPC batch spends a token of the organization's limit per message, not per request", async () => {
    const org = await server().newOrg()
    const batch = (id: number) =>
      [0, 1, 2].map((i) => ({ jsonrpc: "2.0", id: id + i, method: "tools/list", params: {} }))
    const first = await post(server(), org.key, batch(1))
    expect(first.status).toBeLessThan(429)
    // Four tokens a minute: the first batch took three, so three more calls are one too many.
    const second = await post(server(), org.key, batch(10))
    expect(second.status).toBe(429)
    expect(await second.text()).toMatch(/Rate limit exceeded/)
  })
}, { rateLimitPerMinute: 4 })
