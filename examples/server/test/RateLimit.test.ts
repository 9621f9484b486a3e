import { describe, expect, it } from "@effect/vitest"
import { body, describeServers, postgresUrl, randomPrefix, startServer } from "./utils/server.js"

describeServers("per-organization rate limiting", (server) => {
  it("answers 429 with Retry-After past the limit, for that organization only", async () => {
    const limited = await server().newOrg("Limited")
    const other = await server().newOrg("Other")
    const statuses: Array<number> = []
    let last: Response | undefined
    for (let i = 0; i < 6; i++) {
      last = await server().request("/v2/playbooks", { key: limited.key })
      statuses.push(last.status)
      if (i < 5) {
        expect(last.headers.get("ratelimit-limit")).toBe("5")
        expect(last.headers.get("ratelimit-remaining")).toBe(String(4 - i))
        expect(Number(last.headers.get("ratelimit-reset"))).toBeGreaterThan(0)
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(await body(last!)).toEqual({
      error: { code: "rate_limit_exceeded", message: "Rate limit exceeded: too many requests for the organization" }
    })
    // 5 a minute: the next token comes in 12 s.
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(11)
    expect(Number(last!.headers.get("retry-after"))).toBeLessThanOrEqual(12)
    expect(last!.headers.get("ratelimit-remaining")).toBe("0")

    const unaffected = await server().request("/v2/playbooks", { key: other.key })
    expect(unaffected.status).toBe(200)
    // Unauthenticated requests cost no organization anything.
    expect((await server().request("/v2/playbooks", { key: "not a key" })).status).toBe(401)
  })
}, { rateLimitPerMinute: 5 })

describe("rate limiting across processes", () => {
  it("two servers over one PostgreSQL enforce one limit", async (context) => {
    const prefix = randomPrefix()
    const options = { rateLimitPerMinute: 4, prefix, store: { _tag: "Postgres" as const, url: postgresUrl } }
    let first
    try {
      first = await startServer("postgres", options)
    } catch (error) {
      if (process.env.CI === "true") throw error
      console.warn(`rate limiting across processes: PostgreSQL unreachable at ${postgresUrl}: skipped`)
      return context.skip()
    }
    const second = await startServer("postgres", options)
    try {
      const org = await first.newOrg()
      const statuses: Array<number> = []
      for (let i = 0; i < 6; i++) {
        const target = i % 2 === 0 ? first : second
        statuses.push((await target.request("/v2/playbooks", { key: org.key })).status)
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
    } finally {
      await second.stop()
      await first.stop()
    }
  })
})

describeServers("failed authentication is rate-limited per client address", (server) => {
  it("after 30 failures an address gets 429 with Retry-After, even with a valid key", async () => {
    const org = await server().newOrg()
    for (let i = 0; i < 30; i++) {
      const response = await server().request("/v2/playbooks", { key: `guess-${i}` })
      expect(response.status).toBe(401)
    }
    const blocked = await server().request("/v2/playbooks", { key: "guess-31" })
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await blocked.json() as any).error.code).toBe("rate_limit_exceeded")
    expect((await server().request("/v2/playbooks", { key: org.key })).status).toBe(429)
  })
})
