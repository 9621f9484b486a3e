/**
 * Bad input over the socket gets a clear 4xx in the envelope (or a Connect error body), never a 5xx,
 * and a message that stays short.
 */
import * as net from "node:net"
import { expect, it } from "vitest"
import { connectHeaders } from "./utils/connect.js"
import { describeServers, type TestServer } from "./utils/server.js"

const envelope = async (response: Response) => {
  const text = await response.text()
  expect(text.length).toBeLessThan(1024)
  const body = JSON.parse(text)
  expect(body).toEqual({ error: { code: expect.any(String), message: expect.any(String) } })
  return body.error as { code: string; message: string }
}

const newPlaybook = async (server: TestServer, key: string): Promise<string> => {
  const created = await server.request("/v2/playbooks", { method: "POST", key })
  expect(created.status).toBe(201)
  return ((await created.json()) as { id: string }).id
}

describeServers("bad input gets a clear 4xx", (server) => {
  it("refuses NUL characters and unpaired surrogates in bodies, queries and paths, naming where", async () => {
    const org = await server().newOrg()
    const id = await newPlaybook(server(), org.key)
    const patch = (raw: string) =>
      server().request(`/v2/playbooks/${id}`, {
        method: "PATCH",
        key: org.key,
        headers: { "content-type": "application/json" },
        body: raw
      })
    const nul = await patch("{\"name\":\"a\\u0000b\"}")
    expect(nul.status).toBe(400)
    expect((await envelope(nul)).message).toBe("Invalid request: name: contains a NUL character")
    const surrogate = await patch("{\"email_addresses\":[\"ok@example.test\",\"\\ud800@x.test\"]}")
    expect(surrogate.status).toBe(400)
    expect((await envelope(surrogate)).message).toBe(
      "Invalid request: email_addresses[1]: contains an unpaired UTF-16 surrogate"
    )
    const query = await server().request("/v2/chats?search_term=%00", { key: org.key })
    expect(query.status).toBe(400)
    expect((await envelope(query)).message).toContain("query parameter \"search_term\": contains a NUL character")
    const path = await server().request("/v2/playbooks/%00", { key: org.key })
    expect(path.status).toBe(400)
    const badEncoding = await server().request("/v2/chats?search_term=%ED%A0%80", { key: org.key })
    expect(badEncoding.status).toBeLessThan(500)
    // The playbook is untouched.
    const stored = await server().request(`/v2/playbooks/${id}`, { key: org.key })
    expect(stored.status).toBe(200)
    expect(await stored.text()).not.toContain("\\u0000")
  })

  it("refuses JSON nested past 64 levels before decoding, on /v2 and on the Connect surfaces", async () => {
    const org = await server().newOrg()
    const id = await newPlaybook(server(), org.key)
    const deep = `{"name":${"[".repeat(5000)}${"]".repeat(5000)}}`
    const response = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key: org.key,
      headers: { "content-type": "application/json" },
      body: deep
    })
    expect(response.status).toBe(400)
    expect((await envelope(response)).message).toBe("Invalid request: the JSON body is nested deeper than 64 levels")
    const connect = await fetch(`${server().baseUrl}/rpc/public/svc.rpc.public.app.AppService/GetApp`, {
      method: "POST",
      headers: connectHeaders({ svc_api_key: org.key }),
      body: `{"appId":${"[".repeat(5000)}${"]".repeat(5000)}}`
    })
    expect(connect.status).toBe(400)
    expect(await connect.json()).toMatchObject({
      code: "invalid_argument",
      message: expect.stringContaining("nested deeper")
    })
  })

  it("accepts only the content types the operation declares: 415 in the envelope otherwise", async () => {
    const org = await server().newOrg()
    const id = await newPlaybook(server(), org.key)
    const form = new FormData()
    form.set("name", "x")
    const cases: Array<[string, RequestInit]> = [
      ["multipart", { body: form }],
      ["jsonx", { headers: { "content-type": "application/jsonx" }, body: "{\"name\":\"x\"}" }],
      ["urlencoded", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "name=x" }],
      ["octet-stream", { headers: { "content-type": "application/octet-stream" }, body: "{\"name\":\"x\"}" }]
    ]
    for (const [label, init] of cases) {
      const response = await server().request(`/v2/playbooks/${id}`, { method: "PATCH", key: org.key, ...init })
      expect([label, response.status]).toEqual([label, 415])
      expect((await envelope(response)).message).toContain("send application/json")
    }
    // A charset parameter is fine; the chat operations also take multipart.
    const ok = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key: org.key,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: "{\"name\":\"renamed\"}"
    })
    expect(ok.status).toBe(200)
  })

  it("an operation that takes no body accepts none or {}, and says so of anything else", async () => {
    const org = await server().newOrg()
    const id = await newPlaybook(server(), org.key)
    const path = `/v2/playbooks/${id}/deploy`
    const asked = (init: RequestInit) => server().request(path, { method: "POST", key: org.key, ...init })
    // It takes none: what a client commonly sends with a POST is answered by the operation itself.
    for (const init of [{}, { json: {} }, { headers: { "content-type": "application/json" }, body: " { } " }]) {
      const response = await asked(init)
      expect(response.status).not.toBe(415)
      expect((await envelope(response)).message).toMatch(/has no prompt/)
    }
    for (
      const init of [
        { json: { name: "x" } },
        { headers: { "content-type": "text/plain" }, body: "hello" },
        { headers: { "content-type": "application/json" }, body: "[]" }
      ]
    ) {
      const response = await asked(init)
      expect(response.status).toBe(400)
      expect((await envelope(response)).message).toBe(
        "Invalid request: this operation takes no body (send none, or {})"
      )
    }
  })

  it("a malformed path segment is no route, not a wrong method", async () => {
    const org = await server().newOrg()
    for (const path of ["/v2/agents/..;/run", `/v2/agents/${"a".repeat(5000)}/run`]) {
      const response = await server().request(path, { method: "POST", key: org.key, json: {} })
      expect([path.slice(0, 30), response.status]).toEqual([path.slice(0, 30), 404])
      expect((await envelope(response)).message).not.toMatch(/is not allowed here/)
    }
  })

  it("validates integer ranges: connector ids past the column type are 400, not 500", async () => {
    const org = await server().newOrg()
    for (const id of ["2147483648", "9007199254740991", "-1"]) {
      const response = await server().request(`/v2/connectors/${id}/access`, { key: org.key })
      expect([id, response.status]).toEqual([id, 400])
      await envelope(response)
    }
    const chat = await server().request("/v2/chats", {
      method: "POST",
      key: org.key,
      json: { question: "q", connector_ids: [2147483648] }
    })
    expect(chat.status).toBe(400)
    const offset = await server().request("/v2/chats?offset=99999999999999", { key: org.key })
    expect(offset.status).toBe(400)
  })

  it("answers a wrong method with 405 and Allow, and a 404 never echoes the query string", async () => {
    const org = await server().newOrg()
    const wrong = await server().request("/v2/playbooks", { method: "PUT", key: org.key })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("GET, POST")
    await envelope(wrong)
    const missing = await server().request("/v2/nothing-here?secret=sk-12345", { key: org.key })
    expect(missing.status).toBe(404)
    expect((await envelope(missing)).message).not.toContain("sk-12345")
  })

  it("keeps error messages short: a 1 MB field yields a short message", async () => {
    const org = await server().newOrg()
    const id = await newPlaybook(server(), org.key)
    const response = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key: org.key,
      json: { cron_string: "x".repeat(1_000_000) }
    })
    expect(response.status).toBe(400)
    await envelope(response)
  })

  it("Connect: the bare prefix is a Connect error, and an empty message must be an object", async () => {
    const org = await server().newOrg()
    const bare = await fetch(`${server().baseUrl}/rpc/public/`, {
      method: "POST",
      headers: connectHeaders({ svc_api_key: org.key }),
      body: "{}"
    })
    // The same answer as an unknown procedure: `unimplemented` in Connect's error body.
    const unknown = await fetch(`${server().baseUrl}/rpc/public/svc.rpc.public.Nope/Nope`, {
      method: "POST",
      headers: connectHeaders({ svc_api_key: org.key }),
      body: "{}"
    })
    expect(bare.status).toBe(unknown.status)
    expect(await bare.json()).toMatchObject({ code: "unimplemented" })
    for (const body of ["1", "[]", "\"x\""]) {
      const response = await fetch(`${server().baseUrl}/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI`, {
        method: "POST",
        headers: connectHeaders({ svc_api_key: org.key }),
        body
      })
      expect([body, response.status]).toEqual([body, 400])
      expect(await response.json()).toMatchObject({
        code: "invalid_argument",
        message: "the request message must be a JSON object"
      })
    }
  })

  it("answers what Node's parser refuses in the envelope: 431 for huge headers, 400 for a raw byte in the path", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(server().baseUrl)
        const socket = net.connect(Number(url.port), url.hostname, () => socket.end(request))
        let data = ""
        socket.on("data", (chunk) => (data += chunk))
        socket.on("end", () => resolve(data))
        socket.on("error", reject)
      })
    const huge = await raw(`GET /v2/chats HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`)
    expect(huge).toMatch(/^HTTP\/1\.1 431 /)
    expect(JSON.parse(huge.slice(huge.indexOf("\r\n\r\n") + 4)).error.code).toBe("invalid_request")
    const badPath = await raw("GET /v2/ch\u00e9ts HTTP/1.1\r\nhost: x\r\n\r\n")
    expect(badPath).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(badPath.slice(badPath.indexOf("\r\n\r\n") + 4)).error.code).toBe("invalid_request")
  })

  it("refuses fields a body does not declare, naming them (as the OpenAPI document's additionalProperties: false says)", async () => {
    const org = await server().newOrg()
    const response = await server().request("/v2/api-keys", {
      method: "POST",
      key: org.key,
      json: { inherit_all_roles: true, name: "typo" }
    })
    expect(response.status).toBe(400)
    expect((await envelope(response)).message).toMatch(/^Invalid request: inherit_all_roles: is unexpected/)
    const id = await newPlaybook(server(), org.key)
    const nested = await server().request(`/v2/playbooks/${id}`, {
      method: "PATCH",
      key: org.key,
      json: { name: "n", extra: 1 }
    })
    expect(nested.status).toBe(400)
    expect((await envelope(nested)).message).toContain("extra")
  })
})
