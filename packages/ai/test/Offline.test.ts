import { describe, expect, it } from "@effect/vitest"
import type * as ConnectorRuntime from "@sightline/core/ConnectorRuntime"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as SchemaPrompt from "@sightline/core/SchemaPrompt"
import * as Periods from "../src/internal/periods.js"
import * as Planner from "../src/internal/planner.js"
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
    comment: "Sales regions; name is North America, Europe, Asia Pacific, Latin America or Middle East & Africa",
    columns: [column("id", "integer"), column("code", "text"), column("name", "text")]
  },
  {
    name: "public.categories",
    rowEstimate: 8,
    comment: "Product categories; name is Laptops, Phones, Audio or Smart Home",
    columns: [column("id", "integer"), column("name", "text")]
  },
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
    comment: "Order lines",
    columns: [
      column("id", "integer"),
      column("order_id", "integer", ref("public.orders")),
      column("product_id", "integer", ref("public.products")),
      column("quantity", "integer"),
      column("discount", "numeric(4,2)"),
      column("line_total", "numeric(12,2)", {
        comment: "revenue of the line in USD: quantity × unit_price × (1 − discount)"
      })
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

/** A system prompt over one connector (id 7) of these tables. */
const promptOf = (
  schemaTables: ReadonlyArray<ConnectorRuntime.Table>,
  dialect: "postgres" | "mysql" = "postgres"
) =>
  `Intro\n\n## Data\n${
    SchemaPrompt.render([{
      id: 7,
      name: "Demo",
      type: dialect === "mysql" ? "MYSQL" : "DEMO",
      schema: { dialect, tables: schemaTables }
    }], "")
  }`
const system = promptOf(tables)
const tools: ReadonlyArray<LanguageModel.Tool> = [
  { name: "run_sql", description: "", parameters: {} },
  { name: "create_chart", description: "", parameters: {} }
]
const now = new Date(Date.UTC(2026, 10, 23))
/** The window a question names, at `now`. */
const window = (question: string) => Periods.windowOf(question, now)

/** Whether a call looks a name up in the data (rather than running the plan's query). */
const isLookup = (part: LanguageModel.Part | undefined): part is LanguageModel.ToolCallPart =>
  part?._tag === "ToolCall" && (JSON.parse(part.arguments) as { sql: string }).sql.includes("AS \"table_name\"")

/** A lookup's result: the rows of table, column and name it found. */
const lookupResult = (rows: ReadonlyArray<readonly [string, string, string]>) =>
  JSON.stringify({ columns: ["table_name", "column_name", "value"], rows, row_count: rows.length, truncated: false })

/**
 * The offline model's first answer to a question over a schema prompt (the demo's by default) once
 * the data has no row of any name the question says: each lookup of one finds nothing.
 */
const respond = (question: string, prompt = system) => {
  const messages: Array<LanguageModel.Message> = [{ role: "user", content: question }]
  for (;;) {
    const parts = Offline.respond({ model: "offline", system: prompt, tools, messages }, now)
    const call = parts.find((part) => part._tag === "ToolCall")
    if (!isLookup(call)) return parts
    messages.push(
      { role: "assistant", content: "", toolCalls: [{ id: call.id, name: call.name, arguments: call.arguments }] },
      { role: "tool", toolCallId: call.id, content: lookupResult([]) }
    )
  }
}

/** The offline model's next parts for a question once its queries so far answered `results`, in order. */
const afterQueries = (question: string, results: ReadonlyArray<string>) => {
  const messages: Array<LanguageModel.Message> = [{ role: "user", content: question }]
  results.forEach((content, i) => {
    const call = { id: `offline_${i + 1}`, name: "run_sql", arguments: "{}" }
    messages.push({ role: "assistant", content: "", toolCalls: [call] }, { role: "tool", toolCallId: call.id, content })
  })
  return Offline.respond({ model: "offline", system, tools, messages }, now)
}

/** The offline model's plan for a question; fails when it plans none. */
const planFor = (question: string, prompt = system): Planner.Plan => {
  const planned = Planner.plan(question, SchemaPrompt.parse(prompt), now)
  if ("unplannable" in planned) throw new Error(`no plan for ${question}: ${planned.unplannable}`)
  return planned
}

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
      "GROUP BY t2.\"id\", t2.\"name\"",
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
      "GROUP BY t3.\"id\", t3.\"name\"",
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
    expect(returned).toContain("GROUP BY t3.\"id\", t3.\"name\"")
    // Units are the quantity, not the unit price; the window is the orders' time, not the products' launch.
    const units = sqlFor("Which 3 products sold the most units in 2025?").sql
    expect(units).toContain("sum(t0.\"quantity\")")
    expect(units).toContain("t1.\"ordered_at\" >= '2025-01-01'")
    expect(units).toContain("GROUP BY t2.\"id\", t2.\"name\"")
    expect(units).toContain("LIMIT 3")
    expect(sqlFor("Which products sold the most units in 2025?").sql).toContain("LIMIT 10")
    expect(sqlFor("top three products by units").sql).toContain("LIMIT 3")
    // The number before the ranking word; a year is no number of rows.
    expect(sqlFor("Show me the 3 lowest revenue products").sql).toContain("ORDER BY 2 ASC, 1\nLIMIT 3")
    expect(sqlFor("What were the 2025 top products by revenue?").sql).toContain("LIMIT 10")
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
    // A result cut at the row cap says there is more than it holds.
    const rows = Array.from({ length: 10_000 }, (_, i) => [String(i), 10_000 - i])
    const byOrder = planFor("Total revenue per order")
    const cut = (truncated: boolean) =>
      Offline.answer(byOrder, { columns: ["order", "total_revenue"], rows, row_count: rows.length, truncated })
    expect(cut(true)).toContain(
      "(9,975 more rows in the table and the CSV; the query stopped at 10,000 rows, and there are more.)"
    )
    expect(cut(false)).toContain("(9,975 more rows in the table and the CSV.)")
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
    expect(business).toContain("GROUP BY t1.\"id\", t1.\"name\"")
    // Naming the column is not naming a value.
    expect(sqlFor("Revenue by channel").sql).not.toContain("WHERE")
    // The answer says what the rows were kept to.
    const answer = Offline.answer(
      planFor("How many orders were cancelled last year?"),
      { columns: ["orders_count"], rows: [[549]], row_count: 1, truncated: false }
    )
    expect(answer).toBe("There were **549** orders where status is cancelled in 2025.")
  })

  it("reads only lists of at least two plain values from comments", () => {
    const schemaWith = (comment: string) =>
      promptOf([{
        name: "public.tickets",
        rowEstimate: 10,
        comment,
        columns: [column("id", "integer"), column("state", "text"), column("opened_at", "date")]
      }])
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
    // A column's own comment lists them too, in either form; one naming another column does not.
    const stateSaying = (comment: string) =>
      promptOf([{
        name: "public.tickets",
        rowEstimate: 10,
        columns: [column("id", "integer"), column("state", "text", { comment }), column("opened_at", "date")]
      }])
    for (const comment of ["state is open, pending or closed", "one of open, pending, closed"]) {
      expect(sqlFor("how many closed tickets", stateSaying(comment)).sql).toContain("t0.\"state\" = 'closed'")
    }
    expect(sqlFor("how many closed tickets", stateSaying("status is open or closed")).sql).not.toContain("WHERE")
    // A column's words are no period: "monthly price" is the column monthly_price.
    const plans = promptOf([{
      name: "public.plans",
      rowEstimate: 3,
      columns: [
        column("id", "integer", { primaryKey: true }),
        column("name", "text"),
        column("monthly_price", "numeric")
      ]
    }])
    // A yes-or-no column is a state the question may name, or name with "un" before it.
    const invoices = (dialect: "postgres" | "mysql") =>
      promptOf([{
        name: dialect === "mysql" ? "billing.invoices" : "public.invoices",
        rowEstimate: 3,
        columns: [
          column("id", "integer", { primaryKey: true }),
          column("amount_due", "numeric"),
          column("paid", dialect === "mysql" ? "tinyint(1)" : "boolean"),
          column("issued_at", "timestamp with time zone")
        ]
      }], dialect)
    expect(sqlFor("How many unpaid invoices are there?", invoices("postgres")).sql).toBe(
      "SELECT count(*) AS \"invoices_count\"\nFROM \"public\".\"invoices\" AS t0\nWHERE t0.\"paid\" = FALSE"
    )
    expect(sqlFor("How many invoices were paid in 2025?", invoices("postgres")).sql).toContain(
      "WHERE t0.\"issued_at\" >= '2025-01-01' AND t0.\"issued_at\" < '2026-01-01' AND t0.\"paid\" = TRUE"
    )
    expect(sqlFor("Total amount due of unpaid invoices", invoices("mysql")).sql).toMatch(
      /sum\(t0.`amount_due`\).*\nFROM `billing`.`invoices` AS t0\nWHERE t0.`paid` = FALSE$/s
    )
    expect(sqlFor("How many invoices are there?", invoices("postgres")).sql).not.toContain("WHERE")
    // The time of what the question says happened: cancelled_at for subscriptions cancelled.
    const subscriptions = promptOf([{
      name: "public.subscriptions",
      rowEstimate: 3,
      columns: [
        column("id", "integer", { primaryKey: true }),
        column("status", "text", { comment: "status is active, cancelled or trialing" }),
        column("started_at", "timestamp with time zone"),
        column("cancelled_at", "timestamp with time zone")
      ]
    }])
    expect(sqlFor("How many subscriptions were cancelled in 2025?", subscriptions).sql).toBe(
      "SELECT count(*) AS \"subscriptions_count\"\nFROM \"public\".\"subscriptions\" AS t0\n" +
        "WHERE t0.\"cancelled_at\" >= '2025-01-01' AND t0.\"cancelled_at\" < '2026-01-01' AND t0.\"status\" = 'cancelled'"
    )
    expect(sqlFor("How many subscriptions were started in 2025?", subscriptions).sql).toContain("t0.\"started_at\" >= ")
    expect(sqlFor("How many subscriptions in 2025?", subscriptions).sql).toContain("t0.\"started_at\" >= ")
    const monthly = sqlFor("What's the average monthly price of plans?", plans).sql
    expect(monthly).toMatch(/^SELECT round\(\(avg\(t0."monthly_price"\)\)::numeric, /)
    expect(monthly).toMatch(/ AS "average_monthly_price"\nFROM "public"."plans" AS t0$/)
  })

  it("ranks periods, buckets weeks and quarters on MySQL, and names a measure by its column's words", () => {
    const ranked = sqlFor("Which month had the highest revenue last year?").sql
    expect(ranked).toContain("SELECT date_trunc('month', t1.\"ordered_at\")::date AS \"month\"")
    expect(ranked).toContain("GROUP BY 1\nORDER BY 2 DESC, 1\nLIMIT 10")
    expect(sqlFor("Monthly revenue in 2025").sql).toMatch(/GROUP BY 1\nORDER BY 1$/)
    expect(sqlFor("Average unit price by category").sql).toContain("AS \"average_unit_price\"")

    const mysql = promptOf(tables, "mysql")
    const mysqlSql = (question: string) => sqlFor(question, mysql).sql
    // Checked on MariaDB: 2025-08-14 falls in the week of 2025-08-11 and the quarter of 2025-07-01.
    expect(mysqlSql("Weekly revenue in 2025")).toContain(
      "SELECT DATE_FORMAT(DATE(t1.`ordered_at`) - INTERVAL WEEKDAY(t1.`ordered_at`) DAY, '%Y-%m-%d') AS `week`"
    )
    expect(mysqlSql("Quarterly revenue in 2025")).toContain(
      "DATE_FORMAT(MAKEDATE(YEAR(t1.`ordered_at`), 1) + INTERVAL QUARTER(t1.`ordered_at`) - 1 QUARTER, '%Y-%m-%d')"
    )
  })

  it("reads quarters, halves, months and weeks, and a month without a year is the latest begun", () => {
    expect(window("What was revenue in Q3 2025?")).toEqual({
      from: "2025-07-01",
      to: "2025-10-01",
      label: "in Q3 2025"
    })
    expect(window("revenue in the third quarter of last year")).toMatchObject({ from: "2025-07-01", to: "2025-10-01" })
    expect(window("orders last quarter")).toEqual({ from: "2026-07-01", to: "2026-10-01", label: "in Q3 2026" })
    expect(window("orders this quarter")).toMatchObject({ label: "in Q4 2026 so far" })
    expect(window("revenue in H1 2025")).toMatchObject({ from: "2025-01-01", to: "2025-07-01" })
    expect(window("revenue in March 2025")).toEqual({ from: "2025-03-01", to: "2025-04-01", label: "in March 2025" })
    // Now is November 2026: March has begun this year, December has not.
    expect(window("revenue in March")).toMatchObject({ from: "2026-03-01" })
    expect(window("revenue in December")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    // "Last <month>" is the latest that has ended (this November has not), "this <month>" this year's.
    expect(window("Orders per day last December")).toEqual({
      from: "2025-12-01",
      to: "2026-01-01",
      label: "in December 2025"
    })
    expect(window("revenue last March")).toMatchObject({ from: "2026-03-01", to: "2026-04-01" })
    expect(window("revenue last November")).toMatchObject({ from: "2025-11-01", to: "2025-12-01" })
    expect(window("orders this March")).toMatchObject({ from: "2026-03-01", to: "2026-04-01" })
    expect(sqlFor("Orders per day last December").sql).toContain(
      "WHERE t0.\"ordered_at\" >= '2025-12-01' AND t0.\"ordered_at\" < '2026-01-01'"
    )
    expect(window("orders last month")).toEqual({ from: "2026-10-01", to: "2026-11-01", label: "in October 2026" })
    expect(Periods.windowOf("orders last month", new Date(Date.UTC(2026, 0, 10)))).toMatchObject({
      label: "in December 2025"
    })
    // Weeks start on Monday: now (Monday 23 November) is in the week of the 23rd.
    expect(window("orders last week")).toMatchObject({ from: "2026-11-16", to: "2026-11-23" })
    // A day, in any of its usual spellings; without a year, the latest that has begun.
    for (
      const day of ["on 2025-12-24", "on December 24, 2025", "on 24 December 2025", "on the 24th of December 2025"]
    ) {
      expect(window(`revenue ${day}`)).toEqual({ from: "2025-12-24", to: "2025-12-25", label: "on 2025-12-24" })
    }
    expect(window("orders on December 24")).toMatchObject({ from: "2025-12-24" })
    expect(window("orders on November 2")).toMatchObject({ from: "2026-11-02" })
    expect(window("orders on February 29")).toMatchObject({ from: "2024-02-29" })
    // The last quarter (half, month) of a year is its last, not the one before this.
    expect(window("orders in each region in the last quarter of 2025")).toEqual({
      from: "2025-10-01",
      to: "2026-01-01",
      label: "in Q4 2025"
    })
    expect(window("revenue in the final month of last year")).toMatchObject({
      from: "2025-12-01",
      label: "in December 2025"
    })
    expect(window("revenue in the last half of 2024")).toMatchObject({ from: "2024-07-01", to: "2025-01-01" })
    expect(window("orders last quarter")).toMatchObject({ label: "in Q3 2026" })
    // A ranking's number before a month is no day.
    expect(window("the top 5 June 2025 products")).toMatchObject({ from: "2025-06-01", to: "2025-07-01" })
    expect(window("revenue since December 1, 2025")).toEqual({
      from: "2025-12-01",
      to: "2026-11-24",
      label: "since 2025-12-01"
    })
    expect(window("orders on February 30, 2025")).toEqual({
      unreadable: expect.stringContaining("not in the calendar")
    })
    expect(window("orders on 12/24/2025")).toEqual({ unreadable: expect.stringContaining("whose order differs") })
    // A month and its year are no day.
    expect(window("revenue in December 2025")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    expect(window("may I see the revenue")).toBeUndefined()
    // Rolling windows end with today (the 23rd).
    expect(window("sales today")).toEqual({ from: "2026-11-23", to: "2026-11-24", label: "today" })
    expect(window("What were total sales yesterday?")).toMatchObject({ from: "2026-11-22", to: "2026-11-23" })
    expect(window("Sales in the past 7 days")).toEqual({
      from: "2026-11-17",
      to: "2026-11-24",
      label: "in the last 7 days"
    })
    expect(window("orders in the last 2 weeks")).toMatchObject({ from: "2026-11-10", to: "2026-11-24" })
    expect(window("revenue over the past 3 months")).toMatchObject({ from: "2026-08-24", to: "2026-11-24" })
    expect(window("revenue in the past year")).toMatchObject({ from: "2025-11-24", label: "in the last year" })
    expect(sqlFor("What was revenue in Q3 2025?").sql).toContain(
      "t1.\"ordered_at\" >= '2025-07-01' AND t1.\"ordered_at\" < '2025-10-01'"
    )
  })

  it("reads a range that starts or ends with a period, and declines one between two", () => {
    expect(window("Revenue since March 2025")).toEqual({
      from: "2025-03-01",
      to: "2026-11-24",
      label: "since March 2025"
    })
    expect(window("orders after 2024")).toEqual({ from: "2025-01-01", to: "2026-11-24", label: "after 2024" })
    expect(window("Total revenue before 2025")).toEqual({ to: "2025-01-01", label: "before 2025" })
    expect(window("revenue until Q2 2025")).toEqual({ to: "2025-07-01", label: "until the end of Q2 2025" })
    // An edge the question names wins over the word's own.
    expect(window("revenue before the end of 2025")).toEqual({ to: "2026-01-01", label: "before the end of 2025" })
    expect(window("orders since the start of Q3 2025")).toMatchObject({ from: "2025-07-01" })
    expect(window("orders after the start of 2025")).toMatchObject({ from: "2025-01-01" })
    // A range word before no period is no range.
    expect(window("orders through the web channel in 2025")).toMatchObject({ from: "2025-01-01", to: "2026-01-01" })
    expect(window("revenue after returns")).toBeUndefined()
    expect(window("revenue from web and store in 2025")).toMatchObject({ from: "2025-01-01", to: "2026-01-01" })
    // An open side has no condition.
    const before = sqlFor("Total revenue before 2025").sql
    expect(before).toContain("WHERE t1.\"ordered_at\" < '2025-01-01'")
    expect(before).not.toContain(">=")
    const declined = (question: string) => LanguageModel.fromParts(respond(question)).text
    expect(declined("Revenue between January and March 2025")).toContain("not a range between two")
    expect(declined("Revenue from January to March 2025")).toContain("not a range between two")
    expect(declined("Revenue in 2025 before March")).toContain("one period at a time")
    expect(declined("Revenue for Q4 vs Q3 2025")).toContain("two to compare")
    // Part of a period was answered for all of it; its word is no name either ("late", "mid-").
    for (const part of ["How many orders in late 2025?", "Revenue in mid-2025", "Orders since early 2025"]) {
      expect(declined(part)).toContain("not the early, middle or late part of one")
    }
    expect(declined("Revenue at the end of last year")).toContain("late part of one")
    // So were some weeks or days of one; the last month of a year is its December.
    for (
      const part of [
        "What was revenue in the first week of 2025?",
        "Orders in the first 10 days of March 2025",
        "Revenue in the last two weeks of 2025",
        "Sales in the first month of 2025"
      ]
    ) {
      expect(declined(part)).toContain("not some weeks or days of one")
    }
    expect(window("revenue in the last month of 2025")).toMatchObject({ from: "2025-12-01", to: "2026-01-01" })
    expect(sqlFor("revenue by week in January 2025").sql).toContain(
      "WHERE t1.\"ordered_at\" >= '2025-01-01' AND t1.\"ordered_at\" < '2025-02-01'"
    )
    // A period's ordinal is no name.
    expect(planFor("What were the sales in the first quarter of 2025 by region?").period).toBe("in Q1 2025")
    expect(window("revenue until the end of 2024")).toEqual({ to: "2025-01-01", label: "until the end of 2024" })
    expect(Offline.answer(
      planFor("Total revenue before 2025"),
      { columns: ["total_revenue"], rows: [[8945816.66]], row_count: 1, truncated: false }
    )).toBe("The total revenue before 2025 was **8,945,816.66**.")
  })

  it("keeps to a name that a comment lists, and declines one that nothing in the schema knows", () => {
    const europe = sqlFor("Revenue in Europe last year").sql
    expect(europe).toContain("JOIN \"public\".\"regions\" AS t3 ON t3.\"id\" = t2.\"region_id\"")
    expect(europe).toContain("AND t3.\"name\" = 'Europe'")
    expect(sqlFor("Revenue in Middle East & Africa").sql).toContain("t3.\"name\" = 'Middle East & Africa'")
    expect(LanguageModel.fromParts(respond("Revenue in Atlantis last year")).text).toContain(
      "\"Atlantis\" is not a table, a column or a value that the schema's comments list"
    )
    expect(LanguageModel.fromParts(respond("How many orders from Acme Corp?")).text).toContain("\"Acme Corp\"")
    // Written in lower case, a name is just as unknown; words that say how to answer are no name.
    expect(LanguageModel.fromParts(respond("sales in germany")).text).toContain("\"germany\" is not a table")
    expect(LanguageModel.fromParts(respond("revenue for electronics last year")).text).toContain("\"electronics\"")
    expect(LanguageModel.fromParts(respond("revenue in the us")).text).toContain("\"us\"")
    expect(LanguageModel.fromParts(respond("How many orders were placed on weekends?")).text).toContain("\"weekends\"")
    expect(LanguageModel.fromParts(respond("Revenue during the holidays")).text).toContain("\"holidays\" is not")
    expect(LanguageModel.fromParts(respond("Orders over the weekend")).text).toContain("\"weekend\" is not")
    expect(sqlFor("Revenue over time").sql).toContain("date_trunc('month'")
    expect(sqlFor("Orders across all channels in 2025").sql).toContain("GROUP BY t0.\"channel\"")
    // Periods, measures and the comments' own words are known.
    for (
      const question of [
        "Revenue in March",
        "Revenue in Q3 2025",
        "Revenue in USD",
        "Orders by channel in Web",
        "revenue in europe",
        "revenue in total for each category",
        "How many orders are in the database?",
        "How many customers bought from us last year?",
        "Revenue in the past 30 days",
        "On average, how many items are in an order?",
        "How many orders were placed on the web?"
      ]
    ) {
      expect(sqlFor(question).sql).toContain("SELECT")
    }
    // A name's column is called by its table in the answer.
    const answer = Offline.answer(
      planFor("Revenue in Europe last year"),
      { columns: ["total_revenue"], rows: [[2962662.62]], row_count: 1, truncated: false }
    )
    expect(answer).toBe("The total revenue where region is Europe in 2025 was **2,962,662.62**.")
  })

  it("breaks a result down by two groups, or a series by a group, and ranks within a group", () => {
    expect(sqlFor("Revenue by category and region last year").sql).toBe([
      "SELECT t3.\"name\" AS \"category\", t5.\"name\" AS \"region\", round((sum(t0.\"line_total\"))::numeric, 2) AS \"total_revenue\"",
      "FROM \"public\".\"order_items\" AS t0",
      "JOIN \"public\".\"orders\" AS t1 ON t1.\"id\" = t0.\"order_id\"",
      "JOIN \"public\".\"products\" AS t2 ON t2.\"id\" = t0.\"product_id\"",
      "JOIN \"public\".\"categories\" AS t3 ON t3.\"id\" = t2.\"category_id\"",
      "JOIN \"public\".\"customers\" AS t4 ON t4.\"id\" = t1.\"customer_id\"",
      "JOIN \"public\".\"regions\" AS t5 ON t5.\"id\" = t4.\"region_id\"",
      "WHERE t1.\"ordered_at\" >= '2025-01-01' AND t1.\"ordered_at\" < '2026-01-01'",
      "GROUP BY t3.\"id\", t3.\"name\", t5.\"id\", t5.\"name\"",
      "ORDER BY 3 DESC, 1, 2"
    ].join("\n"))
    const series = sqlFor("Monthly revenue by region in 2025").sql
    expect(series).toContain(
      "SELECT date_trunc('month', t1.\"ordered_at\")::date AS \"month\", t3.\"name\" AS \"region\""
    )
    expect(series).toMatch(/GROUP BY 1, t3."id", t3."name"\nORDER BY 1, 2$/)
    expect(sqlFor("Revenue by region and month").sql).toMatch(/GROUP BY 1, t3."id", t3."name"\nORDER BY 1, 2$/)
    // "the top 3 products per region": each region's own first three.
    const perRegion = sqlFor("Top 3 products by revenue per region").sql
    expect(perRegion).toContain(
      "row_number() OVER (PARTITION BY t4.\"id\" ORDER BY round((sum(t0.\"line_total\"))::numeric, 2) DESC, t1.\"name\") AS \"rank\""
    )
    expect(perRegion).toMatch(/\) AS ranked\nWHERE "rank" <= 3\nORDER BY 1, 3 DESC, 2$/)
    // "the top 2 products each month": each month's own first two.
    const perMonth = sqlFor("Top 2 products by revenue each month in 2025").sql
    expect(perMonth).toMatch(/^SELECT "month", "product", "total_revenue"\n/)
    expect(perMonth).toContain("row_number() OVER (PARTITION BY date_trunc('month', t1.\"ordered_at\")::date ORDER BY")
    expect(perMonth).toContain("WHERE \"rank\" <= 2")
    // Customers of the same name are grouped apart.
    expect(sqlFor("Top 10 customers by revenue").sql).toContain("GROUP BY t2.\"id\", t2.\"name\"")
    expect(LanguageModel.fromParts(respond("Revenue by category, region and channel")).text).toContain(
      "by two things at most"
    )
    // Two words for the first ("customer segment"); the second is not dropped.
    expect(sqlFor("What is the revenue by customer segment and channel?").sql).toContain(
      "GROUP BY t2.\"segment\", t1.\"channel\""
    )

    // The second group is the chart's colour; the answer leads with the first row's groups.
    const result = {
      columns: ["category", "region", "total_revenue"],
      rows: [["Laptops", "Europe", 954584.94], ["Phones", "Europe", 400000]],
      row_count: 2,
      truncated: false
    }
    const question = "Revenue by category and region last year"
    const call = { id: "offline_1", name: "run_sql", arguments: "{}" }
    const chart = Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: "", toolCalls: [call] },
        { role: "tool", toolCallId: "offline_1", content: JSON.stringify(result) }
      ]
    }, now)[0] as LanguageModel.ToolCallPart
    expect(JSON.parse(chart.arguments)).toEqual({
      title: "Total revenue by category and region in 2025",
      mark: "bar",
      x: "category",
      y: "total_revenue",
      color: "region"
    })
    const plan = planFor(question)
    expect(Offline.answer(plan, result)).toMatch(
      /^Total revenue by category and region in 2025: \*\*Laptops, Europe\*\* leads with \*\*954,584.94\*\*\.\n\n\| category \| region \| total_revenue \|\n\| --- \| --- \| ---: \|\n\| Laptops \| Europe \| 954,584.94 \|/
    )
    const ranked = planFor("Top 3 products by revenue per region")
    expect(Offline.answer(ranked, { ...result, columns: ["region", "product", "total_revenue"] })).toMatch(
      /^For each region, the top 3 by total revenue:\n\n/
    )
    // No number: the top product (singular) of each group is one, the top products ten.
    const topOne = planFor("Top product in each category by revenue")
    expect(topOne.sql).toMatch(/\) AS ranked\nWHERE "rank" <= 1\nORDER BY 1, 3 DESC, 2$/)
    expect(Offline.answer(topOne, { ...result, columns: ["category", "product", "total_revenue"] })).toMatch(
      /^For each category, the top product by total revenue:\n\n/
    )
    expect(sqlFor("What was the best selling product per region last year?").sql).toContain("WHERE \"rank\" <= 1")
    expect(sqlFor("Which month was best for each region by revenue in 2025?").sql).toContain("WHERE \"rank\" <= 1")
    expect(sqlFor("Top products in each category by revenue").sql).toContain("WHERE \"rank\" <= 10")
  })

  it("takes an average per row of a table as a total over their number; units are a sum", () => {
    expect(sqlFor("What is the average order value?").sql).toBe([
      "SELECT round((sum(t0.\"line_total\"))::numeric / nullif(count(DISTINCT t1.\"id\"), 0), CASE WHEN abs((sum(t0.\"line_total\"))::numeric / nullif(count(DISTINCT t1.\"id\"), 0)) < 1 THEN 4 ELSE 2 END) AS \"average_order_value\"",
      "FROM \"public\".\"order_items\" AS t0",
      "JOIN \"public\".\"orders\" AS t1 ON t1.\"id\" = t0.\"order_id\""
    ].join("\n"))
    const perCustomer = sqlFor("Average revenue per customer by region").sql
    expect(perCustomer).toContain("nullif(count(DISTINCT t2.\"id\"), 0)")
    expect(perCustomer).toContain("AS \"average_revenue_per_customer\"")
    expect(perCustomer).toContain("GROUP BY t3.\"id\", t3.\"name\"")
    // With no measure, the rows counted over the rows of the other table.
    const items = sqlFor("Average number of items per order").sql
    expect(items).toMatch(
      /^SELECT round\(\(count\(\*\)\)::numeric \/ nullif\(count\(DISTINCT t1\."id"\), 0\), CASE .* AS "average_order_items_per_order"\nFROM "public"\."order_items" AS t0\n/
    )
    expect(sqlFor("Average orders per customer by region").sql).toContain(
      "round((count(*))::numeric / nullif(count(DISTINCT t1.\"id\"), 0)"
    )
    // "The average customer", "in an order": per a row of that table as well.
    expect(sqlFor("How many orders does the average customer place?").sql).toMatch(
      /^SELECT round\(\(count\(\*\)\)::numeric \/ nullif\(count\(DISTINCT t1\."id"\), 0\), CASE .* AS "average_orders_per_customer"\nFROM "public"\."orders" AS t0\n/
    )
    expect(sqlFor("On average, how many items are in an order?").sql).toEqual(items)
    expect(sqlFor("Average revenue for each region").sql).toContain("GROUP BY t3.\"id\", t3.\"name\"")
    expect(sqlFor("What's the average order size?").sql).toContain(
      "round((sum(t0.\"quantity\"))::numeric / nullif(count(DISTINCT t1.\"id\"), 0)"
    )
    // A bare "per" a table whose rows have no name: the average, not a breakdown by thousands of keys.
    expect(sqlFor("Revenue per order").sql).toEqual(sqlFor("Average revenue per order").sql)
    expect(sqlFor("How many items per order?").sql).toEqual(items)
    expect(planFor("Revenue per order by month in 2025")).toMatchObject({ shape: "series", aggregate: "avg" })
    // A total, a ranking, or rows with names stay a breakdown.
    expect(sqlFor("Total revenue per order").sql).toContain("GROUP BY t1.\"id\"")
    expect(planFor("Revenue per customer")).toMatchObject({ shape: "group", aggregate: "sum" })
    // The whole column's name outweighs a part of another's and its comment ("line" of line_total);
    // "order line", the table's comment, names the order lines, not the orders: a plain average.
    expect(sqlFor("What's the average quantity per order line?").sql).toMatch(
      /^SELECT round\(\(avg\(t0."quantity"\)\)::numeric, [^\n]*\nFROM "public"."order_items" AS t0$/
    )
    expect(sqlFor("Average quantity per order item by category").sql).toContain("GROUP BY t2.\"id\", t2.\"name\"")
    expect(sqlFor("Average quantity per order item by category").sql).not.toContain("count(DISTINCT")
    // Said in full, a table's name outweighs the shorter one inside it.
    expect(sqlFor("How many order lines were there in 2025?").sql).toMatch(
      /^SELECT count\(\*\) AS "order_items_count"\nFROM "public"."order_items" AS t0\nJOIN "public"."orders"/
    )
    // A table broken down by its column is not what is counted: "orders by customer segment" are orders.
    expect(sqlFor("How many orders did each customer segment place last year?").sql).toMatch(
      /^SELECT t1."segment" AS "segment", count\(\*\) AS "orders_count"\nFROM "public"."orders" AS t0\n/
    )
    expect(sqlFor("How many customers by segment?").sql).toContain("FROM \"public\".\"customers\" AS t0")
    // An average per the measure's own table is a plain average.
    expect(sqlFor("Average refund amount per return").sql).toMatch(
      /^SELECT round\(\(avg\(t0."refund_amount"\)\)::numeric, CASE [^\n]* AS "average_refund_amount"\nFROM "public"."returns" AS t0$/
    )
    // A price does not add up: its average "per category" is by category.
    expect(sqlFor("Average unit price per category").sql).toMatch(
      /^SELECT t1."name" AS "category", round\(\(avg\(t0."unit_price"\)\)::numeric/
    )
    // "per" a column is still a breakdown.
    expect(sqlFor("Average revenue per channel").sql).toContain("round((avg(t0.\"line_total\"))::numeric")
    // The line's comment names quantity and unit_price: it is not what "units" ask for.
    expect(sqlFor("What's the total number of units sold?").sql).toContain("sum(t0.\"quantity\")")
    expect(sqlFor("How many units were sold in Q4 2025?").sql).toContain("sum(t0.\"quantity\")")
  })

  it("says a series' periods as people do, while its table keeps the days they start on", () => {
    const said = (question: string, column: string, days: ReadonlyArray<string>) =>
      Offline.answer(planFor(question), {
        columns: [column, "total_revenue"],
        rows: days.map((day, i) => [day, 100 + i]),
        row_count: days.length,
        truncated: false
      })
    expect(said("Revenue by year", "year", ["2024-01-01", "2025-01-01"])).toContain("| 2024 | 100 |\n| 2025 | 101 |")
    expect(said("Revenue by quarter in 2025", "quarter", ["2025-07-01"])).toContain("| 2025 Q3 | 100 |")
    expect(said("Revenue by month in 2025", "month", ["2025-03-01"])).toContain("| March 2025 | 100 |")
    expect(said("Weekly revenue in 2025", "week", ["2025-03-03"])).toContain("| the week of 2025-03-03 | 100 |")
    expect(said("Daily revenue in March 2025", "day", ["2025-03-03"])).toContain("| 2025-03-03 | 100 |")
    expect(said("Which month had the highest revenue?", "month", ["2025-12-01", "2024-12-01"])).toContain(
      "**December 2025** leads with **100**"
    )
  })

  it("writes a rate with four decimals, and a total over no rows as none recorded", () => {
    const plan = planFor("Average discount by channel")
    expect(plan.sql).toContain("avg(t0.\"discount\")")
    const text = Offline.answer(plan, {
      columns: ["channel", "average_discount"],
      rows: [["web", 0.03], ["partner", 0.0297]],
      row_count: 2,
      truncated: false
    })
    expect(text).toContain("**web** leads with **0.0300**")
    expect(text).toContain("| partner | 0.0297 |")
    const thisYear = planFor("Revenue this year")
    expect(Offline.answer(thisYear, { columns: ["total_revenue"], rows: [[null]], row_count: 1, truncated: false }))
      .toBe("No revenue was recorded in 2026 so far.")
    const sold = planFor("How much did we sell last month?")
    expect(Offline.answer(sold, { columns: ["total_units_sold"], rows: [[null]], row_count: 1, truncated: false }))
      .toBe("No units sold were recorded in October 2026.")
  })

  it("counts what a past tense names along its keys, sums units sold, and compares two years as a series", () => {
    expect(sqlFor("How many orders were returned?").sql).toBe([
      "SELECT count(DISTINCT t2.\"id\") AS \"orders_with_returns_count\"",
      "FROM \"public\".\"returns\" AS t0",
      "JOIN \"public\".\"order_items\" AS t1 ON t1.\"id\" = t0.\"order_item_id\"",
      "JOIN \"public\".\"orders\" AS t2 ON t2.\"id\" = t1.\"order_id\""
    ].join("\n"))
    // Named less fully than the returns, the order lines are not what is counted.
    expect(sqlFor("Which customers returned the most items?").sql).toContain("count(*) AS \"returns_count\"")
    const phones = sqlFor("How many phones did we sell last year?").sql
    expect(phones).toContain("round((sum(t0.\"quantity\"))::numeric, 2) AS \"total_units_sold\"")
    expect(phones).toContain("t3.\"name\" = 'Phones'")
    expect(sqlFor("Which category sells the most?").sql).toContain("AS \"total_units_sold\"")
    expect(sqlFor("What is our best selling product?").sql).toContain(
      "SELECT t1.\"name\" AS \"product\", round((sum(t0.\"quantity\"))::numeric, 2) AS \"total_units_sold\""
    )
    // The most popular is the best selling.
    expect(sqlFor("What's the most popular product?").sql).toBe(sqlFor("What is our best selling product?").sql)
    expect(sqlFor("Which categories were most popular in 2025?").sql).toContain("AS \"total_units_sold\"")
    // So do a table the counted rows placed or have, and a buying word's orders, or their lines.
    const placed = [
      "SELECT count(DISTINCT t1.\"id\") AS \"customers_with_orders_count\"",
      "FROM \"public\".\"orders\" AS t0",
      "JOIN \"public\".\"customers\" AS t1 ON t1.\"id\" = t0.\"customer_id\"",
      "WHERE t0.\"ordered_at\" >= '2025-01-01' AND t0.\"ordered_at\" < '2026-01-01'"
    ].join("\n")
    expect(sqlFor("How many customers placed orders last year?").sql).toBe(placed)
    expect(sqlFor("How many customers bought from us last year?").sql).toBe(placed)
    expect(sqlFor("How many active customers were there last year?").sql).toBe(placed)
    expect(sqlFor("How many orders with returns were there?").sql).toContain(
      "SELECT count(DISTINCT t2.\"id\") AS \"orders_with_returns_count\""
    )
    const sold = sqlFor("How many distinct products were sold last year?").sql
    expect(sold).toContain("SELECT count(DISTINCT t2.\"id\") AS \"products_with_order_items_count\"")
    // Without "distinct", products sold are units.
    expect(sqlFor("How many products were sold last year?").sql).toContain("sum(t0.\"quantity\")")
    expect(sqlFor("How many products were bought last year?").sql).toBe([
      "SELECT count(DISTINCT t2.\"id\") AS \"products_with_order_items_count\"",
      "FROM \"public\".\"order_items\" AS t0",
      "JOIN \"public\".\"orders\" AS t1 ON t1.\"id\" = t0.\"order_id\"",
      "JOIN \"public\".\"products\" AS t2 ON t2.\"id\" = t0.\"product_id\"",
      "WHERE t1.\"ordered_at\" >= '2025-01-01' AND t1.\"ordered_at\" < '2026-01-01'"
    ].join("\n"))
    const compared = sqlFor("Compare revenue 2024 vs 2025").sql
    expect(compared).toContain("date_trunc('year', t1.\"ordered_at\")::date AS \"year\"")
    expect(compared).toContain("t1.\"ordered_at\" >= '2024-01-01' AND t1.\"ordered_at\" < '2026-01-01'")
  })

  it("declines growth, thresholds, a breakdown by nothing it knows, either of two conditions, and a ranking with nothing to rank by", () => {
    const declined = (question: string) => LanguageModel.fromParts(respond(question)).text
    expect(declined("Which product category grew the most?")).toContain("I cannot work out growth")
    expect(declined("What was the revenue growth last year?")).toContain("I cannot work out growth")
    expect(declined("How many customers placed more than 10 orders?")).toContain("thresholds")
    expect(declined("Orders over $100 by channel")).toContain("thresholds")
    expect(declined("Orders in 2025 by weekday")).toContain("I could not tell what \"weekday\" is")
    expect(declined("Who is our biggest customer?")).toContain("I could not tell what to rank or count customers by")
    expect(declined("Which products have never been returned?")).toContain("I cannot answer for what is missing")
    expect(declined("Revenue by region excluding North America")).toContain("left out")
    expect(declined("Total orders and revenue last year")).toContain("ask for orders and for revenue separately")
    expect(declined("What is the refund rate?")).toContain("I cannot work out rates")
    // Either of two conditions, and a ranking of nothing ("smallest order value" was the total).
    expect(declined("How many orders were cancelled or returned?")).toContain("I cannot answer for one or another")
    expect(declined("Revenue from web or Europe")).toContain("I cannot answer for one or another")
    expect(sqlFor("Revenue from web or store").sql).toContain("t1.\"channel\" IN ('web', 'store')")
    expect(sqlFor("Orders shipped or cancelled in Europe").sql).toContain("t0.\"status\" IN ('shipped', 'cancelled')")
    // Values compared are set side by side, kept to; named without a comparison, they are summed.
    const versus = sqlFor("web vs store revenue in 2025").sql
    expect(versus).toMatch(/^SELECT t1."channel" AS "channel", round\(/)
    expect(versus).toContain("t1.\"channel\" IN ('web', 'store')")
    expect(versus).toContain("GROUP BY t1.\"channel\"")
    expect(sqlFor("Revenue by region sorted ascending").sql).toContain("ORDER BY 2 ASC, 1")
    expect(sqlFor("Revenue for web and store").sql).not.toContain("GROUP BY")
    for (
      const split of ["the revenue split between consumer and business customers", "breakdown of web and store orders"]
    ) {
      expect(sqlFor(split).sql).toMatch(/GROUP BY t\d\."(?:segment|channel)"/)
    }
    expect(declined("Smallest order value")).toContain("I could not tell what to rank")
    // A table named but left out of the query, which its rows do not each have: the total was of everything.
    expect(declined("How much revenue did we make from returns?")).toContain(
      "I could not tell what returns have to do with the revenue asked for"
    )
    expect(declined("How many customers are there in the orders table?")).toContain("what orders have to do with")
    // One that each row has is no condition: the revenue of "our products" is all the revenue.
    expect(sqlFor("What is the total revenue of our products?").sql).not.toContain("JOIN")
    expect(sqlFor("Which of the regions had the most orders?").sql).toContain("count(*) AS \"orders_count\"")
    expect(sqlFor("Top 5 of our products by revenue").sql).toMatch(/^SELECT t1."name" AS "product"[^]*LIMIT 5$/)
    // A price or a rate is averaged; its total is declined. The most expensive products are ranked by
    // their own price, the cheapest from the least.
    expect(declined("Total discount given last year")).toContain("its total means nothing")
    expect(sqlFor("Discount by channel").sql).toMatch(
      /^SELECT t1."channel" AS "channel", round\(\(avg\(t0."discount"\)\)/
    )
    expect(sqlFor("Which products are the most expensive?").sql).toBe([
      "SELECT t0.\"name\" AS \"product\", round((avg(t0.\"unit_price\"))::numeric, CASE WHEN abs((avg(t0.\"unit_price\"))::numeric) < 1 THEN 4 ELSE 2 END) AS \"average_unit_price\"",
      "FROM \"public\".\"products\" AS t0",
      "GROUP BY t0.\"id\", t0.\"name\"",
      "ORDER BY 2 DESC, 1",
      "LIMIT 10"
    ].join("\n"))
    expect(sqlFor("What are the 3 cheapest products?").sql).toMatch(
      /FROM "public"."products" AS t0\n[^]*ORDER BY 2 ASC, 1\nLIMIT 3$/
    )
    // A table with no name is ranked by its key, written as a name: not by its status.
    const orders = sqlFor("Top 5 orders by revenue last year").sql
    expect(orders).toContain("SELECT t1.\"id\"::text AS \"order\", round((sum(t0.\"line_total\"))::numeric, 2)")
    expect(orders).toContain("GROUP BY t1.\"id\", t1.\"id\"::text")
    expect(sqlFor("Top 5 orders by revenue last year", promptOf(tables, "mysql")).sql).toContain(
      "SELECT CAST(t1.`id` AS CHAR) AS `order`"
    )
    // A trend is a monthly series; what is listed by a measure is grouped by.
    expect(sqlFor("How are sales trending?").sql).toContain("date_trunc('month'")
    expect(sqlFor("List regions by revenue").sql).toContain("GROUP BY t3.\"id\", t3.\"name\"")
    expect(declined("Which weekday has the most orders?")).toContain("I could not tell what \"weekday\" is")
    // A name anywhere but first, unless the question is in title case.
    expect(declined("How many orders did Priya Okafor place?")).toContain("\"Priya Okafor\" is not")
    expect(sqlFor("What Were The Top 5 Products By Revenue Last Year?").sql).toContain("LIMIT 5")
    // A sentence's first word and a contraction are no names.
    expect(sqlFor("Revenue by month last year. Thanks!").sql).toContain("date_trunc('month'")
    expect(sqlFor("How many orders last year, I'm curious?").sql).toContain("count(*)")
    expect(sqlFor("How many Business customers are in Europe?").sql).toContain("t0.\"segment\" = 'Business'")
    expect(declined("How many customers didn't order last year?")).toContain("I cannot answer for what is missing")
    // A listed value that holds a negation is a value.
    const schemaWithReason = promptOf(
      tables.map((t) =>
        t.name === "public.returns" ? { ...t, comment: "Returns; reason is damaged or not as described" } : t
      )
    )
    expect(sqlFor("How many returns were not as described?", schemaWithReason).sql).toContain(
      "t0.\"reason\" = 'not as described'"
    )
    // A measure or a period after "by" is known.
    expect(sqlFor("Top 5 products by revenue").sql).toContain("LIMIT 5")
    expect(sqlFor("Orders by month").sql).toContain("date_trunc('month'")
  })

  it("lists the names a question asks for, and counts the table whose value it names as a filter", () => {
    expect(sqlFor("List all categories").sql).toBe(
      "SELECT t0.\"name\" AS \"category\"\nFROM \"public\".\"categories\" AS t0\nORDER BY 1\nLIMIT 100"
    )
    // Those that have what they are counted through, each once: two customers of one name stay two.
    expect(sqlFor("List the customers who placed orders in December 2025").sql).toBe([
      "SELECT t1.\"name\" AS \"customer\"",
      "FROM \"public\".\"orders\" AS t0",
      "JOIN \"public\".\"customers\" AS t1 ON t1.\"id\" = t0.\"customer_id\"",
      "WHERE t0.\"ordered_at\" >= '2025-12-01' AND t0.\"ordered_at\" < '2026-01-01'",
      "GROUP BY t1.\"id\", t1.\"name\"",
      "ORDER BY 1",
      "LIMIT 100"
    ].join("\n"))
    expect(sqlFor("How many customers placed orders in December 2025?").sql).toMatch(
      /^SELECT count\(DISTINCT t1."id"\)/
    )
    const laptops = sqlFor("What products are in the Laptops category?").sql
    expect(laptops).toMatch(/^SELECT t0."name" AS "product"\nFROM "public"."products" AS t0\n/)
    expect(laptops).toContain("WHERE t1.\"name\" = 'Laptops'")
    expect(sqlFor("How many products are in the Laptops category?").sql).toMatch(
      /^SELECT count\(\*\) AS "products_count"\nFROM "public"."products" AS t0\n/
    )
    expect(sqlFor("Who are the customers in Europe?").sql).toMatch(/^SELECT t0."name" AS "customer"\n/)
    // What "we sell" lists the things sold; "sell" is no measure there.
    expect(sqlFor("What categories do we sell?").sql).toBe(sqlFor("List all categories").sql)
    expect(sqlFor("Which products does the shop sell?").sql).toMatch(
      /^SELECT t0."name" AS "product"\nFROM "public"."products" AS t0\nORDER BY 1\nLIMIT 100$/
    )
    expect(sqlFor("How many laptops did we sell in 2025?").sql).toContain("sum(t0.\"quantity\")")
    expect(sqlFor("Which products sell the most?").sql).toContain("sum(t0.\"quantity\")")
    // Orders have no name to list: they are counted.
    expect(sqlFor("List the orders").sql).toContain("count(*)")
    const plan = planFor("List all categories")
    expect(
      Offline.answer(plan, { columns: ["category"], rows: [["Audio"], ["Laptops"]], row_count: 2, truncated: false })
    )
      .toBe("The 2 categories:\n\n- Audio\n- Laptops")
    // The model sees a preview of the rows; the count is of all the query returned.
    const preview = Array.from({ length: 50 }, (_, i) => [`Customer ${i}`])
    expect(Offline.answer(plan, { columns: ["category"], rows: preview, row_count: 100, truncated: false })).toMatch(
      /^The first 100 categories:\n\n- Customer 0\n[^]*\n\n\(75 more in the table and the CSV\.\)$/
    )
    // "The most returned product" ranks products by their returns.
    const returned = sqlFor("What is the most returned product?").sql
    expect(returned).toMatch(
      /^SELECT t2."name" AS "product", count\(\*\) AS "returns_count"\nFROM "public"."returns" AS t0\n/
    )
    expect(returned).toContain("GROUP BY t2.\"id\", t2.\"name\"")
    expect(sqlFor("Top 3 regions by number of orders in 2024").sql).toContain("count(*) AS \"orders_count\"")
    expect(LanguageModel.fromParts(respond("Median order value")).text).toContain("I cannot work out medians")
    for (const question of ["Which day of the week has the most orders?", "Orders by hour of the day"]) {
      expect(LanguageModel.fromParts(respond(question)).text).toContain("I cannot group by the day of the week")
    }
    // A change over a period points to a series; "over 2025" is no threshold.
    expect(LanguageModel.fromParts(respond("How did revenue change over 2025?")).text).toContain(
      "I cannot work out growth or change"
    )
    expect(sqlFor("Orders over 2025 by month").sql).toContain("t0.\"ordered_at\" >= '2025-01-01'")
    // Items sold are units, as "how many items did we sell" are.
    expect(sqlFor("What is the total number of items sold in 2025?").sql).toContain(
      "round((sum(t0.\"quantity\"))::numeric, 2) AS \"total_units_sold\""
    )
    // A word that picks some rows out and that nothing knows is declined, not left out.
    for (
      const [question, word] of [["How many premium customers are there?", "premium"], [
        "Large orders in 2025",
        "large"
      ]]
    ) {
      expect(LanguageModel.fromParts(respond(question)).text).toContain(`"${word}" is not`)
    }
    const accounts = promptOf([{
      name: "public.accounts",
      rowEstimate: 3,
      columns: [column("id", "integer", { primaryKey: true }), column("name", "text")]
    }])
    expect(LanguageModel.fromParts(respond("How many premium accounts are there?", accounts)).text).toContain(
      "nor the name of an account"
    )
    expect(sqlFor("How many distinct customers placed orders in 2025?").sql).toMatch(/^SELECT count\(DISTINCT/)
    expect(sqlFor("How many new customers are there?").sql).toContain("FROM \"public\".\"customers\"")
    // Rows that have some amount are a condition on it; a table after "with" is counted through.
    expect(LanguageModel.fromParts(respond("How many orders had a discount?")).text).toContain(
      "I cannot keep to rows by whether they have a discount"
    )
    expect(sqlFor("How many orders with returns were there in 2025?").sql).toMatch(/^SELECT count\(DISTINCT/)
    expect(LanguageModel.fromParts(respond("How many returns were there last year and why?")).text).toContain(
      "it asks for a cause"
    )
    expect(LanguageModel.fromParts(respond("What's the revenue of Helix Mini?")).text).toContain(
      "\"Helix Mini\" is not"
    )
    // In lower case, the unknown words after the first are of the same name.
    expect(LanguageModel.fromParts(respond("revenue of helix mini")).text).toContain("\"helix mini\" is not")
    expect(LanguageModel.fromParts(respond("sales in germany last year")).text).toContain("\"germany\" is not")
  })

  it("when a period holds nothing, asks where the data is and says so when the period lies outside it", () => {
    const question = "How many orders last month?"
    const ask = (...results: ReadonlyArray<string>) => afterQueries(question, results)
    const none = JSON.stringify({ columns: ["orders_count"], rows: [[0]], row_count: 1, truncated: false })
    const span = (earliest: string, latest: string) =>
      JSON.stringify({ columns: ["earliest", "latest"], rows: [[earliest, latest]], row_count: 1, truncated: false })
    const second = ask(none)[0] as LanguageModel.ToolCallPart
    expect(second).toMatchObject({ _tag: "ToolCall", name: "run_sql" })
    expect(JSON.parse(second.arguments).sql).toBe(
      "SELECT CAST(min(\"ordered_at\") AS DATE) AS earliest, CAST(max(\"ordered_at\") AS DATE) AS latest\n" +
        "FROM \"public\".\"orders\""
    )
    expect(LanguageModel.fromParts(ask(none, span("2024-01-01", "2025-12-31"))).text).toContain(
      "There were **0** orders in October 2026. The orders in the data date from 2024-01-01 to 2025-12-31: ask about a period within them."
    )
    // A window within the data that holds nothing is only that; a table with no rows says so.
    expect(LanguageModel.fromParts(ask(none, span("2024-01-01", "2026-11-20"))).text).toMatch(
      /^There were \*\*0\*\* orders in October 2026\.\n/
    )
    expect(LanguageModel.fromParts(ask(none, span(null as never, null as never))).text).toContain(
      "in October 2026. There are no orders at all."
    )
    // Rows found, or no window: one query.
    const some = JSON.stringify({ columns: ["orders_count"], rows: [[12]], row_count: 1, truncated: false })
    expect(LanguageModel.fromParts(ask(some)).text).toMatch(/^There were \*\*12\*\* orders in October 2026\.\n/)
    expect(planFor("How many orders are there?").span).toBeUndefined()
  })

  it("says when the first or the last row was, kept to a period and values", () => {
    expect(sqlFor("When was our last order?").sql).toBe(
      "SELECT max(t0.\"ordered_at\") AS \"last_order_at\"\nFROM \"public\".\"orders\" AS t0"
    )
    // The most recent is no ranking; "last year" is a period, not the last row.
    const cancelled = planFor("When was the most recent cancelled order last year?")
    expect(cancelled.sql).toBe([
      "SELECT max(t0.\"ordered_at\") AS \"last_order_at\"",
      "FROM \"public\".\"orders\" AS t0",
      "WHERE t0.\"ordered_at\" >= '2025-01-01' AND t0.\"ordered_at\" < '2026-01-01' AND t0.\"status\" = 'cancelled'"
    ].join("\n"))
    expect(sqlFor("When was the first return?").sql).toContain("SELECT min(t0.\"returned_at\") AS \"first_return_at\"")
    const at = (value: unknown) =>
      Offline.answer(cancelled, { columns: ["last_order_at"], rows: [[value]], row_count: 1, truncated: false })
    expect(at("2025-12-31T19:00:00.000Z")).toBe(
      "The last order where status is cancelled in 2025 was on 2025-12-31 at 19:00 UTC."
    )
    expect(at("2025-12-31")).toBe("The last order where status is cancelled in 2025 was on 2025-12-31.")
    expect(at(null)).toBe("No order was recorded where status is cancelled in 2025.")
    const declined = (question: string) => LanguageModel.fromParts(respond(question)).text
    expect(declined("When was revenue highest?")).toContain("ask which month or day had the most")
    expect(declined("When was our last order for each region?")).toContain("not for each of a group")
  })

  it("looks a name that no comment lists up in the data, keeps to it when found, and declines it when not", () => {
    const question = "What's the revenue of Helix Mini last year?"
    const turn = (...lookups: ReadonlyArray<string>) => afterQueries(question, lookups)
    const lookup = turn()[0]
    expect(isLookup(lookup)).toBe(true)
    const sql = (JSON.parse((lookup as LanguageModel.ToolCallPart).arguments) as { sql: string }).sql
    // Among the tables whose rows have names, exactly but for case.
    expect(sql).toContain(
      "SELECT 'public.products' AS \"table_name\", 'name' AS \"column_name\", t.\"name\" AS \"value\"\n" +
        "FROM \"public\".\"products\" AS t\nWHERE lower(t.\"name\") = lower('Helix Mini')"
    )
    expect(sql).toContain("FROM \"public\".\"customers\" AS t")
    expect(sql).toMatch(/\nUNION ALL\n[^]*\nLIMIT 5$/)
    // Found: the plan keeps to it, as to a listed value.
    const found = turn(lookupResult([["public.products", "name", "Helix Mini"]]))[0] as LanguageModel.ToolCallPart
    const planned = (JSON.parse(found.arguments) as { sql: string }).sql
    expect(planned).toContain("JOIN \"public\".\"products\" AS t")
    expect(planned).toMatch(/AND t\d\."name" = 'Helix Mini'$/)
    // Not found, or the name of two kinds of rows: declined.
    expect(LanguageModel.fromParts(turn(lookupResult([]))).text).toContain(
      "\"Helix Mini\" is not a table, a column or a value that the schema's comments list, nor the name of a " +
        "region, category, product or customer"
    )
    expect(
      LanguageModel.fromParts(turn(lookupResult([
        ["public.products", "name", "Helix Mini"],
        ["public.customers", "name", "Helix Mini"]
      ]))).text
    ).toContain("\"Helix Mini\" is the name of a product and of a customer: say which")
    // Two names of one column are either; compared, they are set side by side. Capitalized names
    // in a sentence are no title.
    const two = (q: string) => {
      const messages: Array<LanguageModel.Message> = [{ role: "user", content: q }]
      for (const [i, name] of ["Helix Mini", "Vista Pro"].entries()) {
        const call = Offline.respond(
          { model: "offline", system, tools, messages },
          now
        )[0] as LanguageModel.ToolCallPart
        expect(call.arguments).toContain(`lower('${name}')`)
        const id = `offline_${i + 1}`
        messages.push(
          { role: "assistant", content: "", toolCalls: [{ id, name: "run_sql", arguments: call.arguments }] },
          { role: "tool", toolCallId: id, content: lookupResult([["public.products", "name", name]]) }
        )
      }
      const call = Offline.respond({ model: "offline", system, tools, messages }, now)[0] as LanguageModel.ToolCallPart
      return (JSON.parse(call.arguments) as { sql: string }).sql
    }
    const versus = two("revenue of Helix Mini vs Vista Pro")
    expect(versus).toMatch(/^SELECT t1."name" AS "product", /)
    expect(versus).toContain("t1.\"name\" IN ('Helix Mini', 'Vista Pro')")
    // A name may open the question; a sentence's first word alone is none.
    expect(two("Helix Mini vs Vista Pro revenue")).toEqual(versus)
    expect(two("How many orders for Helix Mini and Vista Pro?")).toMatch(
      /^SELECT count\(DISTINCT t\d\."id"\) AS "orders_count"[^]*IN \('Helix Mini', 'Vista Pro'\)$/
    )
    // A quote in a name is doubled, and a name looked up once is not looked up again.
    const quoted = respond("How many orders did Dara O'Brien place?")
    expect(LanguageModel.fromParts(quoted).text).toContain("\"Dara O'Brien\" is not")
    const first = Offline.respond({
      model: "offline",
      system,
      tools,
      messages: [{ role: "user", content: "How many orders did Dara O'Brien place?" }]
    }, now)[0] as LanguageModel.ToolCallPart
    expect(first.arguments).toContain("lower('Dara O''Brien')")
  })

  it("says what it cannot do instead of guessing", () => {
    expect(LanguageModel.fromParts(respond("What is the meaning of life?")).text).toMatch(
      /^I could not turn this question into a query/
    )
    const noData = Offline.respond({ model: "offline", messages: [{ role: "user", content: "top products" }] }, now)
    expect(LanguageModel.fromParts(noData).text).toContain("no data connector is enabled")
    const unreadable = Offline.respond({
      model: "offline",
      system: "## Data\n\nConnector 7 (Warehouse): schema unavailable: db.internal:5432 is refused",
      tools,
      messages: [{ role: "user", content: "top products" }]
    }, now)
    expect(LanguageModel.fromParts(unreadable).text).toMatch(
      /^I could not read the data: connector 7 \(Warehouse\): schema unavailable: db.internal:5432 is refused/
    )
    expect(LanguageModel.fromParts(respond("What share of orders came through the web?")).text).toContain(
      "I cannot work out shares or percentages"
    )
  })
})
