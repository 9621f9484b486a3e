/**
 * An organization's admin is a tenant: on a server with the default settings, a POSTGRES or MYSQL
 * connector cannot reach the server's own network, whatever the spelling of the address, and the
 * connection test tells a closed port from an open one no better than a silent one.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Net from "node:net"
import { body, type Org, postgresUrl, startServer, type TestServer } from "./utils/server.js"

const refusal =
  /^(.+) is in a private network or on this server, which connectors may not reach unless the operator allows it \(in the standalone server: SIGHTLINE_CONNECTOR_ALLOW_PRIVATE=1, or the host in SIGHTLINE_CONNECTOR_ALLOW_HOSTS\)$/

const local = new URL(postgresUrl)
const postgres = (host: string, port = Number(local.port || 5432)) => ({
  connector_type: "POSTGRES",
  name: "Inside",
  postgres: { host, port, user: "postgres", password: "", database: local.pathname.slice(1), ssl_mode: "disable" }
})
const mysql = (host: string) => ({
  connector_type: "MYSQL",
  name: "Inside",
  mysql: { host, port: 3306, user: "root", password: "", database: "test", ssl_mode: "disable" }
})

describe("connectors and the server's own network", () => {
  let server: TestServer & { readonly stop: () => Promise<void> }
  let opened: TestServer & { readonly stop: () => Promise<void> }
  let org: Org
  const silent = Net.createServer(() => undefined)

  beforeAll(async () => {
    // The defaults of a deployment (the harness otherwise opens loopback to reach its test databases).
    server = await startServer("pglite", { connectorAccess: undefined })
    opened = await startServer("pglite", {})
    org = await server.newOrg()
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
  }, 60_000)
  afterAll(async () => {
    silent.close()
    await server?.stop()
    await opened?.stop()
  })

  const test = (target: TestServer, key: string, config: unknown) =>
    target.request("/v2/connectors/test", { method: "POST", key, json: { config } }).then(body)

  it("refuses loopback in every spelling, private addresses and Unix sockets, for POSTGRES and MYSQL", async () => {
    for (
      const host of [
        "127.0.0.1",
        "localhost",
        "127.1",
        "2130706433",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "0.0.0.0",
        "::1",
        "::ffff:127.0.0.1",
        "10.0.0.5",
        "192.168.1.1",
        "169.254.169.254",
        "/var/run/postgresql"
      ]
    ) {
      const result = await test(server, org.key, postgres(host))
      expect(result.success, host).toBe(false)
      expect(result.error, host).toMatch(refusal)
      if (!host.startsWith("/")) expect((await test(server, org.key, mysql(host))).error, host).toMatch(refusal)
    }
  })

  it("a stored connector into the server's network answers no question: the query is refused", async () => {
    const created = await server.request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: { config: postgres("127.0.0.1") }
    })
    expect(created.status).toBe(201)
    const { id } = await body(created)
    const answer = await server.request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "How many rows are in pg_class?", connector_ids: [id] }
    })
    expect(answer.status).toBe(200)
    const text = JSON.stringify(await body(answer))
    expect(text).toMatch(/is in a private network or on this server/)
  })

  it("where the operator allows the network, a closed port, a silent one and a non-database say the same", async () => {
    const admin = await opened.newOrg()
    const closed = await test(opened, admin.key, postgres("127.0.0.1", 1))
    const quiet = await test(opened, admin.key, postgres("127.0.0.1", (silent.address() as Net.AddressInfo).port))
    const http = await test(opened, admin.key, postgres("127.0.0.1", Number(new URL(opened.baseUrl).port)))
    expect(closed.error).toBe("could not connect to 127.0.0.1:1")
    expect(quiet.error).toBe(`could not connect to 127.0.0.1:${(silent.address() as Net.AddressInfo).port}`)
    expect(http.error).toBe(`could not connect to 127.0.0.1:${new URL(opened.baseUrl).port}`)
    // And the superuser the local trust authentication would have let in is refused.
    expect((await test(opened, admin.key, postgres("127.0.0.1"))).error).toMatch(/"postgres" is a superuser/)
  }, 30_000)
})
