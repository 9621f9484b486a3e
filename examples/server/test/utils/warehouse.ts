/**
 * A PostgreSQL warehouse for row-level security tests: its own login role and schema in the test
 * database, a POSTGRES connector of an organization that logs in as that role with
 * `include_db_session_metadata` on and its attributes signed (`ClientAttributes`, installed beside
 * the schema), and an API key whose client metadata is a region. Everything is dropped afterwards.
 */
import * as ClientAttributes from "@sightline/connectors/ClientAttributes"
import pg from "pg"
import { expect } from "vitest"
import { body, type Org, postgresUrl, type TestServer } from "./server.js"

/** What a test gets: the schema to create its tables in, the connector and a key of region EU. */
export interface Warehouse {
  readonly schema: string
  readonly connectorId: number
  readonly euKey: string
}

/** `sales(id, region, amount)` with four rows: EU 10 and 5, US 20, APAC 7. */
export const createSales = (table: string) => [
  `CREATE TABLE ${table} (id int PRIMARY KEY, region text NOT NULL, amount int NOT NULL)`,
  `INSERT INTO ${table} VALUES (1,'EU',10),(2,'US',20),(3,'EU',5),(4,'APAC',7)`
]

/**
 * Row-level security on `table` (`<schema>.<name>`): a row is seen by the transaction whose signed
 * attributes name its region, read through the warehouse's `client_attributes()`.
 */
export const regionPolicy = (table: string) => [
  `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
  `CREATE POLICY by_region ON ${table} FOR SELECT USING (region = ${
    functionSchemaOf(table.split(".")[0]!)
  }.client_attributes() ->> 'region')`
]

// Each warehouse installs its own `client_attributes()` beside its schema.
const functionSchemaOf = (schema: string) => `${schema}_sl`

/** Runs `use` with a warehouse whose tables the `setup` statements create (`$schema` names the schema). */
export const withWarehouse = async <A>(
  server: TestServer,
  org: Org,
  setup: (schema: string) => ReadonlyArray<string>,
  use: (warehouse: Warehouse) => Promise<A>
): Promise<A> => {
  const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 10)
  const role = `sl_rls_${suffix}`
  const schema = `sl_rls_${suffix}`
  const secret = `key-${crypto.randomUUID()}`
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  try {
    for (
      const statement of [
        `CREATE ROLE ${role} LOGIN`,
        ...ClientAttributes.installSql({ secret, role, schema: functionSchemaOf(schema) }),
        `CREATE SCHEMA ${schema}`,
        ...setup(schema),
        `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
        `GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`
      ]
    ) await admin.query(statement)
    const url = new URL(postgresUrl)
    const settings = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: role,
      database: url.pathname.slice(1),
      schemas: [schema],
      ssl_mode: "disable"
    }
    const config = { connector_type: "POSTGRES", name: "Warehouse", postgres: settings }
    const created = await body(
      await server.request("/v2/connectors", {
        method: "POST",
        key: org.key,
        json: { config: { ...config, postgres: { ...settings, password: "" } } }
      })
    )
    // The session metadata is a setting of PATCH, whose config leaves the password out: the stored one is kept.
    const patched = await server.request(`/v2/connectors/${created.id}`, {
      method: "PATCH",
      key: org.key,
      json: {
        config: { ...config, postgres: { ...settings, client_attributes_secret: secret } },
        include_db_session_metadata: true
      }
    })
    expect(patched.status).toBe(200)
    const euKey = (await body(
      await server.request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "eu", clientId: "{\"region\":\"EU\"}" }
      })
    )).key
    return await use({ schema, connectorId: created.id, euKey })
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.query(`DROP SCHEMA IF EXISTS ${functionSchemaOf(schema)} CASCADE`).catch(() => undefined)
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined)
    await admin.end()
  }
}
