/**
 * The provenance of answers over the socket: every assistant message says how it was made (the
 * offline model, and a scripted Chat Completions provider that reports usage); an answer re-run at
 * its pinned commit reproduces it after the library moved on; usage is summed from the audit log.
 */
import { afterAll, expect, it } from "vitest"
import { demoConnector, editModel } from "./utils/content.js"
import { newMember } from "./utils/members.js"
import * as Provider from "./utils/provider.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"
import { until } from "./utils/wait.js"

const ask = async (server: TestServer, key: string, question: string, connectorId: number, model?: string) => {
  const response = await server.request("/v2/chats", {
    method: "POST",
    key,
    json: { question, connector_ids: [connectorId], ...(model === undefined ? {} : { model }) }
  })
  expect(response.status).toBe(200)
  return body(response)
}

/** The assistant messages of a chat, as `GET /v2/chats/{id}` serves them. */
const answersOf = async (server: TestServer, key: string, chatId: string) =>
  (await body(await server.request(`/v2/chats/${chatId}`, { key }))).messages.filter((m: any) => m.role === "assistant")

const mintKey = async (server: TestServer, org: Org, clientId?: string) => {
  const created = await server.request("/v2/api-keys", {
    method: "POST",
    key: org.key,
    json: { inheritAllRoles: true, name: "k", expirySeconds: 3600, ...(clientId === undefined ? {} : { clientId }) }
  })
  expect(created.status).toBe(201)
  return (await body(created)) as { key: string; api_key: { id: string } }
}

const revenueMeasure = "      - name: revenue\n        agg: sum\n        expr: line_total\n"

describeServers("provenance of answers", (server) => {
  it("an offline answer says how it was made: its model, tool calls, library commit and semantic model", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const answer = await ask(server(), org.key, "What was revenue in 2025?", connectorId)
    const [message] = await answersOf(server(), org.key, answer.chat_id)
    expect(message.id).toBe(answer.id)
    const provenance = message.provenance
    expect(provenance).toMatchObject({
      model: "offline",
      provider: "offline",
      input_tokens: 0,
      output_tokens: 0,
      semantic_models: [{
        connector_id: connectorId,
        model: "retail",
        source: "library",
        path: "semantic/demo.yaml",
        commit: provenance.library_commit
      }]
    })
    expect(provenance.library_commit).toMatch(/^[0-9a-f]{40}$/)
    expect(provenance.generations).toBeGreaterThanOrEqual(2)
    expect(provenance.tool_calls[0]).toMatchObject({ name: "query_metrics", connector_id: connectorId, failed: false })
    expect(JSON.parse(provenance.tool_calls[0].arguments)).toMatchObject({ connector_id: connectorId })
    expect(provenance.client_attributes_hash).toBeUndefined()
  })

  it("keys with client attributes leave a fingerprint, equal for equal attributes and never the attributes", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const [eu, eu2, us] = [
      await mintKey(server(), org, "{\"region\":\"EU\"}"),
      await mintKey(server(), org, "{\"region\":\"EU\"}"),
      await mintKey(server(), org, "{\"region\":\"US\"}")
    ]
    const hashOf = async (key: string) => {
      const answer = await ask(server(), key, "How many orders were there in 2025?", connectorId)
      const [message] = await answersOf(server(), key, answer.chat_id)
      return { answer, message, hash: message.provenance.client_attributes_hash as string }
    }
    const [a, b, c] = [await hashOf(eu.key), await hashOf(eu2.key), await hashOf(us.key)]
    expect(a.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(b.hash).toBe(a.hash)
    expect(c.hash).not.toBe(a.hash)
    expect(JSON.stringify(a.message.provenance)).not.toContain("EU")

    // A re-run keeps to the attributes: the same ones may, others (or none) may not.
    const rerun = (key: string, target: { answer: any }) =>
      server().request(`/v2/chats/${target.answer.chat_id}/messages/${target.answer.id}/rerun`, {
        method: "POST",
        key
      })
    expect((await rerun(eu.key, a)).status).toBe(200)
    expect((await rerun(eu2.key, a)).status).toBe(200)
    // The answer is of its end user's audience: another's key, or the member's own, finds no such chat.
    expect((await rerun(org.key, a)).status).toBe(404)
    expect((await rerun(us.key, a)).status).toBe(404)
  })

  it("re-runs an answer at its pinned commit after the library moved on, and says it is the same", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const question = "What was revenue in 2025?"
    const original = await ask(server(), org.key, question, connectorId)
    const [message] = await answersOf(server(), org.key, original.chat_id)

    // Revenue is redefined on main: the same question now answers another number.
    expect(
      (await editModel(
        server(),
        org,
        (yaml) => yaml.replace(revenueMeasure, revenueMeasure.replace("line_total", "quantity"))
      )).merged
    ).toBe(true)
    const now = await ask(server(), org.key, question, connectorId)
    const [moved] = await answersOf(server(), org.key, now.chat_id)
    expect(moved.provenance.library_commit).not.toBe(message.provenance.library_commit)
    expect(moved.content).not.toBe(message.content)

    const rerun = (key: string) =>
      server().request(`/v2/chats/${original.chat_id}/messages/${original.id}/rerun`, { method: "POST", key })
    const response = await rerun(org.key)
    expect(response.status).toBe(200)
    const result = await body(response)
    expect(result).toMatchObject({
      question,
      model: "offline",
      library_commit: message.provenance.library_commit,
      connector_ids: [connectorId],
      same: true,
      original: { chat_id: original.chat_id, message_id: original.id }
    })
    expect(result.rerun.provenance.library_commit).toBe(message.provenance.library_commit)
    expect(result.rerun.rows).toEqual(result.original.rows)
    expect(result.rerun.chat_id).not.toBe(original.chat_id)

    // A member may not re-run someone else's answer; an unknown message is a 404 too.
    const member = await newMember(server(), org)
    expect((await rerun(member.key)).status).toBe(404)
    const unknown = await server().request(
      `/v2/chats/${original.chat_id}/messages/${crypto.randomUUID()}/rerun`,
      { method: "POST", key: org.key }
    )
    expect(unknown.status).toBe(404)
  })

  it("sums the models' usage by member, key and model for admins", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const minted = await mintKey(server(), org)
    await ask(server(), org.key, "How many orders were there in 2025?", connectorId)
    await ask(server(), minted.key, "How many orders were there in 2024?", connectorId)
    const usage = async (query: string, key = org.key) => server().request(`/v2/usage${query}`, { key })
    // A run's usage is recorded once its answer is out: it may land just after the response.
    const byModel = await until("both answers' usage", async () => {
      const got = await body(await usage("?group_by=model"))
      return got.totals.answers === 2 ? got : undefined
    })
    expect(byModel.rows).toEqual([expect.objectContaining({ model: "offline", answers: 2 })])
    expect(byModel.totals.answers).toBe(2)
    expect(byModel.totals.calls).toBeGreaterThanOrEqual(4)
    const byKey = await body(await usage("?group_by=api_key"))
    // The admin's key and the minted one, each with its answer.
    expect(byKey.rows).toHaveLength(2)
    expect(byKey.rows.map((r: any) => r.api_key_id)).toContain(minted.api_key.id)
    expect(byKey.rows.every((r: any) => r.answers === 1 && typeof r.api_key_id === "string")).toBe(true)
    const byMember = await body(await usage("?group_by=member"))
    expect(byMember.rows).toEqual([expect.objectContaining({ member_id: org.memberId, answers: 2 })])
    // Another period holds nothing; a period backwards is a 400; members may not read usage.
    expect((await body(await usage("?from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z"))).rows).toEqual([])
    expect((await usage("?from=2020-02-01T00:00:00Z&to=2020-01-01T00:00:00Z")).status).toBe(400)
    expect((await usage("?group_by=colour")).status).toBe(400)
    const member = await newMember(server(), org)
    expect((await usage("", member.key)).status).toBe(403)
    // Each answer's usage is an entry of the audit log.
    const entries = await body(await server().request("/v2/audit-logs?action=model.usage", { key: org.key }))
    expect(entries.entries).toHaveLength(2)
    expect(entries.entries[0]).toMatchObject({
      resource_type: "chat",
      details: { model: "offline", provider: "offline" }
    })
  })
})

// A model that answers with SQL on the first step, then a sentence; the provider reports usage.
const provider = await Provider.start((request) =>
  request.messages.at(-1).role === "tool"
    ? { text: "Here it is." }
    : { toolCalls: [{ name: "run_sql", arguments: { connector_id: 1, sql: "SELECT count(*) AS n FROM regions" } }] }
)
afterAll(() => provider.close())

describeServers("provenance with a provider (scripted Chat Completions server on loopback)", (server) => {
  it("keeps the provider's tokens, the model's time and the SQL the model ran", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const answer = await ask(server(), org.key, "How many regions?", connectorId, "scripted")
    const [message] = await answersOf(server(), org.key, answer.chat_id)
    expect(message.provenance).toMatchObject({
      model: "scripted",
      provider: "openai-compatible",
      generations: 2,
      // Two requests: the question (10 a message), then with the tool's answer; 3 out each.
      output_tokens: 6,
      tool_calls: [{ name: "run_sql", connector_id: connectorId, failed: false }]
    })
    expect(message.provenance.input_tokens).toBe(
      provider.requests.slice(-2).reduce((sum: number, r: any) => sum + r.messages.length * 10, 0)
    )
    expect(JSON.parse(message.provenance.tool_calls[0].arguments).sql).toBe("SELECT count(*) AS n FROM regions")
    expect(message.provenance.model_latency_ms).toBeGreaterThanOrEqual(0)
  })
}, { models: { compatibleUrl: provider.url, models: Provider.catalogue } })
