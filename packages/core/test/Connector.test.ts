import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Connector from "../src/Connector.js"
import { ConnectorId, MemberId, OrganizationId, RoleId } from "../src/Ids.js"

const t0 = DateTime.unsafeMake("2026-04-01T00:00:00.000Z")
const t1 = DateTime.unsafeMake("2026-04-02T00:00:00.000Z")
const owner = MemberId.make("00000000-0000-4000-8000-000000000001")
const caller = MemberId.make("00000000-0000-4000-8000-000000000002")
const viewer = MemberId.make("00000000-0000-4000-8000-000000000003")
const role = RoleId.make("00000000-0000-4000-8000-000000000004")

const decodeConfig = Schema.decodeUnknownSync(Connector.ConnectorConfig)
const decodeUpdate = Schema.decodeUnknownSync(Connector.ConnectorConfigUpdate)
const postgres = (settings: Record<string, unknown> = {}) =>
  decodeConfig({
    connector_type: "POSTGRES",
    name: "warehouse",
    postgres: { host: "db", user: "svc", password: "s3cret", database: "dw", ...settings }
  })
const passwordOf = (config: Connector.ConnectorConfig) =>
  config.connector_type === "POSTGRES" ? Redacted.value(config.postgres.password) : undefined

describe("Connector configuration", () => {
  it("PostgreSQL settings default port 5432 and ssl_mode prefer, and keep the password redacted", () => {
    const config = postgres()
    expect(config.connector_type === "POSTGRES" && config.postgres.port).toBe(5432)
    expect(config.connector_type === "POSTGRES" && config.postgres.ssl_mode).toBe("prefer")
    expect(passwordOf(config)).toBe("s3cret")
    expect(String(config.connector_type === "POSTGRES" && config.postgres.password)).not.toContain("s3cret")
  })

  it("invalid settings are rejected", () => {
    const decode = Schema.decodeUnknownEither(Connector.ConnectorConfig)
    const base = {
      connector_type: "POSTGRES",
      name: "w",
      postgres: { host: "db", user: "u", password: "", database: "d" }
    }
    expect(Either.isRight(decode(base))).toBe(true)
    expect(Either.isLeft(decode({ ...base, postgres: { ...base.postgres, port: 0 } }))).toBe(true)
    expect(Either.isLeft(decode({ ...base, postgres: { ...base.postgres, port: 65536 } }))).toBe(true)
    expect(Either.isLeft(decode({ ...base, postgres: { ...base.postgres, ssl_mode: "maybe" } }))).toBe(true)
    expect(Either.isLeft(decode({ ...base, postgres: { ...base.postgres, host: "" } }))).toBe(true)
    expect(Either.isLeft(decode({ ...base, name: " " }))).toBe(true)
    expect(Either.isLeft(decode({ ...base, connector_type: "MYSQL" }))).toBe(true)
    // A config key that does not match the type is not a configuration of that type.
    expect(Either.isLeft(decode({ connector_type: "DEMO", name: "w", postgres: base.postgres }))).toBe(true)
  })

  it("the demo connector needs no server and defaults its dataset", () => {
    const demo = decodeConfig({ connector_type: "DEMO", name: "Demo", demo: {} })
    expect(demo).toEqual({ connector_type: "DEMO", name: "Demo", demo: { dataset: Connector.defaultDemoDataset } })
    expect(Either.isLeft(
      Schema.decodeUnknownEither(Connector.ConnectorConfig)({
        connector_type: "DEMO",
        name: "Demo",
        demo: { dataset: "../etc" }
      })
    )).toBe(true)
  })
})

describe("Connector types registry", () => {
  it("describes every type with its config key and settings, derived from the schemas", () => {
    expect(Connector.types.map((t) => [t.connector_type, t.config_key])).toEqual([
      ["POSTGRES", "postgres"],
      ["MYSQL", "mysql"],
      ["DEMO", "demo"]
    ])
    const pg = Connector.types[0]!.fields
    expect(pg).toEqual([
      { name: "host", type: "string", confidential: false, optional_on_update: false },
      { name: "port", type: "integer", confidential: false, optional_on_update: false },
      { name: "user", type: "string", confidential: false, optional_on_update: false },
      { name: "password", type: "string", confidential: true, optional_on_update: true },
      { name: "database", type: "string", confidential: false, optional_on_update: false },
      { name: "schemas", type: "string[]", confidential: false, optional_on_update: false },
      {
        name: "ssl_mode",
        type: "enum",
        values: ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
        confidential: false,
        optional_on_update: false
      },
      { name: "client_attributes_secret", type: "string", confidential: true, optional_on_update: false }
    ])
    expect(Connector.confidentialFields("POSTGRES")).toEqual(["password", "client_attributes_secret"])
    expect(Connector.confidentialFields("MYSQL")).toEqual(["password"])
    expect(Connector.confidentialFields("DEMO")).toEqual([])
  })

  it("exactly the settings that decode to Redacted are confidential", () => {
    const config = postgres({ client_attributes_secret: "the key" })
    const settings = config.connector_type === "POSTGRES" ? config.postgres : {}
    const redactedNames = Object.entries(settings).filter(([, v]) => Redacted.isRedacted(v)).map(([k]) => k)
    expect(redactedNames).toEqual(Connector.confidentialFields("POSTGRES"))
  })

  it("encodes as the wire response", () => {
    const wire = Schema.encodeSync(Connector.ConnectorTypesResponse)({ types: Connector.types })
    expect(wire.types[2]).toEqual({
      connector_type: "DEMO",
      config_key: "demo",
      fields: [{ name: "dataset", type: "string", confidential: false, optional_on_update: false }]
    })
  })
})

describe("Connector.mergeConfig", () => {
  const update = (settings: Record<string, unknown>) =>
    decodeUpdate({
      connector_type: "POSTGRES",
      name: "renamed",
      postgres: { host: "db2", user: "svc", database: "dw", ...settings }
    })

  it("an empty or missing password keeps the stored one; other settings are replaced", () => {
    for (
      const merged of [
        Connector.mergeConfig(postgres(), update({})),
        Connector.mergeConfig(postgres(), update({ password: "" }))
      ]
    ) {
      const config = Either.getOrThrow(merged)
      expect(passwordOf(config)).toBe("s3cret")
      expect(config.name).toBe("renamed")
      expect(config.connector_type === "POSTGRES" && config.postgres.host).toBe("db2")
    }
  })

  it("a new password replaces the stored one", () => {
    expect(passwordOf(Either.getOrThrow(Connector.mergeConfig(postgres(), update({ password: "n3w" }))))).toBe("n3w")
  })

  it("a connector cannot change type", () => {
    const error = Either.flip(
      Connector.mergeConfig(postgres(), decodeUpdate({ connector_type: "DEMO", name: "x", demo: {} }))
    ).pipe(Either.getOrThrow)
    expect(error._tag).toBe("InvalidRequest")
    expect(error.message).toContain("connector_type cannot change")
  })

  it("with nothing stored, a missing password is empty", () => {
    expect(passwordOf(Either.getOrThrow(Connector.completeConfig(update({}))))).toBe("")
  })
})

describe("Connector.redact", () => {
  it("drops confidential settings from every shape that leaves core", () => {
    const redacted = Connector.redact(postgres({ password: "hunter2" }))
    const wire = Schema.encodeSync(Connector.ConnectorConfigUpdate)(redacted)
    expect(JSON.stringify(wire)).not.toContain("hunter2")
    expect(wire).toEqual({
      connector_type: "POSTGRES",
      name: "warehouse",
      postgres: { host: "db", port: 5432, user: "svc", database: "dw", ssl_mode: "prefer" }
    })
    // Sending the redacted shape back as an update keeps the secret.
    expect(passwordOf(Either.getOrThrow(Connector.mergeConfig(postgres({ password: "hunter2" }), redacted)))).toBe(
      "hunter2"
    )
  })
})

describe("Connector access", () => {
  const decodeAccess = Schema.decodeUnknownEither(Connector.SetConnectorAccess)

  it("a grant names exactly one of member_id and role_id", () => {
    expect(Either.isRight(decodeAccess({ is_public: false, grants: [{ member_id: viewer, access_type: "viewer" }] })))
      .toBe(true)
    expect(Either.isRight(decodeAccess({ is_public: false, grants: [{ role_id: role, access_type: "editor" }] }))).toBe(
      true
    )
    expect(Either.isLeft(decodeAccess({ is_public: false, grants: [{ access_type: "viewer" }] }))).toBe(true)
    expect(
      Either.isLeft(
        decodeAccess({ is_public: false, grants: [{ member_id: viewer, role_id: role, access_type: "viewer" }] })
      )
    )
      .toBe(true)
    expect(Either.isLeft(decodeAccess({ is_public: false, grants: [{ member_id: viewer, access_type: "admin" }] })))
      .toBe(true)
  })

  it("a principal is granted once", () => {
    expect(Either.isLeft(decodeAccess({
      is_public: false,
      grants: [{ member_id: viewer, access_type: "viewer" }, { member_id: viewer, access_type: "editor" }]
    }))).toBe(true)
  })

  it("a new connector is private and owned by its creator", () => {
    expect(Connector.initialAccess(owner)).toEqual(
      new Connector.ConnectorAccess({
        is_public: false,
        grants: [new Connector.AccessGrant({ member_id: owner, access_type: "owner", granted_by: owner })]
      })
    )
    const shared = Connector.initialAccess(owner, {
      is_public: true,
      grants: [{ role_id: role, access_type: "viewer" }, { member_id: owner, access_type: "viewer" }]
    })
    expect(shared.is_public).toBe(true)
    expect(shared.grants.map((g) => [g.member_id ?? g.role_id, g.access_type, g.granted_by])).toEqual([
      [owner, "owner", owner],
      [role, "viewer", owner]
    ])
  })

  it("replacing access keeps the caller's owner grant and who granted unchanged grants", () => {
    const current = new Connector.ConnectorAccess({
      is_public: false,
      grants: [
        new Connector.AccessGrant({ member_id: caller, access_type: "owner", granted_by: owner }),
        new Connector.AccessGrant({ role_id: role, access_type: "viewer", granted_by: owner }),
        new Connector.AccessGrant({ member_id: viewer, access_type: "viewer", granted_by: owner })
      ]
    })
    const next = Connector.replaceAccess(current, {
      is_public: true,
      grants: [
        { member_id: caller, access_type: "viewer" },
        { role_id: role, access_type: "viewer" },
        { member_id: viewer, access_type: "editor", expires_at: t1 }
      ]
    }, caller)
    expect(next.is_public).toBe(true)
    expect(next.grants.map((g) => [g.member_id ?? g.role_id, g.access_type, g.granted_by])).toEqual([
      [caller, "owner", owner],
      [role, "viewer", owner],
      [viewer, "editor", caller]
    ])
    expect(next.grants[2]!.expires_at).toEqual(t1)
    // A caller who is not an owner gets exactly what was asked for.
    const plain = Connector.replaceAccess(current, { is_public: false, grants: [] }, viewer)
    expect(plain.grants).toEqual([])
  })
})

describe("Connector records", () => {
  const record = new Connector.ConnectorRecord({
    ...Connector.make({
      organizationId: OrganizationId.make("00000000-0000-4000-8000-00000000000f"),
      ownerId: owner,
      config: postgres(),
      at: t0
    }),
    id: ConnectorId.make(7)
  })

  it("a new connector runs read-only SQL and adds no session metadata", () => {
    expect(record.allow_sql_write_operations).toBe(false)
    expect(record.include_db_session_metadata).toBe(false)
    expect(Schema.encodeSync(Connector.Connector)(Connector.toConnector(record))).toEqual({
      id: 7,
      name: "warehouse",
      type: "POSTGRES"
    })
  })

  it("an update merges the config, sets the flags sent and keeps the others", () => {
    const request = Schema.decodeUnknownSync(Connector.UpdateConnectorRequest)({
      config: {
        connector_type: "POSTGRES",
        name: "w2",
        postgres: { host: "h", user: "u", database: "d", password: "" }
      },
      allow_sql_write_operations: true
    })
    const updated = Either.getOrThrow(Connector.applyUpdate(record, request, t1))
    expect(updated.allow_sql_write_operations).toBe(true)
    expect(updated.include_db_session_metadata).toBe(false)
    expect(updated.config.name).toBe("w2")
    expect(passwordOf(updated.config)).toBe("s3cret")
    expect(updated.updated_at).toEqual(t1)
    expect(updated.created_at).toEqual(t0)
    const typeChange = Schema.decodeUnknownSync(Connector.UpdateConnectorRequest)({
      config: { connector_type: "DEMO", name: "d", demo: {} }
    })
    expect(Either.isLeft(Connector.applyUpdate(record, typeChange, t1))).toBe(true)
  })

  it("a stored record round-trips through its encoded form, password included", () => {
    const encoded = Schema.encodeSync(Connector.ConnectorRecord)(record)
    expect(encoded.config).toMatchObject({ postgres: { password: "s3cret" } })
    const decoded = Schema.decodeUnknownSync(Connector.ConnectorRecord)(encoded)
    expect(Schema.encodeSync(Connector.ConnectorRecord)(decoded)).toEqual(encoded)
  })
})
