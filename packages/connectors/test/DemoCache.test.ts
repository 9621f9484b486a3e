import { describe, expect, it } from "@effect/vitest"
import { PGlite } from "@electric-sql/pglite"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as DemoDataset from "../src/DemoDataset.js"
import * as Runtime from "../src/Runtime.js"

const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
const demo = new Connector.ConnectorRecord({
  id: ConnectorId.make(1),
  organization_id: OrganizationId.make(crypto.randomUUID()),
  owner_id: MemberId.make(crypto.randomUUID()),
  config: { connector_type: "DEMO", name: "Demo", demo: { dataset: "retail" } },
  allow_sql_write_operations: false,
  include_db_session_metadata: false,
  created_at: at,
  updated_at: at
})

const tarballs = (directory: string) => fs.readdirSync(directory).filter((name) => name.endsWith(".tar.gz")).sort()

/**
 * The tables and order lines of the demo database a runtime over `cache` opens; with `until`, the
 * runtime lives on until it holds (checked every 100 ms).
 */
const opened = (cache: string, until?: () => boolean) =>
  Effect.gen(function*() {
    const runtime = yield* ConnectorRuntime
    const schema = yield* runtime.introspect(demo)
    const lines = yield* runtime.query(demo, {
      sql: "SELECT count(*)::int FROM order_items",
      clientAttributesJson: "{}",
      maxRows: 1,
      timeoutMillis: 5_000
    })
    while (until !== undefined && !until()) yield* Effect.sleep("100 millis")
    return { tables: schema.tables.map((table) => table.name), orderItems: lines.rows[0]![0] }
  }).pipe(Effect.provide(Layer.fresh(Runtime.layerWith({ ...Runtime.defaultOptions, demoCache: cache }))))

describe("the DEMO database's cache", () => {
  const counts = DemoDataset.retail(new Date().getUTCFullYear() - 1).counts

  it.live("is built once, loaded by the next process, and rebuilt when damaged", () =>
    Effect.gen(function*() {
      const cache = fs.mkdtempSync(path.join(os.tmpdir(), "sightline-demo-cache-"))
      // An older generator's file goes; another dataset's file and other files stay.
      fs.writeFileSync(path.join(cache, "retail-0123456789abcdef.tar.gz"), "old")
      fs.writeFileSync(path.join(cache, "other-0123456789abcdef.tar.gz"), "other")
      fs.writeFileSync(path.join(cache, "notes.txt"), "kept")

      yield* Runtime.buildDemoCache(cache)
      const built = tarballs(cache).filter((name) => name.startsWith("retail-"))
      expect(built).toHaveLength(1)
      expect(built[0]).not.toBe("retail-0123456789abcdef.tar.gz")
      expect(fs.existsSync(path.join(cache, "other-0123456789abcdef.tar.gz"))).toBe(true)
      expect(fs.readFileSync(path.join(cache, "notes.txt"), "utf8")).toBe("kept")
      const file = path.join(cache, built[0]!)

      // Built again, it is left alone.
      const writtenAt = fs.statSync(file).mtimeMs
      yield* Runtime.buildDemoCache(cache)
      expect(fs.statSync(file).mtimeMs).toBe(writtenAt)

      // A runtime loads the cached cluster rather than building one: a table only the cached copy
      // has shows in its schema.
      yield* Effect.promise(async () => {
        const db = await PGlite.create({ loadDataDir: new Blob([fs.readFileSync(file)]) })
        await db.exec("CREATE TABLE cache_marker (id int)")
        const tarball = await db.dumpDataDir("gzip")
        await db.close()
        fs.writeFileSync(file, new Uint8Array(await tarball.arrayBuffer()))
      })
      const loaded = yield* opened(cache)
      expect(loaded.tables).toContain("public.cache_marker")
      expect(loaded.orderItems).toBe(counts.order_items)

      // A damaged file is built anew (the answer comes first) and then replaced by a sound one.
      fs.writeFileSync(file, "not a tarball")
      const rebuilt = yield* opened(cache, () => fs.readFileSync(file, "utf8") !== "not a tarball")
      expect(rebuilt.tables).not.toContain("public.cache_marker")
      expect(rebuilt.orderItems).toBe(counts.order_items)
      expect(tarballs(cache).filter((name) => name.startsWith("retail-"))).toEqual(built)
      const reloaded = yield* opened(cache)
      expect(reloaded.tables).not.toContain("public.cache_marker")
      expect(reloaded.orderItems).toBe(counts.order_items)
      fs.rmSync(cache, { recursive: true, force: true })
    }), { timeout: 180_000 })
})
