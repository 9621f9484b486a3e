/**
 * A FILES connector's database on real DuckDB: each format loaded into a typed table, questions
 * answered read-only, and everything outside the connector's own tables refused by DuckDB itself.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { describe, expect, it } from "@effect/vitest"
import * as Connector from "@sightline/core/Connector"
import * as Effect from "effect/Effect"
import ExcelJS from "exceljs"
import JSZip from "jszip"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as FilesDatabase from "../src/FilesDatabase.js"

const dir = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-files-test-"))
const write = (name: string, text: string) => {
  const path = NodePath.join(dir, name)
  fs.writeFileSync(path, text)
  return { path, fileName: name }
}

const csv = write("Sales 2024.csv", "month,region,revenue\n2024-01-01,EU,100.5\n2024-02-01,US,200\n2024-02-01,EU,50\n")
const tsv = write("targets.tsv", "region\ttarget\nEU\t120\nUS\t180\n")
const json = write("regions.json", JSON.stringify([{ region: "EU", manager: "Ann" }, { region: "US", manager: "Bo" }]))
const ndjson = write("events.ndjson", "{\"kind\":\"visit\",\"n\":3}\n{\"kind\":\"order\",\"n\":1}\n")

const parquet = await (async () => {
  const path = NodePath.join(dir, "orders.parquet")
  const instance = await DuckDBInstance.create(":memory:")
  const connection = await instance.connect()
  await connection.run(`COPY (SELECT range AS id, range % 3 AS store FROM range(10)) TO '${path}' (FORMAT parquet)`)
  connection.closeSync()
  return { path, fileName: "orders.parquet" }
})()

const workbook = await (async () => {
  const book = new ExcelJS.Workbook()
  const revenue = book.addWorksheet("Revenue")
  revenue.addRow(["month", "region", "revenue", "note"])
  revenue.addRow([new Date(Date.UTC(2024, 0, 1)), "EU", 100.5, "first, \"quoted\""])
  revenue.addRow([new Date(Date.UTC(2024, 1, 1)), "US", { formula: "100*2", result: 200 }, null])
  const targets = book.addWorksheet("Targets 2024")
  targets.addRow(["region", "target"])
  targets.addRow(["EU", 120])
  book.addWorksheet("Empty")
  const path = NodePath.join(dir, "Sales.xlsx")
  await book.xlsx.writeFile(path)
  return { path, fileName: "Sales.xlsx" }
})()

// A zip whose local headers and directory alike say each entry inflates to its compressed size.
const lyingZip = async (entries: Record<string, string>, fileName: string) => {
  const zip = new JSZip()
  for (const [name, text] of Object.entries(entries)) zip.file(name, text)
  const bytes = await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE" })
  for (let at = 0; at + 30 < bytes.length; at++) {
    const signature = bytes.readUInt32LE(at)
    // Local header: compressed size at 18, uncompressed at 22; directory entry: 20 and 24.
    if (signature === 0x04034b50) bytes.writeUInt32LE(bytes.readUInt32LE(at + 18), at + 22)
    if (signature === 0x02014b50) bytes.writeUInt32LE(bytes.readUInt32LE(at + 20), at + 24)
  }
  const path = NodePath.join(dir, fileName)
  fs.writeFileSync(path, bytes)
  return { path, fileName }
}

const bombs = await Promise.all([
  lyingZip({
    "[Content_Types].xml": "<Types/>",
    "xl/workbook.xml": "<workbook/>",
    "xl/worksheets/sheet1.xml": "0".repeat(40 * 1024 * 1024)
  }, "bomb.xlsx"),
  lyingZip({
    "xl/workbook.xml": "<workbook/>",
    "xl/sharedStrings.xml": "<sst>" + "a".repeat(40 * 1024 * 1024)
  }, "strings-bomb.xlsx"),
  lyingZip({
    "xl/workbook.xml": "<workbook/>",
    "docProps/unread.xml": "0".repeat(40 * 1024 * 1024)
  }, "unread-bomb.xlsx")
])

// A workbook packed as Excel packs it: the workbook part first, then the sheets, then the shared
// strings. Hundreds of rows and more than fifty distinct strings.
const excelOrdered = await (async () => {
  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet("Orders")
  sheet.addRow(["order", "customer", "amount"])
  for (let i = 1; i <= 300; i++) sheet.addRow([i, `Customer ${i % 80}`, i * 1.5])
  const written = await JSZip.loadAsync(await book.xlsx.writeBuffer())
  const names = Object.keys(written.files).filter((name) => !written.files[name]!.dir)
  const rank = (name: string) =>
    name === "[Content_Types].xml" ? 0 : name.startsWith("_rels/") ? 1 : name === "xl/workbook.xml" ?
      2 :
      name.startsWith("xl/_rels/")
      ? 3
      : name.startsWith("xl/worksheets/")
      ? 4
      : name === "xl/sharedStrings.xml"
      ? 6
      : 5
  const repacked = new JSZip()
  for (const name of [...names].sort((a, b) => rank(a) - rank(b))) {
    repacked.file(name, await written.files[name]!.async("nodebuffer"))
  }
  const order = names.sort((a, b) => rank(a) - rank(b))
  expect(order.indexOf("xl/sharedStrings.xml")).toBeGreaterThan(order.indexOf("xl/worksheets/sheet1.xml"))
  const path = NodePath.join(dir, "Excel order.xlsx")
  fs.writeFileSync(path, await repacked.generateAsync({ type: "nodebuffer", compression: "DEFLATE" }))
  return { path, fileName: "Excel order.xlsx" }
})()

// One cell far to the right in the first row: every row would be padded to its width.
const wide = await (async () => {
  const book = new ExcelJS.Workbook()
  const sheet = book.addWorksheet("Wide")
  sheet.getCell("XFD1").value = "far"
  for (let i = 2; i <= 50; i++) sheet.getCell(`A${i}`).value = i
  const path = NodePath.join(dir, "wide.xlsx")
  await book.xlsx.writeFile(path)
  return { path, fileName: "wide.xlsx" }
})()

const request = (sql: string, extra: Partial<{ maxRows: number; timeoutMillis: number }> = {}) => ({
  sql,
  clientAttributesJson: "{}",
  maxRows: extra.maxRows ?? 100,
  timeoutMillis: extra.timeoutMillis ?? 10_000
})

let n = 0
const target = () => NodePath.join(dir, `db-${n++}.duckdb`)

describe("FilesDatabase", () => {
  it("names tables after their files", () => {
    expect(FilesDatabase.tableName("Sales 2024.csv", new Set())).toBe("sales_2024")
    expect(FilesDatabase.tableName("2024 sales.csv", new Set())).toBe("t_2024_sales")
    expect(FilesDatabase.tableName("Café.csv", new Set(["cafe"]))).toBe("cafe_2")
    expect(FilesDatabase.tableName("!!!.csv", new Set())).toBe("file")
    expect(Connector.fileFormatOf("x.JSONL")).toBe("ndjson")
    expect(Connector.fileFormatOf("x.xls")).toBeUndefined()
  })

  it.scoped("loads every format into a typed table and answers a grouped question", () =>
    Effect.gen(function*() {
      const path = target()
      const built = yield* FilesDatabase.build([csv, tsv, json, ndjson, parquet], path)
      expect(built.map((t) => [t.table, t.format, t.rows])).toEqual([
        ["sales_2024", "csv", 3],
        ["targets", "tsv", 2],
        ["regions", "json", 2],
        ["events", "ndjson", 2],
        ["orders", "parquet", 10]
      ])
      expect(built[0]!.columns).toEqual([
        { name: "month", type: "DATE" },
        { name: "region", type: "VARCHAR" },
        { name: "revenue", type: "DOUBLE" }
      ])
      const db = yield* FilesDatabase.open(path)
      const answer = yield* db.query({
        ...request(
          `SELECT region, sum(revenue) AS revenue, max(t.target) AS target
           FROM sales_2024 s JOIN targets t USING (region) WHERE region = $1 GROUP BY 1`
        ),
        params: ["EU"]
      })
      expect(answer.rows).toEqual([["EU", 150.5, 120]])
      const grouped = yield* db.query({
        ...request("SELECT region, sum(revenue) FROM sales_2024 GROUP BY 1 ORDER BY 1")
      })
      expect(grouped.rows).toEqual([["EU", 150.5], ["US", 200]])
      expect(grouped.truncated).toBe(false)
      const bound = yield* db.query({ ...request("SELECT count(*) FROM orders WHERE store = $1"), params: [1] })
      expect(bound.rows).toEqual([[3]])
      // A key's client attributes bind after the statement's own parameters, as on every engine; a
      // key without the field matches nothing.
      const filtered = (attributes: string) =>
        db.query({
          ...request(
            "SELECT count(*) FROM sales_2024 WHERE revenue > $1 AND region = _svc.client_attributes_json.region"
          ),
          params: [60],
          clientAttributesJson: attributes
        })
      expect((yield* filtered(`{"region":"EU"}`)).rows).toEqual([[1]])
      expect((yield* filtered(`{"region":"US"}`)).rows).toEqual([[1]])
      expect((yield* filtered("{}")).rows).toEqual([[0]])
      // A point in time reads as the other engines answer it: ISO 8601, UTC.
      const at = yield* db.query(
        request("SELECT TIMESTAMPTZ '2025-03-01 23:30:00.123+02' AS at, DATE '2025-03-01' AS day")
      )
      expect(at.rows).toEqual([["2025-03-01T21:30:00.123Z", "2025-03-01"]])
      const schema = yield* db.introspect
      expect(schema.dialect).toBe("duckdb")
      expect(schema.tables.map((t) => t.name).sort()).toEqual(["events", "orders", "regions", "sales_2024", "targets"])
      expect(schema.tables.find((t) => t.name === "orders")!.rowEstimate).toBe(10)
    }))

  it.scoped("loads each sheet of a workbook with a row as a table, values typed", () =>
    Effect.gen(function*() {
      const path = target()
      const built = yield* FilesDatabase.build([workbook], path)
      expect(built.map((t) => [t.table, t.sheet, t.format, t.rows])).toEqual([
        ["sales_revenue", "Revenue", "xlsx", 2],
        ["sales_targets_2024", "Targets 2024", "xlsx", 1]
      ])
      expect(built[0]!.columns.map((c) => c.type)).toEqual(["DATE", "VARCHAR", "DOUBLE", "VARCHAR"])
      const db = yield* FilesDatabase.open(path)
      const rows = yield* db.query(
        request("SELECT month::VARCHAR, region, revenue, note FROM sales_revenue ORDER BY 1")
      )
      expect(rows.rows).toEqual([["2024-01-01", "EU", 100.5, "first, \"quoted\""], ["2024-02-01", "US", 200, null]])
    }))

  it.effect("refuses a zip bomb by the bytes it inflates, wherever it sits and whatever its directory says", () =>
    Effect.gen(function*() {
      for (const bomb of bombs) {
        const refused = yield* Effect.flip(FilesDatabase.build([bomb], target()))
        expect(refused.message).toMatch(new RegExp(`^${bomb.fileName}: refused: it inflates past \\d+ bytes`))
      }
      const fake = yield* Effect.flip(FilesDatabase.build([write("fake.xlsx", "a,b\n1,2\n")], target()))
      expect(fake.message).toMatch(/^fake\.xlsx: not an Excel workbook/)
    }))

  it.scoped("keeps the text of a workbook packed in Excel's order, shared strings last", () =>
    Effect.gen(function*() {
      const path = target()
      const [table] = yield* FilesDatabase.build([excelOrdered], path)
      expect(table!.columns.map((c) => c.name)).toEqual(["order", "customer", "amount"])
      expect(table!.rows).toBe(300)
      const db = yield* FilesDatabase.open(path)
      const rows = yield* db.query(
        request("SELECT count(DISTINCT customer), min(customer), max(customer) FROM excel_order")
      )
      expect(rows.rows).toEqual([[80, "Customer 0", "Customer 9"]])
    }))

  it.effect("refuses a sheet wider than its column limit instead of padding every row", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(FilesDatabase.build([wide], target()))
      expect(refused.message).toMatch(/^wide\.xlsx: refused: sheet Wide has 16384 columns, past 1024/)
    }))

  it.scoped("starts from a base: replaces a table of the same name, adds new ones, drops what it is told", () =>
    Effect.gen(function*() {
      const first = target()
      yield* FilesDatabase.build([csv, tsv], first)
      const second = target()
      // Sent again under its name: a new version of its table.
      const replacement = {
        path: write("replacement.csv", "month,region,revenue\n2024-05-01,EU,1\n").path,
        fileName: "Sales 2024.csv"
      }
      const built = yield* FilesDatabase.build([replacement, json], second, { base: first, drop: ["targets"] })
      expect(built.map((t) => t.table)).toEqual(["sales_2024", "regions"])
      const db = yield* FilesDatabase.open(second)
      expect((yield* db.introspect).tables.map((t) => t.name).sort()).toEqual(["regions", "sales_2024"])
      expect((yield* db.query(request("SELECT count(*) FROM sales_2024"))).rows).toEqual([[1]])
      // The base is as it was.
      const base = yield* FilesDatabase.open(first)
      expect((yield* base.query(request("SELECT count(*) FROM sales_2024"))).rows).toEqual([[3]])
    }))

  // Live clock: the timeout is real time.
  it.scopedLive("caps rows and stops at its timeout", () =>
    Effect.gen(function*() {
      const path = target()
      yield* FilesDatabase.build([parquet], path)
      const db = yield* FilesDatabase.open(path)
      const capped = yield* db.query(request("SELECT * FROM orders", { maxRows: 4 }))
      expect(capped.rows).toHaveLength(4)
      expect(capped.truncated).toBe(true)
      const slow = yield* Effect.flip(db.query(request(
        "SELECT count(*) FROM range(10000000000) WHERE random() < 0.5",
        { timeoutMillis: 300 }
      )))
      expect(slow.message).toMatch(/300 ms/)
      // The database still answers.
      expect((yield* db.query(request("SELECT 1"))).rows).toEqual([[1]])
    }))

  it.scoped("refuses writes, other files, the network, extensions and a second statement", () =>
    Effect.gen(function*() {
      const path = target()
      yield* FilesDatabase.build([csv], path)
      const db = yield* FilesDatabase.open(path)
      for (
        const sql of [
          "SELECT * FROM read_csv('/etc/passwd')",
          "SELECT * FROM '/etc/hostname'",
          `COPY sales_2024 TO '${NodePath.join(dir, "out.csv")}'`,
          `ATTACH '${NodePath.join(dir, "other.duckdb")}' AS other`,
          "INSTALL httpfs",
          "LOAD httpfs",
          "SELECT * FROM read_csv('https://example.com/x.csv')",
          "INSERT INTO sales_2024 VALUES ('2024-03-01', 'EU', 1)",
          "DROP TABLE sales_2024",
          "SET enable_external_access = true",
          "SELECT 1; SELECT 2"
        ]
      ) {
        const refused = yield* Effect.flip(db.query(request(sql)))
        expect(refused._tag, sql).toBe("QueryError")
      }
      expect(fs.existsSync(NodePath.join(dir, "out.csv"))).toBe(false)
      // Where external access does not reach: the temporary directory and the database's side files.
      for (
        const sql of [
          `COPY sales_2024 TO '${path}.tmp/spilled.csv'`,
          `COPY (SELECT 1) TO '${path}.wal'`,
          `EXPORT DATABASE '${path}.tmp/export'`,
          "EXPLAIN ANALYZE SELECT count(*) FROM sales_2024",
          "CALL pragma_version()"
        ]
      ) {
        const refused = yield* Effect.flip(db.query(request(sql)))
        expect([sql, refused.message]).toEqual([sql, "only a query (SELECT) runs on files"])
      }
      expect(fs.existsSync(`${path}.tmp/spilled.csv`) || fs.existsSync(`${path}.tmp/export`)).toBe(false)
      expect((yield* db.query(request("EXPLAIN SELECT count(*) FROM sales_2024"))).rows.length).toBeGreaterThan(0)
      expect((yield* db.query(request("SELECT count(*) FROM sales_2024"))).rows).toEqual([[3]])
    }))

  it.effect("names the file and the line of a malformed CSV, and keeps nothing of a failed build", () =>
    Effect.gen(function*() {
      const bad = write("broken.csv", "a,b\n1,2\n3,4,5,6\n7,8\n")
      const path = target()
      const error = yield* Effect.flip(FilesDatabase.build([csv, bad], path))
      expect(error.fileName).toBe("broken.csv")
      expect(error.message).toMatch(/^broken\.csv: /)
      expect(error.message).toMatch(/line: 3/i)
      expect(error.message).not.toContain(dir)
      expect(fs.existsSync(path)).toBe(false)
      const unread = yield* Effect.flip(FilesDatabase.build([write("notes.txt", "hello")], target()))
      expect(unread.message).toMatch(/not a file this connector reads/)
      const corrupt = yield* Effect.flip(FilesDatabase.build([write("bad.parquet", "PAR1 not really")], target()))
      expect(corrupt.fileName).toBe("bad.parquet")
    }))
})
