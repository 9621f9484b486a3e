import { expect, it } from "@effect/vitest"
import { ConnectorTester } from "@sightline/core/ConnectorTester"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Tester from "../src/Tester.js"
import { describePostgres, settingsFor } from "./utils/postgres.js"

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
  it.effect("connects, and says why not: unknown database, unknown user, refused port; never the password", () =>
    Effect.gen(function*() {
      const tester = yield* ConnectorTester
      expect(yield* tester.test(postgres({}))).toEqual({ success: true })
      const database = yield* tester.test(postgres({ database: "no_such_db_sightline" }))
      expect(database.error).toBe("database \"no_such_db_sightline\" does not exist on 127.0.0.1:5432")
      const user = yield* tester.test(postgres({ user: "no_such_user_sightline" }))
      expect(user.error).toBe("authentication failed for user \"no_such_user_sightline\"")
      const refused = yield* tester.test(postgres({ port: 1 }))
      expect(refused.error).toBe("cannot reach 127.0.0.1:1: connection refused")
      for (const result of [database, user, refused]) expect(JSON.stringify(result)).not.toContain("s3cret")
    }).pipe(Effect.provide(Tester.layer)))
})
