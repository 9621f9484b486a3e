/** Rate limiting as the HTTP layer applies it: per organization with its headers, and failed authentication per address. */
import { expect, it } from "@effect/vitest"
import { body, describeServer } from "./utils/server.js"

describeServer("per-organization rate limiting", (server) => {
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

describeServer("failed authentication is rate-limited per client address", (server) => {
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
