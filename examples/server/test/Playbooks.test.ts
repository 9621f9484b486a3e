import { describe, expect, it } from "@effect/vitest"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers } from "./utils/server.js"

describeServers("/v2/playbooks", (server) => {
  it("creates, lists, gets, updates, deploys and deletes a playbook", async () => {
    const { key } = await server().newOrg()
    const created = await server().request("/v2/playbooks", { method: "POST", key })
    expect(created.status).toBe(201)
    const playbook = await body(created)
    expect(playbook).toMatchObject({ status: "draft", connector_ids: [] })

    const updated = await server().request(`/v2/playbooks/${playbook.id}`, {
      method: "PATCH",
      key,
      json: { name: "Weekly revenue", prompt: "Summarize revenue", cron_string: "0 9 * * 1" }
    })
    expect(updated.status).toBe(200)
    expect(await body(updated)).toMatchObject({ name: "Weekly revenue", cron_string: "0 9 * * 1" })

    const list = await body(await server().request("/v2/playbooks?limit=10", { key }))
    expect(list.total_count).toBe(1)
    expect(list.playbooks[0].id).toBe(playbook.id)

    const got = await body(await server().request(`/v2/playbooks/${playbook.id}`, { key }))
    expect(got).toMatchObject({ playbook: { id: playbook.id }, reports: [], total_reports_count: 0 })

    const deployed = await body(await server().request(`/v2/playbooks/${playbook.id}/deploy`, { method: "POST", key }))
    expect(deployed.playbook_id).toBe(playbook.id)
    expect(typeof deployed.deployed_at).toBe("string")

    const deleted = await server().request(`/v2/playbooks/${playbook.id}`, { method: "DELETE", key })
    expect(deleted.status).toBe(200)
    const gone = await server().request(`/v2/playbooks/${playbook.id}`, { key })
    expect(gone.status).toBe(404)
    expect(await body(gone)).toEqual({ error: { code: "not_found", message: "Resource not found" } })
  })

  it("answers the envelope for bad input", async () => {
    const { key } = await server().newOrg()
    const badLimit = await server().request("/v2/playbooks?limit=0", { key })
    expect(badLimit.status).toBe(400)
    expect((await body(badLimit)).error.code).toBe("invalid_request")

    const created = await body(await server().request("/v2/playbooks", { method: "POST", key }))
    const malformed = await server().request(`/v2/playbooks/${created.id}`, {
      method: "PATCH",
      key,
      headers: { "content-type": "application/json" },
      body: "{not json"
    })
    expect(malformed.status).toBe(400)
    expect((await body(malformed)).error.code).toBe("invalid_request")

    const notUuid = await server().request("/v2/playbooks/nope", { key })
    expect(notUuid.status).toBe(400)

    const unknown = await server().request("/v2/nothing-here", { key })
    expect(unknown.status).toBe(404)
    expect((await body(unknown)).error.code).toBe("not_found")
  })

  it("refuses missing and malformed credentials with the seed's messages", async () => {
    const none = await server().request("/v2/playbooks")
    expect(none.status).toBe(401)
    expect((await body(none)).error.code).toBe("unauthenticated")
    const malformed = await server().request("/v2/playbooks", { key: "not a key" })
    expect(malformed.status).toBe(401)
    expect(await body(malformed)).toEqual({ error: { code: "unauthenticated", message: "invalid API key format" } })
  })

  it("refuses a key whose roles lack playbook:write, and edits by anyone but the creator", async () => {
    const org = await server().newOrg()
    const readOnly = await scopedKey(server(), org, ["playbook:read"])
    const denied = await server().request("/v2/playbooks", { method: "POST", key: readOnly.key })
    expect(denied.status).toBe(403)
    expect((await body(denied)).error.code).toBe("permission_denied")
    // The same owner's full key may: the key's role snapshot, not the member, decides.
    const created = await server().request("/v2/playbooks", { method: "POST", key: org.key })
    expect(created.status).toBe(201)
    const { id } = await body(created)
    const listed = await server().request("/v2/playbooks", { key: readOnly.key })
    expect(listed.status).toBe(200)

    const member = await newMember(server(), org)
    const edit = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key: member.key,
      json: { name: "x" }
    })
    expect(edit.status).toBe(403)
    expect((await body(edit)).error.code).toBe("permission_denied")
  })

  it("validates the update body", async () => {
    const { key } = await server().newOrg()
    const { id } = await body(await server().request("/v2/playbooks", { method: "POST", key }))
    for (const json of [{ cron_string: "every tuesday" }, { email_addresses: ["not-an-address"] }, { name: 42 }]) {
      const response = await server().request(`/v2/playbooks/${id}`, { method: "PATCH", key, json })
      expect(response.status).toBe(400)
      const error = (await body(response)).error
      expect(error.code).toBe("invalid_request")
      expect(error.message).toMatch(/^Invalid request: /)
    }
    const unknownConnector = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key,
      json: { connector_ids: [987654] }
    })
    expect(unknownConnector.status).toBe(400)
    expect((await body(unknownConnector)).error.code).toBe("invalid_request")
  })

  it("hides another organization's playbook (404)", async () => {
    const a = await server().newOrg("A")
    const b = await server().newOrg("B")
    const created = await body(await server().request("/v2/playbooks", { method: "POST", key: a.key }))
    for (
      const [method, path] of [
        ["GET", `/v2/playbooks/${created.id}`],
        ["PATCH", `/v2/playbooks/${created.id}`],
        ["DELETE", `/v2/playbooks/${created.id}`],
        ["POST", `/v2/playbooks/${created.id}/deploy`]
      ] as const
    ) {
      const foreign = await server().request(path, { method, key: b.key, ...(method === "PATCH" ? { json: {} } : {}) })
      expect(foreign.status).toBe(404)
      expect((await body(foreign)).error.code).toBe("not_found")
    }
    const list = await body(await server().request("/v2/playbooks", { key: b.key }))
    expect(list.total_count).toBe(0)
  })
})

describe("harness", () => {
  it("is loaded", () => expect(describeServers).toBeTypeOf("function"))
})
