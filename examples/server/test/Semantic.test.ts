/**
 * The metrics API over the socket: a new organization's library holds the DEMO model; semantic
 * queries run on it with their reading and source; a change to the model is used once merged; row
 * filters hold for keys with client attributes; connectors without a library model get a derived one.
 */
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import { OrganizationId } from "@sightline/core/Ids"
import * as Library from "@sightline/core/Library"
import { Fixtures } from "@sightline/core/testing"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Schema from "effect/Schema"
import { expect, it } from "vitest"
import { demoConnector, editModel, handSql, statuses } from "./utils/content.js"
import { newMember } from "./utils/members.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const query = (server: TestServer, key: string, json: unknown) =>
  server.request("/v2/semantic/query", { method: "POST", key, json })

/** Files an edit of the library as the organization's admin (its OWNERS first, when given); the change's id. */
const fileEdit = (server: TestServer, org: Org, edits: Record<string, string>) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const main = yield* (yield* Library.Library).main(admin.organizationId)
    const filed = yield* (yield* Changes.Changes).create(admin, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Model", description: "An edit." }),
      baseRef: main.head,
      edits: Fixtures.edits(edits)
    })
    return { id: filed.change_id as string, gitRef: filed.git_ref, status: filed.status, checks: filed.checks }
  }))

/** Approves a filed change over HTTP as the organization's admin; the response's body. */
const approve = async (server: TestServer, org: Org, change: { readonly id: string; readonly gitRef: string }) =>
  body(
    await server.request(`/v2/changes/${change.id}/approve`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: change.gitRef }
    })
  )

/** The DEMO model of the organization's main, as text. */
const demoModel = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const main = yield* (yield* Library.Library).main(OrganizationId.make(org.organizationId))
    return new TextDecoder().decode(HashMap.unsafeGet(main.files, "semantic/demo.yaml"))
  }))

/** The model with a dimension of `orders` on a column the DEMO database does not have. */
const withColour = (yaml: string) =>
  yaml.replace("      - name: status\n", "      - name: colour\n        expr: colour\n      - name: status\n")

describeServers("/v2 semantic", (server) => {
  it("answers which channel makes the most money with revenue by channel, its reading and its source", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const response = await query(server(), org.key, {
      connector_id: connector,
      metrics: ["revenue"],
      dimensions: ["channel"]
    })
    expect(response.status).toBe(200)
    const result = await body(response)
    const hand = await handSql(
      server(),
      org,
      connector,
      `SELECT o.channel, SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.status <> 'cancelled' GROUP BY o.channel ORDER BY 2 DESC`
    )
    expect(result.rows).toEqual(hand.rows)
    expect(result.columns).toEqual([
      { name: "channel", kind: "dimension" },
      { name: "revenue", kind: "metric", format: "currency", unit: "USD" }
    ])
    expect(result.reading.text).toBe(
      "Revenue (sum of order line totals after discounts, cancelled orders excluded) by channel, over all time, highest first"
    )
    expect(result.source).toEqual({
      kind: "library",
      model: "retail",
      path: "semantic/demo.yaml",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/)
    })
    expect(result.truncated).toBe(false)
    expect(result.dialect).toBe("postgres")

    const compiled = await body(
      await server().request("/v2/semantic/compile", {
        method: "POST",
        key: org.key,
        json: {
          connector_id: connector,
          metrics: ["revenue"],
          filters: [{ dimension: "region", operator: "=", values: ["APAC"] }],
          time: { start: "2025-01-01", end: "2026-01-01" }
        }
      })
    )
    expect(compiled.sql).toContain("\"regions\".\"d__region\" = $3")
    expect(compiled.params).toEqual(["2025-01-01", "2026-01-01", "Asia Pacific"])
    expect(compiled.reading.text).toBe(
      "Revenue (sum of order line totals after discounts, cancelled orders excluded) in 2025, where region is Asia Pacific"
    )
    expect(compiled.rows).toBeUndefined()
  })

  it("serves the governing model as YAML: the library's, or one derived from a connector's schema", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const response = await server().request(`/v2/connectors/${connector}/semantic-model`, { key: org.key })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/yaml")
    const text = await response.text()
    expect(text).toMatch(/^# From the library: semantic\/demo\.yaml at [0-9a-f]{40}\.\nname: retail\n/)
    expect(text).toContain("name: average_order_value")

    const other = await server().newOrg()
    const foreign = await server().request(`/v2/connectors/${connector}/semantic-model`, { key: other.key })
    expect(foreign.status).toBe(404)
  })

  it("once a change to the model merges, the next query uses it; one that fails its check does not merge", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const before = await query(server(), org.key, { connector_id: connector, metrics: ["gross_sales"] })
    expect(before.status).toBe(400)
    expect((await body(before)).error.message).toBe("no metric named gross_sales in model retail")
    await editModel(server(), org, (yaml) =>
      yaml.replace(
        "    measures:\n      - name: revenue",
        [
          "    measures:",
          "      - { name: gross_sales, agg: sum, expr: list_value, filters: [not_cancelled], time_dimension: orders.order_date }",
          "      - name: revenue"
        ].join("\n")
      ))
    const after = await query(server(), org.key, { connector_id: connector, metrics: ["gross_sales"] })
    expect(after.status).toBe(200)
    expect((await body(after)).reading.metrics).toEqual([{
      name: "gross_sales",
      definition: "sum of list value, cancelled orders excluded"
    }])
    // A model that does not read fails its check: approved, it does not merge, and answers go on.
    const text = await demoModel(server(), org)
    const broken = await fileEdit(server(), org, {
      "semantic/demo.yaml": text.replace(
        "    measures:\n      - { name: gross_sales",
        "    measures:\n      - { name: gross sales"
      )
    })
    expect(broken.checks[0]).toMatchObject({ name: "semantic/demo.yaml: format", status: "failed" })
    const approved = await approve(server(), org, broken)
    expect(approved.merged).toBe(false)
    expect((await query(server(), org.key, { connector_id: connector, metrics: ["gross_sales"] })).status).toBe(200)
  })

  it("a synonym filed into the library's model teaches the offline model a word: declined before, read after", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const ask = async (question: string) =>
      (await body(
        await server().request("/v2/chats", {
          method: "POST",
          key: org.key,
          json: { question, connector_ids: [connector] }
        })
      )).response as string
    expect(await ask("quidnunc by channel last year")).toContain(
      "I can't answer this: I don't know what \"quidnunc\" picks out here"
    )
    const text = await demoModel(server(), org)
    expect(text).toContain("synonyms: [sales, turnover,")
    const filed = await fileEdit(server(), org, {
      "semantic/demo.yaml": text.replace("synonyms: [sales, turnover,", "synonyms: [quidnunc, sales, turnover,")
    })
    expect(filed.checks.length).toBeGreaterThan(0)
    expect(filed.checks.filter((check: { status: string }) => check.status === "failed")).toEqual([])
    const approved = await approve(server(), org, filed)
    expect(approved.merged).toBe(true)
    const after = await ask("quidnunc by channel last year")
    expect(after).toMatch(
      /^I read this as: Revenue \(sum of order line totals after discounts, cancelled orders excluded\) by channel in \d{4}/
    )
  })

  it("holds a key with client attributes to the model's row filter", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    await editModel(server(), org, (yaml) =>
      yaml.replace(
        "base_table: { schema: public, table: regions }",
        "base_table: { schema: public, table: regions }\n    row_filter: code = _svc.client_attributes_json.region"
      ))
    const minted = await body(
      await server().request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "eu", expirySeconds: 3600, clientId: "{\"region\":\"EU\"}" }
      })
    )
    const eu = await body(await query(server(), minted.key, { connector_id: connector, metrics: ["revenue"] }))
    const hand = await handSql(
      server(),
      org,
      connector,
      `SELECT SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
       WHERE o.status <> 'cancelled' AND r.code = 'EU'`
    )
    expect(eu.rows).toEqual(hand.rows)
    // An investigation with the key is of EU's rows only: its one region, and totals that are EU's.
    const year = new Date().getUTCFullYear() - 1
    const investigated = await body(
      await server().request("/v2/semantic/investigate", {
        method: "POST",
        key: minted.key,
        json: {
          connector_id: connector,
          metric: "revenue",
          period: { start: `${year}-01-01`, end: `${year + 1}-01-01` },
          compared_with: { start: `${year - 1}-01-01`, end: `${year}-01-01` },
          drivers: ["region", "channel"]
        }
      })
    )
    const yearly = await handSql(
      server(),
      org,
      connector,
      `SELECT extract(year FROM o.ordered_at)::int, SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id
       JOIN customers c ON c.id = o.customer_id JOIN regions r ON r.id = c.region_id
       WHERE o.status <> 'cancelled' AND r.code = 'EU' AND o.ordered_at >= '${year - 1}-01-01'
       AND o.ordered_at < '${year + 1}-01-01' GROUP BY 1 ORDER BY 1`
    )
    expect(investigated.total.before).toBeCloseTo(Number(yearly.rows[0]![1]), 2)
    expect(investigated.total.after).toBeCloseTo(Number(yearly.rows[1]![1]), 2)
    const byRegion = investigated.steps.find((step: { id: string }) => step.id === "by_region")
    expect(byRegion.parts.map((part: { value: string }) => part.value)).toEqual(["Europe"])
    const byChannel = investigated.steps.find((step: { id: string }) => step.id === "by_channel")
    expect(byChannel.parts.reduce((sum: number, part: { change: number }) => sum + part.change, 0))
      .toBeCloseTo(investigated.total.change, 2)
    // A key handed to an end user without a region sees nothing rather than everything.
    const other = await body(
      await server().request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "t1", expirySeconds: 3600, clientId: "{\"tenant\":\"t1\"}" }
      })
    )
    expect((await body(await query(server(), other.key, { connector_id: connector, metrics: ["revenue"] }))).rows)
      .toEqual([[null]])
    // The admin's own key carries no client attributes: the organization's people see every region.
    const admin = await body(await query(server(), org.key, { connector_id: connector, metrics: ["revenue"] }))
    const everyone = await handSql(
      server(),
      org,
      connector,
      `SELECT SUM(i.line_total) FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.status <> 'cancelled'`
    )
    expect(admin.rows).toEqual(everyone.rows)
  })

  it("answers bad input with the envelope, and another organization's connector as unknown", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const base = { connector_id: connector, metrics: ["revenue"] }
    expect(
      await statuses(server(), org.key, [
        ["POST", "/v2/semantic/query", {}],
        ["POST", "/v2/semantic/query", { ...base, metrics: [] }],
        ["POST", "/v2/semantic/query", { ...base, dimensions: ["colour"] }],
        ["POST", "/v2/semantic/query", { ...base, time: { start: "last year" } }],
        ["POST", "/v2/semantic/query", { ...base, limit: 0 }],
        ["POST", "/v2/semantic/query", { ...base, extra: true }],
        ["POST", "/v2/semantic/compile", { ...base, metrics: ["all_orders"], dimensions: ["category"] }],
        ["GET", "/v2/connectors/999999/semantic-model"],
        ["POST", "/v2/semantic/investigate", { connector_id: connector, metric: "revenue_share" }],
        ["POST", "/v2/semantic/investigate", { connector_id: connector, metric: "revenue", depth: 9 }],
        ["POST", "/v2/semantic/investigate", {
          connector_id: connector,
          metric: "revenue",
          compared_with: { start: "2025-01-01", end: "2025-02-01" }
        }]
      ])
    ).toEqual([
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/query", 400, "invalid_request"],
      ["POST", "/v2/semantic/compile", 400, "invalid_request"],
      ["GET", "/v2/connectors/999999/semantic-model", 404, "not_found"],
      ["POST", "/v2/semantic/investigate", 400, "invalid_request"],
      ["POST", "/v2/semantic/investigate", 400, "invalid_request"],
      ["POST", "/v2/semantic/investigate", 400, "invalid_request"]
    ])
    const elsewhere = await server().request("/v2/semantic/investigate", {
      method: "POST",
      key: other.key,
      json: { connector_id: connector, metric: "revenue" }
    })
    expect(elsewhere.status).toBe(400)
    expect((await body(elsewhere)).error.message).toBe(
      `connector_id: connector ${connector} not found or not accessible`
    )
    const foreign = await query(server(), other.key, base)
    expect(foreign.status).toBe(400)
    expect((await body(foreign)).error.message).toBe(`connector_id: connector ${connector} not found or not accessible`)
    const fanOut = await body(
      await query(server(), org.key, { ...base, metrics: ["all_orders"], dimensions: ["category"] })
    )
    expect(fanOut.error.message).toBe(
      "all_orders cannot be read by category: no many-to-one relationship leads from orders to categories"
    )
    expect((await server().request("/v2/semantic/query", { method: "POST", json: base })).status).toBe(401)
  })

  it("checks a change to a model against its connector: a failed check is shown and keeps it from merging", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const yaml = await demoModel(server(), org)
    const filed = await fileEdit(server(), org, {
      "semantic/demo.yaml": withColour(yaml)
    })
    expect(filed.status).toBe("open")
    const got = await body(await server().request(`/v2/changes/${filed.id}`, { key: org.key }))
    expect(got.checks).toEqual([
      { name: "semantic/demo.yaml: format", status: "passed", messages: [] },
      {
        name: `semantic/demo.yaml: connector Demo retail (${connector})`,
        status: "failed",
        messages: [expect.stringMatching(/^table orders: dimension colour: column "colour" does not exist/)],
        connector_id: connector
      }
    ])
    const approved = await approve(server(), org, filed)
    expect(approved.merged).toBe(false)
    const after = await body(await server().request(`/v2/changes/${filed.id}`, { key: org.key }))
    expect(after.status).toBe("open")
    expect(after.checks[1].status).toBe("failed")
    expect(await demoModel(server(), org)).toBe(yaml)
  })

  it("checks a change to a dashboard: every tile compiles against the model and plans on the connector", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const dashboard = (revenue: string, verified: string) =>
      `title: Sales overview
connector: Demo retail
filters:
  dimensions:
    - { dimension: region, values: [Europe] }
  time: { start: "2025-01-01", end: "2026-01-01" }
tiles:
  - title: Revenue
    query: { semantic: { metrics: [${revenue}] } }
    visualization: { type: figure, compare: previous_period }
    layout: { x: 0, y: 0, w: 4, h: 2 }
  - title: Revenue by channel
    query: { semantic: { metrics: [${revenue}], dimensions: [channel] } }
    visualization: { type: bar, x: channel, y: ${revenue} }
    layout: { x: 4, y: 0, w: 8, h: 4 }
  - title: A verified query
    query: { verified: ${verified}, params: { year: 2025 } }
    visualization: { type: table }
    layout: { x: 0, y: 4, w: 12, h: 4 }
`
    const verified = "revenue_by_month"
    const good = await fileEdit(server(), org, { "dashboards/sales.yaml": dashboard("revenue", verified) })
    expect(good.checks).toEqual([
      { name: "dashboards/sales.yaml: format", status: "passed", messages: [] },
      {
        name: `dashboards/sales.yaml: tiles on connector Demo retail (${connector})`,
        status: "passed",
        messages: [],
        connector_id: connector
      }
    ])
    const bad = await fileEdit(server(), org, { "dashboards/sales.yaml": dashboard("margin", "no_such_query") })
    expect(bad.checks[1]).toMatchObject({ status: "failed", connector_id: connector })
    expect(bad.checks[1].messages).toEqual([
      expect.stringMatching(/^dashboards\/sales\.yaml:9: tiles\.0 \(Revenue\): .*margin/),
      expect.stringMatching(/^dashboards\/sales\.yaml:13: tiles\.1 \(Revenue by channel\): .*margin/),
      "dashboards/sales.yaml:17: tiles.2 (A verified query): the model has no verified query no_such_query"
    ])
    expect((await approve(server(), org, bad)).merged).toBe(false)
    const unknown = await fileEdit(server(), org, {
      "dashboards/sales.yaml": dashboard("revenue", verified).replace("connector: Demo retail", "connector: Nowhere")
    })
    expect(unknown.checks[1]).toEqual({
      name: "dashboards/sales.yaml: tiles",
      status: "failed",
      messages: ["no connector named Nowhere that you may use"]
    })
    // A SQL tile is one query, as a verified query must be.
    const writing = await fileEdit(server(), org, {
      "dashboards/sales.yaml": dashboard("revenue", verified).replace(
        `query: { verified: ${verified}, params: { year: 2025 } }`,
        "query: { sql: \"DELETE FROM orders\" }"
      )
    })
    expect(writing.checks[1]).toMatchObject({ status: "failed", messages: [expect.stringMatching(/^tiles\.2 /)] })
    expect((await approve(server(), org, good)).merged).toBe(true)
  })

  it("checks a change only against the connectors its author may use", async () => {
    const org = await server().newOrg()
    await demoConnector(server(), org)
    const member = await newMember(server(), org)
    const yaml = await demoModel(server(), org)
    // The admin's DEMO connector is not the member's: its database's words are not shown to them.
    const filed = await fileEdit(server(), { ...org, key: member.key }, {
      "semantic/demo.yaml": withColour(yaml)
    })
    expect(filed.checks).toEqual([
      { name: "semantic/demo.yaml: format", status: "passed", messages: [] },
      {
        name: "semantic/demo.yaml: connectors",
        status: "skipped",
        messages: ["no DEMO connector that you may use has this model: nothing to check it against"]
      }
    ])
  })

  it("a verified query is one SELECT or WITH query: ANALYZE, a writing CTE, SET and a second statement are refused", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const yaml = await demoModel(server(), org)
    const attempts: Record<string, string> = {
      analyze: "ANALYZE SELECT count(*) FROM __orders",
      writes: "WITH x AS (INSERT INTO regions (name) VALUES ('Atlantis') RETURNING id) SELECT * FROM x",
      sets: "SET statement_timeout = 0",
      second: "SELECT 1; DELETE FROM regions",
      quoted: "SELECT '\\'; DELETE FROM regions; --' AS a",
      into: "SELECT * INTO stolen FROM __orders",
      locks: "SELECT * FROM __orders FOR UPDATE"
    }
    const entries = Object.entries(attempts)
      .map(([name, sql]) => `  - name: ${name}\n    question: ${name}?\n    sql: ${JSON.stringify(sql)}\n`)
      .join("")
    const filed = await fileEdit(server(), org, {
      "semantic/demo.yaml": yaml.replace("verified_queries:\n", `verified_queries:\n${entries}`)
    })
    expect(filed.checks).toHaveLength(1)
    expect(filed.checks[0]).toMatchObject({ name: "semantic/demo.yaml: format", status: "failed" })
    const messages = filed.checks[0].messages.join("\n")
    for (const name of Object.keys(attempts)) {
      expect(messages).toMatch(new RegExp(`verified query ${name}: not one SELECT or WITH query`))
    }
    // Nothing ran: the regions are as they were.
    const atlantis = await handSql(
      server(),
      org,
      connector,
      "SELECT count(*)::int AS n FROM regions WHERE name = 'Atlantis'"
    )
    expect(atlantis.rows).toEqual([[0]])
  })

  it("a check plans, never runs, and keeps no database words that could hold a value", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const yaml = await demoModel(server(), org)
    const filed = await fileEdit(server(), org, {
      "semantic/demo.yaml": yaml.replace(
        "verified_queries:\n",
        "verified_queries:\n  - name: cast\n    question: cast?\n    sql: SELECT 'sightline-secret-value'::int AS n\n"
      )
    })
    const live = filed.checks.find((check: any) => check.connector_id === connector)!
    expect(live.status).toBe("failed")
    expect(live.messages).toEqual([
      "verified query cast: the database refused it (SQLSTATE 22P02; its message is not shown, as it could hold data)"
    ])
    expect(JSON.stringify(filed.checks)).not.toContain("sightline-secret-value")
  })

  it("a key with client attributes gets no probe run on a connector that does not enforce them", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const minted = await server().request("/v2/api-keys", {
      method: "POST",
      key: org.key,
      json: { inheritAllRoles: true, name: "eu", expirySeconds: 3600, clientId: "{\"region\":\"EU\"}" }
    })
    const euKey = (await body(minted)).key as string
    const yaml = await demoModel(server(), org)
    const filed = await fileEdit(server(), { ...org, key: euKey }, {
      "semantic/demo.yaml": withColour(yaml)
    })
    expect(filed.checks[1]).toMatchObject({
      status: "skipped",
      connector_id: connector,
      messages: [expect.stringMatching(/does not enforce this key's client attributes/)]
    })
  })

  it("an approver's checks on a connector the author may not use show the author only how they came out", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const member = await newMember(server(), org)
    const yaml = await demoModel(server(), org)
    const filed = await fileEdit(server(), { ...org, key: member.key }, {
      "semantic/demo.yaml": withColour(yaml)
    })
    // The admin approves: the checks run again on what would merge, on the admin's connectors.
    expect((await approve(server(), org, filed)).merged).toBe(false)
    const asAdmin = await body(await server().request(`/v2/changes/${filed.id}`, { key: org.key }))
    expect(asAdmin.checks[1]).toMatchObject({
      name: `semantic/demo.yaml: connector Demo retail (${connector})`,
      status: "failed",
      connector_id: connector
    })
    expect(asAdmin.checks[1].messages[0]).toContain("colour")
    for (
      const seen of [
        (await body(await server().request(`/v2/changes/${filed.id}`, { key: member.key }))).checks,
        (await body(await server().request("/v2/changes", { key: member.key }))).changes
          .find((change: any) => change.id === filed.id).checks
      ]
    ) {
      expect(seen[1]).toEqual({
        name: "semantic/demo.yaml: a connector you may not use",
        status: "failed",
        messages: []
      })
      expect(JSON.stringify(seen)).not.toContain("Demo retail")
    }
  })

  it("names the file and line of a model that does not read, and a passing change merges", async () => {
    const org = await server().newOrg()
    await demoConnector(server(), org)
    const yaml = await demoModel(server(), org)
    const broken = await fileEdit(server(), org, { "semantic/demo.yaml": yaml.replace("agg: sum", "agg: total") })
    expect(broken.checks).toEqual([{
      name: "semantic/demo.yaml: format",
      status: "failed",
      messages: [
        expect.stringMatching(
          /^semantic\/demo\.yaml:\d+: tables\.1\.measures\.0\.agg: Expected "sum" \| "count" \| "count_distinct" \| "avg" \| "min" \| "max" \| "median" \| "percentile" \| "sum_boolean", actual "total"$/
        )
      ]
    }])
    const synonym = await fileEdit(server(), org, {
      "semantic/demo.yaml": yaml.replace("synonyms: [sales, turnover,", "synonyms: [sales, gross takings,")
    })
    expect(synonym.checks.map((c: { status: string }) => c.status)).toEqual(["passed", "passed"])
    const approved = await approve(server(), org, synonym)
    expect(approved.merged).toBe(true)
    expect(await demoModel(server(), org)).toContain("gross takings")
  })

  it("an auto-approve rule does not merge a change whose check fails; without a connector the live check is skipped", async () => {
    const org = await server().newOrg()
    const yaml = await demoModel(server(), org)
    const rules = await fileEdit(server(), org, { OWNERS: "auto_approve: paths=semantic/**\n" })
    await approve(server(), org, rules)
    // No DEMO connector yet: the model reads, and there is nothing to run it against.
    const skipped = await fileEdit(server(), org, {
      "semantic/demo.yaml": yaml.replace("Money is in US", "Money is always in US")
    })
    expect(skipped.status).toBe("approved")
    expect(skipped.checks).toEqual([
      { name: "semantic/demo.yaml: format", status: "passed", messages: [] },
      {
        name: "semantic/demo.yaml: connectors",
        status: "skipped",
        messages: ["no DEMO connector that you may use has this model: nothing to check it against"]
      }
    ])
    await demoConnector(server(), org)
    const failing = await fileEdit(server(), org, {
      "semantic/demo.yaml": (await demoModel(server(), org)).replace("expr: ordered_at", "expr: ordered_on")
    })
    expect(failing.status).toBe("open")
    expect(failing.checks[1].status).toBe("failed")
  })
})
