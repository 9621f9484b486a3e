/**
 * The service endpoints and the envelope around everything: OpenAPI (checked by a real validator),
 * the reference page, health checks, oversized bodies, request ids.
 */
import { expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { SightlineApi } from "@sightline/http/Api"
import { body, describeServers } from "./utils/server.js"

/** Every `METHOD /path` of the contract, in OpenAPI's `{param}` form. */
const contractOperations = (): Array<string> => {
  const operations: Array<string> = []
  for (const group of Object.values(SightlineApi.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      // A trailing wildcard is documented as the `{path}` parameter.
      operations.push(
        `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{path}")}`
      )
    }
  }
  return operations
}

describeServers("service endpoints and the envelope", (server) => {
  it("serves a valid OpenAPI 3.1 document with every operation", async () => {
    const response = await server().request("/v2/openapi.json")
    expect(response.status).toBe(200)
    const document = await body(response)
    expect(document.openapi).toMatch(/^3\.1\./)
    const result = await new Validator().validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)

    const documented = Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
      Object.keys(item).filter((key) => key !== "parameters").map((method) => `${method} ${path}`)
    )
    expect(contractOperations().length).toBeGreaterThan(30)
    expect(documented.sort()).toEqual(contractOperations().sort())
    // Errors are documented as the envelope, never in the platform's decode-error shape.
    const patch = document.paths["/v2/playbooks/{id}"].patch
    expect(JSON.stringify(patch.responses["400"])).toContain("InvalidRequestError")
    expect(JSON.stringify(document)).not.toContain("HttpApiDecodeError")
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
  })

  it("serves the API reference page and health checks", async () => {
    const docs = await server().request("/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(await docs.text()).toContain("Sightline API")
    expect(await body(await server().request("/healthz"))).toEqual({ status: "ok" })
    expect(await body(await server().request("/readyz"))).toEqual({ status: "ready" })
  })

  it("refuses bodies over 1 MiB: 413 when sized, cut off when chunked", async () => {
    const { key } = await server().newOrg()
    const { id } = await body(await server().request("/v2/playbooks", { method: "POST", key }))
    const big = JSON.stringify({ name: "x", prompt: "p".repeat(1024 * 1024 + 10) })
    const sized = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key,
      headers: { "content-type": "application/json" },
      body: big
    })
    expect(sized.status).toBe(413)
    expect((await body(sized)).error.code).toBe("invalid_request")

    // A chunked body (no content-length) is cut off once it passes the limit: the platform stops
    // reading and drops the connection, so the client sees the request fail, and nothing is stored.
    const encoder = new TextEncoder()
    const chunks = [encoder.encode(big.slice(0, 600_000)), encoder.encode(big.slice(600_000))]
    const chunked = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key,
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift()
          if (next === undefined) controller.close()
          else controller.enqueue(next)
        }
      }),
      duplex: "half"
    } as RequestInit).then((response) => response.status, () => "connection closed")
    expect([413, "connection closed"]).toContain(chunked)
    const stored = await body(await server().request(`/v2/playbooks/${id}`, { key }))
    expect(stored.playbook.name).not.toBe("x")

    // Just under the limit is accepted (the prompt is long but legal).
    const fits = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key,
      json: { prompt: "p".repeat(1000) }
    })
    expect(fits.status).toBe(200)
  })

  it("puts a request id on every response, echoing a sane one", async () => {
    const echoed = await server().request("/v2/playbooks", { headers: { "x-request-id": "trace-123" } })
    expect(echoed.status).toBe(401)
    expect(echoed.headers.get("x-request-id")).toBe("trace-123")
    const replaced = await server().request("/healthz", { headers: { "x-request-id": "bad id with spaces" } })
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const unknown = await server().request("/nowhere")
    expect(unknown.status).toBe(404)
    expect(unknown.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    expect(await body(unknown)).toEqual({ error: { code: "not_found", message: "No route for GET /nowhere" } })
  })
})
