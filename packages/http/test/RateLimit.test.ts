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
  it("after 30 failures an address's failures get 429 with Retry-After, and a valid key still gets in", async () => {
    const org = await server().newOrg()
    for (let i = 0; i < 30; i++) {
      const response = await server().request("/v2/playbooks", { key: `guess-${i}` })
      expect(response.status).toBe(401)
    }
    for (let i = 30; i < 40; i++) {
      const blocked = await server().request("/v2/playbooks", { key: `guess-${i}` })
      expect(blocked.status).toBe(429)
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0)
      expect((await blocked.json() as any).error.code).toBe("rate_limit_exceeded")
    }
    // Someone else's failures (behind one proxy, everyone's) never refuse a valid credential.
    expect((await server().request("/v2/playbooks", { key: org.key })).status).toBe(200)
  })

  it("the Connect surfaces count failed credentials too, with the same budget", async () => {
    const trigger = (key: string) =>
      fetch(`${server().baseUrl}/v1/agents/webhook/trigger`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "connect-protocol-version": "1"
        },
        body: JSON.stringify({ triggerId: crypto.randomUUID() })
      })
    const rpc = (key: string) =>
      fetch(`${server().baseUrl}/rpc/public/svc.rpc.public.rbac.RBACService/ListScimGroupMappings`, {
        method: "POST",
        headers: { svc_api_key: key, "content-type": "application/json", "connect-protocol-version": "1" },
        body: "{}"
      })
    // Failures on the webhook spend the address's budget (maybe spent already on /v2 above).
    const statuses = new Set<number>()
    for (let i = 0; i < 30; i++) statuses.add((await trigger(`guess-webhook-${i}`)).status)
    expect([...statuses].every((status) => status === 401 || status === 429)).toBe(true)
    const webhook = await trigger("guess-webhook")
    expect(webhook.status).toBe(429)
    expect(Number(webhook.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await webhook.json() as any).code).toBe("resource_exhausted")
    const procedure = await rpc("guess-rpc")
    expect(procedure.status).toBe(429)
    expect((await procedure.json() as any).code).toBe("resource_exhausted")
    // A valid key is answered as usual.
    const org = await server().newOrg()
    expect((await rpc(org.key)).status).toBe(200)
  })
})
