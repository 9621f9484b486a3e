import { expect, it } from "@effect/vitest"
import { seedChange, statuses } from "./utils/content.js"
import { newMember, scopedKey } from "./utils/members.js"
import { body, describeServers } from "./utils/server.js"

const post = (path: string, json: unknown) => ["POST", path, json] as const

describeServers("/v2 changes", (server) => {
  it("lists changes with per-status counts and reads one with its diffs and the caller's capabilities", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    expect(open.status).toBe("open")

    const response = await server().request("/v2/changes?status=open", { key: org.key })
    expect(response.status).toBe(200)
    const list = await body(response)
    expect(list.changes.map((c: any) => [c.id, c.status, c.title])).toEqual([[open.id, "open", "Revenue by region"]])
    expect(list.counts).toEqual({ reserved: 0, draft: 0, open: 1, approved: 1, denied: 0 })
    expect(list).not.toHaveProperty("next_page_token")
    const both = await body(await server().request("/v2/changes?status=open&status=approved", { key: org.key }))
    expect(both.changes).toHaveLength(2)
    const paged = await body(
      await server().request("/v2/changes?status=open&status=approved&page_size=1", {
        key: org.key
      })
    )
    expect(paged.changes).toHaveLength(1)
    expect(typeof paged.next_page_token).toBe("string")

    const got = await server().request(`/v2/changes/${open.id}`, { key: org.key })
    expect(got.status).toBe(200)
    const change = await body(got)
    expect(change).toMatchObject({
      id: open.id,
      number: expect.any(Number),
      author_id: org.memberId,
      status: "open",
      git_ref: open.gitRef,
      revision: 1,
      title: "Revenue by region",
      description: "Revenue by region.",
      approval_count: 0,
      required_approvals: 1
    })
    expect(change.diffs).toEqual([
      expect.objectContaining({ new_path: "sql/revenue.sql", additions: 1, deletions: 1 })
    ])
    expect(change.capabilities).toEqual({
      can_approve: true,
      can_deny: true,
      can_restore: false,
      caller_approved: false
    })
    const revision = await server().request(`/v2/changes/${open.id}?revision=1`, { key: org.key })
    expect((await body(revision)).revision).toBe(1)
  })

  it("approves a change, which merges it; a second review action is a conflict", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    const approved = await server().request(`/v2/changes/${open.id}/approve`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(approved.status).toBe(200)
    expect(await body(approved)).toEqual({
      merged: true,
      approval_count: 1,
      required_approvals: 1,
      already_approved: false
    })
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("approved")
    const ref = { expected_git_ref: open.gitRef }
    expect(
      await statuses(server(), org.key, [
        post(`/v2/changes/${open.id}/approve`, ref),
        post(`/v2/changes/${open.id}/deny`, ref),
        post(`/v2/changes/${open.id}/restore`, ref)
      ])
    ).toEqual([
      ["POST", `/v2/changes/${open.id}/approve`, 409, "conflict"],
      ["POST", `/v2/changes/${open.id}/deny`, 409, "conflict"],
      ["POST", `/v2/changes/${open.id}/restore`, 409, "conflict"]
    ])
  })

  it("denies and restores a change; restore of a change that is not denied is a conflict", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    const ref = { expected_git_ref: open.gitRef }
    expect(await statuses(server(), org.key, [post(`/v2/changes/${open.id}/restore`, ref)])).toEqual([
      ["POST", `/v2/changes/${open.id}/restore`, 409, "conflict"]
    ])
    const denied = await server().request(`/v2/changes/${open.id}/deny`, { method: "POST", key: org.key, json: ref })
    expect(denied.status).toBe(200)
    expect(await body(denied)).toEqual({ success: true })
    const after = await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))
    expect(after.status).toBe("denied")
    expect(after.capabilities).toMatchObject({ can_approve: false, can_deny: false, can_restore: true })
    expect(await statuses(server(), org.key, [post(`/v2/changes/${open.id}/approve`, ref)])).toEqual([
      ["POST", `/v2/changes/${open.id}/approve`, 409, "conflict"]
    ])

    const restored = await server().request(`/v2/changes/${open.id}/restore`, {
      method: "POST",
      key: org.key,
      json: ref
    })
    expect(restored.status).toBe(200)
    expect(await body(restored)).toEqual({ success: true })
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("open")
  })

  it("is 409 for a stale expected_git_ref on approve, deny and restore, and changes nothing", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    const stale = { expected_git_ref: "0".repeat(40) }
    const response = await server().request(`/v2/changes/${open.id}/approve`, {
      method: "POST",
      key: org.key,
      json: stale
    })
    expect(response.status).toBe(409)
    expect(await body(response)).toEqual({ error: { code: "conflict", message: expect.any(String) } })
    expect(await statuses(server(), org.key, [post(`/v2/changes/${open.id}/deny`, stale)])).toEqual([
      ["POST", `/v2/changes/${open.id}/deny`, 409, "conflict"]
    ])
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("open")
    await server().request(`/v2/changes/${open.id}/deny`, {
      method: "POST",
      key: org.key,
      json: { expected_git_ref: open.gitRef }
    })
    expect(await statuses(server(), org.key, [post(`/v2/changes/${open.id}/restore`, stale)])).toEqual([
      ["POST", `/v2/changes/${open.id}/restore`, 409, "conflict"]
    ])
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("denied")
  })

  it("is 400 for bad queries, ids and bodies; 401 without a valid key", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    expect(
      await statuses(server(), org.key, [
        ["GET", "/v2/changes?status=merged"],
        ["GET", "/v2/changes?page_size=0"],
        ["GET", "/v2/changes?page_size=101"],
        ["GET", `/v2/changes/${open.id}?revision=0`],
        ["GET", "/v2/changes/not-a-uuid"],
        post(`/v2/changes/${open.id}/approve`, {}),
        post(`/v2/changes/${open.id}/deny`, { expected_git_ref: 42 }),
        post("/v2/changes/not-a-uuid/restore", { expected_git_ref: open.gitRef })
      ])
    ).toEqual([
      ["GET", "/v2/changes?status=merged", 400, "invalid_request"],
      ["GET", "/v2/changes?page_size=0", 400, "invalid_request"],
      ["GET", "/v2/changes?page_size=101", 400, "invalid_request"],
      ["GET", `/v2/changes/${open.id}?revision=0`, 400, "invalid_request"],
      ["GET", "/v2/changes/not-a-uuid", 400, "invalid_request"],
      ["POST", `/v2/changes/${open.id}/approve`, 400, "invalid_request"],
      ["POST", `/v2/changes/${open.id}/deny`, 400, "invalid_request"],
      ["POST", "/v2/changes/not-a-uuid/restore", 400, "invalid_request"]
    ])
    const ref = { expected_git_ref: open.gitRef }
    const calls = [
      ["GET", "/v2/changes"],
      ["GET", `/v2/changes/${open.id}`],
      post(`/v2/changes/${open.id}/approve`, ref),
      post(`/v2/changes/${open.id}/deny`, ref),
      post(`/v2/changes/${open.id}/restore`, ref)
    ] as const
    for (const key of [undefined, "not-a-key"]) {
      expect(await statuses(server(), key, calls)).toEqual(
        calls.map(([method, path]) => [method, path, 401, "unauthenticated"])
      )
    }
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("open")
  })

  it("is 403 without change permissions or the right to review the folder", async () => {
    const org = await server().newOrg()
    const open = await seedChange(server(), org)
    const ref = { expected_git_ref: open.gitRef }
    const none = await scopedKey(server(), org, ["chat:read"])
    expect(await statuses(server(), none.key, [["GET", "/v2/changes"], ["GET", `/v2/changes/${open.id}`]])).toEqual([
      ["GET", "/v2/changes", 403, "permission_denied"],
      ["GET", `/v2/changes/${open.id}`, 403, "permission_denied"]
    ])
    const readOnly = await scopedKey(server(), org, ["change:read"])
    const reviews = [
      post(`/v2/changes/${open.id}/approve`, ref),
      post(`/v2/changes/${open.id}/deny`, ref),
      post(`/v2/changes/${open.id}/restore`, ref)
    ] as const
    expect(await statuses(server(), readOnly.key, reviews)).toEqual(
      reviews.map(([method, path]) => [method, path, 403, "permission_denied"])
    )
    // A plain member is no owner of the folder: it may read the change but not approve or deny it.
    const member = await newMember(server(), org)
    const seen = await body(await server().request(`/v2/changes/${open.id}`, { key: member.key }))
    expect(seen.capabilities).toMatchObject({ can_approve: false, can_deny: false })
    expect(await statuses(server(), member.key, reviews.slice(0, 2))).toEqual(
      reviews.slice(0, 2).map(([method, path]) => [method, path, 403, "permission_denied"])
    )
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("open")
  })

  it("is 404 for an unknown change and another organization's", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg("Other")
    const open = await seedChange(server(), org)
    const ref = { expected_git_ref: open.gitRef }
    const calls = (id: string) =>
      [
        ["GET", `/v2/changes/${id}`],
        post(`/v2/changes/${id}/approve`, ref),
        post(`/v2/changes/${id}/deny`, ref),
        post(`/v2/changes/${id}/restore`, ref)
      ] as const
    for (const [key, id] of [[org.key, crypto.randomUUID()], [other.key, open.id]] as const) {
      expect(await statuses(server(), key, calls(id))).toEqual(
        calls(id).map(([method, path]) => [method, path, 404, "not_found"])
      )
    }
    const foreign = await body(await server().request("/v2/changes?status=open&status=approved", { key: other.key }))
    expect(foreign.changes).toEqual([])
    expect(foreign.counts).toEqual({ reserved: 0, draft: 0, open: 0, approved: 0, denied: 0 })
    expect((await body(await server().request(`/v2/changes/${open.id}`, { key: org.key }))).status).toBe("open")
  })
})
