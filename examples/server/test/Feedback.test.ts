/**
 * Feedback over the socket: a member rates an answer of the offline model on DEMO; an admin lists
 * the ratings and promotes them, into an evaluation case and into a verified query, each a library
 * change that merges and is then used (by an evaluation run, by the next answer).
 */
import { expect, it } from "vitest"
import { demoConnector } from "./utils/content.js"
import { newMember } from "./utils/members.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"

const ask = async (server: TestServer, key: string, question: string, connectorId: number) =>
  body(await server.request("/v2/chats", { method: "POST", key, json: { question, connector_ids: [connectorId] } }))

const rate = (server: TestServer, key: string, answer: { chat_id: string; id: string }, json: unknown) =>
  server.request(`/v2/chats/${answer.chat_id}/messages/${answer.id}/feedback`, { method: "PUT", key, json })

/** Approves a change as the organization's admin. */
const approve = async (server: TestServer, org: Org, changeId: string) => {
  const change = await body(await server.request(`/v2/changes/${changeId}`, { key: org.key }))
  const approved = await server.request(`/v2/changes/${changeId}/approve`, {
    method: "POST",
    key: org.key,
    json: { expected_git_ref: change.git_ref }
  })
  expect(approved.status).toBe(200)
  return body(approved)
}

describeServers("feedback", (server) => {
  it("the asker rates an answer; an admin lists it by rating and promotes it to an evaluation case that then passes", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const member = await newMember(server(), org)
    const question = "How many orders were cancelled in 2025?"
    // The admin asks (the DEMO connector is theirs); the chat, and rating it, are theirs alone.
    const answer = await ask(server(), org.key, question, connectorId)
    expect(answer.response).toContain("I read this as")

    const up = await rate(server(), org.key, answer, { rating: "up", comment: "right on" })
    expect(up.status).toBe(200)
    const rated = await body(up)
    expect(rated).toMatchObject({
      chat_id: answer.chat_id,
      message_id: answer.id,
      member_id: org.memberId,
      rating: "up",
      comment: "right on",
      question,
      model: "offline",
      connector_id: connectorId,
      sql: expect.stringContaining("SELECT")
    })
    expect(rated.answer).toBe(answer.response)
    // Rating again replaces the rating; the comment goes when none is sent.
    const down = await body(await rate(server(), org.key, answer, { rating: "down" }))
    expect(down).toMatchObject({ id: rated.id, rating: "down" })
    expect(down.comment).toBeUndefined()

    // Only the chat's creator reaches its messages; bad input is a 400.
    expect((await rate(server(), member.key, answer, { rating: "up" })).status).toBe(404)
    expect((await rate(server(), org.key, { ...answer, id: crypto.randomUUID() }, { rating: "up" })).status)
      .toBe(404)
    expect((await rate(server(), org.key, answer, { rating: "sideways" })).status).toBe(400)

    // Admins read ratings, filtered; members do not.
    const list = (query: string, key = org.key) => server().request(`/v2/feedback${query}`, { key })
    expect((await body(await list("?rating=down"))).feedback.map((f: any) => f.id)).toEqual([rated.id])
    expect((await body(await list("?rating=up"))).feedback).toEqual([])
    expect((await body(await list(`?connector_id=${connectorId}&model=offline`))).feedback).toHaveLength(1)
    expect((await body(await list("?model=offline-fast"))).feedback).toEqual([])
    expect((await list("", member.key)).status).toBe(403)

    const promote = (json: unknown, key = org.key) =>
      server().request(`/v2/feedback/${rated.id}/promote`, { method: "POST", key, json })
    // An answer rated down is no right answer unless the right one is given.
    const refused = await promote({ as: "eval_case" })
    expect(refused.status).toBe(400)
    expect((await body(refused)).error.message).toContain("rated down")
    expect((await promote({ as: "eval_case" }, member.key)).status).toBe(403)
    await rate(server(), org.key, answer, { rating: "up" })
    const promoted = await promote({ as: "eval_case" })
    expect(promoted.status).toBe(201)
    const filed = await body(promoted)
    expect(filed.path).toBe("evals/feedback.yaml")
    await approve(server(), org, filed.change_id)

    // The case runs: the answer's own rows are its right answer.
    const run = await body(
      await server().request("/v2/evals/runs", {
        method: "POST",
        key: org.key,
        json: { set: "evals/feedback.yaml", connector_id: connectorId }
      })
    )
    let done = run
    for (let i = 0; i < 300 && !["completed", "failed"].includes(done.status); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      done = await body(await server().request(`/v2/evals/runs/${run.id}`, { key: org.key }))
    }
    expect(done.status).toBe("completed")
    expect(done.results).toEqual([expect.objectContaining({ question, passed: true, tags: ["feedback"] })])
  })

  it("promotes a good answer into a verified query of the connector's model, which the next answer uses", async () => {
    const org = await server().newOrg()
    const connectorId = await demoConnector(server(), org)
    const answer = await ask(server(), org.key, "How many cancelled orders are there?", connectorId)
    const rated = await body(await rate(server(), org.key, answer, { rating: "up" }))
    const promote = (json: unknown) =>
      server().request(`/v2/feedback/${rated.id}/promote`, { method: "POST", key: org.key, json })
    expect((await promote({ as: "verified_query", name: "Bad Name", sql: "SELECT 1" })).status).toBe(400)
    const promoted = await promote({
      as: "verified_query",
      name: "cancelled_ever",
      question: "How many orders have ever been cancelled?",
      sql: "SELECT count(*) AS cancelled FROM __orders o WHERE o.status = 'cancelled'"
    })
    expect(promoted.status).toBe(201)
    const filed = await body(promoted)
    expect(filed.path).toBe("semantic/demo.yaml")
    await approve(server(), org, filed.change_id)
    const next = await ask(server(), org.key, "How many orders have ever been cancelled?", connectorId)
    expect(next.response).toContain("I read this as the verified query **cancelled_ever**")
  })
})
