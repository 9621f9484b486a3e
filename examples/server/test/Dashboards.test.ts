/**
 * Dashboards over the socket: answers pinned from a chat become a library change; once it merges,
 * the dashboard's tiles run for each caller under its own row-level security, and the rows kept
 * for the next viewer are kept apart by client attributes.
 */
import { expect, it } from "vitest"
import { demoConnector, editModel, handSql } from "./utils/content.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

/** Asks a question with the DEMO connector; the cell of its semantic query. */
const askedCell = async (server: TestServer, org: Org, connector: number, question: string) => {
  const answer = await body(
    await server.request("/v2/chats", { method: "POST", key: org.key, json: { question, connector_ids: [connector] } })
  )
  const cells = await body(await server.request(`/v2/chats/${answer.chat_id}/cells?limit=100`, { key: org.key }))
  const cell = cells.cells.find((c: { semantic_query?: unknown }) => c.semantic_query !== undefined)
  if (cell === undefined) throw new Error(`no semantic query answered ${question}: ${answer.response}`)
  return { chatId: answer.chat_id as string, cell }
}

const pin = (server: TestServer, key: string, chatId: string, cellId: string, json: unknown) =>
  server.request(`/v2/chats/${chatId}/cells/${cellId}/pin`, { method: "POST", key, json })

const approve = async (server: TestServer, org: Org, change: { readonly change_id: string; readonly git_ref: string }) =>
  body(
    await server.request(`/v2/changes/${change.change_id}/approve`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: change.git_ref }
    })
  )

const queryAs = (server: TestServer, key: string, name: string, json: unknown = {}) =>
  server.request(`/v2/dashboards/${name}/query`, { method: "POST", key, json })

const mintKey = async (server: TestServer, org: Org, name: string, attributes: Record<string, string>) =>
  (await body(
    await server.request("/v2/api-keys", {
      method: "POST",
      key: org.key,
      json: { inheritAllRoles: true, name, expirySeconds: 3600, clientId: JSON.stringify(attributes) }
    })
  )).key as string

const lastYear = new Date().getUTCFullYear() - 1
const revenueByRegion = `SELECT r.name, SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
  JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
  WHERE o.status <> 'cancelled' AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'`

describeServers("/v2 dashboards", (server) => {
  it("pins answers from a chat, merges them, and shows each key only its rows, kept apart in the cache", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    await editModel(server(), org, (yaml) =>
      yaml.replace(
        "base_table: { schema: public, table: regions }",
        "base_table: { schema: public, table: regions }\n    row_filter: code = _svc.client_attributes_json.region"
      ))

    // Two answers pinned, each a change reviewed like any other: the first creates the dashboard.
    const byRegion = await askedCell(server(), org, connector, "Revenue by region last year")
    const pinned = await pin(server(), org.key, byRegion.chatId, byRegion.cell.id, { dashboard: "sales" })
    expect(pinned.status).toBe(201)
    const first = await body(pinned)
    expect(first).toMatchObject({ path: "dashboards/sales.yaml", tile: 0, change: { status: "open" } })
    expect(first.change.diffs.map((d: { new_path: string; is_new: boolean }) => [d.new_path, d.is_new]))
      .toEqual([["dashboards/sales.yaml", true]])
    expect(first.change.checks.every((c: { status: string }) => c.status === "passed")).toBe(true)
    // Nothing shows before the change merges.
    expect((await server().request("/v2/dashboards/sales", { key: org.key })).status).toBe(404)
    expect((await approve(server(), org, first.change)).merged).toBe(true)

    const total = await askedCell(server(), org, connector, "Total revenue last year")
    const second = await body(
      await pin(server(), org.key, total.chatId, total.cell.id, { dashboard: "sales", title: "Revenue" })
    )
    expect(second.tile).toBe(1)
    expect((await approve(server(), org, second.change)).merged).toBe(true)

    const listed = await body(await server().request("/v2/dashboards", { key: org.key }))
    expect(listed.dashboards).toEqual([
      { name: "sales", path: "dashboards/sales.yaml", title: "Sales", connector: "Demo retail", tiles: 2 }
    ])
    const definition = await body(await server().request("/v2/dashboards/sales", { key: org.key }))
    expect(definition.commit).toBe(listed.commit)
    expect(definition.definition.tiles.map((t: { title: string; visualization: { type: string } }) => [
      t.title,
      t.visualization.type
    ])).toEqual([["Revenue by region last year", "bar"], ["Revenue", "figure"]])
    // The figure sits beside the bars, in the grid's free columns.
    expect(definition.definition.tiles[1].layout).toEqual({ x: 6, y: 0, w: 3, h: 2 })

    const regions = (result: any) => result.tiles[0].rows.map((row: ReadonlyArray<unknown>) => row[0]).sort()
    const eu = await mintKey(server(), org, "eu", { region: "EU" })
    const na = await mintKey(server(), org, "na", { region: "NA" })
    const asEu = await body(await queryAs(server(), eu, "sales"))
    expect(regions(asEu)).toEqual(["Europe"])
    expect(asEu.tiles[0]).toMatchObject({
      status: "ok",
      cached: false,
      trusted: { kind: "metric", name: "revenue", path: "semantic/demo.yaml", commit: listed.commit },
      columns: [{ name: "region", kind: "dimension" }, { name: "revenue", kind: "metric", format: "currency" }]
    })
    expect(asEu.tiles[0].reading.text).toMatch(/^Revenue .* by region/)
    // A ranking is drawn lying down, each region's name whole, the revenue in its currency format.
    expect(asEu.tiles[0].chart.encoding.y).toMatchObject({ field: "region", axis: { labelLimit: 0 } })
    expect(asEu.tiles[0].chart.encoding.x).toMatchObject({ field: "revenue", axis: { format: ".3~s" } })
    const euHand = await handSql(server(), org, connector, `${revenueByRegion} AND r.code = 'EU' GROUP BY 1`)
    expect(asEu.tiles[0].rows).toEqual(euHand.rows)
    expect(asEu.tiles[1].figure).toMatchObject({ column: "revenue", value: Number(euHand.rows[0]![1]) })

    const asNa = await body(await queryAs(server(), na, "sales"))
    expect(regions(asNa)).toEqual(["North America"])
    expect(asNa.tiles[0].cached).toBe(false)
    // Asked again, each key gets its own rows back from the cache, never the other's.
    const again = await Promise.all([queryAs(server(), eu, "sales"), queryAs(server(), na, "sales")].map(async (r) =>
      body(await r)
    ))
    expect(again.map((result) => result.tiles.map((t: { cached: boolean }) => t.cached))).toEqual([
      [true, true],
      [true, true]
    ])
    expect(regions(again[0])).toEqual(["Europe"])
    expect(regions(again[1])).toEqual(["North America"])
    // The organization's own people carry no client attributes: every region.
    const asAdmin = await body(await queryAs(server(), org.key, "sales"))
    expect(regions(asAdmin)).toHaveLength(5)

    // Main moves: the kept rows go, and the tiles run again.
    const third = await body(await pin(server(), org.key, total.chatId, total.cell.id, { dashboard: "sales" }))
    expect((await approve(server(), org, third.change)).merged).toBe(true)
    const moved = await body(await queryAs(server(), eu, "sales"))
    expect(moved.tiles.map((t: { cached: boolean; title: string }) => [t.title, t.cached])).toEqual([
      ["Revenue by region last year", false],
      ["Revenue", false],
      ["Total revenue last year", false]
    ])
  })
})
