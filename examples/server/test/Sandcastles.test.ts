import { expect, it } from "@effect/vitest"
import * as Execution from "@sightline/core/Execution"
import { ExecutionRepo } from "@sightline/core/ExecutionRepo"
import { ExecutionId, MemberId, OrganizationId, SandboxId } from "@sightline/core/Ids"
import * as Sandbox from "@sightline/core/Sandbox"
import { SandboxRepo } from "@sightline/core/SandboxRepo"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { newMember } from "./utils/members.js"
import { body, describeServers, type TestServer } from "./utils/server.js"

/** A running sandbox of `memberId` with `inputs.length` executions, recorded a millisecond apart. */
const seedSandbox = (server: TestServer, organizationId: string, memberId: string, inputs: ReadonlyArray<string>) =>
  server.run(Effect.gen(function*() {
    const start = yield* DateTime.now
    const sandbox = Sandbox.make({
      sandboxId: SandboxId.make(crypto.randomUUID()),
      organizationId: OrganizationId.make(organizationId),
      memberId: MemberId.make(memberId),
      at: start
    })
    yield* (yield* SandboxRepo).create(sandbox)
    const executions = yield* ExecutionRepo
    yield* Effect.forEach(inputs, (input, i) =>
      executions.record(
        new Execution.Execution({
          id: ExecutionId.make(crypto.randomUUID()),
          kind: "python",
          source: "platform_api",
          input,
          output_preview: `out ${input}`,
          duration_ms: 2,
          created_at: DateTime.add(start, { millis: i + 1 }),
          organization_id: sandbox.organization_id,
          sandbox_id: sandbox.sandbox_id
        })
      ))
    return sandbox.sandbox_id as string
  }))

describeServers("/v2/sandcastles", (server) => {
  it("lists the caller's sandboxes, and every member's to an admin", async () => {
    const org = await server().newOrg()
    const member = await newMember(server(), org)
    const own = await seedSandbox(server(), org.organizationId, member.memberId, [])
    const admins = await seedSandbox(server(), org.organizationId, org.memberId, [])

    const mine = await server().request("/v2/sandcastles", { key: member.key })
    expect(mine.status).toBe(200)
    const listed = await body(mine)
    expect(listed.sandboxes).toHaveLength(1)
    expect(listed.sandboxes[0]).toMatchObject({ sandbox_id: own, status: "running", member_id: member.memberId })
    expect(listed.next_cursor).toBeUndefined()

    const all = await body(await server().request("/v2/sandcastles?status=all", { key: org.key }))
    expect(all.sandboxes.map((s: any) => s.sandbox_id).sort()).toEqual([own, admins].sort())

    const stopped = await body(await server().request("/v2/sandcastles?status=stopped", { key: org.key }))
    expect(stopped.sandboxes).toEqual([])
  })

  it("pages executions newest first by cursor", async () => {
    const org = await server().newOrg()
    const id = await seedSandbox(server(), org.organizationId, org.memberId, ["a", "b", "c"])
    const first = await server().request(`/v2/sandcastles/${id}/executions?limit=2`, { key: org.key })
    expect(first.status).toBe(200)
    const page1 = await body(first)
    expect(page1.executions.map((e: any) => e.input)).toEqual(["c", "b"])
    expect(Object.keys(page1.executions[0]).sort()).toEqual(
      ["created_at", "duration_ms", "id", "input", "kind", "output_preview", "source"]
    )
    const page2 = await body(
      await server().request(`/v2/sandcastles/${id}/executions?limit=2&cursor=${page1.next_cursor}`, { key: org.key })
    )
    expect(page2.executions.map((e: any) => e.input)).toEqual(["a"])
    expect(page2.next_cursor).toBeUndefined()
  })

  it("answers the documented errors", async () => {
    const org = await server().newOrg()
    const other = await server().newOrg("Other")
    const member = await newMember(server(), org)
    const id = await seedSandbox(server(), org.organizationId, org.memberId, ["x"])

    const badLimit = await server().request(`/v2/sandcastles/${id}/executions?limit=201`, { key: org.key })
    expect(badLimit.status).toBe(400)
    expect((await body(badLimit)).error.code).toBe("invalid_request")
    const forged = await server().request(`/v2/sandcastles/${id}/executions?cursor=forged`, { key: org.key })
    expect(forged.status).toBe(400)
    expect(await body(forged)).toEqual({ error: { code: "invalid_request", message: "invalid cursor" } })
    const badStatus = await server().request("/v2/sandcastles?status=sleeping", { key: org.key })
    expect(badStatus.status).toBe(400)

    const anonymous = await server().request(`/v2/sandcastles/${id}/executions`)
    expect(anonymous.status).toBe(401)

    // Another organization's sandbox, another member's, and one that does not exist are all 404.
    for (
      const [key, path] of [
        [other.key, `/v2/sandcastles/${id}/executions`],
        [member.key, `/v2/sandcastles/${id}/executions`],
        [org.key, `/v2/sandcastles/${crypto.randomUUID()}/executions`]
      ] as const
    ) {
      const response = await server().request(path, { key })
      expect(response.status).toBe(404)
      expect(await body(response)).toEqual({ error: { code: "not_found", message: "Resource not found" } })
    }
  })
})
