/**
 * Dashboards over the socket: answers pinned from a chat become a library change; once it merges,
 * the dashboard's tiles run for each caller under its own row-level security, and the rows kept
 * for the next viewer are kept apart by client attributes.
 */
import { expect, it } from "vitest"
import { demoConnector, editModel, handSql, mergeFiles } from "./utils/content.js"
import { newMember } from "./utils/members.js"
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

const approve = async (
  server: TestServer,
  org: Org,
  change: { readonly change_id: string; readonly git_ref: string }
) =>
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

const overview = `title: Overview
description: Revenue in the chosen period.
connector: Demo retail
filters:
  dimensions:
    - { dimension: channel }
  time: { start: "${lastYear}-03-01", end: "${lastYear}-04-01" }
tiles:
  - title: Revenue
    query: { semantic: { metrics: [revenue] } }
    visualization: { type: figure, compare: previous_period }
    layout: { x: 0, y: 0, w: 3, h: 2 }
  - title: Orders by hand
    query: { sql: "SELECT count(*) AS orders FROM orders" }
    visualization: { type: figure }
    follows: []
    layout: { x: 3, y: 0, w: 3, h: 2 }
  - title: Revenue by month
    query: { semantic: { metrics: [revenue], time: { grain: month } } }
    visualization: { type: line }
    follows: [time]
    layout: { x: 0, y: 2, w: 12, h: 4 }
`

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
    const again = await Promise.all(
      [queryAs(server(), eu, "sales"), queryAs(server(), na, "sales")].map(async (r) => body(await r))
    )
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

  it("pins a verified query's answer with the values it ran with", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const answer = await body(
      await server().request("/v2/chats", {
        method: "POST",
        key: org.key,
        json: { question: `What was revenue by month in ${lastYear}?`, connector_ids: [connector] }
      })
    )
    const cells = await body(await server().request(`/v2/chats/${answer.chat_id}/cells?limit=100`, { key: org.key }))
    const cell = cells.cells.find((c: any) => c.trusted_source?.kind === "verified_query")
    // The trusted marker says which values the reviewed query ran with.
    expect(cell.trusted_source).toMatchObject({ name: "revenue_by_month", params: { year: lastYear } })
    const pinned = await body(await pin(server(), org.key, answer.chat_id, cell.id, { dashboard: "monthly" }))
    expect((await approve(server(), org, pinned.change)).merged).toBe(true)
    const definition = await body(await server().request("/v2/dashboards/monthly", { key: org.key }))
    expect(definition.definition.tiles[0].query).toEqual({ verified: "revenue_by_month", params: { year: lastYear } })
    const shown = await body(await queryAs(server(), org.key, "monthly"))
    const hand = await handSql(
      server(),
      org,
      connector,
      `SELECT count(DISTINCT date_trunc('month', o.ordered_at)) FROM orders o
       WHERE o.status <> 'cancelled' AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'`
    )
    expect(shown.tiles[0].status).toBe("ok")
    expect(shown.tiles[0].rows).toHaveLength(Number(hand.rows[0]![0]))
    expect(shown.tiles[0].trusted).toMatchObject({ name: "revenue_by_month", params: { year: lastYear } })
  })

  it("runs tiles under the shared filters, compares a figure with the period before, and fails a tile alone", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    await mergeFiles(server(), org, { "dashboards/overview.yaml": overview })
    const hand = (where: string) =>
      handSql(
        server(),
        org,
        connector,
        `SELECT SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
         WHERE o.status <> 'cancelled' AND ${where}`
      ).then((result) => Number(result.rows[0]![0]))
    const period = (start: string, end: string) => `o.ordered_at >= '${start}' AND o.ordered_at < '${end}'`

    const defaults = await body(await queryAs(server(), org.key, "overview"))
    expect(defaults.tiles.map((t: { status: string }) => t.status)).toEqual(["ok", "ok", "ok"])
    const march = await hand(period(`${lastYear}-03-01`, `${lastYear}-04-01`))
    const february = await hand(period(`${lastYear}-02-01`, `${lastYear}-03-01`))
    expect(defaults.tiles[0].figure).toMatchObject({
      column: "revenue",
      format: "currency",
      previous: { start: `${lastYear}-02-01`, end: `${lastYear}-03-01` }
    })
    expect(defaults.tiles[0].figure.value).toBeCloseTo(march, 2)
    expect(defaults.tiles[0].figure.previous.value).toBeCloseTo(february, 2)
    expect(defaults.tiles[0].figure.previous.change).toBeCloseTo((march - february) / february, 6)
    expect(defaults.tiles[0].reading.period).toContain(`${lastYear}`)
    // The SQL tile is written SQL: no reading, no trust.
    expect(defaults.tiles[1]).not.toHaveProperty("reading")
    expect(defaults.tiles[1]).not.toHaveProperty("trusted")
    // The series follows the period: March alone, by month.
    expect(defaults.tiles[2].rows).toHaveLength(1)
    expect(defaults.tiles[2].chart.mark.type).toBe("line")

    // A viewer's channel and period narrow the tiles that follow them.
    const chosen = await body(
      await queryAs(server(), org.key, "overview", {
        filters: { dimensions: { channel: ["web"] }, time: { start: `${lastYear}-01-01`, end: `${lastYear}-07-01` } }
      })
    )
    const online = await hand(`o.channel = 'web' AND ${period(`${lastYear}-01-01`, `${lastYear}-07-01`)}`)
    expect(chosen.tiles[0].figure.value).toBeCloseTo(online, 2)
    expect(chosen.tiles[0].figure.previous).toMatchObject({ start: `${lastYear - 1}-07-01`, end: `${lastYear}-01-01` })
    // The series follows only the period: every channel, six months.
    expect(chosen.tiles[2].rows).toHaveLength(6)
    const half = await hand(period(`${lastYear}-01-01`, `${lastYear}-07-01`))
    expect(chosen.tiles[2].rows.reduce((sum: number, row: Array<number>) => sum + Number(row[1]), 0))
      .toBeCloseTo(half, 2)

    // A key whose client attributes the DEMO database does not enforce runs no written SQL: that
    // tile fails alone, saying why.
    const eu = await mintKey(server(), org, "eu", { region: "EU" })
    const asEu = await body(await queryAs(server(), eu, "overview"))
    expect(asEu.tiles.map((t: { status: string }) => t.status)).toEqual(["ok", "failed", "ok"])
    expect(asEu.tiles[1].error).toMatch(/does not enforce this key's client attributes/)
  })

  it("answers bad input with the envelope, and what the caller may not read as unknown", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg()
    await demoConnector(server(), org)
    await mergeFiles(server(), org, { "dashboards/overview.yaml": overview })
    const status = async (path: string, key: string, init: { method?: string; json?: unknown } = {}) => {
      const response = await server().request(path, { key, ...init })
      return [response.status, (await body(response)).error?.code]
    }
    expect(await status("/v2/dashboards/nowhere", org.key)).toEqual([404, "not_found"])
    expect(await status("/v2/dashboards/Not%20A%20Name", org.key)).toEqual([400, "invalid_request"])
    expect(await status("/v2/dashboards/overview/query", org.key, { method: "POST", json: { filters: 3 } }))
      .toEqual([400, "invalid_request"])
    expect(
      await status("/v2/dashboards/overview/query", org.key, {
        method: "POST",
        json: { filters: { dimensions: { colour: ["red"] } } }
      })
    ).toEqual([400, "invalid_request"])
    expect(await status("/v2/dashboards/overview/query", org.key, { method: "POST", json: { extra: 1 } }))
      .toEqual([400, "invalid_request"])
    // An edit that breaks the grid, or names a tile that is not there, is refused saying why.
    const edit = (json: unknown, key = org.key) =>
      server().request("/v2/dashboards/overview/edit", { method: "POST", key, json })
    const overlapping = await edit({ tiles: [{ index: 1, layout: { x: 0, y: 0, w: 3, h: 2 } }] })
    expect(overlapping.status).toBe(400)
    expect((await body(overlapping)).error.message).toMatch(/tiles\.1: the tile lies over tiles\.0 \(Revenue\)/)
    expect((await edit({ tiles: [{ index: 9, title: "Nine" }] })).status).toBe(400)
    expect((await edit({ tiles: [] })).status).toBe(400)
    expect((await edit({ tiles: [{ index: 0, title: "Revenue" }] }, other.key)).status).toBe(404)
    const renamed = await edit({ tiles: [{ index: 0, title: "Revenue this period" }] })
    expect(renamed.status).toBe(201)
    const filed = (await body(renamed)).change
    expect(filed.diffs[0]).toMatchObject({ new_path: "dashboards/overview.yaml", additions: 1, deletions: 1 })
    // Another organization sees neither the dashboard nor the chat.
    expect(await status("/v2/dashboards/overview", other.key)).toEqual([404, "not_found"])
    expect(await status("/v2/dashboards/overview/query", other.key, { method: "POST", json: {} }))
      .toEqual([404, "not_found"])
    expect((await body(await server().request("/v2/dashboards", { key: other.key }))).dashboards).toEqual([])
    const answer = await body(
      await server().request("/v2/chats", { method: "POST", key: org.key, json: { question: "Hello" } })
    )
    const cells = await body(await server().request(`/v2/chats/${answer.chat_id}/cells`, { key: org.key }))
    const cellId = cells.cells[0].id
    expect(
      await status(`/v2/chats/${answer.chat_id}/cells/${cellId}/pin`, other.key, {
        method: "POST",
        json: { dashboard: "mine" }
      })
    ).toEqual([404, "not_found"])
    // A message cell ran no query.
    expect(
      await status(`/v2/chats/${answer.chat_id}/cells/${cellId}/pin`, org.key, {
        method: "POST",
        json: { dashboard: "mine" }
      })
    ).toEqual([400, "invalid_request"])
    expect(
      await status(`/v2/chats/${answer.chat_id}/cells/${cellId}/pin`, org.key, {
        method: "POST",
        json: { dashboard: "../OWNERS" }
      })
    ).toEqual([400, "invalid_request"])
    // A dashboard under a folder whose OWNERS readers the member is not among does not exist for it.
    const member = await newMember(server(), org)
    expect((await body(await server().request("/v2/dashboards", { key: member.key }))).dashboards).toHaveLength(1)
    await mergeFiles(server(), org, { "dashboards/OWNERS": "reader: role:finance\n" })
    expect(await status("/v2/dashboards/overview", member.key)).toEqual([404, "not_found"])
    expect(await status("/v2/dashboards/overview/query", member.key, { method: "POST", json: {} }))
      .toEqual([404, "not_found"])
    expect((await body(await server().request("/v2/dashboards", { key: member.key }))).dashboards).toEqual([])
  })

  it("the offline model builds a dashboard from a sentence, and adds a tile to it when asked", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const ask = async (question: string) =>
      body(
        await server().request("/v2/chats", {
          method: "POST",
          key: org.key,
          json: { question, connector_ids: [connector] }
        })
      )
    const mergeFiled = async (answer: { response: string }) => {
      const number = Number(/change #(\d+)/.exec(answer.response)?.[1])
      const changes = await body(await server().request("/v2/changes?page_size=100", { key: org.key }))
      const change = changes.changes.find((c: { number: number }) => c.number === number)
      expect(change).toMatchObject({ ai_generated: true, status: "open" })
      expect(change.checks.every((c: { status: string }) => c.status === "passed")).toBe(true)
      expect((await approve(server(), org, { change_id: change.id, git_ref: change.git_ref })).merged).toBe(true)
    }

    const built = await ask("Build a sales overview dashboard for last year by region and channel")
    expect(built.response).toMatch(
      /^I built dashboards\/sales\.yaml from the semantic model\. I chose revenue as a figure /
    )
    expect(built.response).toContain("revenue by region, then by channel")
    await mergeFiled(built)
    const definition = (await body(await server().request("/v2/dashboards/sales", { key: org.key }))).definition
    expect(definition.filters).toEqual({
      dimensions: [{ dimension: "region" }, { dimension: "channel" }],
      time: { start: `${lastYear}-01-01`, end: `${lastYear + 1}-01-01` }
    })
    expect(definition.tiles.map((t: { title: string; visualization: { type: string } }) => [
      t.title,
      t.visualization.type
    ])).toEqual([
      ["Revenue", "figure"],
      ["Revenue by month", "line"],
      ["Revenue by region", "bar"],
      ["Revenue by channel", "bar"],
      ["Revenue by region and channel", "table"]
    ])
    const shown = await body(await queryAs(server(), org.key, "sales"))
    expect(shown.tiles.map((t: { status: string }) => t.status)).toEqual(["ok", "ok", "ok", "ok", "ok"])
    const total = await handSql(server(), org, connector, `${revenueByRegion.replace("r.name,", "")}`)
    expect(shown.tiles[0].figure.value).toBeCloseTo(Number(total.rows[0]![0]), 2)
    expect(shown.tiles[0].figure.previous.start).toBe(`${lastYear - 1}-01-01`)
    expect(shown.tiles[1].rows).toHaveLength(12)
    expect(shown.tiles[2].chart.encoding.y.field).toBe("region")

    const added = await ask("Add returns by category to the sales dashboard")
    expect(added.response).toMatch(
      /^I added Returns by category as a bar to dashboards\/sales\.yaml\. It is change #\d+/
    )
    await mergeFiled(added)
    const grown = await body(await queryAs(server(), org.key, "sales"))
    expect(grown.tiles).toHaveLength(6)
    expect(grown.tiles[5]).toMatchObject({ status: "ok", visualization: { type: "bar" } })
    expect(grown.tiles[5].columns.map((c: { name: string }) => c.name)).toContain("category")
  })
})
