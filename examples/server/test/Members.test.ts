import { expect, it } from "@effect/vitest"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers } from "./utils/server.js"

const roleIdNamed = async (request: (path: string, init?: any) => Promise<Response>, key: string, name: string) => {
  const { roles } = await body(await request("/v2/roles", { key }))
  return roles.find((r: any) => r.name === name).id as string
}

describeServers("/v2/members, /v2/roles, /v2/service-accounts", (server) => {
  it("lists, invites and deletes members", async () => {
    const org = await server().newOrg()
    const invited = await server().request("/v2/members/invite", {
      method: "POST",
      key: org.key,
      json: { email: "bob@acme.test", role: "member" }
    })
    expect(invited.status).toBe(200)
    const { member_id, success } = await body(invited)
    expect(success).toBe(true)

    const list = await body(await server().request("/v2/members", { key: org.key }))
    const bob = list.members.find((m: any) => m.id === member_id)
    expect(bob).toMatchObject({
      email: "bob@acme.test",
      roles: ["member"],
      is_admin: false,
      is_service_account: false,
      is_scim_managed: false
    })
    expect(typeof bob.created_at).toBe("string")

    const duplicate = await server().request("/v2/members/invite", {
      method: "POST",
      key: org.key,
      json: { email: "bob@acme.test", role: "member" }
    })
    expect(duplicate.status).toBe(409)
    expect((await body(duplicate)).error.code).toBe("conflict")

    const badRole = await server().request("/v2/members/invite", {
      method: "POST",
      key: org.key,
      json: { email: "carol@acme.test", role: "owner" }
    })
    expect(badRole.status).toBe(400)

    const deleted = await server().request(`/v2/members/${member_id}`, { method: "DELETE", key: org.key })
    expect(deleted.status).toBe(200)
    expect(await body(deleted)).toEqual({ id: member_id, success: true })
    const after = await body(await server().request("/v2/members", { key: org.key }))
    expect(after.members.map((m: any) => m.id)).not.toContain(member_id)
    const again = await server().request(`/v2/members/${member_id}`, { method: "DELETE", key: org.key })
    expect(again.status).toBe(404)
    const hard = await server().request(`/v2/members/${member_id}?hard_delete=true`, { method: "DELETE", key: org.key })
    expect(hard.status).toBe(200)

    const self = await server().request(`/v2/members/${org.memberId}`, { method: "DELETE", key: org.key })
    expect(self.status).toBe(400)
    expect((await body(self)).error.code).toBe("invalid_request")
  })

  it("keeps the last admin: taking admin from them is a conflict", async () => {
    const org = await server().newOrg()
    const adminRole = await roleIdNamed(server().request, org.key, "admin")
    const response = await server().request(`/v2/members/${org.memberId}/roles/${adminRole}`, {
      method: "DELETE",
      key: org.key
    })
    expect(response.status).toBe(409)
    expect((await body(response)).error.code).toBe("conflict")
  })

  it("creates, updates, assigns and deletes roles", async () => {
    const org = await server().newOrg()
    const created = await server().request("/v2/roles", {
      method: "POST",
      key: org.key,
      json: { name: "Analysts", description: "Read data", permissions: ["chat:read", "chat:write"] }
    })
    expect(created.status).toBe(201)
    const role = await body(created)
    expect(role).toMatchObject({
      name: "Analysts",
      description: "Read data",
      is_system: false,
      is_scim_managed: false,
      permissions: ["chat:read", "chat:write"]
    })
    expect(role).not.toHaveProperty("organization_id")

    const clash = await server().request("/v2/roles", { method: "POST", key: org.key, json: { name: "analysts" } })
    expect(clash.status).toBe(409)
    const badPermission = await server().request("/v2/roles", {
      method: "POST",
      key: org.key,
      json: { name: "Bad", permissions: ["everything:always"] }
    })
    expect(badPermission.status).toBe(400)

    const updated = await server().request(`/v2/roles/${role.id}`, {
      method: "PATCH",
      key: org.key,
      json: { description: "Reads data", allowed_model_ids: [1], default_model_id: 1 }
    })
    expect(updated.status).toBe(200)
    expect(await body(updated)).toMatchObject({
      description: "Reads data",
      allowed_model_ids: [1],
      default_model_id: 1
    })
    const unknownModel = await server().request(`/v2/roles/${role.id}`, {
      method: "PATCH",
      key: org.key,
      json: { allowed_model_ids: [999] }
    })
    expect(unknownModel.status).toBe(400)

    const member = await newMember(server(), org)
    const assigned = await server().request(`/v2/members/${member.memberId}/roles`, {
      method: "POST",
      key: org.key,
      json: { roleId: role.id }
    })
    expect(assigned.status).toBe(200)
    expect(await body(assigned)).toEqual({ member_id: member.memberId, role_id: role.id, success: true })
    const roles = await body(await server().request(`/v2/members/${member.memberId}/roles`, { key: org.key }))
    expect(roles.member_id).toBe(member.memberId)
    expect(roles.roles.map((r: any) => r.name).sort()).toEqual(["Analysts", "member"])
    const unassigned = await server().request(`/v2/members/${member.memberId}/roles/${role.id}`, {
      method: "DELETE",
      key: org.key
    })
    expect(unassigned.status).toBe(200)

    const deleted = await server().request(`/v2/roles/${role.id}`, { method: "DELETE", key: org.key })
    expect(deleted.status).toBe(200)
    const gone = await server().request(`/v2/roles/${role.id}`, { method: "PATCH", key: org.key, json: {} })
    expect(gone.status).toBe(404)
    const system = await server().request(`/v2/roles/${await roleIdNamed(server().request, org.key, "member")}`, {
      method: "DELETE",
      key: org.key
    })
    expect(system.status).toBe(400)
  })

  it("creates, lists and deletes service accounts, whose keys stop at once", async () => {
    const org = await server().newOrg()
    const memberRole = await roleIdNamed(server().request, org.key, "member")
    const created = await server().request("/v2/service-accounts", {
      method: "POST",
      key: org.key,
      json: { name: "ETL bot", description: "nightly loads", role_ids: [memberRole] }
    })
    expect(created.status).toBe(201)
    const account = await body(created)
    expect(Object.keys(account).sort()).toEqual(["email", "member_id"])

    const list = await body(await server().request("/v2/service-accounts", { key: org.key }))
    expect(list.service_accounts).toHaveLength(1)
    expect(list.service_accounts[0]).toMatchObject({ id: account.member_id, name: "ETL bot", roles: ["member"] })

    // An admin mints a key for the service account (organization:write and a service-account target).
    const minted = await server().request("/v2/api-keys", {
      method: "POST",
      key: org.key,
      json: { targetMemberId: account.member_id, inheritAllRoles: true, name: "etl" }
    })
    expect(minted.status).toBe(201)
    const { key } = await body(minted)
    expect((await server().request("/v2/playbooks", { key })).status).toBe(200)

    const deleted = await server().request(`/v2/service-accounts/${account.member_id}`, {
      method: "DELETE",
      key: org.key
    })
    expect(deleted.status).toBe(200)
    expect(await body(deleted)).toEqual({ success: true })
    const refused = await server().request("/v2/playbooks", { key })
    expect(refused.status).toBe(401)
    const human = await server().request(`/v2/service-accounts/${org.memberId}`, { method: "DELETE", key: org.key })
    expect(human.status).toBe(404)
  })

  it("refuses members without the permissions and hides other organizations", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg("Other")
    const member = await newMember(server(), org)
    const forbidden = [
      ["POST", "/v2/members/invite", { email: "x@acme.test", role: "member" }],
      ["POST", "/v2/roles", { name: "Nope" }],
      ["GET", "/v2/service-accounts", undefined],
      ["POST", "/v2/service-accounts", { name: "bot", role_ids: [] }],
      ["DELETE", `/v2/members/${org.memberId}`, undefined]
    ] as const
    for (const [method, path, json] of forbidden) {
      const response = await server().request(path, { method, key: member.key, ...(json ? { json } : {}) })
      expect([path, response.status]).toEqual([path, 403])
      expect((await body(response)).error.code).toBe("permission_denied")
    }
    // A key scoped to a role without role:read cannot even list roles.
    const scoped = await scopedKey(server(), org, ["chat:read"])
    expect((await server().request("/v2/roles", { key: scoped.key })).status).toBe(403)

    const role = await body(await server().request("/v2/roles", { method: "POST", key: org.key, json: { name: "R" } }))
    const foreign = [
      ["DELETE", `/v2/members/${member.memberId}`, undefined],
      ["GET", `/v2/members/${member.memberId}/roles`, undefined],
      ["POST", `/v2/members/${member.memberId}/roles`, { roleId: role.id }],
      ["DELETE", `/v2/members/${member.memberId}/roles/${role.id}`, undefined],
      ["PATCH", `/v2/roles/${role.id}`, { name: "Mine" }],
      ["DELETE", `/v2/roles/${role.id}`, undefined],
      ["DELETE", `/v2/service-accounts/${member.memberId}`, undefined]
    ] as const
    for (const [method, path, json] of foreign) {
      const response = await server().request(path, { method, key: other.key, ...(json ? { json } : {}) })
      expect([path, response.status]).toEqual([path, 404])
      expect((await body(response)).error.code).toBe("not_found")
    }
    // Assigning another organization's role to one's own member is not found either.
    const own = await newMember(server(), other)
    const crossRole = await server().request(`/v2/members/${own.memberId}/roles`, {
      method: "POST",
      key: other.key,
      json: { roleId: role.id }
    })
    expect(crossRole.status).toBe(404)
  })
})

describeServers("sign-in links cannot take over a stronger member", (server) => {
  it("a member manager that is no admin gets 403 for the admin's reset link, and for anyone stronger", async () => {
    const org = await server().newOrg()
    const { key } = await scopedKey(server(), org, ["member:read", "member:write"])
    const invited = await body(
      await server().request("/v2/members/invite", {
        method: "POST",
        key,
        json: { email: "eve@acme.test", role: "member" }
      })
    )
    expect(invited.member_id).toEqual(expect.any(String))
    const link = (id: string) =>
      server().request(`/v2/members/${id}/sign-in-link`, { method: "POST", key, json: { purpose: "reset" } })
    const toAdmin = await link(org.memberId)
    expect(toAdmin.status).toBe(403)
    expect(await body(toAdmin)).toEqual({ error: { code: "permission_denied", message: "admin role required" } })
    // A plain member holds permissions (chat:write, ...) that this key lacks: refused as well.
    expect((await link(invited.member_id)).status).toBe(403)
    // The admin, who holds everything, may.
    const byAdmin = await server().request(`/v2/members/${invited.member_id}/sign-in-link`, {
      method: "POST",
      key: org.key,
      json: { purpose: "reset" }
    })
    expect(byAdmin.status).toBe(200)
    expect((await body(byAdmin)).token).toEqual(expect.any(String))
  })
})

describeServers("sign-in links under a configured public URL", (server) => {
  it("an invite's link and a new link use the configured base, not the request's Host", async () => {
    const org = await server().newOrg()
    const invited = await body(
      await server().request("/v2/members/invite", {
        method: "POST",
        key: org.key,
        json: { email: "dana@acme.test", role: "member" }
      })
    )
    expect(invited.sign_in_url).toBe(`https://analytics.example.test/app/#/set-password/${invited.sign_in_token}`)
    const link = await body(
      await server().request(`/v2/members/${invited.member_id}/sign-in-link`, {
        method: "POST",
        key: org.key,
        json: { purpose: "invite" }
      })
    )
    expect(link.url).toBe(`https://analytics.example.test/app/#/set-password/${link.token}`)
  })
}, { publicUrl: "https://analytics.example.test/app" })
