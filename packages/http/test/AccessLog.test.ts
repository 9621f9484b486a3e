import { expect, it } from "@effect/vitest"
import * as LogLevel from "effect/LogLevel"
import { describeServer, type LogLine } from "./utils/server.js"

const accessLines = (lines: ReadonlyArray<LogLine>) => lines.filter((line) => line.message === "request")

const logged: Array<LogLine> = []
describeServer("the access log", (server) => {
  it("writes one line per request, under the id the response carries", async () => {
    const org = await server().newOrg()
    logged.length = 0
    const echoed = await server().request("/v2/playbooks?limit=5", {
      key: org.key,
      headers: { "x-request-id": "trace-123" }
    })
    expect(echoed.status).toBe(200)
    expect(echoed.headers.get("x-request-id")).toBe("trace-123")
    const chosen = await server().request("/v2/playbooks/not-a-uuid", { key: org.key })
    expect(chosen.status).toBe(400)
    const id = chosen.headers.get("x-request-id")
    expect(id).toMatch(/^[0-9a-f-]{36}$/)

    const lines = accessLines(logged)
    expect(lines.map((line) => line.annotations)).toEqual([
      expect.objectContaining({ requestId: "trace-123", method: "GET", path: "/v2/playbooks", status: 200 }),
      expect.objectContaining({ requestId: id, method: "GET", path: "/v2/playbooks/not-a-uuid", status: 400 })
    ])
    expect(lines.every((line) => line.level === "INFO" && typeof line.annotations.durationMs === "number")).toBe(true)
  })
}, { logs: { lines: logged, level: LogLevel.Info } })

const quiet: Array<LogLine> = []
describeServer("the access log below the minimum level", (server) => {
  it("writes nothing, and the response still carries a request id", async () => {
    const response = await server().request("/healthz")
    expect(response.status).toBe(200)
    expect(response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const missing = await server().request("/nowhere")
    expect(missing.status).toBe(404)
    expect(accessLines(quiet)).toEqual([])
  })
}, { logs: { lines: quiet, level: LogLevel.Warning } })
