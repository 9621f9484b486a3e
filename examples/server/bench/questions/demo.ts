/**
 * Questions about the DEMO retail data as business users type them (casual, abbreviated, misspelt,
 * with synonyms and comparisons), each with SQL written by hand over the tables: the ground truth.
 * `null` marks a question the data cannot answer with one query, or at all: the right answer
 * declines it, for the reason the pattern after it matches.
 *
 * Revenue, units and orders leave cancelled orders out, as the curated model defines them.
 */

/**
 * A question and its hand-written SQL, or null when it should be declined, with what its decline
 * must say (its true reason: the word it cannot place, or the idea).
 */
export type Question = readonly [question: string, sql: string | null, reason?: RegExp]

/** The pieces hand SQL on the DEMO data is written with. */
export const sqlOf = () => {
  const notCancelled = "o.status <> 'cancelled'"
  const lines = "order_items i JOIN orders o ON o.id = i.order_id"
  const toRegion = "JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id"
  const toCategory = "JOIN products p ON p.id = i.product_id JOIN categories ca ON ca.id = p.category_id"
  const inYear = (year: number, column = "o.ordered_at") =>
    `${column} >= '${year}-01-01' AND ${column} < '${year + 1}-01-01'`
  const revenue = (joins: string, where: string, group?: string) =>
    `SELECT ${group === undefined ? "" : `${group}, `}SUM(i.line_total) FROM ${lines} ${joins} WHERE ${notCancelled}${
      where === "" ? "" : ` AND ${where}`
    }${group === undefined ? "" : " GROUP BY 1"}`
  const units = (joins: string, where: string, group?: string) =>
    revenue(joins, where, group).replace("SUM(i.line_total)", "SUM(i.quantity)")
  const orders = (joins: string, where: string, group?: string) =>
    revenue(joins, where, group).replace("SUM(i.line_total)", "COUNT(DISTINCT o.id)")
  const aov = (joins: string, where: string, group?: string) =>
    revenue(joins, where, group).replace("SUM(i.line_total)", "SUM(i.line_total) / COUNT(DISTINCT o.id)")
  return { notCancelled, lines, toRegion, toCategory, inYear, revenue, units, orders, aov }
}

export const questions = (lastYear: number): ReadonlyArray<Question> => {
  const LY = lastYear
  const PY = LY - 1
  const { aov, inYear, lines, notCancelled, orders, revenue, toCategory, toRegion, units } = sqlOf()
  /** `o`'s customer has an order line (of any order) in the category. */
  const bought = (category: string) =>
    `o.customer_id IN (SELECT o2.customer_id FROM ${lines.replaceAll(" o ", " o2 ").replace("o.id", "o2.id")}
      JOIN products p ON p.id = i.product_id JOIN categories ca ON ca.id = p.category_id WHERE ca.name = '${category}')`
  /** A measure over order lines, one row per period (named by its first day), nothing between them. */
  const byPeriod = (measure: string, where: string, periods: ReadonlyArray<readonly [string, string]>) => {
    const within = ([from, to]: readonly [string, string]) => `o.ordered_at >= '${from}' AND o.ordered_at < '${to}'`
    return `SELECT CASE ${periods.map((p) => `WHEN ${within(p)} THEN '${p[0]}'`).join(" ")} END, ${measure}
      FROM ${lines} WHERE ${notCancelled}${where === "" ? "" : ` AND ${where}`} AND (${
      periods.map(within).join(" OR ")
    })
      GROUP BY 1`
  }
  /** The first `n` rows of each group of `grouped` (group, ranked, v), by v highest first. */
  const ranked = (grouped: string, n: number) =>
    `SELECT g, k, v FROM (SELECT g, k, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC, k) AS n
       FROM (${
      grouped.replace(/SELECT (.+?), (.+?), (SUM\(.+?\)) AS v/s, "SELECT $1 AS g, $2 AS k, $3 AS v")
    }) AS x) AS y
     WHERE n <= ${n}`
  /** Revenue's share of all revenue by `group`, each group shown. */
  const share = (group: string, joins: string, where: string) =>
    `SELECT ${group}, SUM(i.line_total) / SUM(SUM(i.line_total)) OVER () FROM ${lines} ${joins}
     WHERE ${notCancelled}${where === "" ? "" : ` AND ${where}`} GROUP BY 1`

  return [
    // Measures, periods and groups, as the bench asked from the start.
    ["which sales channel makes us the most money", revenue("", "", "o.channel")],
    [
      "top 5 products by revenue last year",
      `SELECT p.name, SUM(i.line_total) FROM ${lines} JOIN products p ON p.id = i.product_id
       WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1 ORDER BY 2 DESC LIMIT 5`
    ],
    ["revenue by region last yr", revenue(toRegion, inYear(LY), "r.name")],
    [
      `how many orders did we get each month in ${LY}`,
      `SELECT date_trunc('month', o.ordered_at)::date, COUNT(*) FROM orders o WHERE ${notCancelled} AND ${
        inYear(LY)
      } GROUP BY 1`
    ],
    ["whats our average order value by channel", aov("", "", "o.channel")],
    ["aov last year", aov("", inYear(LY))],
    [
      `new customers per month in ${LY}`,
      `SELECT date_trunc('month', created_at)::date, COUNT(*) FROM customers WHERE ${
        inYear(LY, "created_at")
      } GROUP BY 1`
    ],
    [
      "how many customers do we have in each region",
      `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id GROUP BY 1`
    ],
    [
      "return rate by category",
      `SELECT ca.name, COUNT(rt.id) * 1.0 / COUNT(*) FROM ${lines} ${toCategory}
       LEFT JOIN returns rt ON rt.order_item_id = i.id WHERE ${notCancelled} GROUP BY 1`
    ],
    ["refunds by return reason", `SELECT reason, SUM(refund_amount) FROM returns GROUP BY 1`],
    ["units sold by category last year", units(toCategory, inYear(LY), "ca.name")],
    ["revenue in APAC last year", revenue(toRegion, `r.code = 'APAC' AND ${inYear(LY)}`)],
    ["laptops revenue last yr", revenue(toCategory, `ca.name = 'Laptops' AND ${inYear(LY)}`)],
    ["which category earns the most", revenue(toCategory, "", "ca.name")],
    [
      "revenue from consumers vs businesses",
      revenue("JOIN customers c ON c.id = o.customer_id", "", "c.segment")
    ],
    [
      "who are our 10 biggest customers by revenue",
      `SELECT c.name, SUM(i.line_total) FROM ${lines} JOIN customers c ON c.id = o.customer_id
       WHERE ${notCancelled} GROUP BY c.id, c.name ORDER BY 2 DESC LIMIT 10`
    ],
    [
      "what was our largest order in dollars",
      `SELECT o.id, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} GROUP BY o.id ORDER BY 2 DESC LIMIT 1`
    ],
    [
      `monthly revenue ${PY}`,
      `SELECT date_trunc('month', o.ordered_at)::date, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${
        inYear(PY)
      } GROUP BY 1`
    ],
    [
      "revenue by quarter last year",
      `SELECT date_trunc('quarter', o.ordered_at)::date, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${
        inYear(LY)
      } GROUP BY 1`
    ],
    [
      "how much did we give away in discounts per category",
      `SELECT ca.name, SUM(i.quantity * i.unit_price - i.line_total) FROM ${lines} ${toCategory} WHERE ${notCancelled} GROUP BY 1`
    ],
    ["cancelled orders by channel", `SELECT channel, COUNT(*) FROM orders WHERE status = 'cancelled' GROUP BY 1`],
    ["how many returns did we get last year", `SELECT COUNT(*) FROM returns WHERE ${inYear(LY, "returned_at")}`],
    ["total refunds last year", `SELECT SUM(refund_amount) FROM returns WHERE ${inYear(LY, "returned_at")}`],
    ["revenue by channel in europe", revenue(toRegion, "r.code = 'EU'", "o.channel")],
    ["how many units did we sell last year", units("", inYear(LY))],
    [
      `revenue ${LY} vs ${PY}`,
      `SELECT date_trunc('year', o.ordered_at)::date, SUM(i.line_total) FROM ${lines} WHERE ${notCancelled} GROUP BY 1`
    ],
    [
      "which region has the most customers",
      `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id GROUP BY 1`
    ],
    [
      "what did latin america spend on phones last year",
      revenue(`${toRegion} ${toCategory}`, `r.code = 'LATAM' AND ca.name = 'Phones' AND ${inYear(LY)}`)
    ],
    ["web revenue last year", revenue("", `o.channel = 'web' AND ${inYear(LY)}`)],
    [
      "number of orders by region last year",
      `SELECT r.name, COUNT(*) FROM orders o ${toRegion} WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1`
    ],

    // Short forms, synonyms and typos.
    ["rev by channel", revenue("", "", "o.channel")],
    ["total sales last yr", revenue("", inYear(LY))],
    [`turnover in ${PY}`, revenue("", inYear(PY))],
    [`how much money did we make in ${LY}`, revenue("", inYear(LY))],
    ["reveune by region", revenue(toRegion, "", "r.name")],
    ["avg order value last year", aov("", inYear(LY))],
    ["qty sold by category", units(toCategory, "", "ca.name")],
    [
      "number of buyers last year",
      `SELECT COUNT(DISTINCT o.customer_id) FROM orders o WHERE ${notCancelled} AND ${inYear(LY)}`
    ],
    [`orders per channel in ${PY}`, orders("", inYear(PY), "o.channel")],
    [
      "monthly orders last year",
      `SELECT date_trunc('month', o.ordered_at)::date, COUNT(*) FROM orders o WHERE ${notCancelled} AND ${
        inYear(LY)
      } GROUP BY 1`
    ],
    [
      `quarterly revenue ${PY}`,
      revenue("", inYear(PY), "date_trunc('quarter', o.ordered_at)::date")
    ],
    ["revenue by segment", revenue("JOIN customers c ON c.id = o.customer_id", "", "c.segment")],
    [
      "b2b revenue last year",
      revenue("JOIN customers c ON c.id = o.customer_id", `c.segment = 'Business' AND ${inYear(LY)}`)
    ],
    ["sales in emea", revenue(toRegion, "r.code IN ('EU', 'MEA')")],
    [
      "smartphones revenue by quarter last year",
      revenue(toCategory, `ca.name = 'Phones' AND ${inYear(LY)}`, "date_trunc('quarter', o.ordered_at)::date")
    ],
    ["units of headphones sold last year", units(toCategory, `ca.name = 'Audio' AND ${inYear(LY)}`)],
    [
      `revenue between march and may ${LY}`,
      revenue("", `o.ordered_at >= '${LY}-03-01' AND o.ordered_at < '${LY}-06-01'`)
    ],
    [
      "web vs store revenue last year",
      revenue("", `o.channel IN ('web', 'store') AND ${inYear(LY)}`, "o.channel")
    ],
    [
      "did web or partner bring in more revenue last year",
      revenue("", `o.channel IN ('web', 'partner') AND ${inYear(LY)}`, "o.channel")
    ],
    ["revenue from laptops vs phones", revenue(toCategory, "ca.name IN ('Laptops', 'Phones')", "ca.name")],
    [
      "cancellations by region",
      `SELECT r.name, COUNT(*) FROM orders o ${toRegion} WHERE o.status = 'cancelled' GROUP BY 1`
    ],
    [
      "top 3 categories by units last year",
      `${units(toCategory, inYear(LY), "ca.name")} ORDER BY 2 DESC LIMIT 3`
    ],
    [
      "bottom 5 products by revenue",
      `SELECT p.name, SUM(i.line_total) FROM ${lines} JOIN products p ON p.id = i.product_id
       WHERE ${notCancelled} GROUP BY 1 ORDER BY 2 ASC LIMIT 5`
    ],
    [
      "which product line makes the most money",
      revenue("JOIN products p ON p.id = i.product_id", "", "regexp_replace(p.name, ' [^ ]+$', '')")
    ],
    [
      "revenue by variant",
      revenue("JOIN products p ON p.id = i.product_id", "", "regexp_replace(p.name, '^.* ', '')")
    ],
    [
      "refunds per reason last yr",
      `SELECT reason, SUM(refund_amount) FROM returns WHERE ${inYear(LY, "returned_at")} GROUP BY 1`
    ],
    ["number of returns with reason damaged", `SELECT COUNT(*) FROM returns WHERE reason = 'damaged'`],
    [
      "return rate last year",
      `SELECT COUNT(rt.id) * 1.0 / COUNT(*) FROM ${lines} LEFT JOIN returns rt ON rt.order_item_id = i.id
       WHERE ${notCancelled} AND ${inYear(LY)}`
    ],
    [
      "revenue share by region",
      `SELECT r.name, SUM(i.line_total) / SUM(SUM(i.line_total)) OVER () FROM ${lines} ${toRegion}
       WHERE ${notCancelled} GROUP BY 1`
    ],
    [
      "revenue growth last year",
      `SELECT (SUM(i.line_total) FILTER (WHERE ${inYear(LY)}) - SUM(i.line_total) FILTER (WHERE ${inYear(PY)}))
         / SUM(i.line_total) FILTER (WHERE ${inYear(PY)}) FROM ${lines} WHERE ${notCancelled}`
    ],
    [
      `how many new customers did we get in ${PY}`,
      `SELECT COUNT(*) FROM customers WHERE ${inYear(PY, "created_at")}`
    ],
    ["customer count by segment", `SELECT segment, COUNT(*) FROM customers GROUP BY 1`],
    [
      "how many customers in europe",
      `SELECT COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id WHERE r.code = 'EU'`
    ],
    [
      "order lines by channel",
      `SELECT o.channel, COUNT(*) FROM ${lines} WHERE ${notCancelled} GROUP BY 1`
    ],
    [
      "discounts last year",
      `SELECT SUM(i.quantity * i.unit_price - i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${inYear(LY)}`
    ],
    [
      "markdowns by category last year",
      `SELECT ca.name, SUM(i.quantity * i.unit_price - i.line_total) FROM ${lines} ${toCategory}
       WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1`
    ],
    [
      `revenue in q4 ${LY}`,
      revenue("", `o.ordered_at >= '${LY}-10-01' AND o.ordered_at < '${LY + 1}-01-01'`)
    ],
    [
      `revenue in march ${LY}`,
      revenue("", `o.ordered_at >= '${LY}-03-01' AND o.ordered_at < '${LY}-04-01'`)
    ],
    [
      `weekly orders in december ${LY}`,
      `SELECT date_trunc('week', o.ordered_at)::date, COUNT(*) FROM orders o WHERE ${notCancelled}
       AND o.ordered_at >= '${LY}-12-01' AND o.ordered_at < '${LY + 1}-01-01' GROUP BY 1`
    ],
    [`revenue since july ${LY}`, revenue("", `o.ordered_at >= '${LY}-07-01'`)],
    [`revenue before ${LY}`, revenue("", `o.ordered_at < '${LY}-01-01'`)],
    ["gaming revenue by channel", revenue(toCategory, "ca.name = 'Gaming'", "o.channel")],
    [
      "wearables units by month last year",
      units(toCategory, `ca.name = 'Wearables' AND ${inYear(LY)}`, "date_trunc('month', o.ordered_at)::date")
    ],
    ["aov by region", aov(toRegion, "", "r.name")],
    ["average basket by segment", aov("JOIN customers c ON c.id = o.customer_id", "", "c.segment")],
    [
      "what did businesses spend last year",
      revenue("JOIN customers c ON c.id = o.customer_id", `c.segment = 'Business' AND ${inYear(LY)}`)
    ],
    [
      "revenue by region and channel",
      `SELECT r.name, o.channel, SUM(i.line_total) FROM ${lines} ${toRegion} WHERE ${notCancelled} GROUP BY 1, 2`
    ],
    [
      "units by category and segment last year",
      `SELECT ca.name, c.segment, SUM(i.quantity) FROM ${lines} ${toCategory} JOIN customers c ON c.id = o.customer_id
       WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1, 2`
    ],
    [
      "which channel had the most cancelled orders",
      `SELECT channel, COUNT(*) FROM orders WHERE status = 'cancelled' GROUP BY 1`
    ],
    [
      "which region has the highest return rate",
      `SELECT r.name, COUNT(rt.id) * 1.0 / COUNT(*) FROM ${lines} ${toRegion}
       LEFT JOIN returns rt ON rt.order_item_id = i.id WHERE ${notCancelled} GROUP BY 1`
    ],
    ["total revenue", revenue("", "")],
    ["how many orders in total", orders("", "")],
    ["how many customers do we have", `SELECT COUNT(*) FROM customers`],
    [`revenue from the web channel in ${PY}`, revenue("", `o.channel = 'web' AND ${inYear(PY)}`)],
    ["online revenue last year", revenue("", `o.channel = 'web' AND ${inYear(LY)}`)],
    [
      `in-store sales by month in ${LY}`,
      revenue("", `o.channel = 'store' AND ${inYear(LY)}`, "date_trunc('month', o.ordered_at)::date")
    ],
    ["revenue from resellers by region", revenue(toRegion, "o.channel = 'partner'", "r.name")],
    ["NA revenue last year", revenue(toRegion, `r.code = 'NA' AND ${inYear(LY)}`)],
    ["revenu for monitors last year", revenue(toCategory, `ca.name = 'Monitors' AND ${inYear(LY)}`)],
    ["catgory revenue", revenue(toCategory, "", "ca.name")],
    [
      "refund amount by month last year",
      `SELECT date_trunc('month', returned_at)::date, SUM(refund_amount) FROM returns WHERE ${
        inYear(LY, "returned_at")
      } GROUP BY 1`
    ],
    [
      "units by variant last year",
      units("JOIN products p ON p.id = i.product_id", inYear(LY), "regexp_replace(p.name, '^.* ', '')")
    ],
    [
      "orders from business customers last year",
      orders("JOIN customers c ON c.id = o.customer_id", `c.segment = 'Business' AND ${inYear(LY)}`)
    ],
    [
      "how many orders were cancelled last year",
      `SELECT COUNT(*) FROM orders o WHERE o.status = 'cancelled' AND ${inYear(LY)}`
    ],
    ["sales by categroy last yr", revenue(toCategory, inYear(LY), "ca.name")],
    ["Revenue by Region?", revenue(toRegion, "", "r.name")],
    ["whats the turnover from wholesale", revenue("", "o.channel = 'partner'")],
    ["how much did asia pacific buy last year", revenue(toRegion, `r.code = 'APAC' AND ${inYear(LY)}`)],

    // The customers with lines in each of two categories (any order of theirs, cancelled or not),
    // then all their rows.
    [
      "how many customers bought both laptops and phones",
      `SELECT COUNT(DISTINCT o.customer_id) FROM orders o WHERE ${notCancelled} AND ${bought("Laptops")} AND ${
        bought("Phones")
      }`
    ],
    [
      "which customers bought both laptops and phones",
      `SELECT DISTINCT c.name FROM customers c WHERE c.id IN (SELECT o.customer_id FROM orders o WHERE ${
        bought("Laptops")
      })
        AND c.id IN (SELECT o.customer_id FROM orders o WHERE ${bought("Phones")}) ORDER BY c.name`
    ],
    [
      "revenue from customers who ordered both on the web and in store last year",
      revenue(
        "",
        `${inYear(LY)} AND o.customer_id IN (SELECT customer_id FROM orders WHERE channel = 'web')
          AND o.customer_id IN (SELECT customer_id FROM orders WHERE channel = 'store')`
      )
    ],

    // Declined: causes, forecasts, more than one query, and words the data has nothing for.
    // March is this year's, which the data does not reach: no change to find.
    ["why did revenue drop in march", null, /holds no revenue in March \d{4} or February \d{4}/],
    ["forecast revenue for next year", null, /about the future/],
    ["what will sales be next quarter", null, /about the future/],
    ["revenue by salesperson", null, /"salesperson"/],
    ["profit by category", null, /"profit"/],
    ["gross margin last year", null, /"gross", "margin"/],
    ["revenue by hour of day", null, /"hour"/],
    ["late deliveries last year", null, /what to measure of return reason late delivery/],
    ["revenue after refunds", null, /"after"/],
    ["median order value", null, /"median"/],
    ["customer lifetime value", null, /"lifetime"/],
    ["churn rate last year", null, /"churn"/],
    ["inventory levels by product", null, /"inventory"/],
    ["shipping costs by region", null, /"shipping"/],
    ["marketing spend last year", null, /"marketing"/],
    ["revenue per employee", null, /"employee"/],
    ["NPS by region", null, /"nps"/],
    ["conversion rate on the website", null, /"conversion"/],
    ["black friday revenue", null, /"black", "friday"/],
    ["revenue in the uk", null, /"uk"/],
    ["revenue by city", null, /"city"/],
    ["which customers never ordered", null, /"never"/],
    ["average price across products", null, /"average"/],
    ["what was our first order", null, /"first"/],
    // Zephyr is a line of phones in the data: the name is looked up there, and kept to.
    ["revenue for the zephyr line", revenue("JOIN products p ON p.id = i.product_id", "p.name LIKE 'Zephyr %'")],
    ["revenue by payment method", null, /"payment"/],
    ["how many visitors did the site get", null, /"visitors"/],
    ["predict units for december", null, /about the future/],
    ["correlation between discounts and returns", null, /how two things relate/],
    ["refunds by warehouse", null, /"warehouse"/],
    ["orders by delivery time", null, /"delivery"/],
    ["tax collected last year", null, /"tax"/],
    ["top products by profit margin", null, /"profit", "margin"/],
    ["revenue by customer age", null, /"age"/],
    ["explain the drop in orders", null, /names no period to compare/],
    ["revenue by sales rep", null, /"rep"/],
    ["employee count", null, /"employee"/],
    ["how many support tickets did we get", null, /"support", "tickets"/],
    ["revenue per order", null, /no dimension for "order"/],
    ["top 5 by revenue", null, /what to rank the top 5 of/],
    ["units last quarter versus the one before", null, /could not read "the one before" as a period/],
    ["best selling products in each warehouse", null, /"warehouse"/],

    // Names in the data, lists, first and last, rankings that name no measure.
    [
      "how many orders did dennis dijkstra place",
      `SELECT c.id, COUNT(DISTINCT o.id) FROM orders o JOIN customers c ON c.id = o.customer_id
       WHERE c.name = 'Dennis Dijkstra' AND ${notCancelled} GROUP BY c.id`
    ],
    [
      "revenue from Ada Wirth last year",
      `SELECT c.id, SUM(i.line_total) FROM ${lines} JOIN customers c ON c.id = o.customer_id
       WHERE c.name = 'Ada Wirth' AND ${notCancelled} AND ${inYear(LY)} GROUP BY c.id`
    ],
    ["revenue of the nimbus pro", revenue("JOIN products p ON p.id = i.product_id", "p.name = 'Nimbus Pro'")],
    [
      "what products are in the audio category",
      `SELECT p.name FROM products p JOIN categories ca ON ca.id = p.category_id WHERE ca.name = 'Audio'`
    ],
    [
      "who are our customers in latin america",
      `SELECT c.name, c.id FROM customers c JOIN regions r ON r.id = c.region_id WHERE r.name = 'Latin America'`
    ],
    ["list all regions", "SELECT name FROM regions"],
    [
      "when was our last order",
      `SELECT to_char(o.ordered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), COUNT(*) FROM orders o WHERE ${notCancelled}
       GROUP BY 1 ORDER BY 1 DESC LIMIT 1`
    ],
    [
      "when was the first return",
      `SELECT to_char(returned_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), COUNT(*) FROM returns GROUP BY 1 ORDER BY 1 LIMIT 1`
    ],
    [
      "who are our 5 biggest customers",
      `SELECT c.name, c.id, SUM(i.line_total) FROM ${lines} JOIN customers c ON c.id = o.customer_id
       WHERE ${notCancelled} GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`
    ],
    ["which categories did best last year", revenue(toCategory, inYear(LY), "ca.name")],
    [
      "top 2 products per region by revenue",
      ranked(
        `SELECT r.name, p.name, SUM(i.line_total) AS v FROM ${lines} ${toRegion}
         JOIN products p ON p.id = i.product_id WHERE ${notCancelled} GROUP BY 1, 2`,
        2
      )
    ],
    ["when was revenue highest", null, /which month had the most revenue/],
    ["orders from dijkstra", null, /Which "dijkstra" do you mean/],

    // Written fresh for the shapes of issue 64: periods compared, rankings within groups, the top of
    // what a value classifies, shares of the whole, attributes of a named row, and measures whose own
    // filter removes some groups.
    [
      `revenue in q1 ${LY} vs q1 ${PY}`,
      byPeriod("SUM(i.line_total)", "", [[`${PY}-01-01`, `${PY}-04-01`], [`${LY}-01-01`, `${LY}-04-01`]])
    ],
    [
      `units sold march ${LY} versus march ${PY}`,
      byPeriod("SUM(i.quantity)", "", [[`${PY}-03-01`, `${PY}-04-01`], [`${LY}-03-01`, `${LY}-04-01`]])
    ],
    [
      `compare orders in h1 and h2 ${LY}`,
      byPeriod("COUNT(DISTINCT o.id)", "", [[`${LY}-01-01`, `${LY}-07-01`], [`${LY}-07-01`, `${LY + 1}-01-01`]])
    ],
    [
      `how did q3 compare to q2 in ${LY} for revenue`,
      byPeriod("SUM(i.line_total)", "", [[`${LY}-04-01`, `${LY}-07-01`], [`${LY}-07-01`, `${LY}-10-01`]])
    ],
    [
      `january vs february ${LY} orders`,
      byPeriod("COUNT(DISTINCT o.id)", "", [[`${LY}-01-01`, `${LY}-02-01`], [`${LY}-02-01`, `${LY}-03-01`]])
    ],
    [
      `web revenue q4 ${PY} vs q4 ${LY}`,
      byPeriod("SUM(i.line_total)", "o.channel = 'web'", [[`${PY}-10-01`, `${PY + 1}-01-01`], [
        `${LY}-10-01`,
        `${LY + 1}-01-01`
      ]])
    ],
    [
      `revenue by month, q1 vs q2 ${LY}`,
      revenue(
        "",
        `o.ordered_at >= '${LY}-01-01' AND o.ordered_at < '${LY}-07-01'`,
        "date_trunc('month', o.ordered_at)::date"
      )
    ],
    [
      "top 3 products in each region by revenue",
      ranked(
        `SELECT r.name, p.name, SUM(i.line_total) AS v FROM ${lines} ${toRegion}
         JOIN products p ON p.id = i.product_id WHERE ${notCancelled} GROUP BY 1, 2`,
        3
      )
    ],
    [
      "best selling product in each category last year",
      ranked(
        `SELECT ca.name, p.name, SUM(i.quantity) AS v FROM ${lines} ${toCategory}
         WHERE ${notCancelled} AND ${inYear(LY)} GROUP BY 1, 2`,
        1
      )
    ],
    [
      "top 2 categories per channel",
      ranked(
        `SELECT o.channel, ca.name, SUM(i.line_total) AS v FROM ${lines} ${toCategory}
         WHERE ${notCancelled} GROUP BY 1, 2`,
        2
      )
    ],
    [
      "the biggest customer in each region",
      // A customer with its number: two customers may share a name.
      `SELECT g, k, id, v FROM (SELECT r.name AS g, c.name AS k, c.id AS id, SUM(i.line_total) AS v,
         ROW_NUMBER() OVER (PARTITION BY r.name ORDER BY SUM(i.line_total) DESC, c.name, c.id) AS n
       FROM ${lines} ${toRegion} WHERE ${notCancelled} GROUP BY 1, 2, 3) AS x WHERE n <= 1`
    ],
    [
      "what was the best selling phone last year",
      `SELECT p.name, SUM(i.quantity) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND ${inYear(LY)}
       AND ca.name = 'Phones' GROUP BY 1 ORDER BY 2 DESC LIMIT 1`
    ],
    [
      "our top 3 laptops by revenue",
      `SELECT p.name, SUM(i.line_total) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND ca.name = 'Laptops'
       GROUP BY 1 ORDER BY 2 DESC LIMIT 3`
    ],
    [
      "top monitor by units",
      `SELECT p.name, SUM(i.quantity) FROM ${lines} ${toCategory} WHERE ${notCancelled} AND ca.name = 'Monitors'
       GROUP BY 1 ORDER BY 2 DESC LIMIT 1`
    ],
    ["what share of revenue comes from partners", share("o.channel", "", "")],
    [`what percent of revenue came from europe in ${LY}`, share("r.name", toRegion, inYear(LY))],
    ["laptops share of revenue", share("ca.name", toCategory, "")],
    ["what does the nimbus plus cost", `SELECT name, unit_price FROM products WHERE name = 'Nimbus Plus'`],
    ["list price of the aero lite", `SELECT name, unit_price FROM products WHERE name = 'Aero Lite'`],
    [
      "when was the vista max launched",
      `SELECT name, to_char(launched_on, 'YYYY-MM-DD') FROM products WHERE name = 'Vista Max'`
    ],
    [
      "which category is the dock mini in",
      `SELECT p.name, ca.name FROM products p JOIN categories ca ON ca.id = p.category_id WHERE p.name = 'Dock Mini'`
    ],
    ["price of the orbit max?", `SELECT name, unit_price FROM products WHERE name = 'Orbit Max'`],
    ["orders by status", "SELECT status, COUNT(*) FROM orders GROUP BY 1"],
    [`order count by status in ${LY}`, `SELECT status, COUNT(*) FROM orders o WHERE ${inYear(LY)} GROUP BY 1`],
    [
      `how many orders were shipped in ${LY}`,
      `SELECT COUNT(*) FROM orders o WHERE status = 'shipped' AND ${inYear(LY)}`
    ],
    // Revenue leaves cancelled orders out and the model names no sibling: the group has no figure.
    [
      "revenue by status",
      `SELECT o.status, SUM(CASE WHEN ${notCancelled} THEN i.line_total END) FROM ${lines} GROUP BY 1`
    ],

    // More phrasings, written fresh.
    ["units by variant", units("JOIN products p ON p.id = i.product_id", "", "regexp_replace(p.name, '^.* ', '')")],
    [
      "how many buyers did we have last year",
      `SELECT COUNT(DISTINCT o.customer_id) FROM orders o WHERE ${notCancelled} AND ${inYear(LY)}`
    ],
    [
      `discounts by channel in ${LY}`,
      `SELECT o.channel, SUM(i.quantity * i.unit_price - i.line_total) FROM ${lines} WHERE ${notCancelled} AND ${
        inYear(LY)
      } GROUP BY 1`
    ],
    [
      `refunds per month in ${LY}`,
      `SELECT date_trunc('month', returned_at)::date, SUM(refund_amount) FROM returns WHERE ${
        inYear(LY, "returned_at")
      } GROUP BY 1`
    ],
    [
      "cancellations by region",
      `SELECT r.name, COUNT(*) FROM orders o ${toRegion} WHERE o.status = 'cancelled' GROUP BY 1`
    ],
    [
      "avg basket size for business customers",
      aov("JOIN customers c ON c.id = o.customer_id", "c.segment = 'Business'")
    ],
    [
      `new signups in ${LY} by region`,
      `SELECT r.name, COUNT(*) FROM customers c JOIN regions r ON r.id = c.region_id WHERE ${
        inYear(LY, "c.created_at")
      } GROUP BY 1`
    ],
    [
      "return rate for laptops",
      `SELECT COUNT(rt.id) * 1.0 / COUNT(*) FROM ${lines} ${toCategory}
       LEFT JOIN returns rt ON rt.order_item_id = i.id WHERE ${notCancelled} AND ca.name = 'Laptops'`
    ],
    [
      `monthly units for phones in ${LY}`,
      units(toCategory, `ca.name = 'Phones' AND ${inYear(LY)}`, "date_trunc('month', o.ordered_at)::date")
    ],
    [
      `weekly orders in december ${LY}`,
      orders(
        "",
        `o.ordered_at >= '${LY}-12-01' AND o.ordered_at < '${LY + 1}-01-01'`,
        "date_trunc('week', o.ordered_at)::date"
      )
    ],
    [
      `revenue from the smart home category in q2 ${LY}`,
      revenue(toCategory, `ca.name = 'Smart Home' AND o.ordered_at >= '${LY}-04-01' AND o.ordered_at < '${LY}-07-01'`)
    ],
    [
      "units sold to consumers by category",
      units(`${toCategory} JOIN customers c ON c.id = o.customer_id`, "c.segment = 'Consumer'", "ca.name")
    ],
    ["how much did latam spend last year", revenue(toRegion, `r.code = 'LATAM' AND ${inYear(LY)}`)],
    [`revenue back to school ${LY}`, revenue("", `o.ordered_at >= '${LY}-07-15' AND o.ordered_at < '${LY}-09-11'`)],
    [`holiday season ${PY} orders`, orders("", `o.ordered_at >= '${PY}-11-20' AND o.ordered_at < '${PY + 1}-01-01'`)],
    [
      `revenue between march and may ${LY}`,
      revenue("", `o.ordered_at >= '${LY}-03-01' AND o.ordered_at < '${LY}-06-01'`)
    ],
    [
      "lines per order by channel",
      revenue("", "", "o.channel").replace("SUM(i.line_total)", "COUNT(*) * 1.0 / COUNT(DISTINCT o.id)")
    ],
    [
      "returns by reason last year",
      `SELECT reason, COUNT(*) FROM returns WHERE ${inYear(LY, "returned_at")} GROUP BY 1`
    ]
  ]
}
