import { describe, expect, it } from "@effect/vitest"
import type * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as SchemaPrompt from "@sightline/core/SchemaPrompt"
import * as Offline from "../src/Offline.js"

const column = (name: string, type: string, extra: Partial<ConnectorRuntime.Column> = {}): ConnectorRuntime.Column => ({
  name,
  type,
  nullable: false,
  primaryKey: name === "id",
  ...extra
})

const ref = (table: string) => ({ references: { table, column: "id" } })

// The shape of the DEMO dataset, as introspection reports it.
const tables: ReadonlyArray<ConnectorRuntime.Table> = [
  {
    name: "public.regions",
    rowEstimate: 5,
    columns: [column("id", "integer"), column("code", "text"), column("name", "text")]
  },
  { name: "public.categories", rowEstimate: 8, columns: [column("id", "integer"), column("name", "text")] },
  {
    name: "public.products",
    rowEstimate: 120,
    columns: [
      column("id", "integer"),
      column("name", "text"),
      column("category_id", "integer", ref("public.categories")),
      column("unit_price", "numeric(10,2)"),
      column("launched_on", "date")
    ]
  },
  {
    name: "public.customers",
    rowEstimate: 3000,
    comment: "Customers; segment is Consumer or Business",
    columns: [
      column("id", "integer"),
      column("name", "text"),
      column("segment", "text"),
      column("region_id", "integer", ref("public.regions"))
    ]
  },
  {
    name: "public.orders",
    rowEstimate: 20000,
    comment: "Orders; status is completed, shipped or cancelled; channel is web, store or partner",
    columns: [
      column("id", "integer"),
      column("customer_id", "integer", ref("public.customers")),
      column("ordered_at", "timestamp with time zone"),
      column("status", "text"),
      column("channel", "text")
    ]
  },
  {
    name: "public.order_items",
    rowEstimate: 31000,
    columns: [
      column("id", "integer"),
      column("order_id", "integer", ref("public.orders")),
      column("product_id", "integer", ref("public.products")),
      column("quantity", "integer"),
      column("line_total", "numeric(12,2)", { comment: "revenue of the line in USD" })
    ]
  },
  {
    name: "public.returns",
    rowEstimate: 1500,
    columns: [
      column("id", "integer"),
      column("order_item_id", "integer", ref("public.order_items")),
      column("returned_at", "timestamp with time zone"),
      column("reason", "text"),
      column("refund_amount", "numeric(12,2)")
    ]
  }
]

const system = `Intro\n\n## Data\n${
  SchemaPrompt.render([{ id: 7, name: "Demo", type: "DEMO", schema: { dialect: "postgres", tables } }], "")
}`
const tools: ReadonlyArray<LanguageModel.Tool> = [
  { name: "run_sql", description: "", parameters: {} },
  { name: "create_chart", description: "", parameters: {} }
]
const now = new Date(Date.UTC(2026, 10, 23))

/** The offline model's first answer to a question over a schema prompt (the demo's by default). */
const respond = (question: string, prompt = system) =>
  Offline.respond({ model: "offline", system: prompt, tools, messages: [{ role: "user", content: question }] }, now)

/** The query the offline model plans for a question; fails when it plans none. */
const sqlFor = (question: string, prompt = system) => {
  const parts = respond(question, prompt)
  const call = parts.find((p) => p._tag === "ToolCall")
  if (call?._tag !== "ToolCall") throw new Error(`no query for ${question}: ${JSON.stringify(parts)}`)
  return JSON.parse(call.arguments) as { connector_id: number; sql: string }
}

describe("Offline model planning", () => {
  it("round-trips the schema through the prompt format", () => {
    expect(SchemaPrompt.parse(system)[0]!.schema.tables.map((t) => t.name)).toEqual(tables.map((t) => t.name))
    expect(SchemaPrompt.parse(system)[0]!.schema.tables[5]!.columns[1]!.references).toEqual({
      table: "public.orders",
      column: "id"
    })
  })

  it("top N of a group, joined along foreign keys, in last year's window", () => {
    const { connector_id, sql } = sqlFor("What were the top 5 products by revenue last year?")
    expect(connector_id).toBe(7)
    expect(sql).toBe([
      "SELECT t2.\"name\" AS \"product\", round((sum(t0.\"line_total\"))::numeric, 2) AS \"total_revenue\"",
      "FROM \"public\".\"order_items\" AS t0",
      "JOIN \"public\".\"orders\" AS t1 ON t1.\"id\" = t0.\"order_id\"",
      "JOIN \"public\".\"products\" AS t2 ON t2.\"id\" = t0.\"product_id\"",
      "WHERE t1.\"ordered_at\" >= '2025-01-01' AND t1.\"ordered_at\" < '2026-01-01'",
      "GROUP BY t2.\"name\"",
      "ORDER BY 2 DESC, 1",
      "LIMIT 5"
    ].join("\n"))
  })

  it("counts, breakdowns by a column or a table several joins away, and series over time", () => {
    expect(sqlFor("How many orders were placed last year?").sql).toBe(
      "SELECT count(*) AS \"orders_count\"\nFROM \"public\".\"orders\" AS t0\nWHERE t0.\"ordered_at\" >= '2025-01-01' AND t0.\"ordered_at\" < '2026-01-01'"
    )
    expect(sqlFor("Revenue by region").sql).toContain(
      "JOIN \"public\".\"regions\" AS t3 ON t3.\"id\" = t2.\"region_id\""
    )
    expect(sqlFor("orders by channel").sql).toContain("GROUP BY t0.\"channel\"")
    const series = sqlFor("Monthly revenue in 2025").sql
    expect(series).toContain("date_trunc('month', t1.\"ordered_at\")::date AS \"month\"")
    expect(series).toContain("ORDER BY 1")
    // Counting orders per product crosses a one-to-many key: each order counts once per product.
    expect(sqlFor("how many orders by product").sql).toContain("count(DISTINCT t0.\"id\")")
  })

  it("\"which … the most\" ranks what follows \"which\", ten rows unless a number is asked for", () => {
    expect(sqlFor("Which region had the highest revenue last year?").sql).toBe([
      "SELECT t3.\"name\" AS \"region\", round((sum(t0.\"line_total\"))::numeric, 2) AS \"total_revenue\"",
      "FROM \"public\".\"order_items\" AS t0",
      "JOIN \"public\".\"orders\" AS t1 ON t1.\"id\" = t0.\"order_id\"",
      "JOIN \"public\".\"customers\" AS t2 ON t2.\"id\" = t1.\"customer_id\"",
      "JOIN \"public\".\"regions\" AS t3 ON t3.\"id\" = t2.\"region_id\"",
      "WHERE t1.\"ordered_at\" >= '2025-01-01' AND t1.\"ordered_at\" < '2026-01-01'",
      "GROUP BY t3.\"name\"",
      "ORDER BY 2 DESC, 1",
      "LIMIT 10"
    ].join("\n"))
    // What is counted is the table the question names besides the ranked one.
    const placed = sqlFor("Which customers placed the most orders?").sql
    expect(placed).toContain(
      "SELECT t1.\"name\" AS \"customer\", count(*) AS \"orders_count\"\nFROM \"public\".\"orders\" AS t0"
    )
    expect(placed).toContain("ORDER BY 2 DESC, 1\nLIMIT 10")
    // "returned" names the returns, not the order lines ("items") they return.
    const returned = sqlFor("Which customers returned the most items?").sql
    expect(returned).toContain("count(*) AS \"returns_count\"\nFROM \"public\".\"returns\" AS t0")
    expect(returned).toContain("GROUP BY t3.\"name\"")
    // Units are the quantity, not the unit price; the window is the orders' time, not the products' launch.
    const units = sqlFor("Which 3 products sold the most units in 2025?").sql
    expect(units).toContain("sum(t0.\"quantity\")")
    expect(units).toContain("t1.\"ordered_at\" >= '2025-01-01'")
    expect(units).toContain("GROUP BY t2.\"name\"")
    expect(units).toContain("LIMIT 3")
    expect(sqlFor("Which products sold the most units in 2025?").sql).toContain("LIMIT 10")
    expect(sqlFor("top three products by units").sql).toContain("LIMIT 3")
    expect(sqlFor("Which category has the lowest revenue?").sql).toContain("ORDER BY 2 ASC, 1\nLIMIT 10")
    expect(sqlFor("Which categories had the fewest orders?").sql).toContain("ORDER BY 2 ASC")
    // "spent" is a sum of the revenue; "the most common reasons" count by the column they name.
    expect(sqlFor("Which segment spent the most?").sql).toContain(
      "SELECT t2.\"segment\" AS \"segment\", round((sum(t0.\"line_total\"))::numeric, 2) AS \"total_spent\""
    )
    const reasons = sqlFor("What are the most common return reasons?").sql
    expect(reasons).toContain("count(*) AS \"returns_count\"\nFROM \"public\".\"returns\" AS t0")
    expect(reasons).toContain("GROUP BY t0.\"reason\"")
    // A ranking from the least up says so.
    const lowest = Offline.answer({
      connectorId: 7,
      sql: "",
      shape: "top",
      ascending: true,
      aggregate: "sum",
      valueColumn: "total_revenue",
      labelColumn: "category",
      measureLabel: "revenue"
    }, {
      columns: ["category", "total_revenue"],
      rows: [["Garden", 10.5], ["Toys", 20]],
      row_count: 2,
      truncated: false
    })
    expect(lowest).toContain("The bottom 2 by total revenue: **Garden** is lowest with **10.50**.")
    // Without a ranking, "what" and "which" name nothing to group by.
    expect(sqlFor("What was the total revenue last year?").sql).not.toContain("GROUP BY")
  })

  it("draws a chart of a grouped result, then answers with the numbers and says it is offline", () => {
    const question = "What were the top 5 products by revenue last year?"
    const call = { id: "offline_1", name: "run_sql", arguments: "{}" }
    const result = JSON.stringify({
      columns: ["product", "total_revenue"],
      rows: [["Aero Pro", 1200.5], ["Nova Max", 900]],
      row_count: 2,
      truncated: false
    })
    const afterQuery = Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: "", toolCalls: [call] },
        { role: "tool", toolCallId: "offline_1", content: result }
      ]
    }, now)
    expect(afterQuery[0]).toMatchObject({ _tag: "ToolCall", name: "create_chart" })
    expect(JSON.parse((afterQuery[0] as LanguageModel.ToolCallPart).arguments)).toMatchObject({
      mark: "bar",
      x: "product",
      y: "total_revenue"
    })
    const final = LanguageModel.fromParts(Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: "", toolCalls: [call] },
        { role: "tool", toolCallId: "offline_1", content: result },
        { role: "assistant", content: "", toolCalls: [{ id: "offline_2", name: "create_chart", arguments: "{}" }] },
        { role: "tool", toolCallId: "offline_2", content: "chart created" }
      ]
    }, now))
    expect(final.text).toContain("**Aero Pro** leads with **1,200.50**")
    // A column with a fraction writes every value with two decimals.
    expect(final.text).toContain("| Nova Max | 900.00 |")
    expect(final.text).toContain(Offline.signature)
  })

  it("writes a report of the answer, its chart and its rows when write_report is offered", () => {
    const question = "What were the top 5 products by revenue last year?"
    const withReport = [...tools, { name: "write_report", description: "", parameters: {} }]
    const plan = Offline.respond({
      model: "offline",
      system,
      tools: withReport,
      messages: [{ role: "user", content: question }]
    }, now)
    const call = plan[0] as LanguageModel.ToolCallPart
    const result = JSON.stringify({
      columns: ["product", "total_revenue"],
      rows: [["Aero Pro", 1200.5], ["Nova Max", 900]],
      row_count: 2,
      truncated: false
    })
    const history: Array<LanguageModel.Message> = [
      { role: "user", content: question },
      { role: "assistant", content: "", toolCalls: [{ id: call.id, name: call.name, arguments: call.arguments }] },
      { role: "tool", toolCallId: call.id, content: result },
      { role: "assistant", content: "", toolCalls: [{ id: "offline_2", name: "create_chart", arguments: "{}" }] },
      {
        role: "tool",
        toolCallId: "offline_2",
        content: JSON.stringify({ status: "chart created", image_url: "chart:1" })
      }
    ]
    const afterChart = Offline.respond({ model: "offline", system, tools: withReport, messages: history }, now)
    expect(afterChart[0]).toMatchObject({ _tag: "ToolCall", name: "write_report" })
    const report = JSON.parse((afterChart[0] as LanguageModel.ToolCallPart).arguments)
    expect(report.subject).toBe(question)
    expect(report.summary).toContain("Aero Pro leads with 1,200.50")
    expect(report.blocks.map((b: { type: string }) => b.type)).toEqual(["hero", "image", "list", "divider", "text"])
    expect(report.blocks[1].image_url).toBe("chart:1")
    expect(report.blocks[2].items).toEqual(["Aero Pro: 1,200.50", "Nova Max: 900.00"])
    const final = LanguageModel.fromParts(Offline.respond({
      model: "offline",
      system,
      tools: withReport,
      messages: [
        ...history,
        { role: "assistant", content: "", toolCalls: [{ id: "offline_3", name: "write_report", arguments: "{}" }] },
        { role: "tool", toolCallId: "offline_3", content: "report saved" }
      ]
    }, now))
    expect(final.text).toContain("**Aero Pro** leads")
  })

  it("reads measures the library's ontology notes define", () => {
    const withNotes =
      `${system}\n\n## Context Library\n### Ontology notes\n#### ontology/terms.md\n- GMV: order_items.line_total\nBookings means quantity`
    const ask = (question: string) => {
      const parts = Offline.respond({
        model: "offline",
        system: withNotes,
        tools,
        messages: [{ role: "user", content: question }]
      }, now)
      const call = parts.find((p) => p._tag === "ToolCall")
      return call?._tag === "ToolCall" ? JSON.parse(call.arguments).sql as string : LanguageModel.fromParts(parts).text
    }
    expect(ask("GMV by region")).toContain("sum(t0.\"line_total\")")
    expect(ask("bookings by product")).toContain("sum(t0.\"quantity\")")
    // Without the notes, the word names no measure.
    const plain = Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [{ role: "user", content: "GMV by region" }]
    }, now)
    expect(JSON.stringify(plain)).not.toContain("line_total")
  })

  it("keeps to the values that comments list and the question names", () => {
    expect(sqlFor("How many orders were cancelled last year?").sql).toBe(
      "SELECT count(*) AS \"orders_count\"\nFROM \"public\".\"orders\" AS t0\nWHERE t0.\"ordered_at\" >= '2025-01-01' AND t0.\"ordered_at\" < '2026-01-01' AND t0.\"status\" = 'cancelled'"
    )
    // Several values of a column, in the order the comment lists them; a filter on a joined table.
    expect(sqlFor("Total revenue from shipped or completed orders in 2025").sql).toContain(
      "AND t1.\"status\" IN ('completed', 'shipped')"
    )
    const business = sqlFor("How many business customers by region?").sql
    expect(business).toContain("WHERE t0.\"segment\" = 'Business'")
    expect(business).toContain("GROUP BY t1.\"name\"")
    // Naming the column is not naming a value.
    expect(sqlFor("Revenue by channel").sql).not.toContain("WHERE")
    // The answer says what the rows were kept to.
    const answer = Offline.answer(
      {
        connectorId: 7,
        sql: "",
        shape: "total",
        aggregate: "count",
        valueColumn: "orders_count",
        measureLabel: "orders",
        period: "in 2025",
        filters: [{ column: "status", values: ["cancelled"] }]
      },
      { columns: ["orders_count"], rows: [[549]], row_count: 1, truncated: false }
    )
    expect(answer).toBe("There were **549** orders where status is cancelled in 2025.")
  })

  it("reads only lists of at least two plain values from comments", () => {
    const schemaWith = (comment: string) =>
      `Intro\n\n## Data\n${
        SchemaPrompt.render([{
          id: 7,
          name: "Demo",
          type: "DEMO",
          schema: {
            dialect: "postgres",
            tables: [{
              name: "public.tickets",
              rowEstimate: 10,
              comment,
              columns: [column("id", "integer"), column("state", "text"), column("opened_at", "date")]
            }]
          }
        }], "")
      }`
    const sqlOf = (comment: string, question: string) => sqlFor(question, schemaWith(comment)).sql
    expect(sqlOf("Tickets; state is 'open' or 'closed'", "how many open tickets")).toContain("t0.\"state\" = 'open'")
    expect(
      sqlOf("Tickets; state is open, Research and Development or closed", "how many research and development tickets")
    )
      .toContain("t0.\"state\" = 'Research and Development'")
    // One value is prose, not a list; a value with a quote or a backslash is never written into SQL.
    expect(sqlOf("Tickets; state is open", "how many open tickets")).not.toContain("WHERE")
    expect(sqlOf("Tickets; state is o'pen or closed", "how many closed tickets")).not.toContain("WHERE")
    expect(sqlOf("Tickets; state is open\\ or closed", "how many closed tickets")).not.toContain("WHERE")
  })

  it("ranks periods, buckets weeks and quarters on MySQL, and names a measure by its column's words", () => {
    const ranked = sqlFor("Which month had the highest revenue last year?").sql
    expect(ranked).toContain("SELECT date_trunc('month', t1.\"ordered_at\")::date AS \"month\"")
    expect(ranked).toContain("GROUP BY 1\nORDER BY 2 DESC, 1\nLIMIT 10")
    expect(sqlFor("Monthly revenue in 2025").sql).toMatch(/GROUP BY 1\nORDER BY 1$/)
    expect(sqlFor("Average unit price by category").sql).toContain("AS \"average_unit_price\"")

    const mysql = `Intro\n\n## Data\n${
      SchemaPrompt.render([{ id: 7, name: "Shop", type: "MYSQL", schema: { dialect: "mysql", tables } }], "")
    }`
    const mysqlSql = (question: string) => sqlFor(question, mysql).sql
    // Checked on MariaDB: 2025-08-14 falls in the week of 2025-08-11 and the quarter of 2025-07-01.
    expect(mysqlSql("Weekly revenue in 2025")).toContain(
      "SELECT DATE_FORMAT(DATE(t1.`ordered_at`) - INTERVAL WEEKDAY(t1.`ordered_at`) DAY, '%Y-%m-%d') AS `week`"
    )
    expect(mysqlSql("Quarterly revenue in 2025")).toContain(
      "DATE_FORMAT(MAKEDATE(YEAR(t1.`ordered_at`), 1) + INTERVAL QUARTER(t1.`ordered_at`) - 1 QUARTER, '%Y-%m-%d')"
    )
  })

  it("says what it cannot do instead of guessing", () => {
    const parts = Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [{ role: "user", content: "What is the meaning of life?" }]
    }, now)
    expect(LanguageModel.fromParts(parts).text).toMatch(/^I could not turn this question into a query/)
    const noData = Offline.respond({ model: "offline", messages: [{ role: "user", content: "top products" }] }, now)
    expect(LanguageModel.fromParts(noData).text).toContain("no data connector is enabled")
    expect(LanguageModel.fromParts(respond("What share of orders came through the web?")).text).toContain(
      "I cannot work out shares or percentages"
    )
  })
})
