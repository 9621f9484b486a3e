import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import type * as CoreRuntime from "@sightline/core/ConnectorRuntime"
import { ConnectorTester } from "@sightline/core/ConnectorTester"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import mysql from "mysql2/promise"
import * as Runtime from "../src/Runtime.js"
import * as Tester from "../src/Tester.js"
import { localSuperuserAccess } from "./utils/postgres.js"

const url = new URL(process.env.SIGHTLINE_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test")
const settings = {
  host: url.hostname,
  port: Number(url.port || 3306),
  user: decodeURIComponent(url.username),
  database: url.pathname.slice(1)
}

const admin = () =>
  mysql.createConnection({ ...settings, password: decodeURIComponent(url.password), connectTimeout: 3000 })

const unreachable = await admin().then(async (c) => {
  await c.end()
  return undefined
}, (error) => String(error))
if (unreachable !== undefined && process.env.CI === "true") {
  throw new Error(`MySQL unreachable at ${url.host} (CI=true, so this fails): ${unreachable}`)
}
if (unreachable !== undefined) {
  console.warn(`MYSQL connector: MySQL unreachable at ${url.host}: skipped (${unreachable})`)
}

const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
let nextId = 1000
const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 10)
const sales = `sl_sales_${suffix}`
const regions = `sl_regions_${suffix}`

const record = (flags: { readonly writes?: boolean } = {}, database = settings.database) =>
  new Connector.ConnectorRecord({
    id: ConnectorId.make(nextId++),
    organization_id: OrganizationId.make(crypto.randomUUID()),
    owner_id: MemberId.make(crypto.randomUUID()),
    config: {
      connector_type: "MYSQL",
      name: "Shop",
      mysql: { ...settings, database, password: Redacted.make(decodeURIComponent(url.password)), ssl_mode: "disable" }
    },
    allow_sql_write_operations: flags.writes ?? false,
    include_db_session_metadata: false,
    created_at: at,
    updated_at: at
  })

const request = (sql: string, extra: Partial<CoreRuntime.QueryRequest> = {}): CoreRuntime.QueryRequest => ({
  sql,
  clientAttributesJson: "{\"region\":\"EU\"}",
  maxRows: 10_000,
  timeoutMillis: 5_000,
  ...extra
})

describe.skipIf(unreachable !== undefined)("MYSQL connector (MariaDB or MySQL on 127.0.0.1:3306)", () => {
  beforeAll(async () => {
    const c = await admin()
    await c.query(`CREATE TABLE ${regions} (id INT PRIMARY KEY, code VARCHAR(8) NOT NULL) COMMENT='sales regions'`)
    await c.query(
      `CREATE TABLE ${sales} (id INT PRIMARY KEY, region_id INT NOT NULL, amount DECIMAL(10,2) NOT NULL COMMENT 'in USD', sold_on DATE NOT NULL,
       FOREIGN KEY (region_id) REFERENCES ${regions}(id))`
    )
    await c.query(`INSERT INTO ${regions} VALUES (1,'EU'),(2,'US')`)
    await c.query(`INSERT INTO ${sales} VALUES (1,1,10.50,'2025-01-02'),(2,2,20,'2025-02-03'),(3,1,4.5,'2025-03-04')`)
    await c.end()
  })
  afterAll(async () => {
    const c = await admin()
    await c.query(`DROP TABLE IF EXISTS ${sales}`)
    await c.query(`DROP TABLE IF EXISTS ${regions}`)
    await c.end()
  })

  // The test account is MariaDB's root on loopback: an operator's own opt-ins.
  it.layer(Runtime.layerWith({ ...Runtime.defaultOptions, access: localSuperuserAccess }))((it) => {
    it.effect("introspects tables, keys, comments; answers typed values; caps rows", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const info = yield* runtime.introspect(record())
        expect(info.dialect).toBe("mysql")
        const table = info.tables.find((t) => t.name === `${settings.database}.${sales}`)!
        expect(table.columns.find((c) => c.name === "region_id")!.references).toEqual({
          table: `${settings.database}.${regions}`,
          column: "id"
        })
        expect(table.columns.find((c) => c.name === "amount")!.comment).toBe("in USD")
        expect(info.tables.find((t) => t.name === `${settings.database}.${regions}`)!.comment).toBe("sales regions")
        const result = yield* runtime.query(record(), request(`SELECT id, amount, sold_on FROM ${sales} ORDER BY id`))
        expect(result.rows).toEqual([[1, 10.5, "2025-01-02"], [2, 20, "2025-02-03"], [3, 4.5, "2025-03-04"]])
        const capped = yield* runtime.query(record(), request(`SELECT id FROM ${sales} ORDER BY id`, { maxRows: 2 }))
        expect(capped).toMatchObject({ rows: [[1], [2]], truncated: true })
      }))

    it.effect("read-only unless writes are allowed; one statement per call", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const refused = yield* Effect.flip(runtime.query(record(), request(`DELETE FROM ${sales}`)))
        expect(refused.message).toMatch(/READ ONLY/i)
        const two = yield* Effect.flip(runtime.query(record(), request(`SELECT 1; DELETE FROM ${sales}`)))
        expect(two.message).toMatch(/syntax/i)
        const count = yield* runtime.query(record(), request(`SELECT count(*) AS n FROM ${sales}`))
        expect(count.rows).toEqual([[3]])
        const updated = yield* runtime.query(
          record({ writes: true }),
          request(`UPDATE ${sales} SET amount = amount WHERE region_id = 1`)
        )
        expect(updated.affectedRows).toBe(2)
      }))

    it.effect("binds client attributes and saved-query parameters as ? parameters", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const sql = `SELECT s.id FROM ${sales} s JOIN ${regions} r ON r.id = s.region_id
          WHERE r.code = _svc.client_attributes_json.region AND s.amount > $1 ORDER BY s.id`
        const eu = yield* runtime.query(record(), request(sql, { params: [5] }))
        expect(eu.rows).toEqual([[1]])
        const injected = yield* runtime.query(
          record(),
          request(sql, { params: [0], clientAttributesJson: "{\"region\":\"EU' OR '1'='1\"}" })
        )
        expect(injected.rows).toEqual([])
      }))
  })

  it.effect("caps a result in bytes as well as rows", () =>
    Effect.gen(function*() {
      const runtime = yield* ConnectorRuntime
      const capped = yield* runtime.query(record(), {
        ...request("SELECT seq, REPEAT('x', 1000) AS filler FROM seq_1_to_100000"),
        maxRows: 1_000_000,
        maxBytes: 100_000
      })
      expect(capped.truncated).toBe(true)
      expect(capped.rows.length).toBeLessThan(60)
    }).pipe(Effect.provide(Runtime.layerWith({ ...Runtime.defaultOptions, access: localSuperuserAccess }))))

  it.effect("by default, loopback and private hosts are refused, and an account with SUPER or FILE is refused", () =>
    Effect.gen(function*() {
      const at = (host: string) => {
        const config = record().config as Connector.ConnectorConfig & { readonly connector_type: "MYSQL" }
        return { ...config, mysql: { ...config.mysql, host } }
      }
      for (const host of ["127.0.0.1", "localhost", "127.1", "::ffff:127.0.0.1", "172.17.0.1"]) {
        const result = yield* Effect.provide(Effect.flatMap(ConnectorTester, (t) => t.test(at(host))), Tester.layer)
        expect(result.error, host).toMatch(/is in a private network or on this server/)
        const error = yield* Effect.flip(
          Effect.provide(
            Effect.flatMap(ConnectorRuntime, (r) => r.query({ ...record(), config: at(host) }, request("SELECT 1"))),
            Runtime.layer
          )
        )
        expect(error.message, host).toMatch(/is in a private network or on this server/)
      }
      const opened = { network: localSuperuserAccess.network, allowSuperuser: false }
      const root = yield* Effect.provide(
        Effect.flatMap(ConnectorTester, (t) => t.test(record().config)),
        Tester.layerWith(opened)
      )
      expect(root.error).toMatch(/^the connector's user "root" is a superuser or may read the server's files/)
      const error = yield* Effect.flip(
        Effect.provide(
          Effect.flatMap(ConnectorRuntime, (r) => r.query(record(), request("SELECT LOAD_FILE('/etc/hostname')"))),
          Runtime.layerWith({ ...Runtime.defaultOptions, access: opened })
        )
      )
      expect(error.message).toMatch(/user "root" is a superuser/)
    }))

  it.effect("the tester says why a connection fails", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectorTester
      const config = record().config
      expect(yield* tester.test(config)).toEqual({ success: true })
      const unknownDb = yield* tester.test(
        { ...config, mysql: { ...(config as any).mysql, database: "no_such_db_sl" } } as Connector.ConnectorConfig
      )
      expect(unknownDb.error).toBe(`database "no_such_db_sl" does not exist on ${settings.host}:${settings.port}`)
      const refused = yield* tester.test(
        { ...config, mysql: { ...(config as any).mysql, port: 1 } } as Connector.ConnectorConfig
      )
      expect(refused.error).toBe(`could not connect to ${settings.host}:1`)
    }).pipe(Effect.provide(Tester.layerWith(localSuperuserAccess))))
})
