import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Connector from "@sightline/core/Connector"
import { ConnectorRuntime } from "@sightline/core/ConnectorRuntime"
import type * as CoreRuntime from "@sightline/core/ConnectorRuntime"
import { ConnectorId, MemberId, OrganizationId } from "@sightline/core/Ids"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as ClientAttributes from "../src/ClientAttributes.js"
import * as DemoDataset from "../src/DemoDataset.js"
import * as Runtime from "../src/Runtime.js"
import { admin, describePostgres, localAccess, settingsFor } from "./utils/postgres.js"

const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
let nextId = 1

const record = (
  config: Connector.ConnectorConfig,
  flags: { readonly writes?: boolean; readonly sessionMetadata?: boolean } = {}
): Connector.ConnectorRecord =>
  new Connector.ConnectorRecord({
    id: ConnectorId.make(nextId++),
    organization_id: OrganizationId.make(crypto.randomUUID()),
    owner_id: MemberId.make(crypto.randomUUID()),
    config,
    allow_sql_write_operations: flags.writes ?? false,
    include_db_session_metadata: flags.sessionMetadata ?? false,
    created_at: at,
    updated_at: at
  })

const request = (sql: string, clientAttributesJson = "{}"): CoreRuntime.QueryRequest => ({
  sql,
  clientAttributesJson,
  maxRows: 10_000,
  timeoutMillis: 5_000
})

const demo = record({ connector_type: "DEMO", name: "Demo", demo: { dataset: "retail" } })

describe("DEMO connector (embedded PGlite)", () => {
  it.layer(Runtime.layer, { timeout: 120_000 })((it) => {
    it.effect("introspects the retail dataset: tables, keys, comments and row estimates", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const schema = yield* runtime.introspect(demo)
        const names = schema.tables.map((t) => t.name)
        expect(names).toEqual(expect.arrayContaining([
          "public.orders",
          "public.order_items",
          "public.products",
          "public.customers",
          "public.regions",
          "public.categories",
          "public.returns"
        ]))
        const items = schema.tables.find((t) => t.name === "public.order_items")!
        expect(items.rowEstimate).toBeGreaterThan(20_000)
        expect(items.columns.find((c) => c.name === "id")).toMatchObject({ primaryKey: true })
        expect(items.columns.find((c) => c.name === "order_id")!.references).toEqual({
          table: "public.orders",
          column: "id"
        })
        expect(items.columns.find((c) => c.name === "line_total")!.comment).toContain("revenue")
      }))

    it.effect("answers queries with typed, JSON-safe values and caps the rows", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const counts = DemoDataset.retail(new Date().getUTCFullYear() - 1).counts
        const result = yield* runtime.query(
          demo,
          request("SELECT count(*) AS n, min(ordered_at)::date AS first FROM orders")
        )
        expect(result.columns).toEqual([{ name: "n", type: "int8" }, { name: "first", type: "date" }])
        expect(result.rows).toEqual([[counts.orders, `${new Date().getUTCFullYear() - 2}-01-01`]])
        const capped = yield* runtime.query(demo, { ...request("SELECT id FROM order_items ORDER BY id"), maxRows: 7 })
        expect(capped.rows.map((r) => r[0])).toEqual([1, 2, 3, 4, 5, 6, 7])
        expect(capped.truncated).toBe(true)
      }))

    it.effect("has customers joining in both years, each ordering only once joined", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const lastYear = new Date().getUTCFullYear() - 1
        const result = yield* runtime.query(
          demo,
          request(`SELECT
            (SELECT count(*) FROM customers WHERE extract(year FROM created_at) = ${lastYear - 1})::int AS first_year,
            (SELECT count(*) FROM customers WHERE extract(year FROM created_at) = ${lastYear})::int AS last_year,
            (SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id
             WHERE o.ordered_at < c.created_at)::int AS before_joining`)
        )
        const [firstYear, lastYearJoined, beforeJoining] = result.rows[0] as [number, number, number]
        expect(firstYear).toBeGreaterThan(300)
        expect(lastYearJoined).toBeGreaterThan(300)
        expect(beforeJoining).toBe(0)
      }))

    it.effect("caps a DEMO result in bytes too", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const capped = yield* runtime.query(demo, {
          ...request("SELECT id, repeat('x', 1000) AS filler FROM orders ORDER BY id"),
          maxRows: 1_000_000,
          maxBytes: 100_000
        })
        expect(capped.truncated).toBe(true)
        expect(capped.rows.length).toBeLessThan(60)
      }))

    it.effect("refuses writes and several statements, whatever the connector's flags", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const writable = record(demo.config, { writes: true })
        const error = yield* Effect.flip(runtime.query(writable, request("DELETE FROM orders")))
        expect(error.message).toMatch(/read-only transaction/)
        const two = yield* Effect.flip(runtime.query(demo, request("SELECT 1; DELETE FROM orders")))
        expect(two.message).toMatch(/multiple commands/)
        const count = yield* runtime.query(demo, request("SELECT count(*) FROM orders"))
        expect(count.rows[0]![0]).toBeGreaterThan(10_000)
      }))

    // Which worker answers: each one's PostgreSQL started at its own time.
    const worker = (runtime: ConnectorRuntime["Type"]) =>
      Effect.map(
        runtime.query(demo, request("SELECT pg_postmaster_start_time()::text AS started")),
        (result) => String(result.rows[0]![0])
      )

    it.effect("stops a DEMO statement at its deadline without holding the event loop, and opens a new database", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const first = yield* worker(runtime)
        expect(yield* worker(runtime)).toBe(first)
        // The timer's worst delay while the statement sleeps: on the event loop it would be ~3 s.
        let worst = 0
        let last = Date.now()
        const ticker = setInterval(() => {
          worst = Math.max(worst, Date.now() - last)
          last = Date.now()
        }, 20)
        const started = Date.now()
        const error = yield* Effect.flip(
          runtime.query(demo, { ...request("SELECT pg_sleep(30)"), timeoutMillis: 1_500 })
        )
        const took = Date.now() - started
        clearInterval(ticker)
        expect(error.message).toMatch(/statement timeout/)
        expect(took).toBeLessThan(5_000)
        expect(worst).toBeLessThan(500)
        // A new worker, opened from the snapshot, answers the next query.
        expect(yield* worker(runtime)).not.toBe(first)
        const count = yield* runtime.query(demo, request("SELECT count(*) FROM orders"))
        expect(count.rows[0]![0]).toBeGreaterThan(10_000)
      }))

    it.effect("stops an interrupted DEMO statement", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const first = yield* worker(runtime)
        const fiber = yield* Effect.fork(
          runtime.query(demo, { ...request("SELECT pg_sleep(30)"), timeoutMillis: 60_000 })
        )
        // The test clock does not move: a real wait lets the statement start.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        expect(Date.now() - started).toBeLessThan(2_000)
        expect(yield* worker(runtime)).not.toBe(first)
      }))

    it.effect("retires a DEMO database whose memory grew past its limit once its query is answered", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const first = yield* worker(runtime)
        // About memory, not time: a loaded machine may take a while to build 300 MB in wasm.
        const grown = yield* runtime.query(demo, {
          ...request("SELECT length(repeat('x', 300000000)) AS n"),
          timeoutMillis: 60_000
        })
        expect(grown.rows).toEqual([[300_000_000]])
        const second = yield* worker(runtime)
        expect(second).not.toBe(first)
        // An ordinary query leaves it in place.
        yield* runtime.query(demo, request("SELECT count(*) FROM orders"))
        expect(yield* worker(runtime)).toBe(second)
      }))
  })
})

describe("DemoDataset.retail", () => {
  it("is deterministic and realistic in size", () => {
    const a = DemoDataset.retail(2025)
    const b = DemoDataset.retail(2025)
    expect(a.statements).toEqual(b.statements)
    expect(a.counts.orders).toBeGreaterThan(15_000)
    expect(a.counts.order_items).toBeGreaterThan(25_000)
    expect(a.counts.returns).toBeGreaterThan(500)
    expect(a.years).toEqual([2024, 2025])
  })
})

describePostgres("POSTGRES connector (real server)", () => {
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 10)
  const role = `sl_rls_${suffix}`
  const schema = `sl_conn_${suffix}`
  const attributesSecret = `key-${crypto.randomUUID()}`

  beforeAll(async () => {
    await admin(async (client) => {
      await client.query(`CREATE ROLE ${role} LOGIN`)
      await client.query(`CREATE ROLE ${role}_files LOGIN IN ROLE pg_read_server_files`)
      await client.query(`CREATE SCHEMA ${schema}`)
      await client.query(
        `CREATE TABLE ${schema}.sales (id int PRIMARY KEY, region text NOT NULL, amount numeric(10,2) NOT NULL)`
      )
      await client.query(`COMMENT ON TABLE ${schema}.sales IS 'one row per sale'`)
      await client.query(`INSERT INTO ${schema}.sales VALUES (1,'EU',10.5),(2,'US',20),(3,'EU',4.5),(4,'APAC',7)`)
      // A customer's own row-level security, reading the transaction setting Sightline sets.
      await client.query(`CREATE TABLE ${schema}.secured (LIKE ${schema}.sales INCLUDING ALL)`)
      await client.query(`INSERT INTO ${schema}.secured SELECT * FROM ${schema}.sales`)
      await client.query(`ALTER TABLE ${schema}.secured ENABLE ROW LEVEL SECURITY`)
      await client.query(
        `CREATE POLICY by_region ON ${schema}.secured FOR SELECT USING (region = current_setting('svc.client_attributes_json', true)::jsonb ->> 'region')`
      )
      // The same rows behind a policy that reads the attributes only through their signature.
      await client.query(`CREATE TABLE ${schema}.signed (LIKE ${schema}.sales INCLUDING ALL)`)
      await client.query(`INSERT INTO ${schema}.signed SELECT * FROM ${schema}.sales`)
      await client.query(`ALTER TABLE ${schema}.signed ENABLE ROW LEVEL SECURITY`)
      for (const statement of ClientAttributes.installSql({ secret: attributesSecret, role, schema: `${schema}_sl` })) {
        await client.query(statement)
      }
      await client.query(
        `CREATE POLICY by_region ON ${schema}.signed FOR SELECT USING (region = ${schema}_sl.client_attributes() ->> 'region')`
      )
      await client.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`)
      await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`)
    })
  })
  afterAll(async () => {
    await admin(async (client) => {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await client.query(`DROP SCHEMA IF EXISTS ${schema}_sl CASCADE`)
      await client.query(`DROP ROLE IF EXISTS ${role}`)
      await client.query(`DROP ROLE IF EXISTS ${role}_files`)
    })
  })

  const postgres = (
    flags: { readonly writes?: boolean; readonly sessionMetadata?: boolean; readonly secret?: string } = {}
  ) =>
    record({
      connector_type: "POSTGRES",
      name: "Warehouse",
      postgres: {
        ...settingsFor(role),
        password: Redacted.make(""),
        schemas: [schema],
        ssl_mode: "disable",
        ...(flags.secret === undefined ? {} : { client_attributes_secret: Redacted.make(flags.secret) })
      }
    }, flags)

  it.layer(Runtime.layerWith({ ...Runtime.defaultOptions, access: localAccess }))((it) => {
    it.effect("introspects only the connector's schemas", () =>
      Effect.gen(function*() {
        const info = yield* (yield* ConnectorRuntime).introspect(postgres())
        expect(info.tables.map((t) => t.name).sort()).toEqual([
          `${schema}.sales`,
          `${schema}.secured`,
          `${schema}.signed`
        ])
        expect(info.tables.find((t) => t.name === `${schema}.sales`)!.comment).toBe("one row per sale")
      }))

    it.effect("runs read-only: DELETE leaves every row in place unless the connector allows writes", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const error = yield* Effect.flip(runtime.query(postgres(), request(`DELETE FROM ${schema}.sales`)))
        expect(error.message).toMatch(/read-only transaction/)
        const count = yield* runtime.query(postgres(), request(`SELECT count(*) FROM ${schema}.sales`))
        expect(count.rows).toEqual([[4]])
        const writable = postgres({ writes: true })
        const updated = yield* runtime.query(
          writable,
          request(`UPDATE ${schema}.sales SET amount = amount WHERE region = 'EU'`)
        )
        expect(updated.affectedRows).toBe(2)
      }))

    it.effect("binds client attributes as parameters: a saved query with _svc.client_attributes_json sees EU rows only", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const sql = `SELECT id FROM ${schema}.sales WHERE region = _svc.client_attributes_json.region ORDER BY id`
        const eu = yield* runtime.query(postgres(), request(sql, "{\"region\":\"EU\"}"))
        expect(eu.rows).toEqual([[1], [3]])
        // A value that looks like SQL stays a value.
        const injected = yield* runtime.query(postgres(), request(sql, "{\"region\":\"EU' OR '1'='1\"}"))
        expect(injected.rows).toEqual([])
        const none = yield* runtime.query(postgres(), request(sql, "{}"))
        expect(none.rows).toEqual([])
      }))

    it.effect("sets svc.client_attributes_json for the transaction so the database's own RLS policy applies", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const sql = `SELECT region, sum(amount) AS total FROM ${schema}.secured GROUP BY region`
        const eu = yield* runtime.query(postgres({ sessionMetadata: true }), request(sql, "{\"region\":\"EU\"}"))
        expect(eu.rows).toEqual([["EU", 15]])
        // Without the connector's flag nothing is set, so the policy matches no row.
        const off = yield* runtime.query(postgres(), request(sql, "{\"region\":\"EU\"}"))
        expect(off.rows).toEqual([])
      }))

    it.effect("a set_config in the caller's SQL forges the plain setting, never the signed attributes", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const eu = "{\"region\":\"EU\"}"
        const forge = (table: string) => [
          // A materialized CTE that rewrites the setting before the table is read, in one statement.
          `WITH forged AS MATERIALIZED (SELECT set_config('svc.client_attributes_json', '{"region":"US"}', true))
             SELECT s.region, sum(s.amount) AS total FROM forged, ${table} s GROUP BY s.region ORDER BY s.region`,
          // The same in a scalar subquery.
          `SELECT region, sum(amount) AS total FROM ${table}
             WHERE (SELECT set_config('svc.client_attributes_json', '{"region":"US"}', true)) IS NOT NULL
             GROUP BY region ORDER BY region`,
          // And with the signature set too, which the caller cannot compute.
          `WITH forged AS MATERIALIZED (SELECT set_config('svc.client_attributes_json', '{"region":"US"}', true),
             set_config('svc.client_attributes_signature', repeat('0', 64), true))
             SELECT s.region, sum(s.amount) AS total FROM forged, ${table} s GROUP BY s.region ORDER BY s.region`
        ]
        // Against a policy that reads the plain setting, the trick works: why that is not enough.
        const plain = yield* runtime.query(
          postgres({ sessionMetadata: true }),
          request(forge(`${schema}.secured`)[0]!, eu)
        )
        expect(plain.rows).toEqual([["US", 20]])
        const signed = postgres({ sessionMetadata: true, secret: attributesSecret })
        expect(
          (yield* runtime.query(
            signed,
            request(`SELECT region, sum(amount) FROM ${schema}.signed GROUP BY region`, eu)
          )).rows
        )
          .toEqual([["EU", 15]])
        for (const sql of forge(`${schema}.signed`)) {
          const result = yield* runtime.query(signed, request(sql, eu))
          expect(result.rows, sql).toEqual([])
        }
        // A wrong key on the connector's side signs nothing the database accepts.
        const wrong = postgres({ sessionMetadata: true, secret: "not the key" })
        expect((yield* runtime.query(wrong, request(`SELECT id FROM ${schema}.signed`, eu))).rows).toEqual([])
        // The connector's role cannot read the key.
        const read = yield* Effect.flip(
          runtime.query(signed, request(`SELECT secret FROM ${schema}_sl.client_attributes_key`, eu))
        )
        expect(read.message).toMatch(/permission denied/)
      }))

    it.effect("caps a result in bytes as well as rows: wide rows stop early, marked truncated", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const wide = "SELECT i, repeat('x', 1000) AS filler FROM generate_series(1, 100000) AS i"
        const capped = yield* runtime.query(postgres(), { ...request(wide), maxRows: 1_000_000, maxBytes: 100_000 })
        expect(capped.truncated).toBe(true)
        // About 2 KB a row: some fifty rows, far below the row cap.
        expect(capped.rows.length).toBeGreaterThan(10)
        expect(capped.rows.length).toBeLessThan(60)
        expect(capped.rows.slice(0, 3).map((row) => row[0])).toEqual([1, 2, 3])
        // Narrow rows under the same byte cap are bounded by the rows asked for.
        const narrow = yield* runtime.query(postgres(), {
          ...request("SELECT i FROM generate_series(1, 100) AS i"),
          maxBytes: 100_000
        })
        expect(narrow).toMatchObject({ truncated: false })
        expect(narrow.rows).toHaveLength(100)
      }))

    it.effect("an interrupted query is cancelled on the server", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const fiber = yield* Effect.fork(runtime.query(postgres(), request("SELECT pg_sleep(30)")))
        // Real time (this suite runs on the TestClock): let the query reach the server.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        expect(Date.now() - started).toBeLessThan(2_000)
        const active = yield* Effect.promise(() =>
          admin((client) =>
            client.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND query LIKE 'SELECT pg_sleep%' AND state = 'active'`,
              [role]
            )
          )
        )
        expect(active.rows[0].n).toBe(0)
      }))

    it.effect("a statement timeout stops a long query", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          (yield* ConnectorRuntime).query(postgres(), { ...request("SELECT pg_sleep(5)"), timeoutMillis: 200 })
        )
        expect(error.message).toMatch(/statement timeout/)
      }))
  })

  it.layer(Runtime.layer)((it) => {
    it.effect("by default refuses the server's own network: loopback in every spelling, private addresses, Unix sockets", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const at = (host: string) =>
          record({
            connector_type: "POSTGRES",
            name: "Inside",
            postgres: { ...settingsFor(role), host, password: Redacted.make(""), ssl_mode: "disable" }
          })
        for (const host of ["127.0.0.1", "localhost", "127.1", "2130706433", "::1", "::ffff:127.0.0.1", "10.0.0.1"]) {
          const error = yield* Effect.flip(runtime.query(at(host), request("SELECT 1")))
          expect(error.message, host).toMatch(
            /is in a private network or on this server.*SIGHTLINE_CONNECTOR_ALLOW_PRIVATE=1/
          )
          expect((yield* Effect.flip(runtime.introspect(at(host)))).message, host).toMatch(/private network/)
        }
        const socket = yield* Effect.flip(runtime.query(at("/var/run/postgresql"), request("SELECT 1")))
        expect(socket.message).toMatch(/private network/)
      }))
  })

  it.layer(Runtime.layerWith({ ...Runtime.defaultOptions, access: localAccess }))((it) => {
    it.effect("refuses a superuser role, and one that reads the server's files, which read-only would not stop", () =>
      Effect.gen(function*() {
        const runtime = yield* ConnectorRuntime
        const as = (user: string) =>
          record({
            connector_type: "POSTGRES",
            name: "Powerful",
            postgres: { ...settingsFor(user), password: Redacted.make(""), ssl_mode: "disable" }
          })
        const superuser = as("postgres")
        const error = yield* Effect.flip(runtime.query(superuser, request("SELECT pg_read_file('/etc/hostname')")))
        expect(error.message).toMatch(/user "postgres" is a superuser/)
        // Every use, not only the first.
        expect((yield* Effect.flip(runtime.introspect(superuser))).message).toMatch(/is a superuser/)
        const files = yield* Effect.flip(runtime.query(as(`${role}_files`), request("SELECT 1")))
        expect(files.message).toMatch(/read the server's files/)
      }))
  })
})
