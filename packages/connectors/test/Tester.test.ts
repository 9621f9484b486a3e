import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { ConnectorTester } from "@sightline/core/ConnectorTester"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Tester from "../src/Tester.js"
import { admin, describePostgres, localAccess, settingsFor } from "./utils/postgres.js"

const postgres = (overrides: Partial<ReturnType<typeof settingsFor>>) => ({
  connector_type: "POSTGRES" as const,
  name: "Warehouse",
  postgres: {
    ...settingsFor("postgres"),
    password: Redacted.make("s3cret-never-shown"),
    ssl_mode: "disable" as const,
    ...overrides
  }
})

it.effect("DEMO: a known dataset connects, an unknown one says which exist", () =>
  Effect.gen(function*() {
    const tester = yield* ConnectorTester
    expect(yield* tester.test({ connector_type: "DEMO", name: "d", demo: { dataset: "retail" } })).toEqual({
      success: true
    })
    expect(yield* tester.test({ connector_type: "DEMO", name: "d", demo: { dataset: "space" } })).toEqual({
      success: false,
      error: "unknown demo dataset space (available: retail)"
    })
  }).pipe(Effect.provide(Tester.layer)))

describePostgres("POSTGRES connection test (real server)", () => {
  const role = `sl_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`
  // A port that accepts and never answers, and one that speaks HTTP.
  const silent = Net.createServer(() => undefined)
  const http = Http.createServer((_, response) => response.end("hello"))
  const portOf = (server: Net.Server) => (server.address() as Net.AddressInfo).port
  beforeAll(async () => {
    await admin((client) => client.query(`CREATE ROLE ${role} LOGIN`))
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  })
  afterAll(async () => {
    await admin((client) => client.query(`DROP ROLE IF EXISTS ${role}`))
    silent.close()
    http.close()
  })

  it.effect("by default refuses loopback in every spelling, private addresses and Unix sockets, before connecting", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectorTester
      for (
        const host of [
          "127.0.0.1",
          "localhost",
          "0.0.0.0",
          "127.1",
          "2130706433",
          "0x7f.0.0.1",
          "0177.0.0.1",
          "::1",
          "::ffff:127.0.0.1",
          "10.1.2.3",
          "192.168.0.1",
          "169.254.169.254",
          "100.64.0.1",
          "/var/run/postgresql"
        ]
      ) {
        const result = yield* tester.test(postgres({ host, user: role }))
        expect(result.success, host).toBe(false)
        expect(result.error, host).toBe(
          `${host} is in a private network or on this server, which connectors may not reach unless the operator ` +
            `allows it (in the standalone server: SIGHTLINE_CONNECTOR_ALLOW_PRIVATE=1, or the host in ` +
            `SIGHTLINE_CONNECTOR_ALLOW_HOSTS)`
        )
      }
    }).pipe(Effect.provide(Tester.layer)))

  it.effect("an allow-list opens one host and no other", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectorTester
      expect(yield* tester.test(postgres({ host: "127.0.0.1", user: role }))).toEqual({ success: true })
      expect((yield* tester.test(postgres({ host: "127.0.0.2", user: role }))).error).toMatch(/private network/)
    }).pipe(
      Effect.provide(
        Tester.layerWith({ network: { allowPrivate: false, allowHosts: ["127.0.0.1/32"] }, allowSuperuser: false })
      )
    ))

  it.effect(
    "where allowed: connects; a superuser is refused; a refused, a silent and an HTTP port say the same",
    () =>
      Effect.gen(function*() {
        const tester = yield* ConnectorTester
        expect(yield* tester.test(postgres({ user: role }))).toEqual({ success: true })
        expect((yield* tester.test(postgres({}))).error).toMatch(/^the connector's user "postgres" is a superuser/)
        const database = yield* tester.test(postgres({ user: role, database: "no_such_db_sightline" }))
        expect(database.error).toBe("database \"no_such_db_sightline\" does not exist on 127.0.0.1:5432")
        const user = yield* tester.test(postgres({ user: "no_such_user_sightline" }))
        expect(user.error).toBe("authentication failed for user \"no_such_user_sightline\"")
        const refused = yield* tester.test(postgres({ port: 1 }))
        const quiet = yield* tester.test(postgres({ port: portOf(silent) }))
        const other = yield* tester.test(postgres({ port: portOf(http) }))
        expect(refused.error).toBe("could not connect to 127.0.0.1:1")
        expect(quiet.error).toBe(`could not connect to 127.0.0.1:${portOf(silent)}`)
        expect(other.error).toBe(`could not connect to 127.0.0.1:${portOf(http)}`)
        for (const result of [database, user, refused, quiet, other]) {
          expect(JSON.stringify(result)).not.toContain("s3cret")
        }
      }).pipe(Effect.provide(Tester.layerWith(localAccess))),
    { timeout: 30_000 }
  )
})
