import { expect, it } from "@effect/vitest"
import { postgresConfig, statuses } from "./utils/content.js"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers } from "./utils/server.js"

describeServers("/v2 connectors", (server) => {
  it("lists connector types, with the password marked confidential", async () => {
    const org = await server().newOrg()
    const response = await server().request("/v2/connectors/types", { key: org.key })
    expect(response.status).toBe(200)
    const { types } = await body(response)
    expect(types.map((t: any) => t.connector_type)).toEqual(expect.arrayContaining(["POSTGRES", "DEMO"]))
    const postgres = types.find((t: any) => t.connector_type === "POSTGRES")
    expect(postgres.config_key).toBe("postgres")
    expect(postgres.fields.find((f: any) => f.name === "password")).toMatchObject({
      type: expect.any(String),
      confidential: true,
      optional_on_update: true
    })
  })

  it("creates, lists, tests, updates and deletes a connector", async () => {
    const org = await server().newOrg()
    const created = await server().request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: { config: postgresConfig("Sales") }
    })
    expect(created.status).toBe(201)
    const connector = await body(created)
    expect(connector).toEqual({ id: expect.any(Number), name: "Sales", type: "POSTGRES" })
    expect(Number.isInteger(connector.id)).toBe(true)

    const listed = await server().request("/v2/connectors", { key: org.key })
    expect(listed.status).toBe(200)
    expect(await body(listed)).toEqual([connector])

    // Without a password the stored one is kept (empty confidential fields on update).
    const updated = await server().request(`/v2/connectors/${connector.id}`, {
      method: "PATCH",
      key: org.key,
      json: {
        config: {
          connector_type: "POSTGRES",
          name: "Sales EU",
          postgres: { host: "db.eu", user: "a", database: "sales" }
        }
      }
    })
    expect(updated.status).toBe(200)
    expect(await body(updated)).toEqual({ id: connector.id, name: "Sales EU", type: "POSTGRES" })

    const tested = await server().request("/v2/connectors/test", {
      method: "POST",
      key: org.key,
      json: { config: postgresConfig("probe"), connector_id: connector.id }
    })
    expect(tested.status).toBe(200)
    const result = await body(tested)
    expect(typeof result.success).toBe("boolean")
    if (!result.success) expect(typeof result.error).toBe("string")

    const deleted = await server().request(`/v2/connectors/${connector.id}`, { method: "DELETE", key: org.key })
    expect(deleted.status).toBe(200)
    expect(await body(deleted)).toEqual({ id: connector.id, success: true })
    expect(await body(await server().request("/v2/connectors", { key: org.key }))).toEqual([])
    expect(await statuses(server(), org.key, [["GET", `/v2/connectors/${connector.id}/access`]])).toEqual([
      ["GET", `/v2/connectors/${connector.id}/access`, 404, "not_found"]
    ])
  })

  it("reads and replaces access; the caller's owner grant is kept; grantees then see the connector", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const connector = await body(
      await server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("S") } })
    )
    const access = await server().request(`/v2/connectors/${connector.id}/access`, { key: org.key })
    expect(access.status).toBe(200)
    const before = await body(access)
    expect(typeof before.is_public).toBe("boolean")
    expect(before.grants).toEqual([
      expect.objectContaining({ member_id: org.memberId, access_type: "owner", granted_by: org.memberId })
    ])
    expect(await body(await server().request("/v2/connectors", { key: member.key }))).toEqual(
      before.is_public ? [connector] : []
    )

    const put = await server().request(`/v2/connectors/${connector.id}/access`, {
      method: "PUT",
      key: org.key,
      json: { is_public: false, grants: [{ member_id: member.memberId, access_type: "viewer" }] }
    })
    expect(put.status).toBe(200)
    const after = await body(put)
    expect(after.is_public).toBe(false)
    expect(after.grants.map((g: any) => [g.member_id, g.access_type]).sort()).toEqual(
      [[member.memberId, "viewer"], [org.memberId, "owner"]].sort()
    )
    expect(await body(await server().request(`/v2/connectors/${connector.id}/access`, { key: org.key }))).toEqual(
      after
    )
    expect(await body(await server().request("/v2/connectors", { key: member.key }))).toEqual([connector])
  })

  it("never returns a password, in any answer about a connector", async () => {
    const org = await server().newOrg()
    const password = `pw-${crypto.randomUUID()}`
    const created = await server().request("/v2/connectors", {
      method: "POST",
      key: org.key,
      json: { config: postgresConfig("Secret", password) }
    })
    const texts = [await created.text()]
    const { id } = JSON.parse(texts[0]!)
    for (
      const [method, path, json] of [
        ["GET", "/v2/connectors", undefined],
        ["GET", "/v2/connectors/types", undefined],
        ["GET", `/v2/connectors/${id}/access`, undefined],
        ["PUT", `/v2/connectors/${id}/access`, { is_public: true, grants: [] }],
        ["POST", "/v2/connectors/test", { config: postgresConfig("probe", password), connector_id: id }],
        ["PATCH", `/v2/connectors/${id}`, { config: postgresConfig("Secret 2", password) }],
        ["DELETE", `/v2/connectors/${id}`, undefined]
      ] as const
    ) {
      const response = await server().request(path, { method, key: org.key, ...(json ? { json } : {}) })
      expect([method, path, response.status]).toEqual([method, path, 200])
      texts.push(await response.text())
    }
    for (const text of texts) {
      expect(text.length).toBeGreaterThan(2)
      expect(text).not.toContain(password)
    }
  })

  it("is 400 for a bad config or a non-integer id, 401 without a valid key", async () => {
    const org = await server().newOrg()
    expect(
      await statuses(server(), org.key, [
        ["POST", "/v2/connectors", { config: { connector_type: "ORACLE", name: "x" } }],
        ["POST", "/v2/connectors", { config: { connector_type: "POSTGRES", name: "x" } }],
        ["POST", "/v2/connectors", {}],
        ["POST", "/v2/connectors/test", { config: { connector_type: "ORACLE", name: "x" } }],
        ["PATCH", "/v2/connectors/abc", { config: postgresConfig("x") }],
        ["DELETE", "/v2/connectors/1.5"],
        ["GET", "/v2/connectors/-3/access"],
        ["PUT", "/v2/connectors/1/access", { is_public: "yes", grants: [] }]
      ])
    ).toEqual([
      ["POST", "/v2/connectors", 400, "invalid_request"],
      ["POST", "/v2/connectors", 400, "invalid_request"],
      ["POST", "/v2/connectors", 400, "invalid_request"],
      ["POST", "/v2/connectors/test", 400, "invalid_request"],
      ["PATCH", "/v2/connectors/abc", 400, "invalid_request"],
      ["DELETE", "/v2/connectors/1.5", 400, "invalid_request"],
      ["GET", "/v2/connectors/-3/access", 400, "invalid_request"],
      ["PUT", "/v2/connectors/1/access", 400, "invalid_request"]
    ])
    const calls = [
      ["GET", "/v2/connectors"],
      ["POST", "/v2/connectors", { config: postgresConfig("x") }],
      ["GET", "/v2/connectors/types"],
      ["POST", "/v2/connectors/test", { config: postgresConfig("x") }],
      ["PATCH", "/v2/connectors/1", { config: postgresConfig("x") }],
      ["DELETE", "/v2/connectors/1"],
      ["GET", "/v2/connectors/1/access"],
      ["PUT", "/v2/connectors/1/access", { is_public: true, grants: [] }]
    ] as const
    for (const key of [undefined, "not-a-key", org.key.slice(0, -4) + "AAAA"]) {
      expect(await statuses(server(), key, calls)).toEqual(
        calls.map(([method, path]) => [method, path, 401, "unauthenticated"])
      )
    }
  })

  it("is 403 without connector permissions: a member cannot create, a scoped key cannot read", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const readOnly = await scopedKey(server(), org, ["connector:read"])
    const none = await scopedKey(server(), org, ["chat:read"])
    const connector = await body(
      await server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("S") } })
    )
    expect(await statuses(server(), member.key, [["POST", "/v2/connectors", { config: postgresConfig("M") }]]))
      .toEqual([["POST", "/v2/connectors", 403, "permission_denied"]])
    expect(
      await statuses(server(), readOnly.key, [
        ["POST", "/v2/connectors", { config: postgresConfig("M") }],
        ["PATCH", `/v2/connectors/${connector.id}`, { config: postgresConfig("M") }],
        ["DELETE", `/v2/connectors/${connector.id}`],
        ["PUT", `/v2/connectors/${connector.id}/access`, { is_public: true, grants: [] }]
      ])
    ).toEqual([
      ["POST", "/v2/connectors", 403, "permission_denied"],
      ["PATCH", `/v2/connectors/${connector.id}`, 403, "permission_denied"],
      ["DELETE", `/v2/connectors/${connector.id}`, 403, "permission_denied"],
      ["PUT", `/v2/connectors/${connector.id}/access`, 403, "permission_denied"]
    ])
    expect(await statuses(server(), none.key, [["GET", "/v2/connectors"], ["GET", "/v2/connectors/types"]]))
      .toEqual([
        ["GET", "/v2/connectors", 403, "permission_denied"],
        ["GET", "/v2/connectors/types", 403, "permission_denied"]
      ])
    // Nothing changed.
    expect(await body(await server().request("/v2/connectors", { key: org.key }))).toEqual([connector])
  })

  it("is 404 for an unknown connector and for another organization's", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg("Other")
    const connector = await body(
      await server().request("/v2/connectors", { method: "POST", key: org.key, json: { config: postgresConfig("S") } })
    )
    const calls = (id: number) =>
      [
        ["PATCH", `/v2/connectors/${id}`, { config: postgresConfig("T") }],
        ["DELETE", `/v2/connectors/${id}`],
        ["GET", `/v2/connectors/${id}/access`],
        ["PUT", `/v2/connectors/${id}/access`, { is_public: true, grants: [] }]
      ] as const
    for (const [key, id] of [[org.key, 2_000_000_000], [other.key, connector.id]] as const) {
      expect(await statuses(server(), key, calls(id))).toEqual(
        calls(id).map(([method, path]) => [method, path, 404, "not_found"])
      )
    }
    // The test operation may name a stored connector only of the caller's organization.
    expect(
      await statuses(server(), other.key, [["POST", "/v2/connectors/test", {
        config: postgresConfig("probe"),
        connector_id: connector.id
      }]])
    ).toEqual([["POST", "/v2/connectors/test", 404, "not_found"]])
    expect(await body(await server().request("/v2/connectors", { key: other.key }))).toEqual([])
    expect(await body(await server().request("/v2/connectors", { key: org.key }))).toEqual([connector])
  })
})
