/**
 * Streams that survive (`GET /v2/chats/{id}/stream`): a client resumes with `Last-Event-ID` on
 * another server process, followers on different processes see the same events, a cancel posted
 * anywhere ends the run for every follower, and a run whose process is killed is ended as failed.
 * On PostgreSQL with two server processes (and a real `serve` process to kill); on PGlite within
 * one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serve } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import { body, postgresProblem, postgresUrl, randomPrefix, startServer, type TestServer } from "./utils/server.js"
import { readEvents, type Received } from "./utils/sse.js"

const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ")
// A model that answers slowly (40 pieces, 15 ms apart), and one that never stops.
const slow = await Provider.start(() => ({ text: words, delayMs: 15 }))
const endless = await Provider.start(() => ({ endless: true }))
afterAll(async () => {
  await slow.close()
  await endless.close()
})
const liveness = { heartbeatMillis: 300, staleRunAfterMillis: 2_000, followIdleCheckMillis: 300 }

const follow = (server: TestServer, key: string, chatId: string, lastEventId?: string, viaQuery = false) =>
  server.request(
    `/v2/chats/${chatId}/stream${viaQuery && lastEventId !== undefined ? `?last_event_id=${lastEventId}` : ""}`,
    { key, ...(lastEventId === undefined || viaQuery ? {} : { headers: { "last-event-id": lastEventId } }) }
  )

const textOf = (events: ReadonlyArray<Received>) =>
  events.filter((e) => e.data.type === "text").map((e) => e.data.text).join("")

// Every id once, one after the other, from the run's metadata to its done.
const expectWholeRun = (events: ReadonlyArray<Received>) => {
  const ids = events.map((e) => Number(e.id))
  expect(ids).toEqual(ids.map((_, i) => ids[0]! + i))
  expect(events[0]!.data.type).toBe("metadata")
  expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
  expect(textOf(events)).toBe(words)
}

const flows = (a: () => TestServer, b: () => TestServer) => {
  it("resume: 5 events, then the rest with Last-Event-ID (on the other process over PostgreSQL), each exactly once", async () => {
    const org = await a().newOrg()
    const response = await a().request("/v2/chats/stream", { method: "POST", key: org.key, json: { question: "Hi" } })
    const first = await readEvents(response, (_, all) => all.length === 5)
    expect(first).toHaveLength(5)
    const chatId = first[0]!.data.chat_id
    const rest = await readEvents(await follow(b(), org.key, chatId, first[4]!.id))
    expectWholeRun([...first, ...rest])
    // Replayed whole after the end, from either process, the run is the same sequence.
    const replay = await readEvents(await follow(a(), org.key, chatId))
    expect(replay).toEqual([...first, ...rest])
    // Resumed at its end, a finished run has nothing left to say.
    const atEnd = await follow(b(), org.key, chatId, replay.at(-1)!.id)
    expect(atEnd.status).toBe(200)
    expect(await readEvents(atEnd)).toEqual([])
    // The next run's ids go on; an id of the previous run starts at the new run's metadata.
    const second = await readEvents(
      await a().request("/v2/chats/stream", {
        method: "POST",
        key: org.key,
        json: { question: "Again", chat_id: chatId }
      })
    )
    expect(Number(second[0]!.id)).toBe(Number(replay.at(-1)!.id) + 1)
    const fromOld = await readEvents(await follow(b(), org.key, chatId, "3", true))
    expect(fromOld).toEqual(second)
  })

  it("follow: two followers (one per process over PostgreSQL) see identical sequences, live", async () => {
    const org = await a().newOrg()
    const response = await a().request("/v2/chats/stream", { method: "POST", key: org.key, json: { question: "Hi" } })
    const [metadata] = await readEvents(response, () => true)
    const chatId = metadata!.data.chat_id
    const [onA, onB] = await Promise.all([
      readEvents(await follow(a(), org.key, chatId)),
      readEvents(await follow(b(), org.key, chatId))
    ])
    expectWholeRun(onA)
    expect(onB).toEqual(onA)
  })

  it("bad ids are 400, and another member's chat is 404", async () => {
    const org = await a().newOrg()
    const other = await a().newOrg()
    const [metadata] = await readEvents(
      await a().request("/v2/chats/stream", { method: "POST", key: org.key, json: { question: "Hi" } }),
      () => true
    )
    const chatId = metadata!.data.chat_id
    for (const bad of ["-1", "1.5", "abc", "99999999999"]) {
      const response = await follow(b(), org.key, chatId, bad)
      expect(response.status).toBe(400)
      expect((await body(response)).error.code).toBe("invalid_request")
    }
    expect((await follow(b(), other.key, chatId)).status).toBe(404)
    expect((await follow(b(), org.key, crypto.randomUUID())).status).toBe(404)
    await readEvents(await follow(a(), org.key, chatId))
  })
}

// Reads until `done`, noting when the stream ended.
const timedRead = async (response: Response, until?: Parameters<typeof readEvents>[1]) => {
  const events = await readEvents(response, until)
  return { events, endedAt: Date.now() }
}

const cancelFlow = (a: () => TestServer, b: () => TestServer) =>
  it("cancel (posted to the other process over PostgreSQL): every follower sees done within a second; the model request is closed", async () => {
    const org = await a().newOrg()
    const aborts = endless.aborts.length
    const [metadata] = await readEvents(
      await a().request("/v2/chats/stream", { method: "POST", key: org.key, json: { question: "Talk" } }),
      () => true
    )
    const chatId = metadata!.data.chat_id
    let cancel: Promise<{ response: Response; at: number }> | undefined
    const [onA, onB] = await Promise.all([
      timedRead(await follow(a(), org.key, chatId)),
      timedRead(await follow(b(), org.key, chatId), (event, all) => {
        if (cancel === undefined && all.filter((e) => e.data.type === "text").length === 3) {
          cancel = b().request(`/v2/chats/${chatId}/cancel`, { method: "POST", key: org.key })
            .then((response) => ({ response, at: Date.now() }))
        }
        return false
      })
    ])
    const cancelled = await cancel!
    expect(await body(cancelled.response)).toEqual({ cancelled: true })
    expect(onA.events.at(-1)!.data).toEqual({
      type: "done",
      status: "failed",
      error: expect.stringContaining("cancelled")
    })
    expect(onB.events).toEqual(onA.events)
    for (const ended of [onA.endedAt, onB.endedAt]) expect(ended - cancelled.at).toBeLessThan(1_000)
    await expect.poll(() => endless.aborts.length, { timeout: 2_000 }).toBeGreaterThan(aborts)
  })

const endlessModels = { compatibleUrl: endless.url, models: Provider.catalogue }
const slowModels = { compatibleUrl: slow.url, models: Provider.catalogue }

describe("pglite: streams within one process", () => {
  let server: Awaited<ReturnType<typeof startServer>> | undefined
  let talker: Awaited<ReturnType<typeof startServer>> | undefined
  afterAll(async () => {
    await server?.stop()
    await talker?.stop()
  })
  beforeAll(async () => {
    server = await startServer("pglite", { models: slowModels, worker: false, liveness })
    talker = await startServer("pglite", { models: endlessModels, worker: false, liveness })
  }, 60_000)
  flows(() => server!, () => server!)
  cancelFlow(() => talker!, () => talker!)
})

if (postgresProblem !== undefined) console.warn(`postgres: streams: PostgreSQL unreachable at ${postgresUrl}: skipped`)
;(postgresProblem === undefined ? describe : describe.skip)("postgres: streams across server processes", () => {
  const slowPrefix = randomPrefix()
  const endlessPrefix = randomPrefix()
  const started: Array<Awaited<ReturnType<typeof startServer>>> = []
  afterAll(async () => {
    // The last server of a prefix drops its tables.
    for (const [i, server] of started.entries()) await server.stop({ keepTables: i % 2 === 0 })
  })
  beforeAll(async () => {
    for (
      const [prefix, models] of [[slowPrefix, slowModels], [slowPrefix, slowModels], [endlessPrefix, endlessModels], [
        endlessPrefix,
        endlessModels
      ]] as const
    ) {
      started.push(await startServer("postgres", { prefix, models, worker: false, liveness }))
    }
  }, 60_000)
  flows(() => started[0]!, () => started[1]!)
  cancelFlow(() => started[2]!, () => started[3]!)

  it(
    "a killed process: its run is ended as failed, a follower elsewhere gets done, and the chat takes questions",
    async () => {
      const b = started[3]!
      const org = await b.newOrg()
      const child = await serve({
        DATABASE_URL: postgresUrl,
        SIGHTLINE_TABLE_PREFIX: endlessPrefix,
        SIGHTLINE_OPENAI_COMPATIBLE_URL: endless.url,
        SIGHTLINE_MODELS: Provider.catalogue
      })
      const [metadata] = await readEvents(
        await fetch(`${child.base}/v2/chats/stream`, {
          method: "POST",
          headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
          body: JSON.stringify({ question: "Talk" })
        }),
        () => true
      )
      const chatId = metadata!.data.chat_id
      let killedAt = 0
      const { endedAt, events } = await timedRead(await follow(b, org.key, chatId), (_, all) => {
        if (killedAt === 0 && all.filter((e) => e.data.type === "text").length === 3) {
          child.child.kill("SIGKILL")
          killedAt = Date.now()
        }
        return false
      })
      expect(killedAt).toBeGreaterThan(0)
      expect(events.at(-1)!.data).toEqual({ type: "done", status: "failed", error: expect.stringContaining("stopped") })
      // Within the stale limit and a follower's look after it.
      expect(endedAt - killedAt).toBeLessThan(liveness.staleRunAfterMillis + 2_000)
      const listed = await body(await b.request("/v2/chats", { key: org.key }))
      expect(listed.chats.find((c: any) => c.id === chatId).is_running).toBe(false)
      // The next question starts a new run; its ids go on after the failed run's done.
      const [next] = await readEvents(
        await b.request("/v2/chats/stream", {
          method: "POST",
          key: org.key,
          json: { question: "Again", chat_id: chatId }
        }),
        () => true
      )
      expect(Number(next!.id)).toBe(Number(events.at(-1)!.id) + 1)
      expect(await body(await b.request(`/v2/chats/${chatId}/cancel`, { method: "POST", key: org.key }))).toEqual({
        cancelled: true
      })
      const again = await readEvents(await follow(b, org.key, chatId))
      expect(again.at(-1)!.data).toEqual({
        type: "done",
        status: "failed",
        error: expect.stringContaining("cancelled")
      })
    },
    // It starts a server process and waits out a stale heartbeat: slow when the whole suite shares the cores.
    120_000
  )
})
