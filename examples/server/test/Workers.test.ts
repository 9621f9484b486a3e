/**
 * Server processes sharing one PostgreSQL: schedules fire exactly once whatever the number of
 * workers, a chat cancelled on one process stops on the other, and a process that stops mid-run
 * leaves no agent run `running`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import * as Provider from "./utils/provider.js"
import { body, postgresProblem, postgresUrl, randomPrefix, startServer, type TestServer } from "./utils/server.js"
import { readEvents } from "./utils/sse.js"
import { until } from "./utils/wait.js"

const query = <A extends object>(server: TestServer, text: (prefix: string) => string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prefix = yield* TablePrefix.TablePrefix
    return yield* sql.unsafe<A>(text(prefix.name("")))
  }))

// The model of the agent runs: it never stops talking, so a run is still going when its process stops.
const endless = await Provider.start(() => ({ endless: true }))
afterAll(() => endless.close())

const suite = postgresProblem === undefined ? describe : describe.skip
if (postgresProblem !== undefined) console.warn(`postgres: workers: PostgreSQL unreachable at ${postgresUrl}: skipped`)

suite("postgres: server processes over one database", () => {
  it("fire 200 scheduled firings exactly once, none missed", { timeout: 120_000 }, async () => {
    const prefix = randomPrefix()
    const servers: Array<Awaited<ReturnType<typeof startServer>>> = []
    for (let i = 0; i < 3; i++) {
      servers.push(
        await startServer("postgres", { prefix, worker: { tickMillis: 50, pollMillis: 50, concurrency: 2 } })
      )
    }
    try {
      const [a] = servers
      const org = await a!.newOrg()
      const ids: Array<string> = []
      for (let i = 0; i < 40; i++) {
        const created = await body(await servers[i % 3]!.request("/v2/playbooks", { method: "POST", key: org.key }))
        await servers[i % 3]!.request(`/v2/playbooks/${created.id}`, {
          method: "PATCH",
          key: org.key,
          json: { prompt: `Hello ${i}`, cron_string: "0 9 * * *" }
        })
        expect(
          (await servers[i % 3]!.request(`/v2/playbooks/${created.id}/deploy`, { method: "POST", key: org.key }))
            .status
        ).toBe(200)
        ids.push(created.id)
      }
      // Five rounds: each moves every playbook's pending firing into the past, as the clock would.
      for (let round = 1; round <= 5; round++) {
        await query(
          a!,
          (p) =>
            `UPDATE ${p}playbooks SET next_run_at = now() - interval '1 hour' + interval '${round} seconds'
           WHERE organization_id = '${org.organizationId}'`
        )
        await until(`round ${round}`, async () => {
          const [row] = await query<{ n: number }>(a!, (p) =>
            `SELECT count(*)::int AS n FROM ${p}jobs
             WHERE organization_id = '${org.organizationId}' AND status IN ('completed', 'failed')`)
          return row!.n === 40 * round ? true : undefined
        }, 60_000)
      }
      // Let the workers tick a while longer: nothing more may fire.
      await new Promise((r) => setTimeout(r, 500))
      const jobs = await query<{ dedupe_key: string; status: string; attempts: number }>(
        a!,
        (p) => `SELECT dedupe_key, status, attempts FROM ${p}jobs WHERE organization_id = '${org.organizationId}'`
      )
      expect(jobs).toHaveLength(200)
      expect(new Set(jobs.map((j) => j.dedupe_key)).size).toBe(200)
      expect(jobs.every((j) => j.attempts === 1)).toBe(true)
      for (const id of ids) expect(jobs.filter((j) => j.dedupe_key.startsWith(`playbook:${id}:`))).toHaveLength(5)
      // Each firing ran once: one chat per job.
      const [chats] = await query<{ n: number }>(
        a!,
        (p) =>
          `SELECT count(*)::int AS n FROM ${p}chats WHERE organization_id = '${org.organizationId}' AND source = 'playbook'`
      )
      expect(chats!.n).toBe(200)
    } finally {
      // The last one drops the shared tables.
      for (const [i, server] of servers.entries()) await server.stop({ keepTables: i < servers.length - 1 })
    }
  })

  it("a chat cancelled on another process stops within about a second, and the model's request is closed", async () => {
    const prefix = randomPrefix()
    const models = { compatibleUrl: endless.url, models: Provider.catalogue }
    const a = await startServer("postgres", { prefix, models, worker: false })
    const b = await startServer("postgres", { prefix, models, worker: false })
    try {
      const org = await a.newOrg()
      const aborts = endless.aborts.length
      const response = await a.request("/v2/chats/stream", {
        method: "POST",
        key: org.key,
        json: { question: "Talk to me" }
      })
      let cancelledAt = 0
      let cancel: Promise<Response> | undefined
      const events = await readEvents(response, (event, all) => {
        // Once the answer streams, the cancel goes to the other process.
        if (
          event.data.type === "text" && cancel === undefined && all.filter((e) => e.data.type === "text").length === 3
        ) {
          cancel = b.request(`/v2/chats/${all[0]!.data.chat_id}/cancel`, { method: "POST", key: org.key })
          void cancel.then(() => (cancelledAt = Date.now()))
        }
        return false
      })
      const endedAt = Date.now()
      expect(await body(await cancel!)).toEqual({ cancelled: true })
      expect(events.at(-1)!.data).toEqual({
        type: "done",
        status: "failed",
        error: "cancelled: the run was stopped on request"
      })
      // Seen at the next check of the store (every second), not at the end of the answer.
      expect(endedAt - cancelledAt).toBeLessThan(2_500)
      await until("the model's request to close", async () => endless.aborts.length > aborts ? true : undefined, 5_000)
      const [stored] = await query<{ status: string }>(
        b,
        (p) => `SELECT status FROM ${p}chats WHERE id = '${events[0]!.data.chat_id}'`
      )
      expect(stored!.status).toBe("cancelled")
    } finally {
      await b.stop({ keepTables: true })
      await a.stop()
    }
  }, 120_000)

  it("a process that stops mid-run leaves no agent run running: another process fails it", async () => {
    const prefix = randomPrefix()
    const models = { compatibleUrl: endless.url, models: Provider.catalogue }
    // A short lease: were the job not handed back at shutdown (a killed process cannot), the lease
    // running out would still let the second process take it over.
    const worker = { pollMillis: 50, leaseMillis: 2_000 }
    const first = await startServer("postgres", { prefix, models, worker })
    let second: Awaited<ReturnType<typeof startServer>> | undefined
    let firstStopped = false
    try {
      const org = await first.newOrg()
      const agent = await body(
        await first.request("/v2/agents", {
          method: "POST",
          key: org.key,
          json: { name: "Talker", prompt: "Talk", connector_ids: [], cron_strings: [], email_addresses: [] }
        })
      )
      const run = await body(await first.request(`/v2/agents/${agent.id}/run`, { method: "POST", key: org.key }))
      await until("the run to start", async () => {
        const current = await body(await first.request(`/v2/agent-runs/${run.id}`, { key: org.key }))
        return current.status === "running" ? current : undefined
      })
      // The second process starts before the first stops, so the store outlives the first.
      second = await startServer("postgres", { prefix, models, worker })
      await first.stop({ keepTables: true })
      firstStopped = true
      const failed = await until("the abandoned run to fail", async () => {
        const current = await body(await second!.request(`/v2/agent-runs/${run.id}`, { key: org.key }))
        return current.status === "running" ? undefined : current
      })
      expect(failed).toMatchObject({
        status: "failed",
        error: "the server process running it stopped before it finished"
      })
    } finally {
      if (!firstStopped) await first.stop({ keepTables: second !== undefined })
      await second?.stop()
    }
  })
})
