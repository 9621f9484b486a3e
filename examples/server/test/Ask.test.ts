/**
 * Asking questions over the socket: the offline model over the DEMO connector (numbers checked
 * against SQL written by hand), a scripted provider speaking Chat Completions on loopback (tool
 * errors, write safety, cancel, disconnect), and the SSE stream read by a real SSE client.
 */
import { OrganizationId } from "@sightline/core/Ids"
import { MemberId } from "@sightline/core/Ids"
import { Fixtures } from "@sightline/core/testing"
import { afterAll, expect, it } from "vitest"
import { demoConnector, handSql } from "./utils/content.js"
import * as Provider from "./utils/provider.js"
import { body, describeServers, type Org, postgresProblem, type TestServer } from "./utils/server.js"
import { readEvents } from "./utils/sse.js"
import { createSales, regionPolicy, withWarehouse } from "./utils/warehouse.js"

const ask = (server: TestServer, org: Org, json: unknown) =>
  server.request("/v2/chats/stream", { method: "POST", key: org.key, json })

/** Runs SQL written by hand on the organization's connector, through the server's runtime. */

const lastYear = new Date().getUTCFullYear() - 1
// The semantic model's revenue, units and orders leave cancelled orders out.
const notCancelled = "o.status <> 'cancelled'"

/** `POST /v2/chats` over one connector: the whole answer. */
const answerOf = async (server: TestServer, org: Org, connectorId: number, question: string) =>
  body(
    await server.request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question, connector_ids: [connectorId] }
    })
  )

/** A new organization with the DEMO connector: asked with `POST /v2/chats`, and SQL run on it by hand. */
const demoOrg = async (server: TestServer) => {
  const org = await server.newOrg()
  const connectorId = await demoConnector(server, org)
  return {
    ask: (question: string) => answerOf(server, org, connectorId, question),
    hand: (sql: string) => handSql(server, org, connectorId, sql)
  }
}

/** An amount as the offline model writes one: grouped, with two decimals. */
const amount = (value: unknown) =>
  Number(value).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })

describeServers("asking with the offline model over the DEMO connector", (server) => {
  it("streams metadata, the query cell, its table and CSV, a chart and the answer, with numbers that match SQL by hand", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const response = await ask(server(), org, {
      question: "What were the top 5 products by revenue last year?",
      connector_ids: [connectorId]
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const events = await readEvents(response)
    const types = events.map((e) => e.data.type)
    expect(types[0]).toBe("metadata")
    expect(types.at(-1)).toBe("done")
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1))
    expect(types.filter((t) => t !== "text")).toEqual([
      "metadata",
      "cell",
      "asset",
      "asset",
      "cell",
      "cell",
      "asset",
      "cell",
      "done"
    ])
    const metadata = events[0]!.data
    expect(metadata).toMatchObject({
      model: "offline",
      is_continuation: false,
      chat_id: expect.any(String),
      id: expect.any(String)
    })

    const cells = events.filter((e) => e.data.type === "cell").map((e) => e.data.cell)
    expect(cells[0]).toMatchObject({ type: "sql", status: "running", connector_id: connectorId })
    expect(cells[0].query).toContain("LIMIT 5")
    expect(cells[1]).toMatchObject({ id: cells[0].id, status: "completed", output: ["5 rows"] })
    expect(cells[1].execution_time_ms).toBeGreaterThanOrEqual(0)
    expect(cells[1].dataframe_preview).toContain("revenue")
    // The semantic model's revenue: cancelled orders earn nothing.
    expect(cells[0].reading.text).toMatch(
      /^Top 5: Revenue \(sum of order line totals after discounts, cancelled orders excluded\)/
    )

    const assets = events.filter((e) => e.data.type === "asset").map((e) => e.data.asset)
    const table = assets.find((a) => a.type === "table")
    const expected = await handSql(
      server(),
      org,
      connectorId,
      `SELECT p.name, round(sum(oi.line_total)::numeric, 2) AS revenue
       FROM order_items oi JOIN orders o ON o.id = oi.order_id JOIN products p ON p.id = oi.product_id
       WHERE o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01' AND o.status <> 'cancelled'
       GROUP BY p.name ORDER BY revenue DESC, p.name LIMIT 5`
    )
    expect(JSON.parse(table.content).rows).toEqual(expected.rows)
    const chart = assets.find((a) => a.type === "chart")
    const spec = JSON.parse(chart.content)
    expect(spec.$schema).toBe("https://vega.github.io/schema/vega-lite/v6.json")
    expect(spec.data.values).toHaveLength(5)

    // The CSV downloads through its signed URL, with no bearer token.
    const download = assets.find((a) => a.type === "download")
    const csv = await fetch(`${server().baseUrl}${download.url}`)
    expect(csv.status).toBe(200)
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(csv.headers.get("content-disposition")).toMatch(/^attachment/)
    const lines = (await csv.text()).trim().split("\r\n")
    expect(lines[0]).toBe("product,revenue")
    expect(lines[1]).toBe(`${expected.rows[0]![0]},${expected.rows[0]![1]}`)

    const text = events.filter((e) => e.data.type === "text").map((e) => e.data.text).join("")
    expect(text).toContain(`**${expected.rows[0]![0]}** leads`)
    expect(text).toContain("offline model")

    // The answer is stored, with its assets.
    const chat = await body(await server().request(`/v2/chats/${metadata.chat_id}`, { key: org.key }))
    expect(chat.messages.map((m: any) => m.role)).toEqual(["user", "assistant"])
    expect(chat.messages[1].content).toBe(text)
    expect(chat.assets.map((a: any) => a.type).sort()).toEqual(["chart", "download", "table"])
  })

  it("POST /v2/chats waits for the whole answer; a count matches SQL by hand; a follow-up continues the chat", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const response = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "How many orders were placed last year?", connector_ids: [connectorId] }
    })
    expect(response.status).toBe(200)
    const answer = await body(response)
    const count = await handSql(
      server(),
      org,
      connectorId,
      `SELECT count(*) FROM orders WHERE ordered_at >= '${lastYear}-01-01' AND ordered_at < '${lastYear + 1}-01-01'`
    )
    expect(answer).toMatchObject({ model: "offline", id: expect.any(String), chat_id: expect.any(String) })
    // "Orders placed" counts every order, cancelled ones too, as the semantic model says.
    expect(answer.response).toContain(
      `I read this as: All orders (number of orders, cancelled ones included) in ${lastYear}.\n\n**${
        Number(count.rows[0]![0]).toLocaleString("en-US")
      }**`
    )
    expect(answer.assets.map((a: any) => a.type).sort()).toEqual(["download", "table"])

    const followUp = await body(
      await server().request("/v2/chats", {
        method: "POST",
        key: org.key,
        json: { question: "Revenue by region last year", chat_id: answer.chat_id, connector_ids: [connectorId] }
      })
    )
    expect(followUp.chat_id).toBe(answer.chat_id)
    expect(followUp.response).toContain("by region")
    const chat = await body(await server().request(`/v2/chats/${answer.chat_id}`, { key: org.key }))
    expect(chat.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
  })

  it("a follow-up that names no connectors answers from the chat's; one deleted since is named, not dropped", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const chats = (json: unknown) => server().request("/v2/chats", { method: "POST", key: org.key, json })
    const first = await body(
      await chats({ question: "How many orders were placed last year?", connector_ids: [connectorId] })
    )
    const followUp = await chats({ question: "Revenue by region last year", chat_id: first.chat_id })
    expect(followUp.status).toBe(200)
    const answer = await body(followUp)
    expect(answer.response).toMatch(/^I read this as: Revenue .* by region in \d{4}/)
    expect(answer.response).not.toContain("no data connector")
    // Named connectors replace the kept ones, and are kept in turn.
    const second = await demoConnector(server(), org)
    const switched = await body(
      await chats({ question: "Units last year", chat_id: first.chat_id, connector_ids: [second] })
    )
    expect(switched.response).toContain("I read this as: Units")
    const deleted = await server().request(`/v2/connectors/${second}`, { method: "DELETE", key: org.key })
    expect(deleted.status).toBeLessThan(300)
    const orphaned = await chats({ question: "Units last year", chat_id: first.chat_id })
    expect(orphaned.status).toBe(400)
    expect((await body(orphaned)).error).toEqual({
      code: "invalid_request",
      message:
        `the chat's connectors (name connector_ids to replace them): connector ${second} not found or not accessible`
    })
    const renamed = await chats({ question: "Units last year", chat_id: first.chat_id, connector_ids: [connectorId] })
    expect(renamed.status).toBe(200)
  })

  it("holds a conversation: a breakdown, a narrowing, a new subject that keeps nothing, and a row of an answer", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const chats = async (json: unknown) => {
      const response = await server().request("/v2/chats", { method: "POST", key: org.key, json })
      expect(response.status).toBe(200)
      return body(response)
    }
    const first = await chats({ question: "Units by region last year", connector_ids: [connectorId] })
    expect(first.response).not.toContain("Keeping")
    const perChannel = await chats({ question: "and per channel?", chat_id: first.chat_id })
    expect(perChannel.response).toMatch(/^I read this as: Units .* by channel in \d{4}\b/)
    expect(perChannel.response).toContain(
      `(Keeping units, ${lastYear}; now by channel, from "Units by region last year".)`
    )
    const stores = await chats({ question: "just the stores", chat_id: first.chat_id })
    expect(stores.response).toContain(
      `(Keeping units, by channel, ${lastYear}; now channel store, from "and per channel?".)`
    )
    const units = await handSql(
      server(),
      org,
      connectorId,
      `SELECT sum(oi.quantity) FROM order_items oi JOIN orders o ON o.id = oi.order_id
       WHERE o.channel = 'store' AND ${notCancelled}
         AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'`
    )
    expect(stores.response).toContain(Number(units.rows[0]![0]).toLocaleString("en-US"))
    // A question complete in itself: no store filter, no period, no channel carried over.
    const fresh = await chats({ question: "How many orders were placed?", chat_id: first.chat_id })
    expect(fresh.response).toMatch(
      /^I read this as: All orders \(number of orders, cancelled ones included\), over all time\./
    )
    expect(fresh.response).not.toContain("Keeping")
    const all = await handSql(server(), org, connectorId, "SELECT count(*) FROM orders")
    expect(fresh.response).toContain(`**${Number(all.rows[0]![0]).toLocaleString("en-US")}**`)

    // A row of an answer: "the second one" is the second product of the ranking, named in the answer.
    const top = await chats({ question: "Top 3 products by revenue last year", chat_id: first.chat_id })
    const ranked = await handSql(
      server(),
      org,
      connectorId,
      `SELECT p.name FROM order_items oi JOIN orders o ON o.id = oi.order_id JOIN products p ON p.id = oi.product_id
       WHERE o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01' AND ${notCancelled}
       GROUP BY p.name ORDER BY sum(oi.line_total) DESC, p.name LIMIT 3`
    )
    expect(top.response).toContain(String(ranked.rows[1]![0]))
    const second = await chats({ question: "units of the second one by channel", chat_id: first.chat_id })
    const name = String(ranked.rows[1]![0])
    expect(second.response).toContain(`(I took "second one" for "${name}".)`)
    expect(second.response).toContain(
      `now units, by channel, product ${name}, from "Top 3 products by revenue last year"`
    )
    const byChannel = await handSql(
      server(),
      org,
      connectorId,
      `SELECT o.channel, sum(oi.quantity) FROM order_items oi JOIN orders o ON o.id = oi.order_id
       JOIN products p ON p.id = oi.product_id
       WHERE p.name = '${name.replaceAll("'", "''")}' AND ${notCancelled}
         AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'
       GROUP BY o.channel ORDER BY 2 DESC`
    )
    for (const [channel, units] of byChannel.rows) {
      expect(second.response).toContain(`| ${channel} | ${Number(units).toLocaleString("en-US")} |`)
    }
  })

  it("asks which customer a shared name means, keeps the choices on the message, and answers the one chosen", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    // A last name several customers share (and no product or other value holds).
    const shared = await handSql(
      server(),
      org,
      connectorId,
      `SELECT substring(name from '[^ ]+$') AS last FROM customers GROUP BY 1 HAVING count(DISTINCT name) >= 2
       ORDER BY count(DISTINCT name) DESC, 1 LIMIT 1`
    )
    const last = String(shared.rows[0]![0])
    const holders = await handSql(
      server(),
      org,
      connectorId,
      `SELECT DISTINCT name FROM customers WHERE name ~* '(^|[^[:alnum:]])${last}($|[^[:alnum:]])' ORDER BY name`
    )
    const names = holders.rows.map((row) => String(row[0]))
    const question = `How much revenue came from ${last} last year?`
    const response = await ask(server(), org, { question, connector_ids: [connectorId] })
    expect(response.status).toBe(200)
    const events = await readEvents(response)
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const asked = events.filter((e) => e.data.type === "clarification")
    expect(asked).toHaveLength(1)
    const clarification = asked[0]!.data
    expect(clarification.question).toBe(`Which "${last.toLowerCase()}" do you mean?`)
    // Up to five of the names, each a complete question; nothing was answered on the asker's behalf.
    expect(clarification.choices).toHaveLength(Math.min(5, names.length))
    clarification.choices.forEach((choice: any, i: number) => {
      expect(choice.id).toBe(String(i + 1))
      expect(names).toContain(choice.label)
      expect(choice.question).toBe(`How much revenue came from ${choice.label} last year?`)
    })
    // Only lookups of the name ran: no cell computed revenue.
    const cells = events.flatMap((e) => e.data.type === "cell" ? [e.data.cell] : [])
    expect(cells.length).toBeGreaterThan(0)
    expect(cells.every((cell: any) => !/^Revenue/.test(cell.reading?.text ?? ""))).toBe(true)
    const text = events.filter((e) => e.data.type === "text").map((e) => e.data.text).join("")
    expect(text).toContain(`${clarification.question} (1) ${clarification.choices[0].label}`)
    const chatId = events[0]!.data.chat_id
    const stored = await body(await server().request(`/v2/chats/${chatId}`, { key: org.key }))
    expect(stored.messages.at(-1)).toMatchObject({
      role: "assistant",
      clarification: {
        question: clarification.question,
        choices: clarification.choices
      }
    })

    // What cannot be chosen is a 400 that says why; nothing is asked.
    const refusals = [
      [{ choice: "1" }, /choice answers a chat's clarification/],
      [{ choice: "1", question, chat_id: chatId }, /either question or choice/],
      [{ choice: "9", chat_id: chatId }, /choice 9 is not one of the clarification's choices/]
    ] as const
    for (const [json, message] of refusals) {
      const refused = await server().request("/v2/chats", { method: "POST", key: org.key, json })
      expect(refused.status).toBe(400)
      expect((await body(refused)).error.message).toMatch(message)
    }

    // The second choice is answered as its question: revenue of that customer, matching SQL by hand.
    const chosen = clarification.choices[1]
    const answer = await body(
      await server().request("/v2/chats", { method: "POST", key: org.key, json: { chat_id: chatId, choice: "2" } })
    )
    expect(answer.clarification).toBeUndefined()
    expect(answer.response).toMatch(/^I read this as: Revenue/)
    expect(answer.response).toContain(chosen.label)
    // Per customer of that name (customers may share a whole name too; the answer tells them apart).
    const revenue = await handSql(
      server(),
      org,
      connectorId,
      `SELECT round(sum(i.line_total)::numeric, 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN customers c ON c.id = o.customer_id
       WHERE c.name = '${chosen.label.replaceAll("'", "''")}' AND ${notCancelled}
         AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'
       GROUP BY c.id`
    )
    for (const [sum] of revenue.rows) expect(answer.response).toContain(amount(sum))
    const after = await body(await server().request(`/v2/chats/${chatId}`, { key: org.key }))
    expect(after.messages.map((m: any) => [m.role, m.content.slice(0, 60)]).slice(-2)[0]).toEqual([
      "user",
      chosen.question
    ])
    // The answered clarification is no longer one to choose from.
    const again = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { chat_id: chatId, choice: "1" }
    })
    expect(again.status).toBe(400)
    expect((await body(again)).error.message).toMatch(/asked no clarification to choose from/)
  })

  it("\"which … the most\" answers with the ranking, its first row matching SQL by hand", async () => {
    const { ask, hand } = await demoOrg(server())
    const region = await ask("Which region had the highest revenue last year?")
    const byRegion = await hand(
      `SELECT r.name, round(sum(i.line_total), 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
       WHERE o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01' AND ${notCancelled}
       GROUP BY r.name ORDER BY 2 DESC, 1`
    )
    expect(region.response).toContain(
      `I read this as: Revenue (sum of order line totals after discounts, cancelled orders excluded) by region in ${lastYear}, highest first.`
    )
    expect(region.response).toContain(`**${byRegion.rows[0]![0]}** leads with **${amount(byRegion.rows[0]![1])}**.`)
    // "returned … items" is the returns metric, per customer (told apart by number), along return →
    // order line → order → customer.
    const returned = await ask("Which 3 customers returned the most items?")
    const byCustomer = await hand(
      `SELECT c.name, c.id, count(*) FROM returns x JOIN order_items i ON i.id = x.order_item_id
       JOIN orders o ON o.id = i.order_id JOIN customers c ON c.id = o.customer_id
       GROUP BY c.id, c.name ORDER BY 3 DESC, 1, 2 LIMIT 3`
    )
    expect(returned.response).toContain(
      "I read this as: Top 3: Returns (number of returned order lines, by return date)"
    )
    const [name, id, count] = byCustomer.rows[0]!
    expect(returned.response).toContain(`**${name}, ${id}** leads with **${count}**.`)
    for (const [name, id, count] of byCustomer.rows) {
      expect(returned.response).toContain(`| ${name} | ${id} | ${count} |`)
    }
  })

  it("ranks within groups, compares periods, reads attributes and a measure's unfiltered sibling, matching SQL by hand", async () => {
    const { ask, hand } = await demoOrg(server())
    const perCategory = await ask("the best selling product in each category last year")
    expect(perCategory.response).toContain("I read this as: Top 1 product in each category: Units")
    const best = await hand(
      `SELECT g, k, v FROM (SELECT ca.name AS g, p.name AS k, sum(i.quantity) AS v,
         ROW_NUMBER() OVER (PARTITION BY ca.name ORDER BY sum(i.quantity) DESC, p.name) AS n
       FROM order_items i JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id
       JOIN categories ca ON ca.id = p.category_id
       WHERE ${notCancelled} AND o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'
       GROUP BY 1, 2) AS x WHERE n = 1 ORDER BY g`
    )
    expect(best.rows).toHaveLength(8)
    for (const [category, product, units] of best.rows) {
      expect(perCategory.response).toContain(`| ${category} | ${product} | ${Number(units).toLocaleString("en-US")} |`)
    }
    const compared = await ask(`revenue in q1 ${lastYear} vs q1 ${lastYear - 1}`)
    expect(compared.response).toContain(`by period in Q1 ${lastYear - 1} and Q1 ${lastYear}`)
    const quarters = await hand(
      `SELECT extract(year FROM o.ordered_at)::int, round(sum(i.line_total), 2) FROM order_items i
       JOIN orders o ON o.id = i.order_id WHERE ${notCancelled} AND extract(quarter FROM o.ordered_at) = 1
       AND o.ordered_at >= '${lastYear - 1}-01-01' GROUP BY 1 ORDER BY 1`
    )
    for (const [year, revenue] of quarters.rows) {
      expect(compared.response).toContain(`| ${year}-01-01 | ${amount(revenue)} |`)
    }
    const product = (await hand("SELECT name, unit_price FROM products ORDER BY id LIMIT 1")).rows[0]!
    const cost = await ask(`what does the ${String(product[0])} cost`)
    expect(cost.response).toContain(`I read this as: Every product and list price, where product is ${product[0]}`)
    expect(cost.response).toContain(`| ${product[0]} | ${amount(product[1])} |`)
    const byStatus = await ask("orders by status")
    expect(byStatus.response).toContain("for the breakdown by status I read all orders")
    const statuses = await hand("SELECT status, count(*) FROM orders GROUP BY 1")
    for (const [status, count] of statuses.rows) {
      expect(byStatus.response).toContain(`| ${status} | ${Number(count).toLocaleString("en-US")} |`)
    }
  })

  it("a why-question streams its plan, then each step as a cell, then where the change is, matching SQL by hand", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const response = await ask(server(), org, {
      question: `Why did revenue drop in March ${lastYear}?`,
      connector_ids: [connectorId]
    })
    const events = await readEvents(response)
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const plans = events.filter((e) => e.data.type === "plan").map((e) => e.data)
    // The plan before any step runs: the totals, then each of the model's drivers; then one level deeper.
    expect(plans[0]).toEqual({
      type: "plan",
      title: `Revenue in February ${lastYear} and March ${lastYear}`,
      steps: [
        { id: "total", title: `Revenue in February ${lastYear} and March ${lastYear}`, level: 0 },
        { id: "by_region", title: "By region", level: 1 },
        { id: "by_category", title: "By category", level: 1 },
        { id: "by_channel", title: "By channel", level: 1 },
        { id: "by_segment", title: "By segment", level: 1 }
      ]
    })
    expect(plans.at(-1)!.steps).toHaveLength(6)
    expect(plans.at(-1)!.steps[5]).toMatchObject({ level: 2, title: expect.stringMatching(/ by category$/) })
    expect(events.findIndex((e) => e.data.type === "plan")).toBeLessThan(
      events.findIndex((e) => e.data.type === "cell")
    )
    // Each step is a cell of its own, with its SQL and its reading.
    const completed = events.flatMap((e) =>
      e.data.type === "cell" && e.data.cell.status === "completed" ? [e.data.cell] : []
    )
    const cells = completed.filter((c) => c.type === "sql")
    expect(cells.map((c) => c.content).sort()).toEqual(
      plans.at(-1)!.steps.map((s: { title: string }) => s.title).sort()
    )
    for (const cell of cells) expect(cell.reading.text).toMatch(/^(Top|Revenue)/)
    // The bridge from February to March by region: a waterfall whose last bars end at March's total.
    const chart = completed.find((c) => c.type === "chart")!
    expect(chart.content).toBe(`revenue from February ${lastYear} to March ${lastYear} by region`)
    const spec = JSON.parse(
      events.find((e) => e.data.type === "asset" && e.data.asset.cell_id === chart.id)!.data.asset.content
    )
    expect(spec.encoding.y2).toEqual({ field: "end" })
    const byRegion = cells.find((c) => c.content === "By region")!
    expect(byRegion.query).toContain("OR")
    const text = events.filter((e) => e.data.type === "text").map((e) => e.data.text).join("")
    expect(text).toContain(
      `I read this as: where revenue changed from February ${lastYear} to March ${lastYear}, by region`
    )
    const totals = await handSql(
      server(),
      org,
      connectorId,
      `SELECT extract(month FROM o.ordered_at)::int, round(sum(i.line_total), 2) FROM order_items i
       JOIN orders o ON o.id = i.order_id WHERE ${notCancelled}
       AND o.ordered_at >= '${lastYear}-02-01' AND o.ordered_at < '${lastYear}-04-01' GROUP BY 1 ORDER BY 1`
    )
    const [february, march] = totals.rows.map((row) => Number(row[1]))
    expect(spec.data.values.at(-1).end).toBeCloseTo(march!, 2)
    expect(spec.data.values.at(-2).end).toBeCloseTo(march!, 2)
    const direction = march! < february! ? "fell" : "rose"
    // Whole percents from 10%, one decimal below.
    const percent = (share: number) => `${(share * 100).toFixed(share >= 0.1 ? 0 : 1)}%`
    expect(text).toContain(
      `Revenue ${direction} ${percent(Math.abs(march! - february!) / february!)} from February ${lastYear} to ` +
        `March ${lastYear} (${amount(february)} to ${amount(march)}).`
    )
    expect(text).toContain("the data does not say why")
    if (direction === "rose") expect(text).toContain("It did not fall.")
    // The plan is kept with the answer, as it last stood, for a reader who comes later.
    const chat = await body(await server().request(`/v2/chats/${events[0]!.data.chat_id}`, { key: org.key }))
    const answer = chat.messages.find((m: { role: string }) => m.role === "assistant")
    const { type: _type, ...last } = plans.at(-1)!
    expect(answer.provenance.plans).toEqual([last])
  })

  it("keeps to a value the demo's comments list, and ranks months, matching SQL by hand", async () => {
    const { ask, hand } = await demoOrg(server())
    const cancelled = await ask("How many orders were cancelled last year?")
    const count = await hand(
      `SELECT count(*) FROM orders WHERE status = 'cancelled'
       AND ordered_at >= '${lastYear}-01-01' AND ordered_at < '${lastYear + 1}-01-01'`
    )
    expect(Number(count.rows[0]![0])).toBeGreaterThan(0)
    // The model's cancelled orders, not its orders (which leave them out) kept to cancelled ones.
    expect(cancelled.response).toContain(
      `I read this as: Cancelled orders (number of cancelled orders) in ${lastYear}.\n\n**${
        Number(count.rows[0]![0]).toLocaleString("en-US")
      }**`
    )
    const month = await ask("Which month had the highest revenue last year?")
    const byMonth = await hand(
      `SELECT to_char(o.ordered_at, 'YYYY-MM') AS month, round(sum(i.line_total), 2) AS revenue
       FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01' AND ${notCancelled}
       GROUP BY 1 ORDER BY 2 DESC LIMIT 1`
    )
    expect(month.response).toContain(`leads with **${amount(byMonth.rows[0]![1])}**`)
    // Said as a month; the table keeps the day it starts on.
    const [year, number] = String(byMonth.rows[0]![0]).split("-").map(Number)
    const monthName = new Date(Date.UTC(year!, number! - 1, 1)).toLocaleString("en-US", {
      month: "long",
      timeZone: "UTC"
    })
    expect(month.response).toContain(`**${monthName} ${year}** leads`)
    expect(JSON.parse(month.assets.find((a: { type: string }) => a.type === "table").content).rows[0][0]).toBe(
      `${byMonth.rows[0]![0]}-01`
    )
  })

  it("answers for a quarter, a region, an order's average, each region's first, returned orders, units, buyers and a range, matching SQL by hand", async () => {
    const { ask, hand } = await demoOrg(server())
    const year = `o.ordered_at >= '${lastYear}-01-01' AND o.ordered_at < '${lastYear + 1}-01-01'`

    const quarter = await hand(
      `SELECT round(sum(i.line_total), 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.ordered_at >= '${lastYear}-07-01' AND o.ordered_at < '${lastYear}-10-01' AND ${notCancelled}`
    )
    const q3 = (await ask("What was the revenue in Q3 last year?")).response
    expect(q3).toMatch(
      /^I read this as: Revenue \(sum of order line totals after discounts, cancelled orders excluded\)/
    )
    expect(q3).toContain(`\n\n**${amount(quarter.rows[0]![0])}**`)
    const europe = await hand(
      `SELECT round(sum(i.line_total), 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
       WHERE r.name = 'Europe' AND ${year} AND ${notCancelled}`
    )
    const inEurope = (await ask("Revenue in Europe last year")).response
    expect(inEurope).toContain("where region is Europe")
    expect(inEurope).toContain(`\n\n**${amount(europe.rows[0]![0])}**`)
    // An order's value is its lines' sum: the average is over orders, not over lines.
    const orderValue = await hand(
      `SELECT round(avg(total), 2) FROM (SELECT sum(i.line_total) AS total FROM order_items i
       JOIN orders o ON o.id = i.order_id WHERE ${year} AND ${notCancelled} GROUP BY o.id) AS per_order`
    )
    const aov = (await ask("What was the average order value last year?")).response
    expect(aov).toMatch(/^I read this as: Average order value \(/)
    expect(aov).toContain(`\n\n**${amount(orderValue.rows[0]![0])}**`)
    // "Per order" groups by something the model has no dimension for: declined, not guessed.
    expect((await ask("Revenue per order last year")).response).toContain(
      "I can't answer this: the semantic model has no dimension for \"order\" to group or rank by"
    )
    const lines = await hand(
      `SELECT round(count(*)::numeric / count(DISTINCT o.id), 2) FROM order_items i
       JOIN orders o ON o.id = i.order_id WHERE ${year} AND ${notCancelled}`
    )
    const perOrder = (await ask("Average number of items per order last year")).response
    expect(perOrder).toMatch(/^I read this as: Lines per order \(/)
    expect(perOrder).toContain(`\n\n**${amount(lines.rows[0]![0])}**`)
    // A ranking within each group is one semantic query (a window over the grouped result).
    const perRegion = await ask("Top 2 products by revenue per region last year")
    expect(perRegion.response).toContain(`I read this as: Top 2 product in each region: Revenue`)
    expect(perRegion.response).toContain(`by region and product in ${lastYear}, highest first`)
    // Orders kept to a return date with no period: no query keeps to rows by it.
    expect((await ask("How many orders were returned?")).response).toContain(
      "I can't answer this: \"returned\" names the dates a period is read on (return date)"
    )
    const phones = await hand(
      `SELECT sum(i.quantity) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN products p ON p.id = i.product_id JOIN categories k ON k.id = p.category_id
       WHERE k.name = 'Phones' AND ${year} AND ${notCancelled}`
    )
    const phonesSold = (await ask("How many phones did we sell last year?")).response
    expect(phonesSold).toMatch(
      /^I read this as: Units \(units sold on orders that were not cancelled\).* where category is Phones/
    )
    expect(phonesSold).toContain(`\n\n**${Number(phones.rows[0]![0]).toLocaleString("en-US")}**`)
    // A list of names, not their number.
    const laptops = await hand(
      `SELECT p.name FROM products p JOIN categories k ON k.id = p.category_id WHERE k.name = 'Laptops' ORDER BY 1`
    )
    const listed = await ask("What products are in the Laptops category?")
    expect(listed.response).toContain(
      `I read this as: Every product, where category is Laptops, in product order.\n\n**${laptops.rows.length}**:`
    )
    expect(JSON.parse(listed.assets.find((a: { type: string }) => a.type === "table").content).rows).toEqual(
      laptops.rows
    )
    // A range open on one side: no condition on that side.
    const before = await hand(
      `SELECT round(sum(i.line_total), 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.ordered_at < '${lastYear}-01-01' AND ${notCancelled}`
    )
    expect((await ask(`Total revenue before ${lastYear}`)).response).toContain(`\n\n**${amount(before.rows[0]![0])}**`)
    // Customers who bought: those with an order in the year, each once.
    const buyers = await hand(`SELECT count(DISTINCT o.customer_id) FROM orders o WHERE ${year} AND ${notCancelled}`)
    const bought = (await ask("How many customers bought from us last year?")).response
    expect(bought).toMatch(/^I read this as: Buying customers \(/)
    expect(bought).toContain(`\n\n**${Number(buyers.rows[0]![0]).toLocaleString("en-US")}**`)
    // New customers: those who joined in the year (the demo's customers join in both of its years).
    const joined = await hand(
      `SELECT count(*) FROM customers WHERE created_at >= '${lastYear}-01-01' AND created_at < '${lastYear + 1}-01-01'`
    )
    expect(Number(joined.rows[0]![0])).toBeGreaterThan(0)
    expect((await ask("How many new customers did we get last year?")).response).toContain(
      `I read this as: New customers (customers who signed up in the period) in ${lastYear}.\n\n**${
        Number(joined.rows[0]![0]).toLocaleString("en-US")
      }**`
    )
    // A period that has not begun is declined, not answered with a zero.
    const future = await ask(`How many orders in ${lastYear + 5}?`)
    expect(future.response).toContain(
      `I can't answer this: it asks about a period that has not begun (in ${lastYear + 5})`
    )
    // Orders, not customers, by the customers' segment.
    const bySegment = await hand(
      `SELECT c.segment, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id
       WHERE ${year} AND ${notCancelled} GROUP BY c.segment ORDER BY 2 DESC, 1`
    )
    const segments = await ask("How many orders did each customer segment place last year?")
    expect(JSON.parse(segments.assets.find((a: { type: string }) => a.type === "table").content).rows).toEqual(
      bySegment.rows.map(([segment, count]) => [segment, Number(count)])
    )
    // A day, as people write it.
    const christmasEve = await hand(
      `SELECT count(*) FROM orders o WHERE o.ordered_at >= '${lastYear}-12-24' AND o.ordered_at < '${lastYear}-12-25'
       AND ${notCancelled}`
    )
    expect((await ask(`How many orders on December 24, ${lastYear}?`)).response).toContain(
      `\n\n**${Number(christmasEve.rows[0]![0]).toLocaleString("en-US")}**`
    )
    // A product's name is data, not a comment's listed value: looked up, then kept to.
    const [product] = (await hand(`SELECT name FROM products ORDER BY id LIMIT 1`)).rows[0] as [string]
    const productRevenue = await hand(
      `SELECT round(sum(i.line_total), 2) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN products p ON p.id = i.product_id WHERE p.name = '${product}' AND ${year} AND ${notCancelled}`
    )
    const ofProduct = await ask(`What was the revenue of ${product} last year?`)
    expect(ofProduct.response).toContain(`where product is ${product}.\n\n**${amount(productRevenue.rows[0]![0])}**`)
    // The lookups of its words are list queries the compiler writes, each a cell of the answer.
    expect(ofProduct.assets.filter((a: { type: string }) => a.type === "table").length).toBeGreaterThan(1)
    // When the last order was: the day of the latest, in the model's time zone (UTC).
    const latest = await hand(
      `SELECT to_char(o.ordered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), count(*) FROM orders o WHERE ${notCancelled}
       GROUP BY 1 ORDER BY 1 DESC LIMIT 1`
    )
    expect((await ask("When was our last order?")).response).toContain(
      `The last day with orders was **${latest.rows[0]![0]}** (${latest.rows[0]![1]}).`
    )
    // "What categories do we sell?" lists them; "sell" is no measure there.
    const categories = await hand(`SELECT name FROM categories ORDER BY 1`)
    const sold = await ask("What categories do we sell?")
    expect(sold.response).toContain(
      `**${categories.rows.length}**:\n\n| category |\n| --- |\n${
        categories.rows.map(([name]) => `| ${name} |`).join("\n")
      }`
    )
    // The top product of each category is a ranking within groups: the first of each, never one list.
    expect((await ask("Top product in each category by revenue last year")).response).toContain(
      "I read this as: Top 1 product in each category: Revenue"
    )
    // The most popular product sold the most units.
    const popular = await hand(
      `SELECT p.name, sum(i.quantity) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN products p ON p.id = i.product_id WHERE ${year} AND ${notCancelled}
       GROUP BY p.id, p.name ORDER BY 2 DESC, 1 LIMIT 1`
    )
    expect((await ask("What was the most popular product last year?")).response).toContain(
      `**${popular.rows[0]![0]}** leads with **${Number(popular.rows[0]![1]).toLocaleString("en-US")}**`
    )
    // A listed value that holds a word of change ("changed mind") is no change between periods.
    const changedMind = await hand(`SELECT count(*) FROM returns WHERE reason = 'changed mind'`)
    expect((await ask("How many returns were for changed mind?")).response).toContain(
      `where return reason is changed mind.\n\n**${Number(changedMind.rows[0]![0]).toLocaleString("en-US")}**`
    )
    expect((await ask("Revenue in Atlantis last year")).response).toMatch(
      /I don't know what "atlantis" picks out here: .* and no product, product line, customer or region code in the data is called so/
    )
    // A word the semantic model does not know is named, not dropped.
    expect((await ask("sales in germany")).response).toContain(
      "I can't answer this: I don't know what \"germany\" picks out here"
    )
  })

  it("answers the question a verified query asks with it: its reading first, its rows, a trusted cell", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const events = await readEvents(
      await ask(server(), org, { question: "Which sales channel makes the most money?", connector_ids: [connectorId] })
    )
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const cells = events.filter((e) => e.data.type === "cell" && e.data.cell.status === "completed").map((e) =>
      e.data.cell
    )
    expect(cells.map((c) => c.type)).toEqual(["sql", "chart"])
    expect(cells[0].trusted_source).toEqual({
      kind: "verified_query",
      name: "revenue_by_channel",
      path: "semantic/demo.yaml",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/)
    })
    const hand = await handSql(
      server(),
      org,
      connectorId,
      `SELECT o.channel, SUM(i.line_total) AS revenue FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.status <> 'cancelled' GROUP BY o.channel ORDER BY revenue DESC`
    )
    const table = events.find((e) => e.data.type === "asset" && e.data.asset.type === "table")!.data.asset
    expect(JSON.parse(table.content).rows).toEqual(hand.rows)
    const text = events.filter((e) => e.data.type === "text").map((e) => e.data.text).join("")
    expect(text).toMatch(
      /^I read this as the verified query \*\*revenue_by_channel\*\*: "Which sales channel makes us the most money\?" \(checked by Sightline on 2026-11-26\)\.\n\n\| channel \| revenue \|/
    )
    expect(text).toContain(
      `| web | ${
        Number(hand.rows[0]![1]).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })
      } |`
    )
    // One more word, and it is no longer the verified question: the model's metric answers it, trusted
    // as that metric of the reviewed model, not as the verified query.
    const other = await readEvents(
      await ask(server(), org, {
        question: "Which sales channel makes the most money in Europe?",
        connector_ids: [connectorId]
      })
    )
    const otherCells = other.filter((e) => e.data.type === "cell" && e.data.cell.status === "completed").map((e) =>
      e.data.cell
    )
    const query = otherCells.filter((c) => c.type === "sql")
    expect(query.map((c) => c.trusted_source?.kind)).toEqual(["metric"])
    expect(query[0].reading.filters).toEqual(["region is Europe"])
  })

  it("takes the same fields as multipart/form-data; file parts are refused until sandboxes are configured", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const form = new FormData()
    form.set("question", "How many customers by region?")
    form.set("connector_ids", String(connectorId))
    form.set("tools", JSON.stringify({ sql_enabled: true }))
    const response = await server().request("/v2/chats", { method: "POST", key: org.key, body: form })
    expect(response.status).toBe(200)
    const answer = await body(response)
    expect(answer.response).toContain("by region")
    expect(answer.assets.map((a: any) => a.type).sort()).toEqual(["chart", "download", "table"])

    const streamed = new FormData()
    streamed.set("question", "orders by channel")
    streamed.append("connector_ids", String(connectorId))
    const events = await readEvents(
      await server().request("/v2/chats/stream", { method: "POST", key: org.key, body: streamed })
    )
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })

    const withFile = new FormData()
    withFile.set("question", "What is in this file?")
    // Not a table: it could only go to a sandbox, and there is none.
    withFile.set("files", new Blob(["%PDF-1.4"], { type: "application/pdf" }), "notes.pdf")
    const refused = await server().request("/v2/chats", { method: "POST", key: org.key, body: withFile })
    expect(refused.status).toBe(400)
    expect((await body(refused)).error.message).toContain("sandboxes are not available on this server")
    const badTools = new FormData()
    badTools.set("question", "q")
    badTools.set("tools", "{not json")
    const bad = await server().request("/v2/chats", { method: "POST", key: org.key, body: badTools })
    expect(bad.status).toBe(400)
    expect((await body(bad)).error.message).toContain("tools: not a JSON object")
  })

  it("refuses what it must: model with chat_id 400, an unknown model 403, a connector the caller cannot use 400", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg()
    const foreign = await demoConnector(server(), other)
    const first = await body(
      await server().request("/v2/chats", { method: "POST", key: org.key, json: { question: "hi" } })
    )
    const cases = [
      [{ question: "q", chat_id: first.chat_id, model: "offline" }, 400, "invalid_request"],
      [{ question: "q", model: "gpt-unknown" }, 403, "permission_denied"],
      [{ question: "q", connector_ids: [foreign] }, 400, "invalid_request"],
      [{ question: "  " }, 400, "invalid_request"]
    ] as const
    for (const [json, status, code] of cases) {
      for (const path of ["/v2/chats", "/v2/chats/stream"]) {
        const response = await server().request(path, { method: "POST", key: org.key, json })
        expect([path, response.status, (await body(response)).error.code]).toEqual([path, status, code])
      }
    }
    // Without a connector the offline model says what it needs.
    expect(first.response).toContain("no data connector is enabled")
  })
})

// A provider whose every turn the current test scripts.
let script: (request: any, index: number) => Provider.Turn = () => ({ text: "unscripted" })
const provider = await Provider.start((request, index) => script(request, index))
afterAll(() => provider.close())

describeServers("asking a provider (scripted Chat Completions server on loopback)", (server) => {
  it("offers the tools and the schema; a tool error goes back to the model; DELETE leaves every row in place", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const before = await handSql(server(), org, connectorId, "SELECT count(*) FROM orders")
    const seen = provider.requests.length
    script = (_, index) =>
      index === seen
        ? { toolCalls: [{ name: "run_sql", arguments: { connector_id: connectorId, sql: "DELETE FROM orders" } }] }
        : index === seen + 1
        ? {
          toolCalls: [{
            name: "run_sql",
            arguments: { connector_id: connectorId, sql: "SELECT count(*) AS n FROM orders" }
          }]
        }
        : { text: "There are many orders." }
    const events = await readEvents(
      await ask(server(), org, { question: "Delete all orders, then count them", connector_ids: [connectorId] })
    )
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const cells = events.filter((e) => e.data.type === "cell").map((e) => e.data.cell)
    expect(cells.map((c) => c.status)).toEqual(["running", "failed", "running", "completed"])
    expect(cells[1].error).toMatch(/read-only transaction/)
    const after = await handSql(server(), org, connectorId, "SELECT count(*) FROM orders")
    expect(after.rows).toEqual(before.rows)

    const [first, second] = provider.requests.slice(seen)
    expect(first.model).toBe("scripted")
    // The library holds the DEMO model from the start: its tools come with it.
    expect(first.tools.map((t: any) => t.function.name)).toEqual([
      "query_metrics",
      "investigate",
      "run_verified_query",
      "run_sql",
      "create_chart",
      "search_library",
      "read_library_file",
      "run_saved_query",
      "ask_clarification",
      "build_dashboard"
    ])
    expect(first.messages[0].content).toContain("table public.order_items")
    expect(second.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringMatching(/^error: .*read-only transaction/)
    })
  })

  it("build_dashboard: the model's tiles meet the compiler; one that does not compile goes back as an error", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    const tiles = (metric: string) => [
      { title: "Revenue", query: { semantic: { metrics: ["revenue"] } }, visualization: { type: "figure" } },
      {
        title: "By channel",
        query: { semantic: { metrics: [metric], dimensions: ["channel"] } },
        visualization: { type: "bar" }
      }
    ]
    script = (_, index) =>
      index === seen
        ? {
          toolCalls: [{
            name: "build_dashboard",
            arguments: { connector_id: connectorId, name: "web", tiles: tiles("margin") }
          }]
        }
        : index === seen + 1
        ? {
          toolCalls: [{
            name: "build_dashboard",
            arguments: { connector_id: connectorId, name: "web", tiles: tiles("revenue") }
          }]
        }
        : { text: "Filed the web dashboard for review." }
    const answer = await body(
      await server().request("/v2/chats", {
        method: "POST",
        key: org.key,
        json: { question: "Make me a web sales dashboard", connector_ids: [connectorId], model: "scripted" }
      })
    )
    expect(answer.response).toBe("Filed the web dashboard for review.")
    const [, second, third] = provider.requests.slice(seen)
    expect(second.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringMatching(/^error: dashboards\/web\.yaml:\d+: tiles\.1 \(By channel\): .*margin/)
    })
    const filed = JSON.parse(third.messages.at(-1).content)
    expect(filed).toMatchObject({
      path: "dashboards/web.yaml",
      status: "open",
      tiles: [{ type: "figure" }, { type: "bar" }]
    })
    const change = (await body(await server().request("/v2/changes?page_size=100", { key: org.key }))).changes
      .find((c: { number: number }) => c.number === filed.change_number)
    expect(change).toMatchObject({ ai_generated: true, chat_id: answer.chat_id })
    // The dashboard step is in the chat: its cell says what was filed.
    const cells = await body(await server().request(`/v2/chats/${answer.chat_id}/cells?limit=50`, { key: org.key }))
    expect(cells.cells.filter((c: { type: string }) => c.type === "dashboard").map((c: any) => c.status).sort())
      .toEqual(["completed", "failed"])
  })

  it("investigate streams its plan and a cell per step, and gives the model the decomposition, adding up", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    script = (_, index) =>
      index === seen
        ? {
          toolCalls: [{
            name: "investigate",
            arguments: {
              connector_id: connectorId,
              metric: "average_order_value",
              period: { start: `${lastYear}-01-01`, end: `${lastYear + 1}-01-01` },
              compared_with: { start: `${lastYear - 1}-01-01`, end: `${lastYear}-01-01` },
              drivers: ["channel", "region"],
              depth: 1
            }
          }]
        }
        : { text: "Average order value moved; see the steps." }
    const events = await readEvents(
      await ask(server(), org, { question: "What drove average order value last year?", connector_ids: [connectorId] })
    )
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const plan = events.find((e) => e.data.type === "plan")!.data
    expect(plan.steps.map((s: { id: string }) => s.id)).toEqual(["total", "by_channel", "by_region"])
    const cells = events.flatMap((e) =>
      e.data.type === "cell" && e.data.cell.status === "completed" && e.data.cell.type === "sql" ? [e.data.cell] : []
    )
    expect(cells.map((c) => c.content).sort()).toEqual(plan.steps.map((s: { title: string }) => s.title).sort())
    // What the model got back: a ratio's change split by channel into rate and mix, adding up.
    const result = JSON.parse(provider.requests[seen + 1].messages.at(-1).content)
    const byChannel = result.steps.find((step: { id: string }) => step.id === "by_channel")
    expect(byChannel.parts).toHaveLength(3)
    for (const part of byChannel.parts) expect(part.rate + part.mix).toBeCloseTo(part.change, 9)
    expect(byChannel.parts.reduce((sum: number, part: { change: number }) => sum + part.change, 0)).toBeCloseTo(
      result.total.change,
      9
    )
    const aov = await handSql(
      server(),
      org,
      connectorId,
      `SELECT extract(year FROM o.ordered_at)::int, sum(i.line_total) / count(DISTINCT o.id) FROM order_items i
       JOIN orders o ON o.id = i.order_id WHERE ${notCancelled} AND o.ordered_at >= '${lastYear - 1}-01-01'
       AND o.ordered_at < '${lastYear + 1}-01-01' GROUP BY 1 ORDER BY 1`
    )
    expect(result.total.before).toBeCloseTo(Number(aov.rows[0]![1]), 6)
    expect(result.total.after).toBeCloseTo(Number(aov.rows[1]![1]), 6)
  })

  it("a follow-up gives the model the earlier answer as data: its question, its SQL and its first rows", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    const sql = "SELECT channel, count(*) AS n FROM orders GROUP BY channel ORDER BY n DESC, channel"
    script = (_, index) =>
      index === seen
        ? { toolCalls: [{ name: "run_sql", arguments: { connector_id: connectorId, sql } }] }
        : { text: "Orders by channel." }
    const chats = async (json: unknown) => {
      const response = await server().request("/v2/chats", { method: "POST", key: org.key, json })
      expect(response.status).toBe(200)
      return body(response)
    }
    const first = await chats({ question: "Orders per channel", connector_ids: [connectorId] })
    const firstSystem = provider.requests[seen].messages[0].content
    expect(firstSystem).not.toContain("## Earlier answers in this chat")
    const asked = provider.requests.length
    await chats({ question: "and the second one by month?", chat_id: first.chat_id })
    const system: string = provider.requests[asked].messages[0].content
    expect(system).toContain("## Earlier answers in this chat")
    const json = /## Earlier answers in this chat\n[^\n]*\n```json\n([\s\S]*?)\n```/.exec(system)?.[1]
    const expected = await handSql(server(), org, connectorId, sql)
    expect(JSON.parse(json!)).toEqual([{
      question: "Orders per channel",
      cell_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sql,
      connector_id: connectorId,
      columns: ["channel", "n"],
      rows: expected.rows,
      row_count: expected.rows.length
    }])
    // The chat kept its connector: the follow-up is offered the SQL tools.
    expect(provider.requests[asked].tools.map((t: any) => t.function.name)).toContain("run_sql")
  })

  it("query_metrics refines an earlier answer's query by its cell (based_on), which the refining cell records", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    const earlierOf = (request: any) => {
      const json = /```json\n([\s\S]*?)\n```/.exec(request.messages[0].content)?.[1]
      return json === undefined ? [] : JSON.parse(json)
    }
    const period = { start: `${lastYear}-01-01`, end: `${lastYear + 1}-01-01` }
    script = (request, index) =>
      index === seen
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["channel"], time: period }
          }]
        }
        : index === seen + 2
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: connectorId, based_on: earlierOf(request)[0].cell_id, dimensions: ["region"] }
          }]
        }
        : { text: "Done." }
    const chats = async (json: unknown) => {
      const response = await server().request("/v2/chats/stream", { method: "POST", key: org.key, json })
      expect(response.status).toBe(200)
      return readEvents(response)
    }
    const first = await chats({ question: "Revenue per channel last year", connector_ids: [connectorId] })
    const chatId = first[0]!.data.chat_id
    const firstCell = first.filter((e) => e.data.type === "cell").map((e) => e.data.cell).at(-1)
    expect(firstCell.semantic_query).toEqual({ metrics: ["revenue"], dimensions: ["channel"], time: period })
    const asked = provider.requests.length
    const second = await chats({ question: "and by region?", chat_id: chatId })
    expect(earlierOf(provider.requests[asked])[0]).toMatchObject({
      cell_id: firstCell.id,
      semantic_query: { metrics: ["revenue"], dimensions: ["channel"] }
    })
    const cell = second.filter((e) => e.data.type === "cell").map((e) => e.data.cell).at(-1)
    expect(cell).toMatchObject({
      status: "completed",
      based_on_cell_id: firstCell.id,
      semantic_query: { metrics: ["revenue"], dimensions: ["region"], time: period }
    })
    const table = second.find((e) => e.data.type === "asset" && e.data.asset.type === "table")!.data.asset
    const expected = await handSql(
      server(),
      org,
      connectorId,
      `SELECT r.name, round(sum(oi.line_total)::numeric, 2) FROM order_items oi JOIN orders o ON o.id = oi.order_id
       JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
       WHERE ${notCancelled} AND o.ordered_at >= '${period.start}' AND o.ordered_at < '${period.end}'
       GROUP BY 1 ORDER BY 2 DESC`
    )
    expect(JSON.parse(table.content).rows.map((row: Array<unknown>) => [row[0], Number(row[1]).toFixed(2)])).toEqual(
      expected.rows.map((row) => [row[0], Number(row[1]).toFixed(2)])
    )
    // A cell that is no semantic query of this chat is refused, and the model is told why.
    const third = provider.requests.length
    script = (_, index) =>
      index === third
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: connectorId, based_on: crypto.randomUUID(), dimensions: ["region"] }
          }]
        }
        : { text: "Done." }
    await chats({ question: "and by category?", chat_id: chatId })
    expect(provider.requests[third + 1].messages.at(-1).content).toMatch(/^error: based_on: .* is not the cell/)
  })

  it("a CSV download neutralises cells a spreadsheet would run as formulas, and keeps numbers", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    const sql = "SELECT '=HYPERLINK(\"https://evil.example\",\"x\")' AS f, '@SUM(A1)' AS a, '+1+2' AS p, " +
      "'-1+cmd' AS m, -5 AS n, '-12.5' AS t, 'plain' AS s"
    script = (_, index) =>
      index === seen
        ? { toolCalls: [{ name: "run_sql", arguments: { connector_id: connectorId, sql } }] }
        : { text: "Here it is." }
    const asked = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "Export it", connector_ids: [connectorId] }
    })
    expect(asked.status).toBe(200)
    const chat = await body(await server().request(`/v2/chats/${(await body(asked)).chat_id}`, { key: org.key }))
    const download = chat.assets.find((asset: any) => asset.type === "download")
    const csv = await (await fetch(new URL(download.url, server().baseUrl))).text()
    expect(csv).toBe(
      "f,a,p,m,n,t,s\r\n" +
        "\"'=HYPERLINK(\"\"https://evil.example\"\",\"\"x\"\")\",\"'@SUM(A1)\",\"'+1+2\",\"'-1+cmd\",-5,-12.5,plain\r\n"
    )
  })

  it("query_metrics and a verified query: the reading and the trusted source ride on the SQL cells", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const seen = provider.requests.length
    script = (_, index) =>
      index === seen
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["sales channel"] }
          }]
        }
        : index === seen + 1
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: connectorId, metrics: ["revenue"], dimensions: ["channel"] }
          }]
        }
        : index === seen + 2
        ? { toolCalls: [{ name: "run_verified_query", arguments: { name: "revenue_by_channel" } }] }
        : { text: "Revenue by channel: web earns the most." }
    const events = await readEvents(
      await ask(server(), org, {
        question: "Which sales channel makes us the most money?",
        connector_ids: [connectorId]
      })
    )
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const done = events.filter((e) => e.data.type === "cell" && e.data.cell.status === "completed")
      .map((e) => e.data.cell)
    const hand = await handSql(
      server(),
      org,
      connectorId,
      `SELECT o.channel, SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.status <> 'cancelled' GROUP BY o.channel ORDER BY 2 DESC`
    )
    const [metrics, verified] = done
    expect(metrics.reading.text).toBe(
      "Revenue (sum of order line totals after discounts, cancelled orders excluded) by channel, over all time, highest first"
    )
    expect(metrics.reading.metrics).toEqual([{
      name: "revenue",
      definition: "sum of order line totals after discounts, cancelled orders excluded"
    }])
    expect(metrics.trusted_source).toEqual({
      kind: "metric",
      name: "revenue",
      path: "semantic/demo.yaml",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/)
    })
    expect(verified.trusted_source).toMatchObject({ kind: "verified_query", name: "revenue_by_channel" })
    expect(verified.content).toBe("Which sales channel makes us the most money?")
    const table = events.find((e) => e.data.type === "asset" && e.data.asset.cell_id === metrics.id)!.data.asset
    expect(JSON.parse(table.content).rows).toEqual(hand.rows)

    const [first, second, third] = provider.requests.slice(seen)
    // Declared from its Effect schema: the JSON Schema names every field of a semantic query.
    const tool = first.tools.find((t: any) => t.function.name === "query_metrics").function
    expect(Object.keys(tool.parameters.properties)).toEqual(
      [
        "connector_id",
        "based_on",
        "metrics",
        "dimensions",
        "time",
        "filters",
        "segments",
        "order",
        "limit",
        "limit_per",
        "having_each"
      ]
    )
    // Metrics may come from the query it refines (`based_on`).
    expect(tool.parameters.required).toEqual(["connector_id"])
    expect(JSON.stringify(tool.parameters)).not.toContain("$ref")
    // The prompt carries the model, the relevant part first, and offers the verified query like the question.
    expect(first.messages[0].content).toContain("## Semantic models")
    expect(first.messages[0].content).toContain(
      "- revenue_by_channel: \"Which sales channel makes us the most money?\""
    )
    expect(first.messages[0].content).toMatch(
      /\nMetrics:\n(- .*\n)*- revenue: sum of order line totals after discounts/
    )
    // A name the model does not have goes back as an error it can correct.
    expect(second.messages.at(-1).content).toBe("error: no dimension named sales channel in model retail")
    expect(JSON.parse(third.messages.at(-1).content)).toMatchObject({
      reading: metrics.reading.text,
      columns: ["channel", "revenue"],
      rows: hand.rows
    })
    // Stored with the cell, as served later.
    const chatId = events[0]!.data.chat_id
    const stored = await body(await server().request(`/v2/chats/${chatId}/cells/${metrics.id}`, { key: org.key }))
    expect(stored.reading).toEqual(metrics.reading)
    expect(stored.trusted_source).toEqual(metrics.trusted_source)
  })

  it("a client that disconnects does not stop the run: the answer is stored", async () => {
    const org = await server().newOrg()
    script = () => ({ text: "one two three four five six seven eight", delayMs: 60 })
    const response = await ask(server(), org, { question: "Tell me slowly" })
    const events = await readEvents(response, (event) => event.data.type === "text")
    const chatId = events[0]!.data.chat_id
    let stored: any
    for (let i = 0; i < 50 && stored?.messages?.length !== 2; i++) {
      await new Promise((r) => setTimeout(r, 100))
      stored = await body(await server().request(`/v2/chats/${chatId}`, { key: org.key }))
    }
    expect(stored.messages[1].content).toBe("one two three four five six seven eight")
  })

  it("cancel stops the run within a second, closes the provider's request, and the stream ends with done", async () => {
    const org = await server().newOrg()
    script = () => ({ endless: true })
    const response = await ask(server(), org, { question: "Never stop" })
    const reading = readEvents(response)
    // Let the provider start streaming.
    await new Promise((r) => setTimeout(r, 300))
    const chats = await body(await server().request("/v2/chats", { key: org.key }))
    const chatId = chats.chats[0].id
    const abortsBefore = provider.aborts.length
    const started = Date.now()
    const cancel = await server().request(`/v2/chats/${chatId}/cancel`, { method: "POST", key: org.key })
    expect(await body(cancel)).toEqual({ cancelled: true })
    const events = await reading
    expect(Date.now() - started).toBeLessThan(1000)
    expect(events.at(-1)!.data).toEqual({
      type: "done",
      status: "failed",
      error: "cancelled: the run was stopped on request"
    })
    for (let i = 0; i < 20 && provider.aborts.length === abortsBefore; i++) await new Promise((r) => setTimeout(r, 50))
    expect(provider.aborts.length).toBeGreaterThan(abortsBefore)
    const again = await server().request(`/v2/chats/${chatId}/cancel`, { method: "POST", key: org.key })
    expect(await body(again)).toEqual({ cancelled: false })
  })
  it.skipIf(postgresProblem !== undefined)(
    "RLS from the key: a clientId of region EU sees EU rows only, through the database's own policy and through a saved query",
    async () => {
      const org = await server().newOrg()
      await withWarehouse(
        server(),
        org,
        (schema) => [
          ...createSales(`${schema}.sales`),
          ...createSales(`${schema}.secured`),
          ...regionPolicy(`${schema}.secured`)
        ],
        async ({ connectorId, euKey, schema }) => {
          await server().run(Fixtures.seedMain(OrganizationId.make(org.organizationId), MemberId.make(org.memberId), {
            "sales/mine.sql":
              `-- The caller's own sales\nSELECT id, amount FROM ${schema}.sales WHERE region = _svc.client_attributes_json.region ORDER BY id`
          }))

          const seen = provider.requests.length
          script = (_, index) =>
            index === seen
              ? {
                toolCalls: [{
                  name: "run_sql",
                  arguments: {
                    connector_id: connectorId,
                    sql: `SELECT region, sum(amount) AS total FROM ${schema}.secured GROUP BY region`
                  }
                }]
              }
              : index === seen + 1
              ? { toolCalls: [{ name: "run_saved_query", arguments: { path: "sales/mine.sql" } }] }
              : { text: "Done." }
          const response = await server().request("/v2/chats/stream", {
            method: "POST",
            key: euKey,
            json: { question: "My sales", connector_ids: [connectorId] }
          })
          const events = await readEvents(response)
          expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
          const [, second, third] = provider.requests.slice(seen)
          expect(JSON.parse(second.messages.at(-1).content).rows).toEqual([["EU", 15]])
          expect(JSON.parse(third.messages.at(-1).content).rows).toEqual([[1, 10], [3, 5]])
          // The prompt names the attribute, never its value.
          expect(provider.requests[seen].messages[0].content).toContain("fields: region")
          expect(provider.requests[seen].messages[0].content).not.toContain("\"EU\"")
        }
      )
    }
  )
  it.skipIf(postgresProblem !== undefined)(
    "a key with a clientId: SQL the model writes cannot forge the signed attributes, nor run where they are unsigned",
    async () => {
      const org = await server().newOrg()
      await withWarehouse(
        server(),
        org,
        (schema) => [...createSales(`${schema}.secured`), ...regionPolicy(`${schema}.secured`)],
        async ({ connectorId, euKey, schema }) => {
          const forged =
            `WITH forged AS MATERIALIZED (SELECT set_config('svc.client_attributes_json', '{"region":"US"}', true))
            SELECT s.region, sum(s.amount) AS total FROM forged, ${schema}.secured s GROUP BY s.region`
          // The DEMO connector signs nothing: there, the key may not have SQL written for it.
          const demo = await demoConnector(server(), org)
          const seen = provider.requests.length
          script = (_, index) =>
            index === seen
              ? { toolCalls: [{ name: "run_sql", arguments: { connector_id: connectorId, sql: forged } }] }
              : index === seen + 1
              ? {
                toolCalls: [{ name: "run_sql", arguments: { connector_id: demo, sql: "SELECT count(*) FROM orders" } }]
              }
              : { text: "Done." }
          const response = await server().request("/v2/chats/stream", {
            method: "POST",
            key: euKey,
            json: { question: "Everyone's sales", connector_ids: [connectorId, demo] }
          })
          const events = await readEvents(response)
          expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
          const [, second, third] = provider.requests.slice(seen)
          // The forged setting matches no row: the policy verifies the signature.
          expect(JSON.parse(second.messages.at(-1).content).rows).toEqual([])
          expect(third.messages.at(-1).content).toMatch(
            new RegExp(`^error: connector ${demo} does not enforce this key's client attributes in the database`)
          )
        }
      )
    }
  )
}, { models: { compatibleUrl: provider.url, models: Provider.catalogue } })
