/**
 * Importing a dbt project over the socket: a zip of it is read into the DEMO connector's model,
 * filed as a library change whose checks probe every metric on the connector and evaluate its
 * verified queries; once merged, the offline model answers in the team's own words.
 */
import JSZip from "jszip"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, it } from "vitest"
import * as Yaml from "yaml"
import { demoConnector, handSql } from "./utils/content.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"
import { until } from "./utils/wait.js"

const project = path.join(__dirname, "..", "..", "..", "packages", "core", "test", "fixtures", "import", "dbt")

const projectFiles = (): Array<{ path: string; content: string }> => {
  const walk = (at: string): Array<string> =>
    fs.readdirSync(at, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(path.join(at, e.name)) : [path.join(at, e.name)]
    )
  return walk(project).map((p) => ({ path: path.relative(project, p), content: fs.readFileSync(p, "utf8") }))
}

const zipped = async () => {
  const zip = new JSZip()
  for (const file of projectFiles()) zip.file(`shop_analytics/${file.path}`, file.content)
  // What the import does not read is left out, not refused.
  zip.file("shop_analytics/README.md", "# The shop's dbt project\n")
  return new Blob([await zip.generateAsync({ type: "uint8array" })], { type: "application/zip" })
}

const importForm = (fields: Record<string, string>, files: ReadonlyArray<[Blob, string]>) => {
  const form = new FormData()
  for (const [key, value] of Object.entries(fields)) form.set(key, value)
  for (const [blob, name] of files) form.append("files", blob, name)
  return form
}

const importAs = (server: TestServer, key: string, request: FormData | object) =>
  server.request("/v2/semantic/import", {
    method: "POST",
    key,
    ...(request instanceof FormData ? { body: request } : { json: request })
  })

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

describeServers("/v2/semantic/import", (server) => {
  it(
    "imports a zipped dbt project, files it for review with its checks, and once merged answers in the team's words",
    async () => {
      const org = await server().newOrg()
      const connector = await demoConnector(server(), org)
      const response = await importAs(
        server(),
        org.key,
        importForm(
          { format: "dbt", connector_id: String(connector), name: "shop", schema: "public", file_change: "true" },
          [[await zipped(), "shop_analytics.zip"]]
        )
      )
      expect(response.status).toBe(200)
      const imported = await body(response)
      expect(imported.path).toBe("semantic/shop.yaml")
      expect(imported.tally).toEqual({ imported: imported.report.length - 1, approximated: 0, refused: 1 })
      expect(imported.report).toContainEqual({
        file: "shop_analytics/models/marts/orders.yml",
        line: 76,
        construct: "metric",
        name: "revenue",
        outcome: "imported",
        note: "line_revenue, filtered"
      })
      expect(imported.yaml).toContain("connector: Demo retail")
      expect(imported.yaml).toContain(
        "#   shop_analytics/models/marts/customers.yml:107: saved query weekly_by_hour: refused"
      )
      expect(imported.change).toMatchObject({ status: "open" })

      // Before anyone merges it, the reviewer sees every metric compiled and probed on the connector.
      const change = await body(await server().request(`/v2/changes/${imported.change.change_id}`, { key: org.key }))
      expect(change.checks).toEqual([
        { name: "semantic/shop.yaml: format", status: "passed", messages: [] },
        {
          name: `semantic/shop.yaml: connector Demo retail (${connector})`,
          status: "passed",
          messages: [],
          connector_id: connector
        }
      ])
      // Its verified queries (the project's saved queries) run as an evaluation.
      const evaluated = await until("the change's evaluation", async () => {
        const got = await body(await server().request(`/v2/changes/${imported.change.change_id}`, { key: org.key }))
        return ["passed", "failed", "skipped"].includes(got.evaluation?.status) ? got : undefined
      }, 120_000)
      const set = evaluated.evaluation.sets.find((s: { set: string }) => s.set === "semantic/shop.yaml")
      expect(set.passed + set.failed).toBe(2)

      expect((await approve(server(), org, imported.change)).merged).toBe(true)
      const model = await (await server().request(`/v2/connectors/${connector}/semantic-model`, { key: org.key }))
        .text()
      expect(model).toContain("From the library: semantic/shop.yaml")

      // The label "AOV" and the dimension's "Sales channel" came along: the offline model reads them.
      const answer = await body(
        await server().request("/v2/chats", {
          method: "POST",
          key: org.key,
          json: { question: "What is the AOV by sales channel?", connector_ids: [connector] }
        })
      )
      const cells = await body(await server().request(`/v2/chats/${answer.chat_id}/cells?limit=100`, { key: org.key }))
      const cell = cells.cells.find((c: { semantic_query?: unknown }) => c.semantic_query !== undefined)
      expect(cell?.semantic_query, answer.response).toMatchObject({
        metrics: ["average_order_value"],
        dimensions: ["channel"]
      })
      const hand = await handSql(
        server(),
        org,
        connector,
        `SELECT o.channel, SUM(i.line_total) / COUNT(DISTINCT o.id) FROM order_items i JOIN orders o ON o.id = i.order_id
       WHERE o.status <> 'cancelled' GROUP BY o.channel ORDER BY 2 DESC`
      )
      // The cell's query, run again as any caller runs it, gives the figures of SQL written by hand.
      const rerun = await body(
        await server().request("/v2/semantic/query", {
          method: "POST",
          key: org.key,
          json: { connector_id: connector, ...cell.semantic_query }
        })
      )
      expect(rerun.rows.map((r: Array<unknown>) => r[0])).toEqual(hand.rows.map((r) => r[0]))
      rerun.rows.forEach((r: Array<unknown>, i: number) =>
        expect(Number(r[1])).toBeCloseTo(Number(hand.rows[i]![1]), 2)
      )
      expect(cell.reading.text).toMatch(/^Average order value \(Revenue divided by orders\.\) by channel/)
    },
    240_000
  )

  it("takes JSON too, and refuses what it must: a broken file by its line, a zip that does not open, a connector not the caller's", async () => {
    const org = await server().newOrg()
    const connector = await demoConnector(server(), org)
    const json = { format: "dbt", connector_id: connector, files: projectFiles() }
    const answered = await importAs(server(), org.key, json)
    expect(answered.status).toBe(200)
    const imported = await body(answered)
    expect(imported.path).toBe("semantic/shop_analytics.yaml")
    expect(imported.change).toBeUndefined()

    const broken = await importAs(server(), org.key, {
      ...json,
      files: [{ path: "models/broken.yml", content: "semantic_models:\n  - name: x\n    model: [open\n" }]
    })
    expect(broken.status).toBe(400)
    expect((await body(broken)).error.message).toMatch(/^models\/broken\.yml:4: /)

    const notZip = await importAs(
      server(),
      org.key,
      importForm({ format: "dbt", connector_id: String(connector) }, [[new Blob(["not a zip"]), "project.zip"]])
    )
    expect(notZip.status).toBe(400)
    expect((await body(notZip)).error.message).toMatch(/^a zip does not open/)

    const unknownFormat = await importAs(server(), org.key, { ...json, format: "tableau" })
    expect(unknownFormat.status).toBe(400)

    // The DEMO model as an OSI document, for the tools that read one; imported back, the same model.
    const osi = await server().request(`/v2/connectors/${connector}/semantic-model?format=osi`, { key: org.key })
    expect(osi.status).toBe(200)
    const document = await osi.text()
    expect(document).toMatch(/^# From the library: semantic\/demo\.yaml at \w+\.\nversion: 0\.1\.1\n/)
    const back = await body(
      await importAs(server(), org.key, {
        format: "osi",
        connector_id: connector,
        files: [{ path: "demo.osi.yaml", content: document }]
      })
    )
    expect(back.tally.refused).toBe(0)
    expect(back.path).toBe("semantic/retail.yaml")
    const yaml = await (await server().request(`/v2/connectors/${connector}/semantic-model`, { key: org.key })).text()
    expect(Yaml.parse(back.yaml)).toEqual({ ...Yaml.parse(yaml), connector: "Demo retail" })
    expect((await server().request(`/v2/connectors/${connector}/semantic-model?format=xml`, { key: org.key })).status)
      .toBe(400)

    const other = await server().newOrg()
    expect((await importAs(server(), other.key, json)).status).toBe(404)
    expect((await server().request("/v2/semantic/import", { method: "POST", json })).status).toBe(401)
  })
})
