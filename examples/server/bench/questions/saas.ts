/**
 * A second schema from another domain: a SaaS business's plans, accounts, subscriptions and
 * invoices on PostgreSQL, with comments that list its values and no semantic model in the
 * library, so the offline model reads it with the model derived from the schema. Deterministic
 * data from `generate_series`; each question has SQL written by hand, or null when it should be
 * declined.
 */
import * as fs from "node:fs"
import type { Question } from "./demo.js"

/**
 * The schema and its data: core's fixture, which the importers' fixtures of the same business
 * define metrics over.
 */
export const setup: ReadonlyArray<string> = fs.readFileSync(
  new URL("../../../../packages/core/test/fixtures/import/saas/schema.sql", import.meta.url),
  "utf8"
).replace(/^--.*\n/gm, "").split(/;\s*\n/).map((statement) => statement.trim()).filter((statement) => statement !== "")

export const questions = (lastYear: number): ReadonlyArray<Question> => {
  const LY = lastYear
  const PY = LY - 1
  const inYear = (column: string) => `${column} >= '${LY}-01-01' AND ${column} < '${LY + 1}-01-01'`
  const toAccount = "JOIN accounts a ON a.id = s.account_id"
  return [
    ["how many accounts do we have", `SELECT count(*) FROM accounts`],
    ["accounts by industry", `SELECT industry, count(*) FROM accounts GROUP BY 1`],
    ["how many accounts in retail", `SELECT count(*) FROM accounts WHERE industry = 'Retail'`],
    ["accounts per country", `SELECT country, count(*) FROM accounts GROUP BY 1`],
    ["number of subscriptions by status", `SELECT status, count(*) FROM subscriptions GROUP BY 1`],
    [
      "active subscriptions by plan",
      `SELECT p.name, count(*) FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.status = 'active' GROUP BY 1`
    ],
    ["total mrr", `SELECT sum(mrr) FROM subscriptions`],
    ["mrr by plan", `SELECT p.name, sum(s.mrr) FROM subscriptions s JOIN plans p ON p.id = s.plan_id GROUP BY 1`],
    ["mrr by industry", `SELECT a.industry, sum(s.mrr) FROM subscriptions s ${toAccount} GROUP BY 1`],
    ["total invoice amount last year", `SELECT sum(amount) FROM invoices WHERE ${inYear("issued_at")}`],
    [
      `invoice amount by month in ${LY}`,
      `SELECT date_trunc('month', issued_at)::date, sum(amount) FROM invoices WHERE ${inYear("issued_at")} GROUP BY 1`
    ],
    ["amount by invoice status", `SELECT status, sum(amount) FROM invoices GROUP BY 1`],
    ["paid invoices last year", `SELECT count(*) FROM invoices WHERE status = 'paid' AND ${inYear("issued_at")}`],
    [
      "top 5 accounts by invoice amount",
      `SELECT a.name, sum(i.amount) FROM invoices i JOIN accounts a ON a.id = i.account_id
       GROUP BY a.id, a.name ORDER BY 2 DESC LIMIT 5`
    ],
    ["how many open invoices", `SELECT count(*) FROM invoices WHERE status = 'open'`],
    [
      "void invoices by country",
      `SELECT a.country, count(*) FROM invoices i JOIN accounts a ON a.id = i.account_id WHERE i.status = 'void' GROUP BY 1`
    ],
    [
      `invoices by industry in ${LY}`,
      `SELECT a.industry, count(*) FROM invoices i JOIN accounts a ON a.id = i.account_id
       WHERE ${inYear("i.issued_at")} GROUP BY 1`
    ],
    [
      "which plan has the most active subscriptions",
      `SELECT p.name, count(*) FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.status = 'active' GROUP BY 1`
    ],
    ["finance accounts by country", `SELECT country, count(*) FROM accounts WHERE industry = 'Finance' GROUP BY 1`],
    [
      "mrr from the enterprise plan",
      `SELECT sum(s.mrr) FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE p.name = 'Enterprise'`
    ],
    ["healthcare mrr", `SELECT sum(s.mrr) FROM subscriptions s ${toAccount} WHERE a.industry = 'Healthcare'`],
    ["trialing subscriptions", `SELECT count(*) FROM subscriptions WHERE status = 'trialing'`],
    ["mrr by country", `SELECT a.country, sum(s.mrr) FROM subscriptions s ${toAccount} GROUP BY 1`],
    [
      "invoice amount in q3 last year",
      `SELECT sum(amount) FROM invoices WHERE issued_at >= '${LY}-07-01' AND issued_at < '${LY}-10-01'`
    ],
    ["invoices by status", `SELECT status, count(*) FROM invoices GROUP BY 1`],
    [
      "uk vs de accounts",
      `SELECT country, count(*) FROM accounts WHERE country IN ('UK', 'DE') GROUP BY 1`
    ],
    [
      "monthly invoice amount last year for software accounts",
      `SELECT date_trunc('month', i.issued_at)::date, sum(i.amount) FROM invoices i JOIN accounts a ON a.id = i.account_id
       WHERE a.industry = 'Software' AND ${inYear("i.issued_at")} GROUP BY 1`
    ],
    [
      "growth vs starter mrr",
      `SELECT p.name, sum(s.mrr) FROM subscriptions s JOIN plans p ON p.id = s.plan_id
       WHERE p.name IN ('Growth', 'Starter') GROUP BY 1`
    ],

    // Written fresh for the shapes of issue 64, on the derived model.
    [
      `invoice amount h1 vs h2 ${PY}`,
      `SELECT CASE WHEN issued_at < '${PY}-07-01' THEN '${PY}-01-01' ELSE '${PY}-07-01' END, sum(amount) FROM invoices
       WHERE issued_at >= '${PY}-01-01' AND issued_at < '${LY}-01-01' GROUP BY 1`
    ],
    [
      `paid invoices in march ${LY} compared to march ${PY}`,
      `SELECT to_char(date_trunc('month', issued_at), 'YYYY-MM-DD'), count(*) FROM invoices WHERE status = 'paid' AND
       ((issued_at >= '${PY}-03-01' AND issued_at < '${PY}-04-01') OR (issued_at >= '${LY}-03-01' AND issued_at < '${LY}-04-01'))
       GROUP BY 1`
    ],
    [
      "top 2 industries per country by mrr",
      `SELECT country, industry, m FROM (SELECT a.country, a.industry, sum(s.mrr) AS m,
         ROW_NUMBER() OVER (PARTITION BY a.country ORDER BY sum(s.mrr) DESC, a.industry) AS n
       FROM subscriptions s ${toAccount} GROUP BY 1, 2) AS x WHERE n <= 2`
    ],
    [
      "the biggest industry in each country by invoice amount",
      `SELECT country, industry, m FROM (SELECT a.country, a.industry, sum(i.amount) AS m,
         ROW_NUMBER() OVER (PARTITION BY a.country ORDER BY sum(i.amount) DESC, a.industry) AS n
       FROM invoices i JOIN accounts a ON a.id = i.account_id GROUP BY 1, 2) AS x WHERE n <= 1`
    ],
    ["monthly price of the growth plan", `SELECT monthly_price FROM plans WHERE name = 'Growth'`],
    ["accounts per industry in the US", `SELECT industry, count(*) FROM accounts WHERE country = 'US' GROUP BY 1`],
    [
      `open invoices by month in ${LY}`,
      `SELECT date_trunc('month', issued_at)::date, count(*) FROM invoices WHERE status = 'open' AND ${
        inYear("issued_at")
      } GROUP BY 1`
    ],
    [
      "cancelled subscriptions by plan",
      `SELECT p.name, count(*) FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE s.status = 'cancelled' GROUP BY 1`
    ],
    [`how many accounts were created in ${LY}`, `SELECT count(*) FROM accounts WHERE ${inYear("created_at")}`],
    [
      "mrr per plan for retail accounts",
      `SELECT p.name, sum(s.mrr) FROM subscriptions s JOIN plans p ON p.id = s.plan_id ${toAccount} WHERE a.industry = 'Retail' GROUP BY 1`
    ],
    [
      `void invoice amount in ${LY}`,
      `SELECT sum(amount) FROM invoices WHERE status = 'void' AND ${inYear("issued_at")}`
    ],
    [
      "subscriptions per status for the starter plan",
      `SELECT s.status, count(*) FROM subscriptions s JOIN plans p ON p.id = s.plan_id WHERE p.name = 'Starter' GROUP BY 1`
    ],

    // The accounts with invoices in each status, listed with their invoices.
    [
      "accounts with both open and void invoices",
      `SELECT a.name, count(*) FROM accounts a JOIN invoices i ON i.account_id = a.id
        WHERE a.id IN (SELECT account_id FROM invoices WHERE status = 'open')
          AND a.id IN (SELECT account_id FROM invoices WHERE status = 'void')
        GROUP BY 1 ORDER BY 2 DESC, 1`
    ],

    ["why did mrr drop", null, /names no period to compare/],
    ["forecast mrr for next year", null, /about the future/],
    ["churn rate by plan", null, /"churn"/],
    ["customer lifetime value by industry", null, /"lifetime"/],
    ["invoices by sales rep", null, /"rep"/],
    ["net revenue retention", null, /"retention"/],
    ["mrr by city", null, /"city"/],
    ["average seats per account", null, /"seats"/],
    ["support tickets last month", null, /"tickets"/],
    ["mrr by acquisition channel", null, /"acquisition"/],
    ["discounts by plan", null, /"discounts"/],
    ["mrr this quarter compared to the same period last year", null, /could not read "the same period last year"/],
    ["top 3 accounts per sales territory", null, /"territory"/]
  ]
}
