import { expect, it } from "@effect/vitest"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import { MemberId, RoleId } from "@sightline/core/Ids"
import * as Effect from "effect/Effect"
import { newMember } from "./utils/members.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const NOT_FOUND = { error: { code: "unauthenticated", message: "invalid API key: API key not found" } }

/** A personal key of `memberId` scoped to `roleIds`, minted in a session of that member. */
const keyScopedTo = (server: TestServer, org: Org, memberId: string, roleIds: ReadonlyArray<string>) =>
  server.run(Effect.gen(function*() {
    const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
    const session = yield* (yield* Auth.Auth).sessionPrincipal(admin.organizationId, MemberId.make(memberId))
    const { key } = yield* (yield* ApiKeys.ApiKeys).create(session, {
      assumedRoles: roleIds.map((id) => RoleId.make(id))
    })
    return key
  }))

describeServers("/v2/api-keys and /v2/audit-logs", (server) => {
  it("mints, lists, rotates and revokes keys; never shows a secret again", async () => {
    const org = await server().newOrg()
    const created = await server().request("/v2/api-keys", {
      method: "POST",
      key: org.key,
      json: { inheritAllRoles: true, name: "ci", expirySeconds: 3600, clientId: "{\"tenant\":\"t1\"}" }
    })
    expect(created.status).toBe(201)
    const { api_key, key } = await body(created)
    expect(typeof key).toBe("string")
    expect(Buffer.from(key, "base64")).toHaveLength(32)
    expect(api_key).toMatchObject({
      member_id: org.memberId,
      name: "ci",
      client_id: "{\"tenant\":\"t1\"}",
      status: "active"
    })
    expect(Date.parse(api_key.expires_at) - Date.parse(api_key.created_at)).toBe(3600_000)
    expect((await server().request("/v2/playbooks", { key })).status).toBe(200)

    const listed = await server().request("/v2/api-keys", { key: org.key })
    expect(listed.status).toBe(200)
    const text = await listed.text()
    expect(text).not.toContain(key)
    expect(text).not.toMatch(/secret|hash/)
    expect(JSON.parse(text).api_keys.map((k: any) => k.id)).toContain(api_key.id)

    const rotated = await server().request(`/v2/api-keys/${api_key.id}/rotate`, { method: "POST", key: org.key })
    expect(rotated.status).toBe(200)
    const rotation = await body(rotated)
    expect(rotation.revoked_api_key_id).toBe(api_key.id)
    expect(rotation.api_key).toMatchObject({ name: "ci", client_id: "{\"tenant\":\"t1\"}", status: "active" })
    // The rotated-away key is refused at once; the new one works.
    expect(await body(await server().request("/v2/playbooks", { key }))).toEqual(NOT_FOUND)
    expect((await server().request("/v2/playbooks", { key: rotation.key })).status).toBe(200)

    const revoked = await server().request(`/v2/api-keys/${rotation.api_key.id}`, { method: "DELETE", key: org.key })
    expect(revoked.status).toBe(200)
    expect(await body(revoked)).toEqual({ id: rotation.api_key.id, success: true })
    const refused = await server().request("/v2/playbooks", { key: rotation.key })
    expect(refused.status).toBe(401)
    expect(await body(refused)).toEqual(NOT_FOUND)
    const twice = await server().request(`/v2/api-keys/${rotation.api_key.id}`, { method: "DELETE", key: org.key })
    expect(twice.status).toBe(400)

    const withRevoked = await body(await server().request("/v2/api-keys?include_revoked=true", { key: org.key }))
    const statuses = Object.fromEntries(withRevoked.api_keys.map((k: any) => [k.id, k.status]))
    expect(statuses[api_key.id]).toBe("revoked")
    expect(statuses[rotation.api_key.id]).toBe("revoked")
  })

  it("a key minted by a key with a clientId keeps it, never outlives its parent, and dies with it", async () => {
    const org = await server().newOrg()
    const mint = (key: string, json: unknown) => server().request("/v2/api-keys", { method: "POST", key, json })
    const parent = await body(
      await mint(org.key, { inheritAllRoles: true, clientId: "{\"region\":\"EU\"}", expirySeconds: 3600 })
    )
    // Swapped or shed: 403.
    for (const clientId of ["{\"region\":\"US\"}", "{}"]) {
      const refused = await mint(parent.key, { inheritAllRoles: true, clientId })
      expect(refused.status).toBe(403)
      expect((await body(refused)).error.code).toBe("permission_denied")
    }
    const child = await body(await mint(parent.key, { inheritAllRoles: true, expirySeconds: 10 * 365 * 24 * 3600 }))
    expect(child.api_key.client_id).toBe("{\"region\":\"EU\"}")
    expect(child.api_key.expires_at).toBe(parent.api_key.expires_at)
    expect((await server().request("/v2/members/me", { key: child.key })).status).toBe(200)
    const revoked = await server().request(`/v2/api-keys/${parent.api_key.id}`, { method: "DELETE", key: org.key })
    expect(revoked.status).toBe(200)
    const after = await server().request("/v2/members/me", { key: child.key })
    expect(after.status).toBe(401)
    expect(await body(after)).toEqual(NOT_FOUND)
  })

  it("validates the create body and the list query", async () => {
    const org = await server().newOrg()
    for (
      const json of [{}, { inheritAllRoles: true, clientId: "not json" }, { inheritAllRoles: true, expirySeconds: -5 }]
    ) {
      const response = await server().request("/v2/api-keys", { method: "POST", key: org.key, json })
      expect(response.status).toBe(400)
      expect((await body(response)).error.code).toBe("invalid_request")
    }
    expect((await server().request("/v2/api-keys?scope=everyone", { key: org.key })).status).toBe(400)
    expect((await server().request("/v2/api-keys?page_token=forged", { key: org.key })).status).toBe(400)
  })

  it("lets members manage only their own keys", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const mine = await body(
      await server().request("/v2/api-keys", { method: "POST", key: member.key, json: { inheritAllRoles: true } })
    )
    const admins = await body(
      await server().request("/v2/api-keys", { method: "POST", key: org.key, json: { inheritAllRoles: true } })
    )
    expect((await server().request("/v2/api-keys?scope=all", { key: member.key })).status).toBe(403)
    // Another member's key is invisible to a caller that cannot list it: not found, not forbidden.
    const revokeOther = await server().request(`/v2/api-keys/${admins.api_key.id}`, {
      method: "DELETE",
      key: member.key
    })
    expect(revokeOther.status).toBe(404)
    const own = await server().request(`/v2/api-keys/${mine.api_key.id}/rotate`, { method: "POST", key: member.key })
    expect(own.status).toBe(200)
    // An admin (organization:write) may revoke anyone's key.
    const byAdmin = await server().request(`/v2/api-keys/${(await body(own)).api_key.id}`, {
      method: "DELETE",
      key: org.key
    })
    expect(byAdmin.status).toBe(200)

    const other = await server().newOrg("Other")
    for (
      const [method, path] of [["POST", `/v2/api-keys/${admins.api_key.id}/rotate`], [
        "DELETE",
        `/v2/api-keys/${admins.api_key.id}`
      ]] as const
    ) {
      const response = await server().request(path, { method, key: other.key })
      expect(response.status).toBe(404)
    }
  })

  it("applies the key model on every request", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const writers = await body(
      await server().request("/v2/roles", {
        method: "POST",
        key: org.key,
        json: { name: "Writers", permissions: ["playbook:read", "playbook:write"] }
      })
    )
    await server().request(`/v2/members/${member.memberId}/roles`, {
      method: "POST",
      key: org.key,
      json: { roleId: writers.id }
    })
    const scoped = await keyScopedTo(server(), org, member.memberId, [writers.id])

    // The scoped key may do what Writers grants, and is refused what it lacks (the member's own
    // key, holding the `member` role, may read the members list).
    expect((await server().request("/v2/playbooks", { method: "POST", key: scoped })).status).toBe(201)
    expect((await server().request("/v2/members", { key: member.key })).status).toBe(200)
    const lacking = await server().request("/v2/members", { key: scoped })
    expect(lacking.status).toBe(403)
    expect((await body(lacking)).error.code).toBe("permission_denied")

    // A key may only be minted with roles its caller holds.
    const widened = await server().request("/v2/api-keys", {
      method: "POST",
      key: scoped,
      json: { assumedRoles: [(await body(await server().request("/v2/roles", { key: org.key }))).roles[0].id] }
    })
    expect(widened.status).toBe(403)

    // Removing the role from the owner removes it from the key at once.
    const removed = await server().request(`/v2/members/${member.memberId}/roles/${writers.id}`, {
      method: "DELETE",
      key: org.key
    })
    expect(removed.status).toBe(200)
    const afterRemoval = await server().request("/v2/playbooks", { method: "POST", key: scoped })
    expect(afterRemoval.status).toBe(403)
    // Granting it again later does not widen the old key's snapshot beyond what it had.
    await server().request(`/v2/members/${member.memberId}/roles`, {
      method: "POST",
      key: org.key,
      json: { roleId: writers.id }
    })
    expect((await server().request("/v2/playbooks", { method: "POST", key: scoped })).status).toBe(201)

    // Soft-deleting the member stops every key it owns at once.
    expect((await server().request(`/v2/members/${member.memberId}`, { method: "DELETE", key: org.key })).status).toBe(
      200
    )
    for (const key of [scoped, member.key]) {
      const response = await server().request("/v2/playbooks", { key })
      expect(response.status).toBe(401)
      expect(await body(response)).toEqual(NOT_FOUND)
    }
  })

  it("records key and role changes in the audit log, readable with organization:read", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const minted = await body(
      await server().request("/v2/api-keys", { method: "POST", key: org.key, json: { inheritAllRoles: true } })
    )
    await server().request(`/v2/api-keys/${minted.api_key.id}`, { method: "DELETE", key: org.key })

    const response = await server().request("/v2/audit-logs?page_size=2", { key: org.key })
    expect(response.status).toBe(200)
    const page = await body(response)
    expect(page.entries.map((e: any) => e.action)).toEqual(["api_key.revoke", "api_key.create"])
    expect(page.entries[0]).toMatchObject({
      actor_id: org.memberId,
      resource_type: "api_key",
      resource_id: minted.api_key.id,
      auth_method: "api_key"
    })
    expect(typeof page.next_cursor).toBe("string")
    const next = await body(
      await server().request(`/v2/audit-logs?page_size=2&cursor=${encodeURIComponent(page.next_cursor)}`, {
        key: org.key
      })
    )
    expect(next.entries.length).toBeGreaterThan(0)
    const filtered = await body(await server().request("/v2/audit-logs?action=api_key.create", { key: org.key }))
    expect(filtered.entries.every((e: any) => e.action === "api_key.create")).toBe(true)

    expect((await server().request("/v2/audit-logs", { key: member.key })).status).toBe(403)
    expect((await server().request("/v2/audit-logs?action=nope", { key: org.key })).status).toBe(400)
    const other = await server().newOrg("Other")
    const foreign = await body(await server().request("/v2/audit-logs", { key: other.key }))
    expect(foreign.entries.map((e: any) => e.resource_id)).not.toContain(minted.api_key.id)
  })
})
