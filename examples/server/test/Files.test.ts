/**
 * FILES connectors over the socket: files uploaded as multipart become tables (CSV, TSV, JSON,
 * NDJSON, Parquet) that the offline model answers from, with numbers matching the same SQL run by
 * hand; DuckDB refuses everything outside the connector's tables; a bad file is a 400 that names
 * it and leaves nothing behind; another process of the deployment answers on the same files.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import * as Auth from "@sightline/core/Auth"
import { ConnectorId } from "@sightline/core/Ids"
import * as SqlQueries from "@sightline/core/SqlQueries"
import * as Effect from "effect/Effect"
import ExcelJS from "exceljs"
import JSZip from "jszip"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { newMember } from "./utils/members.js"
import { serve, tempDir } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import {
  body,
  describeServers,
  type Org,
  postgresProblem,
  postgresUrl,
  randomPrefix,
  startServer,
  type TestServer
} from "./utils/server.js"
import { readEvents } from "./utils/sse.js"

const dir = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-files-e2e-"))

const sales = [
  "month,region,revenue",
  "2024-01-01,EU,120.5",
  "2024-01-01,US,200",
  "2024-02-01,EU,80",
  "2024-02-01,US,310.25",
  "2024-03-01,EU,99.5"
].join("\n")

const parquet = await (async () => {
  const path = NodePath.join(dir, "orders.parquet")
  const instance = await DuckDBInstance.create(":memory:")
  const connection = await instance.connect()
  await connection.run(`COPY (SELECT range AS id, range % 4 AS store FROM range(12)) TO '${path}' (FORMAT parquet)`)
  connection.closeSync()
  return new Uint8Array(fs.readFileSync(path))
})()

const upload = (server: TestServer, org: Org, files: ReadonlyArray<[string, string | Uint8Array]>, name?: string) => {
  const form = new FormData()
  if (name !== undefined) form.set("name", name)
  for (const [fileName, content] of files) form.append("files", new Blob([content]), fileName)
  return server.request("/v2/connectors", { method: "POST", key: org.key, body: form })
}

/** Runs SQL on a connector as the org's admin, as `run_sql` does. */
const sql = (server: TestServer, org: Org, connectorId: number, text: string) =>
  server.run(Effect.gen(function*() {
    const principal = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    return yield* Effect.either((yield* SqlQueries.SqlQueries).run(principal, {
      connector_id: ConnectorId.make(connectorId),
      sql: text
    }))
  }))

const connectorCount = async (server: TestServer, org: Org) =>
  (await body(await server.request("/v2/connectors", { key: org.key }))).length

// A provider whose turns the scripted test sets.
let script: (request: any, index: number) => Provider.Turn = () => ({ text: "unscripted" })
const provider = await Provider.start((request, index) => script(request, index))
afterAll(() => provider.close())

describeServers("FILES connectors", (server) => {
  it("makes a table of each file, and the offline model answers from them", async () => {
    const org = await server().newOrg()
    const created = await upload(server(), org, [
      ["sales.csv", sales],
      ["targets.tsv", "region\ttarget\nEU\t300\nUS\t500\n"],
      ["managers.json", JSON.stringify([{ region: "EU", manager: "Ann" }, { region: "US", manager: "Bo" }])],
      ["visits.ndjson", "{\"page\":\"/\",\"n\":3}\n{\"page\":\"/buy\",\"n\":1}\n"],
      ["orders.parquet", parquet]
    ], "Spreadsheets")
    expect(created.status).toBe(201)
    const connector = await body(created)
    expect(connector).toMatchObject({ name: "Spreadsheets", type: "FILES" })

    // The derived semantic model names every table.
    const model = await (await server().request(`/v2/connectors/${connector.id}/semantic-model`, { key: org.key }))
      .text()
    for (const table of ["sales", "targets", "managers", "visits", "orders"]) expect(model).toContain(table)

    const byHand = await sql(
      server(),
      org,
      connector.id,
      "SELECT region, sum(revenue) FROM sales GROUP BY 1 ORDER BY 1"
    )
    expect(byHand._tag).toBe("Right")
    const rows = byHand._tag === "Right" ? byHand.right.rows : []
    expect(rows).toEqual([["EU", 300], ["US", 510.25]])
    expect(await sql(server(), org, connector.id, "SELECT count(*) FROM orders WHERE store = 1")).toMatchObject({
      _tag: "Right",
      right: { rows: [[3]] }
    })

    const asked = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "total revenue by region", connector_ids: [connector.id], model: "offline" }
    })
    expect(asked.status).toBe(200)
    const answer = await body(asked)
    const text = JSON.stringify(answer)
    // The offline model's table holds the same numbers as the SQL run by hand.
    expect(text).toContain("510.25")
    expect(text).toContain("300")
  }, 120_000)

  it("reads a workbook's sheets as tables; files are added, replaced and removed later", async () => {
    const org = await server().newOrg()
    const book = new ExcelJS.Workbook()
    const sheet = book.addWorksheet("Revenue")
    sheet.addRow(["month", "region", "revenue"])
    sheet.addRow([new Date(Date.UTC(2024, 0, 1)), "EU", 100])
    sheet.addRow([new Date(Date.UTC(2024, 1, 1)), "EU", 50])
    sheet.addRow([new Date(Date.UTC(2024, 1, 1)), "US", 70])
    book.addWorksheet("Targets").addRow(["region", "target"])
    book.getWorksheet("Targets")!.addRow(["EU", 200])
    const xlsx = new Uint8Array(await book.xlsx.writeBuffer() as ArrayBuffer)
    const connector = await body(await upload(server(), org, [["sales.xlsx", xlsx]]))
    const listed = await body(await server().request(`/v2/connectors/${connector.id}/files`, { key: org.key }))
    expect(listed.tables.map((t: any) => [t.table, t.sheet, t.format, t.rows])).toEqual([
      ["sales_revenue", "Revenue", "xlsx", 3],
      ["sales_targets", "Targets", "xlsx", 1]
    ])
    expect(listed.tables[0].columns).toEqual([
      { name: "month", type: "DATE" },
      { name: "region", type: "VARCHAR" },
      { name: "revenue", type: "BIGINT" }
    ])
    expect(
      await sql(server(), org, connector.id, "SELECT sum(revenue) FROM sales_revenue WHERE month >= DATE '2024-02-01'")
    )
      .toMatchObject({ _tag: "Right", right: { rows: [[120]] } })

    // Another file, then a new version of it under the same name: its table is replaced.
    const more = (content: string) => {
      const form = new FormData()
      form.append("files", new Blob([content]), "stores.csv")
      return server().request(`/v2/connectors/${connector.id}/files`, { method: "POST", key: org.key, body: form })
    }
    expect((await more("store,city\n1,Oslo\n")).status).toBe(200)
    const replaced = await body(await more("store,city\n1,Oslo\n2,Rome\n"))
    expect(replaced.tables.map((t: any) => [t.table, t.rows])).toEqual([
      ["sales_revenue", 3],
      ["sales_targets", 1],
      ["stores", 2]
    ])
    expect(await sql(server(), org, connector.id, "SELECT count(*) FROM stores")).toMatchObject({
      _tag: "Right",
      right: { rows: [[2]] }
    })
    const removed = await server().request(`/v2/connectors/${connector.id}/files/sales_targets`, {
      method: "DELETE",
      key: org.key
    })
    expect((await body(removed)).tables.map((t: any) => t.table)).toEqual(["sales_revenue", "stores"])
    expect((await sql(server(), org, connector.id, "SELECT * FROM sales_targets"))._tag).toBe("Left")
    expect(
      (await server().request(`/v2/connectors/${connector.id}/files/nothing`, { method: "DELETE", key: org.key }))
        .status
    ).toBe(404)
    const other = await server().newOrg()
    expect((await server().request(`/v2/connectors/${connector.id}/files`, { key: other.key })).status).toBe(404)
  }, 60_000)

  it("answers a question sent with a file over it, with the offline model and no sandbox", async () => {
    const org = await server().newOrg()
    const form = new FormData()
    form.set("question", "total revenue by region")
    form.set("model", "offline")
    form.append("files", new Blob([sales], { type: "text/csv" }), "sales.csv")
    const asked = await server().request("/v2/chats", { method: "POST", key: org.key, body: form })
    expect(asked.status).toBe(200)
    const text = JSON.stringify(await body(asked))
    expect(text).toContain("510.25")
    // The file became a FILES connector of the asker's, which no other member sees.
    const listed = await body(await server().request("/v2/connectors", { key: org.key }))
    const made = listed.find((c: any) => c.type === "FILES")
    expect(made.name).toBe("Chat files: sales.csv")
    const member = await newMember(server(), org)
    const theirs = await body(await server().request("/v2/connectors", { key: member.key }))
    expect(theirs.some((c: any) => c.id === made.id)).toBe(false)
    expect((await sql(server(), { ...org, key: member.key }, made.id, "SELECT 1"))._tag).toBe("Left")
  }, 60_000)

  it("a provider's model sees the tables, and its SQL answers what the SQL run by hand does", async () => {
    const org = await server().newOrg()
    const connector = await body(await upload(server(), org, [["sales.csv", sales]]))
    const statement = "SELECT region, sum(revenue) AS revenue FROM sales GROUP BY region ORDER BY region"
    const seen = provider.requests.length
    script = (_, index) =>
      index === seen
        ? { toolCalls: [{ name: "run_sql", arguments: { connector_id: connector.id, sql: statement } }] }
        : { text: "EU 300, US 510.25." }
    const asked = await server().request("/v2/chats/stream", {
      method: "POST",
      key: org.key,
      json: { question: "revenue by region", connector_ids: [connector.id], model: "scripted" }
    })
    const events = await readEvents(asked)
    expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    // The model was told the table and its columns.
    expect(provider.requests[seen].messages[0].content).toMatch(/sales[\s\S]*revenue/)
    const cell = events.filter((e) => e.data.type === "cell").map((e) => e.data.cell).at(-1)
    expect(cell.status).toBe("completed")
    const result = provider.requests[seen + 1].messages.at(-1)
    expect(result.role).toBe("tool")
    const byHand = await sql(server(), org, connector.id, statement)
    expect(byHand._tag).toBe("Right")
    for (const row of byHand._tag === "Right" ? byHand.right.rows : []) {
      for (const value of row) expect(result.content).toContain(String(value))
    }
  }, 60_000)

  it("refuses other files, the network, extensions and writes; another organization cannot see it", async () => {
    const org = await server().newOrg()
    const connector = await body(await upload(server(), org, [["sales.csv", sales]]))
    for (
      const statement of [
        "SELECT * FROM read_csv('/etc/passwd')",
        `COPY sales TO '${NodePath.join(dir, "leak.csv")}'`,
        `ATTACH '${NodePath.join(dir, "other.duckdb")}' AS other`,
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_csv('https://example.com/x.csv')",
        "DELETE FROM sales"
      ]
    ) {
      const refused = await sql(server(), org, connector.id, statement)
      expect(refused._tag, statement).toBe("Left")
    }
    expect(fs.existsSync(NodePath.join(dir, "leak.csv"))).toBe(false)
    const other = await server().newOrg()
    expect((await sql(server(), other, connector.id, "SELECT 1"))._tag).toBe("Left")
    const foreign = await server().request(`/v2/connectors/${connector.id}/semantic-model`, { key: other.key })
    expect(foreign.status).toBe(404)
  }, 60_000)

  it(
    "keeps the text of a workbook packed in Excel's order; refuses a lying zip bomb, and the next upload works",
    async () => {
      const org = await server().newOrg()
      // Excel's order: the workbook part first, the sheets, the shared strings last.
      const book = new ExcelJS.Workbook()
      const sheet = book.addWorksheet("Orders")
      sheet.addRow(["order", "customer"])
      for (let i = 1; i <= 250; i++) sheet.addRow([i, `Customer ${i % 60}`])
      const written = await JSZip.loadAsync(await book.xlsx.writeBuffer())
      const names = Object.keys(written.files).filter((name) => !written.files[name]!.dir)
      const last = (name: string) => name === "xl/sharedStrings.xml" ? 2 : name.startsWith("xl/worksheets/") ? 1 : 0
      const excel = new JSZip()
      for (const name of names.sort((a, b) => last(a) - last(b))) {
        excel.file(name, await written.files[name]!.async("nodebuffer"))
      }
      const ordered = await upload(server(), org, [["orders.xlsx", await excel.generateAsync({ type: "uint8array" })]])
      expect(ordered.status).toBe(201)
      const connector = await body(ordered)
      const customers = await sql(server(), org, connector.id, "SELECT count(DISTINCT customer) FROM orders")
      expect(customers._tag === "Right" && customers.right.rows).toEqual([[60]])

      // 40 MB of shared strings in a few kilobytes, with the local header and the directory both
      // saying it inflates to no more than it takes.
      const bomb = new JSZip()
      bomb.file("xl/workbook.xml", "<workbook/>")
      bomb.file("xl/sharedStrings.xml", `<sst>${"a".repeat(40 * 1024 * 1024)}`)
      const bytes = Buffer.from(await bomb.generateAsync({ type: "uint8array", compression: "DEFLATE" }))
      for (let at = 0; at + 30 < bytes.length; at++) {
        if (bytes.readUInt32LE(at) === 0x04034b50) bytes.writeUInt32LE(bytes.readUInt32LE(at + 18), at + 22)
        if (bytes.readUInt32LE(at) === 0x02014b50) bytes.writeUInt32LE(bytes.readUInt32LE(at + 20), at + 24)
      }
      const refused = await upload(server(), org, [["bomb.xlsx", new Uint8Array(bytes)]])
      expect(refused.status).toBe(400)
      expect((await body(refused)).error.message).toMatch(/^bomb\.xlsx: refused: it inflates past \d+ bytes/)
      const next = await upload(server(), org, [["sales.csv", sales]])
      expect(next.status).toBe(201)
    },
    60_000
  )

  it("answers 400 naming a file that does not load, and keeps nothing of it", async () => {
    const org = await server().newOrg()
    const before = await connectorCount(server(), org)
    for (
      const [files, expected] of [
        [[["sales.csv", sales], ["broken.csv", "a,b\n1,2\n3,4,5,6\n7,8\n"]], /^broken\.csv: .*Line: 3/s],
        [[["notes.txt", "hello"]], /^notes\.txt: not a file this connector reads/],
        [[["orders.parquet", "PAR1 this is not parquet"]], /^orders\.parquet: /]
      ] as const
    ) {
      const answered = await upload(server(), org, files as unknown as ReadonlyArray<[string, string]>)
      expect(answered.status).toBe(400)
      const error = (await body(answered)).error
      expect(error.code).toBe("invalid_request")
      expect(error.message).toMatch(expected)
      expect(error.message).not.toContain(os.tmpdir())
    }
    const json = await server().request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: {
        config: { connector_type: "FILES", name: "x", files: { tables: [], storage_prefix: "x/", size_bytes: 0 } }
      }
    })
    expect(json.status).toBe(400)
    expect(await connectorCount(server(), org)).toBe(before)
  }, 60_000)
}, {
  files: { cacheDirectory: NodePath.join(dir, "cache") },
  models: { compatibleUrl: provider.url, models: Provider.catalogue }
})

describe("a FILES connector across a restart", () => {
  it(
    "is answered on after the server restarts, its copy fetched again from the store",
    { timeout: 120_000 },
    async () => {
      const dataDir = tempDir()
      const env = {
        SIGHTLINE_DATA_DIR: dataDir,
        SIGHTLINE_SANDBOX_DIR: "off",
        SIGHTLINE_FILES_DIR: `${dataDir}/files-1`
      }
      const first = await serve(env)
      const key = /Admin API key \(shown once, keep it\): (\S+)/.exec(first.output.stdout)![1]!
      const form = new FormData()
      form.append("files", new Blob([sales]), "sales.csv")
      const made = await fetch(`${first.base}/v2/connectors`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
        body: form
      })
      expect(made.status).toBe(201)
      const { id } = await made.json() as { id: number }
      first.child.kill("SIGTERM")
      expect(await first.exited).toBe(0)
      // Another copy directory: the restarted process has no copy of its own.
      const second = await serve({ ...env, SIGHTLINE_FILES_DIR: `${dataDir}/files-2` })
      const asked = await fetch(`${second.base}/v2/chats`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ question: "total revenue by region", connector_ids: [id], model: "offline" })
      })
      expect(asked.status).toBe(200)
      expect(JSON.stringify(await asked.json())).toContain("510.25")
      second.child.kill("SIGTERM")
      await second.exited
    }
  )
})

const suite = postgresProblem === undefined ? describe : describe.skip
if (postgresProblem !== undefined) console.warn(`postgres: files: PostgreSQL unreachable at ${postgresUrl}: skipped`)

suite("postgres: FILES connectors from two processes", () => {
  it("a file uploaded to one process is queried on the other", { timeout: 90_000 }, async () => {
    const prefix = randomPrefix()
    // Each process keeps its own copies: the other one's come from the store.
    const a = await startServer("postgres", { prefix, files: { cacheDirectory: NodePath.join(dir, "a") } })
    const b = await startServer("postgres", { prefix, files: { cacheDirectory: NodePath.join(dir, "b") } })
    try {
      const org = await a.newOrg()
      const connector = await body(await upload(a, org, [["sales.csv", sales]]))
      const onB = await sql(b, org, connector.id, "SELECT count(*), sum(revenue) FROM sales")
      expect(onB).toMatchObject({ _tag: "Right", right: { rows: [[5, 810.25]] } })
      expect(fs.readdirSync(NodePath.join(dir, "b")).some((name) => name.endsWith(".duckdb"))).toBe(true)
    } finally {
      await b.stop({ keepTables: true })
      await a.stop()
    }
  })
})
