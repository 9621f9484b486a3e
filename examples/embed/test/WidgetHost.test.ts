/**
 * The host example of docs/embedding.md over real sockets: Sightline on one origin (mounted in the
 * library example's server), the host's page and backend on another. The backend mints a session
 * for its signed-in user only, and that session works from the host's page alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as Host from "../src/Host.js"
import * as WidgetHost from "../src/WidgetHost.js"

describe("the host page with Sightline's widget", () => {
  let sightline: Host.Host
  let host: WidgetHost.WidgetHost
  beforeAll(async () => {
    execFileSync(process.execPath, [
      new URL("../../../packages/embed/scripts/build.mjs", import.meta.url).pathname,
      "--if-stale"
    ])
    sightline = await Host.start()
    host = await WidgetHost.start({
      sightlineUrl: sightline.url,
      apiKey: sightline.adminKey,
      users: { ana: { region: "EU" }, bo: { region: "NA" } }
    })
    const allowed = await fetch(`${sightline.url}/v2/organization/settings`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${sightline.adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ embed_origins: [host.url] })
    })
    expect(allowed.status).toBe(200)
  }, 120_000)
  afterAll(async () => {
    await host?.close()
    await sightline?.close()
  })

  it("signs a user in, serves the page under its policy, and mints that user's session only", async () => {
    const signIn = await (await fetch(host.url)).text()
    expect(signIn).toContain("/sign-in?user=ana")
    expect((await fetch(`${host.url}/token`, { method: "POST" })).status).toBe(401)

    const signedIn = await fetch(`${host.url}/sign-in?user=ana`, { redirect: "manual" })
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!
    const page = await fetch(host.url, { headers: { cookie } })
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self'; style-src 'self'/)
    expect(await page.text()).toContain(`<sightline-chat server="${sightline.url}">`)
    const widget = await fetch(`${host.url}/embed/index.js`)
    expect(widget.status).toBe(200)
    expect(widget.headers.get("content-type")).toBe("text/javascript")
    expect(await widget.text()).toMatch(/^import/)
    expect((await fetch(`${host.url}/embed/../package.json`)).status).toBe(404)

    const minted = await fetch(`${host.url}/token`, { method: "POST", headers: { cookie } })
    expect(minted.status).toBe(200)
    const session = (await minted.json()) as { token: string; expires_at: string }
    expect(Date.parse(session.expires_at)).toBeGreaterThan(Date.now())
    const asWidget = (origin: string) =>
      fetch(`${sightline.url}/v2/embed/session`, { headers: { authorization: `Bearer ${session.token}`, origin } })
    const info = await asWidget(host.url)
    expect(info.status).toBe(200)
    expect(((await info.json()) as { external_user_id: string }).external_user_id).toBe("ana")
    expect((await asWidget("http://127.0.0.1:1")).status).toBe(403)
  })
})
