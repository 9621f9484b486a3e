import { describe, expect, it } from "@effect/vitest"
import * as Investigation from "@sightline/core/Investigation"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as ToolResult from "@sightline/core/ToolResult"
import * as Either from "effect/Either"
import * as Offline from "../src/Offline.js"

const yaml = `name: shop
tables:
  - name: orders
    base_table: { table: orders }
    primary_key: { columns: [id] }
    dimensions:
      - name: channel
        values: [{ value: web, synonyms: [online] }, { value: store }]
    time_dimensions:
      - { name: order_date, expr: ordered_at, data_type: TIMESTAMP_TZ }
    measures:
      - { name: orders, agg: count }
  - name: lines
    base_table: { table: order_items }
    primary_key: { columns: [id] }
    time_dimensions:
      - { name: line_date, expr: created_at, data_type: TIMESTAMP_TZ }
    measures:
      - { name: revenue, agg: sum, expr: line_total, synonyms: [sales], time_dimension: orders.order_date }
  - name: products
    base_table: { table: products }
    primary_key: { columns: [id] }
    dimensions:
      - { name: product, expr: name }
      - name: category
        values: [{ value: Laptops }, { value: Phones }]
  - name: customers
    base_table: { table: customers }
    primary_key: { columns: [id] }
    dimensions:
      - { name: customer, expr: name }
      - { name: customer_number, expr: id, unique: true }
      - name: region
        values: [{ value: Europe }, { value: Asia Pacific, synonyms: [APAC] }]
relationships:
  - { name: lines_orders, left_table: lines, right_table: orders, relationship_columns: [{ left_column: order_id, right_column: id }] }
  - { name: lines_products, left_table: lines, right_table: products, relationship_columns: [{ left_column: product_id, right_column: id }] }
  - { name: orders_customers, left_table: orders, right_table: customers, relationship_columns: [{ left_column: customer_id, right_column: id }] }
`
const parsed = SemanticModel.parse("semantic/shop.yaml", yaml)
if (Either.isLeft(parsed)) throw new Error(parsed.left.map(SemanticModel.formatProblem).join("\n"))
const semantic = [{ connector_id: 7, model: parsed.right.file, reviewed: true }]

const tool = (name: string): LanguageModel.Tool => ({ name, description: "", parameters: {} })
const tools = [tool("query_metrics"), tool("run_sql"), tool("create_chart")]
const now = new Date(Date.UTC(2026, 10, 23))

/** A tool's result as the agent gives it: rows, and a semantic query's reading. */
const result = (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<unknown>>, reading?: string) =>
  JSON.stringify({
    columns,
    rows,
    row_count: rows.length,
    truncated: false,
    ...(reading === undefined ? {} : { reading })
  })

interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: Record<string, unknown>
}

// What a tool of the agent gives back for a scripted answer: `error: …` fails, JSON is data.
const asToolResult = (text: string): ToolResult.ToolResult => {
  if (text.startsWith("error: ")) return ToolResult.failed(text.slice("error: ".length))
  try {
    return ToolResult.data(JSON.parse(text))
  } catch {
    return ToolResult.text(text)
  }
}

/**
 * A conversation with the offline model as the agent runs it: each tool call it makes is answered
 * by `answer`, until it replies with text. Returns the calls it made and its reply.
 */
const converse = (
  question: string,
  answer: (call: Call) => string,
  options: { readonly tools?: ReadonlyArray<LanguageModel.Tool>; readonly system?: string } = {}
) => {
  const messages: Array<LanguageModel.Message> = [{ role: "user", content: question }]
  const calls: Array<Call> = []
  for (let step = 0; step < 10; step++) {
    const parts = Offline.respond({
      model: "offline",
      system: options.system ?? "",
      tools: options.tools ?? tools,
      semantic,
      messages
    }, now)
    const made = parts.filter((part): part is LanguageModel.ToolCallPart => part._tag === "ToolCall")
    if (made.length === 0) return { calls, text: LanguageModel.fromParts(parts).text }
    messages.push({
      role: "assistant",
      content: "",
      toolCalls: made.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }))
    })
    for (const part of made) {
      const call = { id: part.id, name: part.name, arguments: JSON.parse(part.arguments) }
      calls.push(call)
      messages.push(ToolResult.toMessage(asToolResult(answer(call)), part.id))
    }
  }
  throw new Error(`no answer to ${question}`)
}

const topProducts = result(
  ["product", "revenue"],
  [["Aero Pro", 1200.5], ["Nova Max", 900]],
  "Top 5: Revenue (sum of line total) by product in 2025, highest first"
)

describe("Offline model", () => {
  it("answers through query_metrics: the reading first, a chart, then the numbers, saying it is offline", () => {
    const { calls, text } = converse(
      "What were the top 5 products by revenue last year?",
      (call) => call.name === "query_metrics" ? topProducts : JSON.stringify({ image_url: "chart:1" })
    )
    expect(calls.map((c) => c.name)).toEqual(["query_metrics", "create_chart"])
    expect(calls[0]!.arguments).toEqual({
      connector_id: 7,
      metrics: ["revenue"],
      dimensions: ["product"],
      time: { start: "2025-01-01", end: "2026-01-01" },
      order: [{ by: "revenue", direction: "desc" }],
      limit: 5
    })
    expect(calls[1]!.arguments).toMatchObject({ mark: "bar", x: "product", y: "revenue" })
    expect(text).toMatch(/^I read this as: Top 5: Revenue \(sum of line total\) by product in 2025, highest first\./)
    expect(text).toContain("**Aero Pro** leads with **1,200.50**")
    // A column with a fraction writes every value with two decimals.
    expect(text).toContain("| Nova Max | 900.00 |")
    expect(text).toContain(Offline.signature)
  })

  it("writes a report of the answer, its chart and its rows when write_report is offered", () => {
    const question = "What were the top 5 products by revenue last year?"
    const reports: Array<Record<string, any>> = []
    const { text } = converse(question, (call) => {
      if (call.name === "query_metrics") return topProducts
      if (call.name === "create_chart") return JSON.stringify({ status: "chart created", image_url: "chart:1" })
      reports.push(call.arguments)
      return "report saved"
    }, { tools: [...tools, tool("write_report")] })
    expect(reports).toHaveLength(1)
    const report = reports[0]!
    expect(report.subject).toBe(question)
    expect(report.summary).toContain("Aero Pro leads with 1,200.50")
    expect(report.blocks.map((b: { type: string }) => b.type)).toEqual(["hero", "image", "list", "divider", "text"])
    expect(report.blocks[1].image_url).toBe("chart:1")
    expect(report.blocks[2].items).toEqual(["Aero Pro: 1,200.50", "Nova Max: 900.00"])
    expect(text).toContain("**Aero Pro** leads")
  })

  it("looks a word its model lacks up in the data with list queries, then reads the name it found", () => {
    const { calls, text } = converse("What's the revenue of Helix Mini last year?", (call) => {
      const filters = call.arguments["filters"] as ReadonlyArray<{ dimension: string; operator: string }>
      // The lookups: a list of each dimension the model lists no values of, kept to the word.
      if (filters?.[0]?.operator === "contains") {
        return filters[0].dimension === "product"
          ? result(["product"], [["Helix Mini"], ["Helix Mini Pro"]])
          : result([filters[0].dimension], [])
      }
      return result(["revenue"], [[5120]], "Revenue (sum of line total) in 2025, where product is Helix Mini")
    })
    // Each dimension the model lists no values of: the longest word, and all the words of the name.
    const lookup = (dimension: string, words: ReadonlyArray<string>) => ({
      connector_id: 7,
      metrics: [],
      dimensions: [dimension],
      filters: words.map((word) => ({ dimension, operator: "contains", values: [word] })),
      limit: 20
    })
    expect(calls.slice(0, 4).map((c) => c.arguments)).toEqual([
      lookup("product", ["helix"]),
      lookup("product", ["helix", "mini"]),
      lookup("customer", ["helix"]),
      lookup("customer", ["helix", "mini"])
    ])
    // The whole name the question says, not every name that holds its word.
    expect(calls[4]!.arguments).toMatchObject({
      metrics: ["revenue"],
      filters: [{ dimension: "product", operator: "=", values: ["Helix Mini"] }]
    })
    expect(calls).toHaveLength(5)
    expect(text).toContain("where product is Helix Mini.\n\n**5,120**")
  })

  it("declines a name the data does not hold, naming where it looked", () => {
    const { calls, text } = converse("Revenue in Atlantis last year", (call) => result([String(call.name)], []))
    expect(calls.every((c) => c.name === "query_metrics")).toBe(true)
    expect(text).toMatch(
      /^I can't answer this: I don't know what "atlantis" picks out here: .* and no product or customer in the data is called so/
    )
  })

  it("says so when a lookup fails, rather than that the data holds no such name", () => {
    const { text } = converse("Revenue of Helix Mini", () => "error: this key may not query the derived model")
    expect(text).toMatch(/^I can't answer this: I could not look "helix" up in the data: this key may not query/)
  })

  it("says how many rows bear a name, each on its own", () => {
    const { calls, text } = converse("How many orders did Priya Okafor place?", (call) => {
      if (call.name === "create_chart") return JSON.stringify({ image_url: "chart:1" })
      const filters = call.arguments["filters"] as ReadonlyArray<{ dimension: string; operator: string }>
      if (filters[0]!.operator === "contains") {
        return result([filters[0]!.dimension], filters[0]!.dimension === "customer" ? [["Priya Okafor"]] : [])
      }
      return result(["customer_number", "orders"], [[1042, 12], [2210, 3]], "Orders (count of rows) by customer number")
    })
    expect(calls.at(-2)!.arguments).toMatchObject({
      metrics: ["orders"],
      dimensions: ["customer_number"],
      filters: [{ dimension: "customer", operator: "=", values: ["Priya Okafor"] }]
    })
    expect(text).toContain("**2** customers are named Priya Okafor; they are told apart by customer number:")
    expect(text).toContain("| 1042 | 12 |")
  })

  it("lists names without a chart, and says when the first or the last was", () => {
    const list = converse(
      "What products are in the Laptops category?",
      () => result(["product"], [["Aero Pro"], ["Helix Mini"]], "Every product of products, where category is Laptops")
    )
    expect(list.calls).toHaveLength(1)
    expect(list.calls[0]!.arguments).toEqual({
      connector_id: 7,
      metrics: [],
      dimensions: ["product"],
      filters: [{ dimension: "category", operator: "=", values: ["Laptops"] }]
    })
    expect(list.text).toContain("**2**:\n\n| product |")
    // A list cut at the row cap says there are more than it shows.
    const long = converse("List all products", () =>
      JSON.stringify({
        columns: ["product"],
        rows: Array.from({ length: 30 }, (_, i) => [`P${i}`]),
        row_count: 30,
        truncated: true,
        reading: "Every product"
      }))
    expect(long.text).toContain("The first **30**:")
    expect(long.text).toContain("10 more rows in the table; the query stopped at 30 rows, and there are more.")
    const last = converse(
      "When was our last order?",
      () => result(["order_date_day", "orders"], [["2025-12-31", 4]], "Orders (count of rows) by day, latest first")
    )
    expect(last.calls[0]!.arguments).toMatchObject({ order: [{ by: "time", direction: "desc" }], limit: 1 })
    expect(last.text).toContain("The last day with orders was **2025-12-31** (4).")
  })

  it("when a period outside the data holds nothing, says where the data is", () => {
    const { calls, text } = converse(
      "How many orders last month?",
      (call) =>
        call.arguments["time"] !== undefined && (call.arguments["time"] as { grain?: string }).grain === "year"
          ? result(["order_date_year", "orders"], [["2024-01-01", 900], ["2025-01-01", 1200]])
          : result(["orders"], [[0]], "Orders (count of rows) in October 2026")
    )
    expect(calls.map((c) => c.arguments["time"])).toEqual([
      { start: "2026-10-01", end: "2026-11-01" },
      { grain: "year" }
    ])
    expect(text).toContain("**0**\n\nThe data has orders in 2024 to 2025: ask about a period within it.")
    // A quiet period within the data is just that.
    const quiet = converse(
      "How many orders in March 2025?",
      (call) =>
        (call.arguments["time"] as { grain?: string }).grain === "year"
          ? result(["order_date_year", "orders"], [["2024-01-01", 900], ["2025-01-01", 1200]])
          : result(["orders"], [[0]], "Orders (count of rows) in March 2025")
    )
    expect(quiet.text).toContain("**0**\n\n")
    expect(quiet.text).not.toContain("The data has")
  })

  it("answers where a change is with an investigation, saying where and never why, with the first driver's parts", () => {
    const investigate = [...tools, tool("investigate")]
    const { calls, text } = converse("Why did revenue drop in March 2025?", (call) => {
      // The investigation core plans and reads, on rows made up for the steps it would run.
      const plan = Either.getOrThrow(
        Investigation.plan(parsed.right, call.arguments as unknown as Investigation.InvestigationRequest)
      )
      const rows: Record<string, ReadonlyArray<ReadonlyArray<unknown>>> = {
        total: [["2025-02-01", 1000], ["2025-03-01", 800]],
        by_channel: [["web", "2025-02-01", 600], ["web", "2025-03-01", 420], ["store", "2025-02-01", 400], [
          "store",
          "2025-03-01",
          380
        ]],
        by_category: [["Laptops", "2025-02-01", 700], ["Laptops", "2025-03-01", 560], ["Phones", "2025-02-01", 300], [
          "Phones",
          "2025-03-01",
          240
        ]],
        by_region: [["Europe", "2025-02-01", 1000], ["Europe", "2025-03-01", 800]]
      }
      const columnsOf = (step: Investigation.Step) => [
        ...(step.dimension === undefined ? [] : [{ name: step.dimension, kind: "dimension" }]),
        { name: "period", kind: "time" },
        { name: "revenue", kind: "metric" }
      ]
      const ran = plan.steps.map((step) => ({
        step,
        cellId: `cell-${step.id}`,
        breakdown: Investigation.breakdown(plan, step, columnsOf(step), rows[step.id] ?? [])
      }))
      return JSON.stringify(Investigation.findings(plan, ran))
    }, { tools: investigate })
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([[
      "investigate",
      {
        connector_id: 7,
        metric: "revenue",
        period: { start: "2025-03-01", end: "2025-04-01" },
        compared_with: { start: "2025-02-01", end: "2025-03-01" }
      }
    ]])
    expect(text).toContain(
      "I read this as: where revenue changed from February 2025 to March 2025, by channel, then category, then region."
    )
    expect(text).toContain("Revenue fell 20% from February 2025 to March 2025 (1,000 to 800).")
    expect(text).toContain("90% of the fall is in web")
    expect(text).toContain("the data does not say why")
    expect(text).toContain("| web | 600 | 420 | -180 | 90.0% |")
    // Asked why it rose, when it fell: said first.
    expect(
      converse("Why did revenue rise in March 2025?", (call) => {
        const plan = Either.getOrThrow(
          Investigation.plan(parsed.right, call.arguments as unknown as Investigation.InvestigationRequest)
        )
        return JSON.stringify(Investigation.findings(plan, [{
          step: plan.steps[0]!,
          breakdown: Investigation.breakdown(plan, plan.steps[0]!, [{ name: "period", kind: "time" }, {
            name: "revenue",
            kind: "metric"
          }], [["2025-02-01", 1000], ["2025-03-01", 800]])
        }]))
      }, { tools: investigate }).text
    ).toContain("It did not rise. Revenue fell 20%")
    // A playbook run writes a report of it: the summary, the waterfall the run drew, the first driver's parts.
    const reported = converse("Why did revenue drop in March 2025?", (call) => {
      if (call.name === "write_report") return JSON.stringify({ status: "report written" })
      const plan = Either.getOrThrow(
        Investigation.plan(parsed.right, call.arguments as unknown as Investigation.InvestigationRequest)
      )
      const columns = [{ name: "channel", kind: "dimension" }, { name: "period", kind: "time" }, {
        name: "revenue",
        kind: "metric"
      }]
      const found = Investigation.findings(plan, [
        {
          step: plan.steps[0]!,
          breakdown: Investigation.breakdown(plan, plan.steps[0]!, columns.slice(1), [["2025-02-01", 1000], [
            "2025-03-01",
            800
          ]])
        },
        {
          step: plan.steps[1]!,
          breakdown: Investigation.breakdown(plan, plan.steps[1]!, columns, [["web", "2025-02-01", 1000], [
            "web",
            "2025-03-01",
            800
          ]])
        }
      ])
      return JSON.stringify({ ...found, chart: { title: "revenue by channel", image_url: "chart:1" } })
    }, { tools: [...investigate, tool("write_report")] })
    const report = reported.calls.find((c) => c.name === "write_report")!.arguments as any
    expect(report.summary).toContain("Revenue fell 20%")
    expect(report.blocks.map((b: any) => b.type)).toEqual(["hero", "image", "list", "divider", "text"])
    expect(report.blocks[1]).toMatchObject({ image_url: "chart:1" })
    expect(report.blocks[2].items).toEqual(["web: 1,000.00 to 800.00 (-200.00)"])
    // Without the tool, a cause is declined as before; without a period, it says to name one.
    expect(converse("Why did revenue drop in March 2025?", () => "").text).toMatch(
      /^I can't answer this: it asks for a cause/
    )
    expect(converse("Why did revenue drop?", () => "", { tools: investigate }).text).toContain(
      "names no period to compare with the one before"
    )
  })

  it("says what it cannot do instead of guessing", () => {
    const noData = Offline.respond({ model: "offline", messages: [{ role: "user", content: "top products" }] }, now)
    expect(LanguageModel.fromParts(noData).text).toContain("no data connector is enabled")
    // Without a semantic model to read with, it says why there is none.
    const unreadable = Offline.respond({
      model: "offline",
      system: "## Data\n\nConnector 7 (Warehouse): schema unavailable: db.internal:5432 is refused",
      tools: [tool("run_sql")],
      messages: [{ role: "user", content: "top products" }]
    }, now)
    expect(LanguageModel.fromParts(unreadable).text).toMatch(
      /^I read questions through a connector's semantic model, and none could be read here: connector 7 \(Warehouse\): schema unavailable: db.internal:5432 is refused/
    )
    const never = () => {
      throw new Error("no query for a question it declines")
    }
    expect(converse("Why did revenue drop in March?", never).text).toMatch(/^I can't answer this: .*cause/)
    expect(converse("When was revenue highest?", never).text).toContain("which month")
  })
})
