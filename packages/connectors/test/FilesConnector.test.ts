import { describe, expect, it } from "@effect/vitest"
import * as AssetStore from "@sightline/core/AssetStore"
import { ConnectorFiles } from "@sightline/core/ConnectorFiles"
import { OrganizationId } from "@sightline/core/Ids"
import * as Transaction from "@sightline/core/Transaction"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as FilesConnector from "../src/FilesConnector.js"

const dir = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-files-connector-test-"))
const upload = (name: string, text: string) => {
  const path = NodePath.join(dir, name)
  fs.writeFileSync(path, text)
  return { path, fileName: name, sizeBytes: Buffer.byteLength(text) }
}

// Room for two databases of 64 MiB each: a third connector closes the least recently used idle one.
const layer = FilesConnector.layer({
  cacheDirectory: NodePath.join(dir, "cache"),
  memoryBytes: 128 * 1024 ** 2,
  database: { memoryBytes: 64 * 1024 ** 2 }
}).pipe(Layer.provide(AssetStore.layerMemory), Layer.provide(Transaction.layerMemory))

const query = (sql: string) => ({ sql, maxRows: 10, timeoutMillis: 10_000, clientAttributesJson: "{}" })

describe("FilesConnector", () => {
  it.scoped(
    "answers on more connectors than its memory budget holds open, each database under its own limit",
    () =>
      Effect.gen(function*() {
        const files = yield* ConnectorFiles
        const databases = yield* FilesConnector.FilesDatabases
        const organizationId = OrganizationId.make(randomUUID())
        const connectors = yield* Effect.forEach(
          [1, 2, 3, 4],
          (n) => files.load(organizationId, [upload(`sales${n}.csv`, `region,amount\nEU,${n}\nUS,${n * 10}\n`)])
        )
        // Twice round, then all at once: every connector answers its own rows.
        for (let round = 0; round < 2; round++) {
          for (const [i, settings] of connectors.entries()) {
            const result = yield* databases.use(
              settings,
              (db) => db.query(query(`SELECT sum(amount) AS total FROM sales${i + 1}`))
            )
            expect(result.rows).toEqual([[(i + 1) * 11]])
          }
        }
        const together = yield* Effect.forEach(
          connectors,
          (settings) => databases.use(settings, (db) => db.query(query("SELECT current_setting('memory_limit') AS m"))),
          { concurrency: "unbounded" }
        )
        expect(together.map((r) => r.rows[0]?.[0])).toEqual(Array(4).fill("64.0 MiB"))
        // A removed connector's database is closed and forgotten; the others answer on.
        yield* files.remove(connectors[0]!)
        const after = yield* databases.use(connectors[1]!, (db) => db.query(query("SELECT count(*) AS n FROM sales2")))
        expect(after.rows).toEqual([[2]])
      }).pipe(Effect.provide(layer)),
    60_000
  )
})
