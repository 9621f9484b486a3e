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

  /** The first `n` of `ranked` by a measure within each `group`, ties by name. */
  const perGroup = (
    group: keyof typeof groups | "customer",
    ranked: keyof typeof groups | "customer",
    measure: keyof typeof measures,
    where: ReadonlyArray<string>,
    n: number
  ) => {
    // A customer is named with its number: two customers may share a name.
    const expr = (g: keyof typeof groups | "customer") => g === "customer" ? "c.name" : groups[g]
    const id = ranked === "customer" ? "c.id" : "NULL"
    const joins = [group, ranked].some((g) => g === "region") ? toRegion : ""
    const joined = [group, ranked].includes("customer") && joins === "" ? toCustomer : joins
    const products = [group, ranked].some((g) => g === "category")
      ? toCategory
      : [group, ranked].includes("product")
      ? "JOIN products p ON p.id = i.product_id"
      : ""
    return `SELECT g, k, id, v FROM (SELECT g, k, id, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, k, id) AS n
      FROM (SELECT ${expr(group)} AS g, ${expr(ranked)} AS k, ${id} AS id, ${measures[measure]} AS v
      FROM ${lines} ${joined} ${products} WHERE ${[notCancelled, ...where].join(" AND ")} GROUP BY 1, 2, 3) AS x) AS y
      WHERE n <= ${n}`
  }
  const q1 = (year: number) => [`${year}-01-01`, `${year}-04-01`] as const
  const month = (year: number, m: number) =>
    `o.ordered_at >= '${year}-${String(m).padStart(2, "0")}-01' AND o.ordered_at < '${
      m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, "0")}`
    }-01'`
  /** A measure by groups in each of several periods (named by their first day), nothing between them. */
  const periods = (
    measure: keyof typeof measures,
    by: ReadonlyArray<keyof typeof groups>,
    where: ReadonlyArray<string>,
    spans: ReadonlyArray<readonly [string, string]>
  ) => {
    const within = ([from, to]: readonly [string, string]) => `o.ordered_at >= '${from}' AND o.ordered_at < '${to}'`
    const bucket = `CASE ${spans.map((p) => `WHEN ${within(p)} THEN '${p[0]}'`).join(" ")} END`
    const base = q(measure, by, [...where, `(${spans.map(within).join(" OR ")})`])
    return base.replace(/^SELECT /, `SELECT ${bucket}, `).replace(
      /GROUP BY ([\d, ]+)/,
      (_, list: string) => `GROUP BY ${list.split(", ").map((n) => Number(n) + 1).join(", ")}, 1`
    ).replace(/WHERE ((?:(?!GROUP BY).)*)\s*$/s, (all) => all.includes("GROUP BY") ? all : `${all} GROUP BY 1`)
  }
  /** Revenue's share of all revenue by a group, each value shown. */
  const shareBy = (by: keyof typeof groups, where: ReadonlyArray<string>) =>
    q("revenue", [by], where).replace("SUM(i.line_total)", "SUM(i.line_total) / SUM(SUM(i.line_total)) OVER ()")

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
        ["why do customers send laptops back", null, /asks for a cause/],
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
    },

    // Written fresh for the shapes of issue 64: periods compared, rankings within groups, shares of
    // the whole, the top of what a value classifies, attributes, a measure's unfiltered sibling.
    {
      on: "DEMO",
      turns: [
        ["top 3 products in each region by revenue", perGroup("region", "product", "revenue", [], 3)],
        ["just last year", perGroup("region", "product", "revenue", [ly], 3)]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["the biggest customer in each region", perGroup("region", "customer", "revenue", [], 1)],
        [`only ${PY}`, perGroup("region", "customer", "revenue", [py], 1)]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`revenue in q1 ${LY} vs q1 ${PY}`, periods("revenue", [], [], [q1(PY), q1(LY)])],
        ["by channel", periods("revenue", ["channel"], [], [q1(PY), q1(LY)])],
        ["online only", periods("revenue", ["channel"], [web], [q1(PY), q1(LY)])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`units by category in march ${LY}`, q("units", ["category"], [month(LY, 3)])],
        [
          `vs march ${PY}`,
          periods("units", ["category"], [], [[`${PY}-03-01`, `${PY}-04-01`], [`${LY}-03-01`, `${LY}-04-01`]])
        ]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`orders in ${LY}`, q("orders", [], [ly])],
        [
          `compared to ${PY}?`,
          periods("orders", [], [], [[`${PY}-01-01`, `${LY}-01-01`], [`${LY}-01-01`, `${LY + 1}-01-01`]])
        ],
        [
          "and per segment",
          periods("orders", ["segment"], [], [[`${PY}-01-01`, `${LY}-01-01`], [`${LY}-01-01`, `${LY + 1}-01-01`]])
        ]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["what share of revenue comes from the web", shareBy("channel", [])],
        ["and last year?", shareBy("channel", [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [
          "best selling laptop last year",
          q("units", ["product"], [ly, category("Laptops")], "ORDER BY 2 DESC LIMIT 1")
        ],
        ["and phones?", q("units", ["product"], [ly, category("Phones")], "ORDER BY 2 DESC LIMIT 1")]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["what does the vista pro cost", `SELECT name, unit_price FROM products WHERE name = 'Vista Pro'`],
        [
          "which category is it in?",
          `SELECT p.name, ca.name FROM products p JOIN categories ca ON ca.id = p.category_id WHERE p.name = 'Vista Pro'`
        ]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["orders by status", "SELECT status, COUNT(*) FROM orders GROUP BY 1"],
        ["last year", `SELECT status, COUNT(*) FROM orders o WHERE ${ly} GROUP BY 1`]
      ]
    },
    {
      on: "DEMO",
      turns: [
        [`top 2 categories per channel in ${LY}`, perGroup("channel", "category", "revenue", [ly], 2)],
        ["by units instead", perGroup("channel", "category", "units", [ly], 2)]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["top 3 products in each region by revenue", perGroup("region", "product", "revenue", [], 3)],
        ["how many customers do we have", "SELECT COUNT(*) FROM customers"]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        [`revenue in q1 ${LY} vs q1 ${PY}`, periods("revenue", [], [], [q1(PY), q1(LY)])],
        ["refunds by return reason", "SELECT reason, SUM(refund_amount) FROM returns GROUP BY 1"]
      ]
    },
    {
      on: "DEMO",
      changesSubject: true,
      turns: [
        ["what share of revenue comes from partners", shareBy("channel", [])],
        ["units by category last year", q("units", ["category"], [ly])]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["revenue by region last year", q("revenue", ["region"], [ly])],
        ["versus the year before?", null, /could not read|"before"/]
      ]
    },
    {
      on: "DEMO",
      turns: [
        ["units by channel", q("units", ["channel"], [])],
        ["and by warehouse?", null, /"warehouse"/]
      ]
    },
    {
      on: "SaaS",
      turns: [
        [
          `invoice amount by status in ${LY}`,
          `SELECT status, sum(amount) FROM invoices WHERE ${saasInYear("issued_at", LY)} GROUP BY 1`
        ],
        [
          `vs ${PY}`,
          `SELECT status, CASE WHEN issued_at < '${LY}-01-01' THEN '${PY}-01-01' ELSE '${LY}-01-01' END, sum(amount)
           FROM invoices WHERE issued_at >= '${PY}-01-01' AND issued_at < '${LY + 1}-01-01' GROUP BY 1, 2`
        ]
      ]
    },
    {
      on: "SaaS",
      turns: [
        [
          `paid invoices h1 vs h2 ${PY}`,
          `SELECT CASE WHEN issued_at < '${PY}-07-01' THEN '${PY}-01-01' ELSE '${PY}-07-01' END, count(*) FROM invoices
           WHERE status = 'paid' AND issued_at >= '${PY}-01-01' AND issued_at < '${LY}-01-01' GROUP BY 1`
        ],
        [
          "just the uk",
          `SELECT CASE WHEN i.issued_at < '${PY}-07-01' THEN '${PY}-01-01' ELSE '${PY}-07-01' END, count(*)
           FROM invoices i JOIN accounts a ON a.id = i.account_id WHERE i.status = 'paid' AND a.country = 'UK'
           AND i.issued_at >= '${PY}-01-01' AND i.issued_at < '${LY}-01-01' GROUP BY 1`
        ]
      ]
    },
    {
      on: "SaaS",
      changesSubject: true,
      turns: [
        [
          "top 2 industries per country by mrr",
          `SELECT country, industry, m FROM (SELECT a.country, a.industry, sum(s.mrr) AS m,
             ROW_NUMBER() OVER (PARTITION BY a.country ORDER BY sum(s.mrr) DESC, a.industry) AS n
           FROM ${subscribed} GROUP BY 1, 2) AS x WHERE n <= 2`
        ],
        ["how many trialing subscriptions", `SELECT count(*) FROM subscriptions WHERE status = 'trialing'`]
      ]
    },
    {
      on: "SaaS",
      turns: [
        ["mrr by plan", `SELECT p.name, sum(s.mrr) FROM ${plans} GROUP BY 1`],
        ["what share of it comes from enterprise", null, /"share"/]
      ]
    }
  ]
}
