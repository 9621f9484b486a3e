/**
 * Traces over OTLP/HTTP: the standalone server as a real process with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * set, and a loopback OTLP receiver (JSON) that collects what it exports.
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, serve, tempDir } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import { until } from "./utils/wait.js"

interface Span {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: unknown }>
  readonly links?: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

describe("traces exported over OTLP", () => {
  let receiver: Server
  const exports: Array<{ readonly path: string; readonly headers: Record<string, unknown>; readonly body: any }> = []
  let base: string
  let adminKey: string
  let provider: Provider.ScriptedProvider

  beforeAll(async () => {
    const port = await freePort()
    receiver = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        exports.push({ path: request.url ?? "", headers: request.headers, body: JSON.parse(body) })
        response.setHeader("content-type", "application/json")
        response.end("{}")
      })
    }).listen(port, "127.0.0.1")
    provider = await Provider.start(() => ({ text: "Web makes the most money." }))
    const server = await serve({
      SIGHTLINE_OPENAI_COMPATIBLE_URL: provider.url,
      SIGHTLINE_MODELS: JSON.stringify([
        { id: "offline", number: 1, provider: "offline", default: true },
        { id: "scripted", number: 5, provider: "openai-compatible" }
      ]),
      SIGHTLINE_DATA_DIR: tempDir(),
      SIGHTLINE_SANDBOX_DIR: "off",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=collector%20secret",
      OTEL_SERVICE_NAME: "sightline-test",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      // Webhook deliveries go to this test's receiver, on loopback.
      SIGHTLINE_WEBHOOK_ALLOW_PRIVATE: "1",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      SIGHTLINE_METRICS_TOKEN: "scrape-secret"
    })
    base = server.base
    adminKey = /Admin API key \(shown once, keep it\): (\S+)/.exec(server.output.stdout)![1]!
  }, 120_000)

  afterAll(async () => {
    receiver?.close()
    await provider?.close()
  })

  const spans = (): ReadonlyArray<Span> =>
    exports.filter((e) => e.path === "/v1/traces").flatMap((e) =>
      e.body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans))
    )

  it("exports the spans of a request and of the answer it starts, with the service's name, and no secret", async () => {
    const asked = await fetch(`${base}/v2/chats`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "revenue by region", connector_ids: [1] })
    })
    expect(asked.status).toBeLessThan(300)
    // Its result's download: a signed URL, whose signature no span may record.
    const answer = await asked.json() as any
    const signed = answer.assets.map((asset: any) => asset.url).filter((url: unknown) => typeof url === "string")
    expect(signed.length).toBeGreaterThan(0)
    for (const url of signed) expect((await fetch(new URL(url, base))).status).toBe(200)
    await until("the ask's span", async () => spans().find((span) => span.name === "Answers.ask"), 20_000)
    const traces = exports.find((e) => e.path === "/v1/traces")!
    expect(traces.headers["x-collector-key"]).toBe("collector secret")
    const resource = traces.body.resourceSpans[0].resource.attributes
    expect(resource).toContainEqual({ key: "service.name", value: { stringValue: "sightline-test" } })
    // The request's span is the parent of the use case's.
    const ask = spans().find((span) => span.name === "Answers.ask")!
    const parent = await until(
      "the request's span",
      async () => spans().find((span) => span.spanId === ask.parentSpanId)
    )
    expect(parent.traceId).toBe(ask.traceId)
    // The answer's model generations and tool calls, in the same trace, with the GenAI attributes.
    const attribute = (span: Span, key: string) => span.attributes?.find((a) => a.key === key)?.value
    await until(
      "the answer's spans",
      async () => spans().find((span) => span.name.startsWith("execute_tool ") && span.traceId === ask.traceId),
      20_000
    )
    const generation = spans().find((span) => span.name.startsWith("chat ") && span.traceId === ask.traceId)!
    // The run is a span of its own, the parent of its generations, under the request's ask.
    const run = await until(
      "the run's span",
      async () => spans().find((span) => span.name === "Answers.run" && span.traceId === ask.traceId)
    )
    expect(run.parentSpanId).toBe(ask.spanId)
    expect(generation.parentSpanId).toBe(run.spanId)
    expect(attribute(generation, "gen_ai.operation.name")).toEqual({ stringValue: "chat" })
    expect(attribute(generation, "gen_ai.provider.name")).toEqual({ stringValue: "offline" })
    expect(attribute(generation, "gen_ai.conversation.id")).toEqual(
      expect.objectContaining({ stringValue: expect.any(String) })
    )
    const tool = spans().find((span) => span.name.startsWith("execute_tool ") && span.traceId === ask.traceId)!
    expect(attribute(tool, "gen_ai.tool.name")).toEqual({ stringValue: tool.name.slice("execute_tool ".length) })
    // Each SQL statement against the connector, under its tool call: the statement's shape, no value.
    const statement = await until(
      "a statement's span",
      async () => spans().find((span) => span.name === "ConnectorRuntime.query" && span.traceId === ask.traceId)
    )
    const ancestors = (span: Span): ReadonlyArray<Span> => {
      const up = spans().find((s) => s.spanId === span.parentSpanId)
      return up === undefined ? [] : [up, ...ancestors(up)]
    }
    expect(ancestors(statement).some((s) => s.name.startsWith("execute_tool "))).toBe(true)
    expect(attribute(statement, "db.system.name")).toEqual({ stringValue: "postgresql" })
    const text = (attribute(statement, "db.query.text") as { stringValue: string }).stringValue
    expect(text).toMatch(/^(SELECT|WITH) /i)
    expect(text).not.toMatch(/'[^']/)
    // No credential in any span.
    const exported = JSON.stringify(exports.map((e) => e.body))
    expect(exported).not.toContain(adminKey)
    expect(exported).not.toContain("signature=")
  }, 60_000)

  it("records no credential header in clear: svc_api_key, authorization or a host's own are redacted", async () => {
    const traceId = "5bf92f3577b34da6a3ce929d0e0e4737"
    const listed = await fetch(`${base}/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI`, {
      method: "POST",
      body: "{}",
      headers: {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        svc_api_key: adminKey,
        "x-host-session": "host-session-secret",
        "user-agent": "telemetry-test",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`
      }
    })
    expect(listed.status).toBe(200)
    const span = await until(
      "the request's span",
      async () =>
        spans().find((s) => s.traceId === traceId && s.attributes?.some((a) => a.key === "http.request.method"))
    )
    const text = JSON.stringify(span)
    expect(text).not.toContain(adminKey)
    expect(text).not.toContain("host-session-secret")
    const attribute = (key: string) => span.attributes?.find((a) => a.key === key)?.value
    // Recorded, but redacted; a header that carries no credential stays as it was.
    expect(attribute("http.request.header.svc_api_key")).toBeDefined()
    expect(attribute("http.request.header.user-agent")).toEqual({ stringValue: "telemetry-test" })
  })

  it("records a failure by its kind and code, never the database's words that carry a row's value", async () => {
    const traceId = "6bf92f3577b34da6a3ce929d0e0e4738"
    const called = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${adminKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "run_sql",
          arguments: { connector_id: 1, sql: "SELECT name::int FROM regions WHERE code = 'NA'" }
        }
      })
    })
    // The caller is told what its own query did.
    expect(await called.text()).toContain("North America")
    // The tool runs in a trace of its own: found by its statement's shape.
    const failed = await until(
      "the query's span",
      async () =>
        spans().find((s) =>
          s.name === "ConnectorRuntime.query" &&
          JSON.stringify(s.attributes).includes("SELECT name::int FROM regions WHERE code = ?")
        )
    )
    const attribute = (key: string) => failed.attributes?.find((a) => a.key === key)?.value
    expect(attribute("db.response.status_code")).toEqual({ stringValue: "22P02" })
    const trace = JSON.stringify(spans().filter((s) => s.traceId === failed.traceId || s.traceId === traceId))
    expect(trace).not.toContain("North America")
    expect(trace).not.toContain("invalid input syntax")
  })

  it("continues the caller's trace (traceparent) and passes it on to the model's provider", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const asked = await fetch(`${base}/v2/chats`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${adminKey}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`
      },
      body: JSON.stringify({ question: "which channel makes the most money?", model: "scripted" })
    })
    expect(asked.status).toBe(200)
    const generation = await until(
      "the scripted generation's span",
      async () => spans().find((span) => span.traceId === traceId && span.name === "chat scripted")
    )
    // The provider was called inside that span, and told so.
    const sent = provider.headers.at(-1)!["traceparent"] as string
    expect(sent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(sent.split("-")[2]).toBe(generation.spanId)
  }, 60_000)

  it("runs a queued job in a trace of its own, linked to the request that queued it", async () => {
    const call = (path: string, json: unknown, traceparent?: string) =>
      fetch(`${base}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${adminKey}`,
          "content-type": "application/json",
          ...(traceparent === undefined ? {} : { traceparent })
        },
        body: JSON.stringify(json)
      })
    const registered = await call("/v2/webhook-endpoints", {
      url: `${base.replace(/:\d+$/, "")}:${(receiver.address() as { port: number }).port}/hooks/telemetry`,
      event_types: ["api_key.created"]
    })
    expect(registered.status).toBe(201)
    // Minting a key queues the delivery of its event, in the caller's trace.
    const traceId = "0af7651916cd43dd8448eb211c80319c"
    expect((await call("/v2/api-keys", { inheritAllRoles: true }, `00-${traceId}-b7ad6b7169203331-01`)).status)
      .toBe(201)
    await until("the delivery", async () => exports.find((e) => e.path === "/hooks/telemetry"), 20_000)
    const job = await until(
      "the job's span",
      async () => spans().find((span) => span.name === "job webhook.deliver" && span.links?.[0]?.traceId === traceId),
      20_000
    )
    expect(job.traceId).not.toBe(traceId)
    expect(job.parentSpanId ?? "").toBe("")
    // The span it links to is the enqueue inside the request's trace.
    const queued = await until(
      "the enqueue's span",
      async () => spans().find((span) => span.spanId === job.links![0]!.spanId)
    )
    expect(queued.traceId).toBe(traceId)
  }, 60_000)

  it("links a follower's trace to the request that started the run it follows", async () => {
    const traceId = "5b8efff798038103d269b633813fc60c"
    const asked = await fetch(`${base}/v2/chats`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${adminKey}`,
        "content-type": "application/json",
        traceparent: `00-${traceId}-eee19b7ec3c1b174-01`
      },
      body: JSON.stringify({ question: "which channel makes the most money?", model: "scripted" })
    })
    const chatId = (await asked.json() as any).chat_id
    // Resumed later, from another trace: the whole stream again.
    const followed = await fetch(`${base}/v2/chats/${chatId}/stream`, {
      headers: { authorization: `Bearer ${adminKey}`, "last-event-id": "0" }
    })
    expect(followed.status).toBe(200)
    expect(await followed.text()).toContain("\"type\":\"done\"")
    const subscribe = await until(
      "the follower's span",
      async () =>
        spans().find((span) =>
          span.name === "ChatStreams.subscribe" && span.traceId !== traceId &&
          span.links?.some((link) => link.traceId === traceId)
        ),
      20_000
    )
    const started = await until(
      "the span it links to",
      async () => spans().find((span) => span.spanId === subscribe.links![0]!.spanId)
    )
    expect(started.traceId).toBe(traceId)
  }, 60_000)

  it("drops a trace its caller did not sample, building none of its spans", async () => {
    const ask = (traceparent: string) =>
      fetch(`${base}/v2/chats`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", traceparent },
        body: JSON.stringify({ question: "revenue by region", connector_ids: [1] })
      })
    const dropped = "11111111111111111111111111111111"
    const kept = "22222222222222222222222222222222"
    expect((await ask(`00-${dropped}-00f067aa0ba902b7-00`)).status).toBe(200)
    expect((await ask(`00-${kept}-00f067aa0ba902b7-01`)).status).toBe(200)
    // The sampled answer's spans arrive; the unsampled one's never do.
    await until(
      "the sampled answer's run",
      async () => spans().find((span) => span.traceId === kept && span.name === "Answers.run")
    )
    expect(spans().filter((span) => span.traceId === dropped)).toEqual([])
  }, 60_000)

  it("serves the metrics as Prometheus text to a scraper with its token, and exports them over OTLP", async () => {
    const scrape = (token?: string) =>
      fetch(`${base}/metrics`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } })
    expect((await scrape()).status).toBe(401)
    expect((await scrape("not-the-token")).status).toBe(401)
    // Requests no route answers, or answered before any credential was read, make no series of
    // their own: a 401 on a made-up path, a 501 for an unknown Connect procedure, a 404.
    const made = `madeup${Math.random().toString(36).slice(2, 10)}`
    for (
      const path of [
        `/v2/${made}/deeper`,
        `/v2/chats/${made}`,
        `/rpc/public/svc.rpc.public.${made}.Service/Call`,
        `/svc.rpc.public.${made}.Service/Call`,
        `/${made}`
      ]
    ) {
      const answered = await fetch(`${base}${path}`, {
        method: path.startsWith("/v2/chats/") ? "GET" : "POST",
        headers: { "content-type": "application/json" }
      })
      expect(answered.status).toBeLessThan(600)
    }
    // What the earlier tests did: answers, and their requests.
    const text = await until("the runs' metrics", async () => {
      const body = await (await scrape("scrape-secret")).text()
      return body.includes("sightline_runs_total{status=\"completed\"}") ? body : undefined
    })
    expect(text).toContain("# TYPE http_server_requests_total counter")
    expect(text).toMatch(/http_server_requests_total\{route="\/v2\/chats",status="200"\} \d+/)
    expect(text).toMatch(/http_server_request_duration_seconds_bucket\{route="\/v2\/chats",le="\+Inf"\} \d+/)
    expect(text).toMatch(
      /gen_ai_client_token_usage_total\{model="scripted",organization_id="[0-9a-f-]{36}",type="input"\} \d+/
    )
    expect(text).toMatch(/sightline_jobs_due \d+\n/)
    expect(text).not.toContain(adminKey)
    expect(text).not.toContain(made)
    expect(text).toMatch(/http_server_requests_total\{route="\/v2\/chats\/:id",status="401"\} \d+/)
    expect(text).toMatch(/http_server_requests_total\{route="unmatched",status="40\d"\} \d+/)
    // A streamed answer is an open stream until it ends.
    const stream = await fetch(`${base}/v2/chats/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "revenue by region", connector_ids: [1] })
    })
    expect(await stream.text()).toContain("\"type\":\"done\"")
    await until("the stream's close", async () => {
      const body = await (await scrape("scrape-secret")).text()
      return /sightline_sse_streams_open 0\n/.test(body) ? body : undefined
    })
    // The same metrics reach the collector.
    const exported = await until(
      "exported metrics",
      async () =>
        exports.find((e) =>
          e.path === "/v1/metrics" && JSON.stringify(e.body).includes("http_server_requests_total") &&
          JSON.stringify(e.body).includes("sightline_runs_total")
        )
    )
    expect(exported.body.resourceMetrics[0].resource.attributes).toContainEqual({
      key: "service.name",
      value: { stringValue: "sightline-test" }
    })
  }, 60_000)
})
