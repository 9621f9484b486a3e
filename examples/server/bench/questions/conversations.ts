/**
 * Conversations of two to four turns, as people hold them with an analyst: a first question, then
 * follow-ups that change the breakdown, narrow or widen, change the period or the measure, rank,
 * point at a row of the answer before, or change the subject with a complete question (where nothing
 * of the conversation may carry over). Each turn has SQL written by hand for what it means in its
 * conversation, or null when it should be declined, with what the decline must say.
 *
 * Written fresh for the conversations bench: none is a question of `demo.ts` or `saas.ts` followed by
 * a fragment from the docs.
 */
import { type Question, sqlOf } from "./demo.js"

/** A conversation on one of the bench's connectors. */
export interface Conversation {
  readonly on: "DEMO" | "SaaS"
  /** Whether a later turn changes the subject with a complete question. */
  readonly changesSubject?: boolean
  readonly turns: ReadonlyArray<Question>
}

export const conversations = (lastYear: number): ReadonlyArray<Conversation> => {
  const LY = lastYear
  const PY = LY - 1
  const { inYear, lines, notCancelled, toCategory, toRegion } = sqlOf()
  const toCustomer = "JOIN customers c ON c.id = o.customer_id"
  const measures = {
    revenue: "SUM(i.line_total)",
    units: "SUM(i.quantity)",
    orders: "COUNT(DISTINCT o.id)"
  } as const
  const groups = {
    channel: "o.channel",
    region: "r.name",
    category: "ca.name",
    segment: "c.segment",
    product: "p.name",
    month: "date_trunc('month', o.ordered_at)::date",
    quarter: "date_trunc('quarter', o.ordered_at)::date"
  } as const
  const ly = inYear(LY)
  const py = inYear(PY)
  const web = "o.channel = 'web'"
  const store = "o.channel = 'store'"
  const eu = "r.code = 'EU'"
  const apac = "r.code = 'APAC'"
  const business = "c.segment = 'Business'"
  const consumer = "c.segment = 'Consumer'"
  const category = (name: string) => `ca.name = '${name}'`
  /** A measure by groups where conditions hold, over the order lines of orders that were not cancelled. */
  const q = (
    measure: keyof typeof measures,
    by: ReadonlyArray<keyof typeof groups>,
    where: ReadonlyArray<string>,
    tail = ""
  ) => {
    const exprs = by.map((g) => groups[g])
    const text = [...exprs, ...where].join(" ")
    const joins = [
      /\br\./.test(text) ? toRegion : /\bc\./.test(text) ? toCustomer : "",
      /\bca\./.test(text) ? toCategory : /\bp\./.test(text) ? "JOIN products p ON p.id = i.product_id" : ""
    ].join(" ")
    return `SELECT ${[...exprs, measures[measure]].join(", ")} FROM ${lines} ${joins}
      WHERE ${[notCancelled, ...where].join(" AND ")}${
      exprs.length === 0 ? "" : ` GROUP BY ${exprs.map((_, i) => i + 1).join(", ")}`
    } ${tail}`
  }
  /** The name at `place` (1 first) of a ranking of `by` by a measure in a year. */
  const ranked = (by: "product" | "category" | "region", measure: keyof typeof measures, year: string, place: number) =>
    `(SELECT ${groups[by]} FROM ${lines} ${by === "region" ? toRegion : toCategory} WHERE ${notCancelled} AND ${year}
      GROUP BY 1 ORDER BY ${measures[measure]} DESC, 1 LIMIT 1 OFFSET ${place - 1})`

  const saasInYear = (column: string, year: number) =>
    `${column} >= '${year}-01-01' AND ${column} < '${year + 1}-01-01'`
  const plans = "subscriptions s JOIN plans p ON p.id = s.plan_id"
  const subscribed = "subscriptions s JOIN accounts a ON a.id = s.account_id"

  return [
    // The breakdown, then a filter.
    {
      on: "DEMO",
      turns: [
        ["what did each channel bring in last year", q("revenue", ["channel"], [ly])],
        ["and per region?", q("revenue", ["region"], [ly])],
        ["just europe", q("revenue", ["region"], [ly, eu])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`units by category in ${PY}`, q("units", ["category"], [py])],
        [`same for ${LY}`, q("units", ["category"], [ly])],
        ["top 3", q("units", ["category"], [ly], "ORDER BY 2 DESC LIMIT 3")]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["number of orders last year", q("orders", [], [ly])],
        ["split by channel", q("orders", ["channel"], [ly])],
        ["what about revenue?", q("revenue", ["channel"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue per month last year", q("revenue", ["month"], [ly])],
        ["online only", q("revenue", ["month"], [ly, web])],
        ["by quarter instead", q("revenue", ["quarter"], [ly, web])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["sales by region", q("revenue", ["region"], [])],
        ["and by channel too", q("revenue", ["region", "channel"], [])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["orders per customer segment last year", q("orders", ["segment"], [ly])],
        ["and units?", q("units", ["segment"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["laptop sales last year", q("revenue", [], [ly, category("Laptops")])],
        ["and phones?", q("revenue", [], [ly, category("Phones")])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue in apac last year", q("revenue", [], [ly, apac])],
        ["by category", q("revenue", ["category"], [ly, apac])],
        ["now europe", q("revenue", ["category"], [ly, eu])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue by segment", q("revenue", ["segment"], [])],
        ["only europe", q("revenue", ["segment"], [eu])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["units we sold last year", q("units", [], [ly])],
        ["per month", q("units", ["month"], [ly])],
        ["just the stores", q("units", ["month"], [ly, store])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`monthly orders in ${PY}`, q("orders", ["month"], [py])],
        [`what about ${LY}?`, q("orders", ["month"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue by category in europe", q("revenue", ["category"], [eu])],
        ["now apac", q("revenue", ["category"], [apac])],
        ["top 2", q("revenue", ["category"], [apac], "ORDER BY 2 DESC LIMIT 2")]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["units by channel last year", q("units", ["channel"], [ly])],
        ["lowest first", q("units", ["channel"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["business revenue last year", q("revenue", [], [ly, business])],
        ["by channel", q("revenue", ["channel"], [ly, business])],
        ["and consumers?", q("revenue", ["channel"], [ly, consumer])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue by channel", q("revenue", ["channel"], [])],
        ["for last year", q("revenue", ["channel"], [ly])],
        [`and ${PY}`, q("revenue", ["channel"], [py])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["total revenue last year", q("revenue", [], [ly])],
        ["by region too", q("revenue", ["region"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["units sold by category last year", q("units", ["category"], [ly])],
        ["web only", q("units", ["category"], [ly, web])],
        ["and the stores?", q("units", ["category"], [ly, store])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["orders by region last year", q("orders", ["region"], [ly])],
        ["just laptops", q("orders", ["region"], [ly, category("Laptops")])]
      ]
    },

    // A row of the answer before.
    {
      on: "DEMO",
      turns: [
        ["top 5 products by revenue last year", q("revenue", ["product"], [ly], "ORDER BY 2 DESC LIMIT 5")],
        [
          "units of the second one by channel",
          q("units", ["channel"], [ly, `p.name = ${ranked("product", "revenue", ly, 2)}`])
        ]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["top 3 categories by revenue last year", q("revenue", ["category"], [ly], "ORDER BY 2 DESC LIMIT 3")],
        [
          "split the top one by quarter",
          q("revenue", ["quarter"], [ly, `ca.name = ${ranked("category", "revenue", ly, 1)}`])
        ]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["top 3 regions by orders last year", q("orders", ["region"], [ly], "ORDER BY 2 DESC LIMIT 3")],
        ["revenue of the third one", q("revenue", [], [ly, `r.name = ${ranked("region", "orders", ly, 3)}`])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["best selling category last year", q("units", ["category"], [ly], "ORDER BY 2 DESC LIMIT 1")],
        [
          "how much revenue did it make?",
          q("revenue", [], [ly, `ca.name = ${ranked("category", "units", ly, 1)}`])
        ]
      ]
    },

    // A complete question: nothing of the conversation carries over.
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["revenue by channel last year", q("revenue", ["channel"], [ly])],
        [
          "how many customers do we have in each region",
          `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id GROUP BY 1`
        ]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["units by category last year", q("units", ["category"], [ly])],
        [`web revenue in ${PY}`, q("revenue", [], [py, web])]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["top 5 products by revenue last year", q("revenue", ["product"], [ly], "ORDER BY 2 DESC LIMIT 5")],
        ["refunds by return reason", `SELECT reason, SUM(refund_amount) FROM returns GROUP BY 1`]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["store revenue last year", q("revenue", [], [ly, store])],
        ["how many orders were cancelled", `SELECT COUNT(*) FROM orders WHERE status = 'cancelled'`]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["revenue by quarter last year", q("revenue", ["quarter"], [ly])],
        ["orders by channel", q("orders", ["channel"], [])]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["revenue in europe by category", q("revenue", ["category"], [eu])],
        ["just laptops", q("revenue", ["category"], [eu, category("Laptops")])],
        ["units by region", q("units", ["region"], [])]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["orders by region last year", q("orders", ["region"], [ly])],
        [
          "average order value by channel",
          q("revenue", ["channel"], []).replace(
            "SUM(i.line_total)",
            "SUM(i.line_total) / COUNT(DISTINCT o.id)"
          )
        ]
      ]
    },

    // Follow-ups to decline.
    {
      on: "DEMO",
      turns: [
        ["why did revenue fall last year", null, /asks for a cause/],
        ["and by region?", null, /could not read/]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["top 3 regions by revenue last year", q("revenue", ["region"], [ly], "ORDER BY 2 DESC LIMIT 3")],
        // Asked about, not answered: which of the three regions.
        [`how many orders did it get in ${PY}?`, null, /^Which region do you mean by "it"\? \(1\) /]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue by channel last year", q("revenue", ["channel"], [ly])],
        ["and per planet?", null, /"planet"/]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["units by category", q("units", ["category"], [])],
        ["forecast them for next year", null, /about the future/]
      ]
    },

    // The SaaS schema, through the model derived from it.
    {
      on: "SaaS",
      turns: [
        ["accounts by industry", `SELECT industry, count(*) FROM accounts GROUP BY 1`],
        ["just the us", `SELECT industry, count(*) FROM accounts WHERE country = 'US' GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["mrr by plan", `SELECT p.name, sum(s.mrr) FROM ${plans} GROUP BY 1`],
        ["only active ones", `SELECT p.name, sum(s.mrr) FROM ${plans} WHERE s.status = 'active' GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        [
          "invoice amount by status last year",
          `SELECT status, sum(amount) FROM invoices WHERE ${saasInYear("issued_at", LY)} GROUP BY 1`
        ],
        [`and in ${PY}?`, `SELECT status, sum(amount) FROM invoices WHERE ${saasInYear("issued_at", PY)} GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["total mrr", `SELECT sum(mrr) FROM subscriptions`],
        ["by industry", `SELECT a.industry, sum(s.mrr) FROM ${subscribed} GROUP BY 1`],
        ["just finance", `SELECT a.industry, sum(s.mrr) FROM ${subscribed} WHERE a.industry = 'Finance' GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["number of subscriptions by plan", `SELECT p.name, count(*) FROM ${plans} GROUP BY 1`],
        ["trialing only", `SELECT p.name, count(*) FROM ${plans} WHERE s.status = 'trialing' GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["accounts per country", `SELECT country, count(*) FROM accounts GROUP BY 1`],
        ["top 2", `SELECT country, count(*) FROM accounts GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 2`]
      ]
    },
    {
      on: "SaaS",
      changesSubject: true,
      turns: [
        ["accounts per country", `SELECT country, count(*) FROM accounts GROUP BY 1`],
        ["how many subscriptions by status", `SELECT status, count(*) FROM subscriptions GROUP BY 1`]
      ]
    },
    {
      on: "SaaS",
      changesSubject: true,
      turns: [
        ["mrr by industry", `SELECT a.industry, sum(s.mrr) FROM ${subscribed} GROUP BY 1`],
        ["how many open invoices", `SELECT count(*) FROM invoices WHERE status = 'open'`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["churn rate by plan", null, /"churn"/],
        ["and by country?", null, /could not read/]
      ]
    }
  ]
}
