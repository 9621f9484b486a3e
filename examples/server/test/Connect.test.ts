import { Code, ConnectError } from "@connectrpc/connect"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Agents from "@sightline/core/Agents"
import * as Apps from "@sightline/core/Apps"
import * as Auth from "@sightline/core/Auth"
import * as GroupRepo from "@sightline/core/GroupRepo"
import { AgentId, MemberId, OrganizationId, RoleId, ScimGroupMappingId } from "@sightline/core/Ids"
import * as Roles from "@sightline/core/Roles"
import { ScimGroupMappingRecord } from "@sightline/core/ScimGroupMapping"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Jose from "jose"
import { connectHeaders, requestWithoutBody, rpcClient, webhookClient } from "./utils/connect.js"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const jwtSecret = "connect-test-secret-of-enough-length-for-hs256"

const sessionToken = (org: Org) =>
  new Jose.SignJWT({ organization_id: org.organizationId })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(org.memberId)
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(jwtSecret))

const principalOf = (key: string) => Effect.flatMap(Auth.Auth, (auth) => auth.authenticateApiKey(key))

const newApp = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const apps = yield* Apps.Apps
    return yield* apps.create(yield* principalOf(org.key), {
      name: "Revenue board",
      description: "Weekly revenue",
      code: "print('hi')",
      files: { "main.py": "print('hi')" }
    })
  }))

const newAgent = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const agents = yield* Agents.Agents
    return yield* agents.create(yield* principalOf(org.key), { name: "Watcher", prompt: "Watch", connector_ids: [] })
  }))

/** The agent's runs and the organization's queued jobs: what a trigger leaves behind. */
const queued = (server: TestServer, org: Org, agentId: string) =>
  server.run(Effect.gen(function*() {
    const agents = yield* Agents.Agents
    const runs = yield* agents.listRuns(yield* principalOf(org.key), AgentId.make(agentId), { limit: 200 })
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix.TablePrefix
    const [row] = yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${sql(prefix.name("jobs"))} WHERE organization_id = ${org.organizationId}`
    return { runs: runs.runs, jobs: Number(row!.n) }
  }))

/** Two role-targeted SCIM mappings of the organization, pushed with its admin as their member. */
const newMappings = (server: TestServer, org: Org) =>
  server.run(Effect.gen(function*() {
    const role = yield* (yield* Roles.Roles).create(yield* principalOf(org.key), {
      name: `scim-${crypto.randomUUID().slice(0, 8)}`,
      permissions: ["chat:read"]
    })
    const groups = yield* GroupRepo.GroupRepo
    const mappings = ["Engineering", "Sales"].map((displayName) =>
      new ScimGroupMappingRecord({
        id: ScimGroupMappingId.make(crypto.randomUUID()),
        organization_id: OrganizationId.make(org.organizationId),
        displayName,
        externalId: `ext-${displayName.toLowerCase()}`,
        roleId: RoleId.make(role.id),
        targetMode: "role",
        member_ids: [MemberId.make(org.memberId)]
      })
    )
    for (const mapping of mappings) yield* groups.createMapping(mapping)
    return { roleId: role.id as string, mappings }
  }))

const connectCode = async (promise: Promise<unknown>): Promise<{ code: Code; message: string }> => {
  try {
    await promise
  } catch (error) {
    if (error instanceof ConnectError) return { code: error.code, message: error.rawMessage }
    throw error
  }
  throw new Error("expected a ConnectError")
}

/** A Connect error body: exactly `{code, message, details: []}`, never the /v2 envelope. */
const expectConnectError = async (response: Response, status: number, code: string) => {
  expect(response.status).toBe(status)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  const json = await body(response)
  expect(json).toEqual({ code, message: expect.any(String), details: [] })
  return json as { code: string; message: string; details: [] }
}

describeServers("Connect surfaces", (server) => {
  const post = (path: string, init: { headers?: Record<string, string>; body?: string | undefined } = {}) =>
    server().request(path, { method: "POST", headers: init.headers ?? connectHeaders(), body: init.body ?? "{}" })

  describe("AppService/GetApp", () => {
    it("answers the app in camelCase over a real Connect client, with and without /rpc/public", async () => {
      const org = await server().newOrg()
      const app = await newApp(server(), org)
      const expected = {
        app: {
          id: app.id,
          name: "Revenue board",
          description: "Weekly revenue",
          code: "print('hi')",
          files: { "main.py": "print('hi')" },
          dataSources: [],
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
        },
        hasWritePermission: true
      }
      expect(await rpcClient(server().baseUrl, org.key).getApp({ appId: app.id })).toEqual(expected)
      expect(await rpcClient(server().baseUrl, org.key, { prefix: false }).getApp({ appId: app.id })).toEqual(expected)
      // Raw: the wire is exactly that JSON, with status 200.
      const raw = await post(`/rpc/public/svc.rpc.public.app.AppService/GetApp`, {
        headers: connectHeaders({ svc_api_key: org.key }),
        body: JSON.stringify({ appId: app.id })
      })
      expect(raw.status).toBe(200)
      expect(await body(raw)).toEqual(expected)
    })

    it("tells a member who is not the owner that it may not change the app", async () => {
      const org = await server().newOrg()
      const app = await newApp(server(), org)
      const member = await newMember(server(), org)
      const got = await rpcClient(server().baseUrl, member.key).getApp({ appId: app.id })
      expect(got).toMatchObject({ app: { id: app.id }, hasWritePermission: false })
    })

    it("refuses missing and bad keys, hides other organizations' apps, and rejects a bad appId", async () => {
      const org = await server().newOrg()
      const app = await newApp(server(), org)
      const other = await server().newOrg("Other")
      const base = server().baseUrl
      expect(await connectCode(rpcClient(base, undefined).getApp({ appId: app.id }))).toMatchObject({
        code: Code.Unauthenticated
      })
      expect(await connectCode(rpcClient(base, "not a key").getApp({ appId: app.id }))).toEqual({
        code: Code.Unauthenticated,
        message: "invalid API key format"
      })
      expect(await connectCode(rpcClient(base, other.key).getApp({ appId: app.id }))).toEqual({
        code: Code.NotFound,
        message: "Resource not found"
      })
      expect(await connectCode(rpcClient(base, org.key).getApp({ appId: crypto.randomUUID() }))).toMatchObject({
        code: Code.NotFound
      })
      expect(await connectCode(rpcClient(base, org.key).getApp({ appId: "nope" }))).toMatchObject({
        code: Code.InvalidArgument
      })
      expect(await connectCode(rpcClient(base, org.key).getApp({}))).toMatchObject({ code: Code.InvalidArgument })
      // A key scoped without chat:read sees nothing.
      const narrow = await scopedKey(server(), org, ["agent:read"])
      expect(await connectCode(rpcClient(base, narrow.key).getApp({ appId: app.id }))).toMatchObject({
        code: Code.PermissionDenied
      })
    })

    it("does not take the key from Authorization on the RPC surface", async () => {
      const org = await server().newOrg()
      const app = await newApp(server(), org)
      const response = await post(`/rpc/public/svc.rpc.public.app.AppService/GetApp`, {
        headers: connectHeaders({ authorization: `Bearer ${org.key}` }),
        body: JSON.stringify({ appId: app.id })
      })
      const error = await expectConnectError(response, 401, "unauthenticated")
      expect(error.message).toMatch(/svc_api_key/)
    })
  })

  describe("RBACService", () => {
    it("lists, migrates (once) and lists again the SCIM group mappings", async () => {
      const org = await server().newOrg()
      const { mappings, roleId } = await newMappings(server(), org)
      const client = rpcClient(server().baseUrl, org.key)

      const before = await client.listScimGroupMappings({})
      expect(before).toEqual({
        mappings: mappings.map((mapping) => ({
          id: mapping.id,
          displayName: mapping.displayName,
          externalId: mapping.externalId,
          roleId,
          targetMode: "role"
        }))
      })
      expect(await client.migrateAllScimGroupMappings({})).toEqual({ migratedMappingCount: 2 })
      expect(await client.migrateAllScimGroupMappings({})).toEqual({ migratedMappingCount: 0 })

      const after = (await rpcClient(server().baseUrl, org.key, { prefix: false }).listScimGroupMappings({}))
        .mappings as Array<Record<string, unknown>>
      expect(after).toHaveLength(2)
      for (const mapping of after) {
        expect(mapping).toEqual({
          id: expect.any(String),
          displayName: expect.any(String),
          externalId: expect.any(String),
          groupId: expect.any(String),
          targetMode: "group"
        })
      }
      // Both SCIM groups carry the same role and members: one group serves both.
      expect(after[0]!.groupId).toBe(after[1]!.groupId)
    })

    it("needs organization:write to migrate and organization:read to list; other organizations see nothing", async () => {
      const org = await server().newOrg()
      await newMappings(server(), org)
      const member = await newMember(server(), org)
      const base = server().baseUrl
      expect(await connectCode(rpcClient(base, member.key).migrateAllScimGroupMappings({}))).toMatchObject({
        code: Code.PermissionDenied
      })
      expect(await connectCode(rpcClient(base, member.key).listScimGroupMappings({}))).toMatchObject({
        code: Code.PermissionDenied
      })
      // The refused migration moved nothing.
      const listed = await rpcClient(base, org.key).listScimGroupMappings({})
      expect((listed.mappings as Array<{ targetMode: string }>).map((m) => m.targetMode)).toEqual(["role", "role"])

      const other = await server().newOrg("Other")
      expect(await rpcClient(base, other.key).listScimGroupMappings({})).toEqual({ mappings: [] })
      expect(await rpcClient(base, other.key).migrateAllScimGroupMappings({})).toEqual({ migratedMappingCount: 0 })
      expect(await connectCode(rpcClient(base, undefined).migrateAllScimGroupMappings({}))).toMatchObject({
        code: Code.Unauthenticated
      })
    })

    it("WhoAmI tells the caller who it is and what it may do", async () => {
      const org = await server().newOrg()
      const admin = await rpcClient(server().baseUrl, org.key).whoAmI({})
      expect(admin).toMatchObject({
        organizationId: org.organizationId,
        memberId: org.memberId,
        isServiceAccount: false,
        authMethod: "api_key",
        fullMemberAccess: true,
        isAdmin: true
      })
      expect(admin.apiKeyId).toEqual(expect.any(String))
      expect(admin.permissions).toContain("organization:write")
      expect(admin.roles).toEqual([expect.objectContaining({ name: "admin", isSystem: true })])

      const member = await newMember(server(), org)
      const me = await rpcClient(server().baseUrl, member.key).whoAmI({})
      expect(me).toMatchObject({ memberId: member.memberId, isAdmin: false })
      expect(me.permissions).not.toContain("organization:write")
    })
  })

  describe("POST /v1/agents/webhook/trigger", () => {
    it("queues a run of the agent over a real Connect client, with an API key or a JWT", async () => {
      const org = await server().newOrg()
      const agent = await newAgent(server(), org)
      const trigger = webhookClient(server().baseUrl, org.key)
      expect(await trigger({ triggerId: agent.webhook_trigger_id, payload: { order: 42, tags: ["a"] } }))
        .toEqual({ status: "queued" })
      expect(await webhookClient(server().baseUrl, await sessionToken(org))({ triggerId: agent.webhook_trigger_id }))
        .toEqual({ status: "queued" })
      const after = await queued(server(), org, agent.id)
      expect(after.jobs).toBe(2)
      expect(after.runs).toHaveLength(2)
      expect(after.runs.map((run) => run.trigger_source)).toEqual(["webhook", "webhook"])
    })

    it("refuses missing credentials, unknown triggers, other organizations and keys without agent:write", async () => {
      const org = await server().newOrg()
      const agent = await newAgent(server(), org)
      const other = await server().newOrg("Other")
      const narrow = await scopedKey(server(), org, ["agent:read"])
      const base = server().baseUrl
      const request = { triggerId: agent.webhook_trigger_id }
      expect(await connectCode(webhookClient(base, undefined)(request))).toMatchObject({ code: Code.Unauthenticated })
      expect(await connectCode(webhookClient(base, "not a key")(request))).toEqual({
        code: Code.Unauthenticated,
        message: "invalid API key format"
      })
      expect(await connectCode(webhookClient(base, other.key)(request))).toMatchObject({ code: Code.NotFound })
      expect(await connectCode(webhookClient(base, org.key)({ triggerId: crypto.randomUUID() }))).toMatchObject({
        code: Code.NotFound
      })
      expect(await connectCode(webhookClient(base, narrow.key)(request))).toMatchObject({
        code: Code.PermissionDenied
      })
      expect(await connectCode(webhookClient(base, org.key)({ triggerId: "nope" }))).toMatchObject({
        code: Code.InvalidArgument
      })
      expect(await queued(server(), org, agent.id)).toEqual({ runs: [], jobs: 0 })
    })

    it("accepts a payload of exactly 16 KB and refuses one byte more before anything is queued", async () => {
      const org = await server().newOrg()
      const agent = await newAgent(server(), org)
      // `{"a":""}` is 8 bytes; the limit counts the compact serialization.
      const payload = (bytes: number) => ({ a: "x".repeat(bytes - 8) })
      const send = (p: unknown) =>
        post("/v1/agents/webhook/trigger", {
          headers: connectHeaders({ authorization: `Bearer ${org.key}` }),
          // Pretty-printed: whitespace does not count against the limit.
          body: JSON.stringify({ triggerId: agent.webhook_trigger_id, payload: p }, null, 2)
        })
      const tooBig = await send(payload(16 * 1024 + 1))
      const error = await expectConnectError(tooBig, 400, "invalid_argument")
      expect(error.message).toMatch(/16385 bytes.*at most 16384/)
      expect(await queued(server(), org, agent.id)).toEqual({ runs: [], jobs: 0 })

      const exact = await send(payload(16 * 1024))
      expect(exact.status).toBe(200)
      expect(await body(exact)).toEqual({ status: "queued" })
      expect((await queued(server(), org, agent.id)).jobs).toBe(1)

      // Through the real client too.
      expect(
        await connectCode(
          webhookClient(server().baseUrl, org.key)({ triggerId: agent.webhook_trigger_id, payload: payload(20_000) })
        )
      ).toMatchObject({ code: Code.InvalidArgument })
      expect((await queued(server(), org, agent.id)).jobs).toBe(1)
    })
  })

  describe("protocol", () => {
    it("requires Connect-Protocol-Version: 1", async () => {
      const org = await server().newOrg()
      const path = "/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI"
      const missing = await post(path, { headers: { "content-type": "application/json", svc_api_key: org.key } })
      expect((await expectConnectError(missing, 400, "invalid_argument")).message).toMatch(/Connect-Protocol-Version/)
      const wrong = await post(path, {
        headers: connectHeaders({ "connect-protocol-version": "2", svc_api_key: org.key })
      })
      await expectConnectError(wrong, 400, "invalid_argument")
      const webhook = await post("/v1/agents/webhook/trigger", {
        headers: { "content-type": "application/json", authorization: `Bearer ${org.key}` },
        body: JSON.stringify({ triggerId: crypto.randomUUID() })
      })
      await expectConnectError(webhook, 400, "invalid_argument")
    })

    it("takes JSON only: other content types get 415", async () => {
      const org = await server().newOrg()
      const path = "/svc.rpc.public.rbac.RBACService/WhoAmI"
      for (const contentType of ["text/plain", "application/proto", "application/json; charset=latin1"]) {
        const response = await post(path, {
          headers: connectHeaders({ "content-type": contentType, svc_api_key: org.key })
        })
        expect(response.headers.get("accept-post")).toBe("application/json")
        await expectConnectError(response, 415, "invalid_argument")
      }
      const charset = await post(path, {
        headers: connectHeaders({ "content-type": "application/json; charset=utf-8", svc_api_key: org.key })
      })
      expect(charset.status).toBe(200)
      const gzip = await post(path, { headers: connectHeaders({ "content-encoding": "gzip", svc_api_key: org.key }) })
      await expectConnectError(gzip, 501, "unimplemented")
    })

    it("validates Connect-Timeout-Ms", async () => {
      const org = await server().newOrg()
      const path = "/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI"
      for (const timeout of ["abc", "0", "-5", "1.5", "12345678901", ""]) {
        const response = await post(path, {
          headers: connectHeaders({ "connect-timeout-ms": timeout, svc_api_key: org.key })
        })
        const error = await expectConnectError(response, 400, "invalid_argument")
        expect(error.message).toMatch(/Connect-Timeout-Ms/)
      }
      const tenDigits = await post(path, {
        headers: connectHeaders({ "connect-timeout-ms": "9999999999", svc_api_key: org.key })
      })
      expect(tenDigits.status).toBe(200)
    })

    it("answers deadline_exceeded (504) when the deadline passes, and a generous deadline succeeds", async () => {
      const org = await server().newOrg()
      const agent = await newAgent(server(), org)
      // The body never arrives, so the operation is still running when the 50 ms deadline passes.
      const late = await requestWithoutBody(
        `${server().baseUrl}/v1/agents/webhook/trigger`,
        connectHeaders({ authorization: `Bearer ${org.key}`, "connect-timeout-ms": "50" })
      )
      expect(late.status).toBe(504)
      expect(JSON.parse(late.body)).toEqual({ code: "deadline_exceeded", message: expect.any(String), details: [] })
      expect(await queued(server(), org, agent.id)).toEqual({ runs: [], jobs: 0 })

      // The real client sends its timeout as Connect-Timeout-Ms.
      expect(
        await webhookClient(server().baseUrl, org.key)({ triggerId: agent.webhook_trigger_id }, { timeoutMs: 30_000 })
      ).toEqual({ status: "queued" })
      expect((await queued(server(), org, agent.id)).jobs).toBe(1)
    })

    it("refuses malformed JSON and bodies over 1 MiB with invalid_argument, not the /v2 envelope", async () => {
      const org = await server().newOrg()
      const agent = await newAgent(server(), org)
      const headers = connectHeaders({ authorization: `Bearer ${org.key}` })
      const malformed = await post("/v1/agents/webhook/trigger", { headers, body: "{not json" })
      expect((await expectConnectError(malformed, 400, "invalid_argument")).message).toMatch(/malformed JSON/)
      const notObject = await post("/v1/agents/webhook/trigger", { headers, body: "[1, 2]" })
      await expectConnectError(notObject, 400, "invalid_argument")
      const huge = await post("/v1/agents/webhook/trigger", {
        headers,
        body: JSON.stringify({ triggerId: agent.webhook_trigger_id, payload: { a: "x".repeat(1024 * 1024) } })
      })
      await expectConnectError(huge, 400, "invalid_argument")
      expect(await queued(server(), org, agent.id)).toEqual({ runs: [], jobs: 0 })
    })

    it("answers other methods with 405 and unknown procedures with unimplemented", async () => {
      const org = await server().newOrg()
      for (const path of ["/v1/agents/webhook/trigger", "/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI"]) {
        const get = await server().request(path, { headers: connectHeaders({ svc_api_key: org.key }) })
        expect(get.headers.get("allow")).toBe("POST")
        await expectConnectError(get, 405, "unimplemented")
      }
      const put = await server().request("/svc.rpc.public.app.AppService/GetApp", {
        method: "PUT",
        headers: connectHeaders({ svc_api_key: org.key }),
        body: "{}"
      })
      await expectConnectError(put, 405, "unimplemented")
      for (const path of ["/rpc/public/svc.rpc.public.rbac.RBACService/Nope", "/svc.rpc.public.nope.Service/Call"]) {
        const unknown = await post(path, { headers: connectHeaders({ svc_api_key: org.key }) })
        await expectConnectError(unknown, 501, "unimplemented")
      }
    })

    it("leaves the /v2 envelope to everything outside the Connect paths", async () => {
      const org = await server().newOrg()
      const response = await post("/rpc/publicity", { headers: connectHeaders({ svc_api_key: org.key }) })
      expect(response.status).toBe(404)
      expect(await body(response)).toEqual({ error: { code: "not_found", message: expect.any(String) } })
    })

    it("takes an empty body as the empty message", async () => {
      const org = await server().newOrg()
      const response = await post("/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI", {
        headers: connectHeaders({ svc_api_key: org.key }),
        body: ""
      })
      expect(response.status).toBe(200)
      expect(await body(response)).toMatchObject({ memberId: org.memberId })
    })
  })
}, { jwt: { keys: { _tag: "Secret", secret: Redacted.make(jwtSecret) } } })

describeServers("Connect surfaces under the rate limit", (server) => {
  it("spends the organization's tokens and answers resource_exhausted (429) with Retry-After", async () => {
    const org = await server().newOrg()
    const client = rpcClient(server().baseUrl, org.key)
    // The bucket holds 2 tokens: the third call in the same minute is refused.
    await client.whoAmI({})
    await client.whoAmI({})
    expect(await connectCode(client.whoAmI({}))).toMatchObject({ code: Code.ResourceExhausted })
    const raw = await server().request("/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI", {
      method: "POST",
      headers: connectHeaders({ svc_api_key: org.key }),
      body: "{}"
    })
    expect(Number(raw.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    await expectConnectError(raw, 429, "resource_exhausted")
    // Another organization has its own bucket.
    const other = await server().newOrg("Other")
    expect(await rpcClient(server().baseUrl, other.key).whoAmI({})).toMatchObject({ memberId: other.memberId })
  })
}, { rateLimitPerMinute: 2 })
