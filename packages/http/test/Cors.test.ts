import { expect, it } from "vitest"
import { describeServer } from "./utils/server.js"

const allowed = "https://app.example.test"

describeServer("CORS for allowed browser origins", (server) => {
  it("answers preflight for an allowed origin, exposes the rate-limit headers and request id, and ignores other origins", async () => {
    const org = await server().newOrg()
    const preflight = await server().request("/v2/playbooks", {
      method: "OPTIONS",
      headers: {
        origin: allowed,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"
      }
    })
    expect(preflight.status).toBeLessThan(300)
    expect(preflight.headers.get("access-control-allow-origin")).toBe(allowed)
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization")
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST")

    const read = await server().request("/v2/playbooks", { key: org.key, headers: { origin: allowed } })
    expect(read.status).toBe(200)
    expect(read.headers.get("access-control-allow-origin")).toBe(allowed)
    const exposed = (read.headers.get("access-control-expose-headers") ?? "").toLowerCase()
    for (const header of ["ratelimit-remaining", "retry-after", "x-request-id"]) expect(exposed).toContain(header)

    const foreign = await server().request("/v2/playbooks", {
      key: org.key,
      headers: { origin: "https://evil.example" }
    })
    // Never the foreign origin: the browser then refuses to hand the response to its page.
    expect(foreign.headers.get("access-control-allow-origin")).not.toBe("https://evil.example")
  })
}, { corsOrigins: [allowed] })

describeServer("no CORS by default", (server) => {
  it("sends no CORS headers when no origin is allowed", async () => {
    const org = await server().newOrg()
    const read = await server().request("/v2/playbooks", { key: org.key, headers: { origin: allowed } })
    expect(read.headers.get("access-control-allow-origin")).toBeNull()
  })
})
