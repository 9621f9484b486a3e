/**
 * OAuth 2.1 for the MCP server, end to end: the standalone server as a real process with
 * `SIGHTLINE_MCP_OAUTH=1`, the official MCP client's OAuth support (discovery, dynamic registration,
 * PKCE), and a member who consents in the console in Chromium. The code comes back to a loopback
 * listener, as it does for a local agent.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Browsers from "./utils/browser.js"
import { freePort, serve, tempDir } from "./utils/process.js"

const skipped = Browsers.unavailable()
if (skipped !== undefined && process.env.CI === "true") throw new Error(`console tests cannot run: ${skipped}`)

const memberEmail = "dana@example.test"
const password = "a long member password"

describe.skipIf(skipped !== undefined)("OAuth for the MCP server", () => {
  let browser: Browser
  let base: string
  let adminKey: string
  let output: { readonly stdout: string; readonly stderr: string }
  let callback: Server
  let documents: Server
  let documentBase: string
  let redirectUrl: string
  const codes: Array<(code: string) => void> = []

  beforeAll(async () => {
    const port = await freePort()
    // `localhost`, as the public URL says: a secure origin, so the console's refresh cookie is kept.
    base = `http://localhost:${port}`
    // Client ID metadata documents, served over https on loopback with a certificate the server is
    // told to trust; the operator lets it reach loopback (as for webhooks), which it refuses by default.
    const certs = mkdtempSync(join(tmpdir(), "sightline-cimd-"))
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      join(certs, "key.pem"),
      "-out",
      join(certs, "cert.pem")
    ], { stdio: "ignore" })
    const documentPort = await freePort()
    documentBase = `https://127.0.0.1:${documentPort}`
    documents = createHttpsServer(
      { key: readFileSync(join(certs, "key.pem")), cert: readFileSync(join(certs, "cert.pem")) },
      (request, response) => {
        const url = `${documentBase}${request.url}`
        response.setHeader("content-type", "application/json")
        response.end(JSON.stringify({
          // A document must name itself; `/impostor.json` names another client.
          client_id: request.url === "/impostor.json" ? `${documentBase}/agent.json` : url,
          client_name: "Document agent",
          redirect_uris: [redirectUrl],
          token_endpoint_auth_method: "none"
        }))
      }
    ).listen(documentPort, "127.0.0.1")
    // The agent's loopback listener: the browser brings the code here.
    const callbackPort = await freePort()
    redirectUrl = `http://127.0.0.1:${callbackPort}/callback`
    const server = await serve({
      SIGHTLINE_PORT: String(port),
      SIGHTLINE_DATA_DIR: tempDir(),
      SIGHTLINE_SANDBOX_DIR: "off",
      SIGHTLINE_MCP_OAUTH: "1",
      SIGHTLINE_WEBHOOK_ALLOW_PRIVATE: "1",
      NODE_EXTRA_CA_CERTS: join(certs, "cert.pem")
    })
    output = server.output
    adminKey = /Admin API key \(shown once, keep it\): (\S+)/.exec(server.output.stdout)![1]!
    const invited = await (await fetch(`${base}/v2/members/invite`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: memberEmail, role: "member" })
    })).json() as any
    const set = await fetch(`${base}/v2/auth/password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: invited.sign_in_token, password })
    })
    if (set.status !== 200) throw new Error(`could not set the member's password: ${await set.text()}`)
    callback = createServer((request, response) => {
      const url = new URL(request.url ?? "/", redirectUrl)
      response.end("You can close this window.")
      const code = url.searchParams.get("code")
      if (code !== null) codes.shift()?.(code)
    }).listen(callbackPort, "127.0.0.1")
    browser = await Browsers.launch()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    callback?.close()
    documents?.close()
  })

  const signedIn = async (): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(base)
    await page.getByLabel("E-mail address").fill(memberEmail)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("navigation", { name: "Main" }).waitFor({ timeout: 30_000 })
    return { context, page }
  }

  /** An agent's OAuth state, as the MCP client keeps it; consent happens in `page`. */
  const agent = (page: Page, clientMetadataUrl?: string) => {
    const state: { client?: OAuthClientInformationMixed; tokens?: OAuthTokens; verifier?: string } = {}
    let code: Promise<string> = Promise.resolve("")
    const provider = {
      ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
      get redirectUrl() {
        return redirectUrl
      },
      get clientMetadata() {
        return {
          client_name: "Test agent",
          redirect_uris: [redirectUrl],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none"
        }
      },
      clientInformation: () => state.client,
      saveClientInformation: (client: OAuthClientInformationMixed) => {
        state.client = client
      },
      tokens: () => state.tokens,
      saveTokens: (tokens: OAuthTokens) => {
        state.tokens = tokens
      },
      redirectToAuthorization: async (url: URL) => {
        code = new Promise((resolve) => codes.push(resolve))
        await page.goto(url.toString())
      },
      saveCodeVerifier: (verifier: string) => {
        state.verifier = verifier
      },
      codeVerifier: () => state.verifier!
    }
    const transport = () => new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider })
    return { state, transport, code: () => code }
  }

  it("advertises its metadata, and challenges with where to find it", async () => {
    const challenge = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect(challenge.status).toBe(401)
    expect(challenge.headers.get("www-authenticate")).toBe(
      `Bearer realm="sightline", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`
    )
    const resource = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json() as any
    expect(resource).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] })
    const server = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as any
    expect(server).toMatchObject({
      issuer: base,
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      registration_endpoint: `${base}/oauth/register`
    })
    // Registration takes https and loopback http only: nothing else a browser could be sent to.
    for (
      const uri of [
        "http://evil.example/callback",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "intent://callback#Intent;scheme=https;end",
        "ms-settings:display",
        "com.example.app:/callback",
        "https://agent.example/cb#fragment"
      ]
    ) {
      const bad = await fetch(`${base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [uri] })
      })
      expect([uri, bad.status, (await bad.json() as any).error]).toEqual([uri, 400, "invalid_redirect_uri"])
    }
  })

  it("a console session's token works at /mcp and on the Connect surface, as docs/mcp.md says", async () => {
    const session = await (await fetch(`${base}/v2/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: memberEmail, password })
    })).json() as any
    const listed = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${session.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    expect([listed.status, await listed.text()]).toEqual([200, expect.stringContaining("query_metrics")])
    const whoami = await fetch(`${base}/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI`, {
      method: "POST",
      headers: {
        svc_api_key: session.access_token,
        "content-type": "application/json",
        "connect-protocol-version": "1"
      },
      body: "{}"
    })
    expect([whoami.status, await whoami.text()]).toEqual([200, expect.stringContaining(memberEmail)])
  })

  it("a code replayed after the grant's first renewal, or a refresh token two renewals old, ends the grant", async () => {
    const form = (fields: Record<string, string>) =>
      fetch(`${base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields)
      })
    const client = await (await fetch(`${base}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [redirectUrl], client_name: "Replaying agent" })
    })).json() as any
    const session = await (await fetch(`${base}/v2/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: memberEmail, password })
    })).json() as any
    const verifier = "a-verifier-of-at-least-43-characters-for-the-replay-test"
    const challenge = createHash("sha256").update(verifier).digest("base64url")
    // A grant as the consent page makes one, and its first refresh token.
    const grant = async () => {
      const decided = await (await fetch(`${base}/v2/oauth/consent`, {
        method: "POST",
        headers: { authorization: `Bearer ${session.access_token}`, "content-type": "application/json" },
        body: JSON.stringify({
          response_type: "code",
          client_id: client.client_id,
          redirect_uri: redirectUrl,
          code_challenge: challenge,
          code_challenge_method: "S256",
          scope: "read",
          resource: `${base}/mcp`,
          approve: true
        })
      })).json() as any
      const code = new URL(decided.redirect_to).searchParams.get("code")!
      const exchange = {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        redirect_uri: redirectUrl,
        client_id: client.client_id
      }
      const issued = await form(exchange)
      expect(issued.status).toBe(200)
      return { exchange, refresh: ((await issued.json()) as any).refresh_token as string }
    }
    const renew = async (refreshToken: string) => {
      const renewed = await form({
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: client.client_id
      })
      return {
        status: renewed.status,
        token: renewed.status === 200 ? ((await renewed.json()) as any).refresh_token : ""
      }
    }

    const first = await grant()
    const second = await renew(first.refresh)
    expect(second.status).toBe(200)
    // The code again, after a renewal: someone holds a copy, so the grant ends.
    expect((await form(first.exchange)).status).toBe(400)
    expect((await renew(second.token)).status).toBe(400)

    const other = await grant()
    const a = await renew(other.refresh)
    const b = await renew(a.token)
    expect([a.status, b.status]).toEqual([200, 200])
    expect((await renew(other.refresh)).status).toBe(400)
    expect((await renew(b.token)).status).toBe(400)
  })

  it(
    "connects an agent with a member's consent: its scopes narrow the tools, its token renews, and an admin disconnects it",
    async () => {
      const { context, page } = await signedIn()
      const { code, state, transport } = agent(page)

      // The first attempt discovers, registers and sends the member to the consent page.
      const first = new Client({ name: "test-agent", version: "1.0.0" })
      await expect(first.connect(transport())).rejects.toThrow(/Unauthorized/i)
      await page.getByRole("heading", { name: "Connect an agent" }).waitFor({ timeout: 30_000 })
      await page.getByText("Test agent").first().waitFor()
      // The client asks for every scope; the member keeps reading and querying only.
      await page.getByLabel("ask Sightline's analyst questions").uncheck()
      await page.getByLabel("run your playbooks").uncheck()
      await page.screenshot({ path: join(Browsers.screenshotDir, "oauth-consent.png") })
      await page.getByRole("button", { name: "Allow" }).click()
      const finishing = transport()
      const theCode = await code()
      await finishing.finishAuth(theCode)
      expect(state.tokens?.refresh_token).toEqual(expect.any(String))
      expect(state.tokens?.scope).toBe("read query")

      const client = new Client({ name: "test-agent", version: "1.0.0" })
      await client.connect(transport())
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      expect(names).toContain("list_connectors")
      expect(names).toContain("query_metrics")
      expect(names).not.toContain("ask")
      expect(names).not.toContain("run_playbook")
      const listed = await client.callTool({ name: "list_connectors", arguments: {} })
      expect(listed.isError).toBeFalsy()
      expect(JSON.stringify(listed.structuredContent)).toContain("DEMO")
      const refused = await client.callTool({ name: "ask", arguments: { question: "revenue by region" } })
      expect(refused.isError).toBe(true)
      expect(JSON.stringify(refused.content)).toMatch(/not granted the ask scope/)

      // The access token is for /mcp only.
      const onApi = await fetch(`${base}/v2/connectors`, {
        headers: { authorization: `Bearer ${state.tokens!.access_token}` }
      })
      expect(onApi.status).toBe(401)

      // Renewal rotates the refresh token; the old one presented again ends the grant.
      const renew = (refreshToken: string) =>
        fetch(`${base}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "refresh_token",
            refresh_token: refreshToken,
            client_id: state.client!.client_id
          })
        })
      const renewed = await renew(state.tokens!.refresh_token!)
      expect(renewed.status).toBe(200)
      const fresh = await renewed.json() as any
      expect(fresh.refresh_token).not.toBe(state.tokens!.refresh_token)
      expect(fresh.scope).toBe("read query")
      state.tokens = fresh

      // The admin sees the agent, with the member and the scopes, and the calls in the audit log.
      const grants = await (await fetch(`${base}/v2/oauth/grants`, {
        headers: { authorization: `Bearer ${adminKey}` }
      })).json() as any
      expect(grants.grants).toContainEqual(expect.objectContaining({
        client_id: state.client!.client_id,
        client_name: "Test agent",
        scopes: ["read", "query"]
      }))
      const audit = await (await fetch(`${base}/v2/audit-logs?action=mcp.tool_call`, {
        headers: { authorization: `Bearer ${adminKey}` }
      })).json() as any
      expect(audit.entries[0].details.oauth_client_id).toBe(state.client!.client_id)

      // An admin disconnects it in the console: its tokens stop at once.
      const admin = await context.browser()!.newContext()
      const adminPage = await admin.newPage()
      const adminMember = await (await fetch(`${base}/v2/members/invite`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ email: "erin@example.test", role: "admin" })
      })).json() as any
      await fetch(`${base}/v2/auth/password`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: adminMember.sign_in_token, password })
      })
      await adminPage.goto(base)
      await adminPage.getByLabel("E-mail address").fill("erin@example.test")
      await adminPage.getByLabel("Password").fill(password)
      await adminPage.getByRole("button", { name: "Sign in" }).click()
      await adminPage.goto(`${base}/#/admin`)
      await adminPage.getByRole("button", { name: "Disconnect Test agent" }).click()
      await adminPage.getByText("No agent is connected with a member's sign-in.").waitFor({ timeout: 30_000 })
      const after = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${fresh.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      })
      expect(after.status).toBe(401)
      expect((await renew(fresh.refresh_token)).status).toBe(400)
      // Nothing secret reached the server's logs.
      for (const secret of [theCode, fresh.access_token, fresh.refresh_token]) {
        expect(output.stdout + output.stderr).not.toContain(secret)
      }
      await client.close()
      await admin.close()
      await context.close()
    },
    120_000
  )

  it(
    "reads the registration of a client named by its metadata document's URL, and refuses a document naming another",
    async () => {
      const server = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as any
      expect(server.client_id_metadata_document_supported).toBe(true)
      const { context, page } = await signedIn()
      const { code, transport } = agent(page, `${documentBase}/agent.json`)
      await expect(new Client({ name: "doc-agent", version: "1.0.0" }).connect(transport())).rejects.toThrow(
        /Unauthorized/i
      )
      await page.getByText("Document agent").first().waitFor({ timeout: 30_000 })
      await page.getByRole("button", { name: "Allow" }).click()
      await transport().finishAuth(await code())
      const client = new Client({ name: "doc-agent", version: "1.0.0" })
      await client.connect(transport())
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("ask")
      await client.close()
      const grants = await (await fetch(`${base}/v2/oauth/grants`, {
        headers: { authorization: `Bearer ${adminKey}` }
      })).json() as any
      expect(grants.grants).toContainEqual(expect.objectContaining({
        client_id: `${documentBase}/agent.json`,
        client_name: "Document agent"
      }))

      // A document that names another client is refused on the consent page.
      await page.goto(`${base}/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: `${documentBase}/impostor.json`,
        redirect_uri: redirectUrl,
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256"
      })}`)
      await page.getByRole("alert").filter({ hasText: "names another client_id" }).waitFor({ timeout: 30_000 })
      await context.close()
    },
    60_000
  )

  it(
    "sends the member back with access_denied when they refuse, and never to an unregistered redirect URI",
    async () => {
      const { context, page } = await signedIn()
      const registered = await (await fetch(`${base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [redirectUrl], client_name: "Refused agent" })
      })).json() as any
      const authorize = (redirect: string) =>
        `${base}/oauth/authorize?${new URLSearchParams({
          response_type: "code",
          client_id: registered.client_id,
          redirect_uri: redirect,
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
          state: "s1"
        })}`
      await page.goto(authorize("https://evil.example/steal"))
      await page.getByRole("alert").filter({ hasText: "redirect_uri" }).waitFor({ timeout: 30_000 })
      expect(await page.getByRole("button", { name: "Allow" }).count()).toBe(0)

      await page.goto(authorize(redirectUrl))
      const back = page.waitForURL(/127\.0\.0\.1:\d+\/callback/)
      await page.getByRole("button", { name: "Deny" }).click()
      await back
      const url = new URL(page.url())
      expect(url.searchParams.get("error")).toBe("access_denied")
      expect(url.searchParams.get("state")).toBe("s1")
      await context.close()
    },
    60_000
  )
})
