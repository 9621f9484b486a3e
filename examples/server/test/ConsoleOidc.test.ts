/**
 * OIDC sign-in to the console in Chromium: the standalone server as a real process, an OpenID
 * Provider (`oidc-provider`) on loopback, and the authorization code flow with PKCE between them.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { join } from "node:path"
import type { Browser } from "playwright-core"
import * as Browsers from "./utils/browser.js"
import * as Oidc from "./utils/oidc.js"
import { freePort, serve, tempDir } from "./utils/process.js"

const skipped = Browsers.unavailable()
if (skipped !== undefined && process.env.CI === "true") throw new Error(`console tests cannot run: ${skipped}`)

describe.skipIf(skipped !== undefined)("OIDC sign-in to the console", () => {
  let browser: Browser
  let provider: Oidc.TestProvider
  let base: string
  let adminKey: string

  beforeAll(async () => {
    const port = await freePort()
    base = `http://localhost:${port}`
    provider = await Oidc.start(`${base}/v2/auth/oidc/callback`)
    const server = await serve({
      SIGHTLINE_PORT: String(port),
      SIGHTLINE_DATA_DIR: tempDir(),
      SIGHTLINE_SANDBOX_DIR: "off",
      SIGHTLINE_OIDC_ISSUER: provider.issuer,
      SIGHTLINE_OIDC_CLIENT_ID: provider.clientId,
      SIGHTLINE_OIDC_CLIENT_SECRET: provider.clientSecret,
      SIGHTLINE_OIDC_NAME: "Loopback IdP"
    })
    adminKey = /Admin API key \(shown once, keep it\): (\S+)/.exec(server.output.stdout)![1]!
    await fetch(`${base}/v2/members/invite`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "carol@example.test", role: "member" })
    })
    browser = await Browsers.launch()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await provider?.close()
  })

  const signInAt = async (login: string) => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(base)
    await page.getByRole("link", { name: "Sign in with Loopback IdP" }).click()
    // The provider's own pages: its login form, then its consent.
    await page.locator("input[name=login]").fill(login)
    await page.locator("input[name=password]").fill("anything")
    await page.getByRole("button", { name: "Sign-in" }).click()
    await page.getByRole("button", { name: "Continue" }).click()
    return { context, page }
  }

  it("signs in an invited member the provider vouches for, into a working session", async () => {
    const { context, page } = await signInAt("carol@example.test")
    await page.getByRole("navigation", { name: "Main" }).waitFor({ timeout: 30_000 })
    await page.getByText("carol@example.test").waitFor()
    expect(page.url()).toBe(`${base}/#/chats`)
    await page.screenshot({ path: join(Browsers.screenshotDir, "oidc.png") })
    // The session works after a reload too: the refresh cookie was set by the callback.
    await page.reload()
    await page.getByText("carol@example.test").waitFor()
    await context.close()
  }, 60_000)

  it("refuses an address no member has, and says so on the sign-in page", async () => {
    const { context, page } = await signInAt("mallory@example.test")
    await page.getByRole("alert").filter({ hasText: "No single member of Sightline has your e-mail address" })
      .waitFor({ timeout: 30_000 })
    expect(page.url()).toBe(`${base}/#/sign-in-failed/no-member`)
    expect(await page.getByRole("navigation", { name: "Main" }).count()).toBe(0)
    await context.close()
  }, 60_000)

  it("shows only its own messages for a failure, never text from the link", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const planted = "Your account is locked: call +1 555 0100 to unlock it"
    await page.goto(`${base}/#/sign-in-failed/${encodeURIComponent(planted)}`)
    await page.getByRole("alert").filter({ hasText: "The sign-in failed. Try again." }).waitFor({ timeout: 30_000 })
    expect(await page.getByText(planted).count()).toBe(0)
    expect(await page.content()).not.toContain("555 0100")
    await context.close()
  }, 60_000)

  it("says how to sign in: password, and the provider's start URL", async () => {
    const methods = await (await fetch(`${base}/v2/auth/methods`)).json()
    expect(methods).toEqual({ password: true, oidc: { name: "Loopback IdP", start_url: "/v2/auth/oidc/start" } })
    // A callback without the flow's cookie is refused, not signed in.
    const forged = await fetch(`${base}/v2/auth/oidc/callback?code=x&state=y`, { redirect: "manual" })
    expect(forged.status).toBe(302)
    expect(forged.headers.get("location")).toMatch(/#\/sign-in-failed\/expired$/)
    expect(forged.headers.getSetCookie().some((c) => c.startsWith("sightline_refresh="))).toBe(false)
  })
})
