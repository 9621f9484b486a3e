/**
 * The web console in a real browser (Debian's Chromium through playwright-core) against the real
 * standalone server process, on a fresh data directory, with the offline model over the DEMO data and
 * a scripted OpenAI-compatible model on loopback for answers slow enough to reload or cancel.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as BubblewrapRuntime from "@sightline/sandbox/BubblewrapRuntime"
import * as Option from "effect/Option"
import ExcelJS from "exceljs"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { basename, join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as Browsers from "./utils/browser.js"
import { serve, tempDir } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import { until } from "./utils/wait.js"

const skipped = Browsers.unavailable()
if (skipped !== undefined && process.env.CI === "true") throw new Error(`console tests cannot run: ${skipped}`)
if (skipped !== undefined) console.warn(`console tests skipped: ${skipped}`)
// Filing a library change takes a sandbox: the test of a change's checks needs bubblewrap.
const noSandboxes = Option.getOrUndefined(BubblewrapRuntime.availability())
if (noSandboxes !== undefined && process.env.CI === "true") throw new Error(`sandboxes cannot run: ${noSandboxes}`)

const password = "a long admin password"
const opsEmail = "ops@sightline.local"
// Markdown as a model writes it, with HTML and a script link that must stay text.
const markdownAnswer = "**Web** leads.\n\n| channel | revenue |\n| --- | --- |\n| web | 10 |\n\n" +
  "<img src=x onerror=\"window.__xss=1\"> <script>window.__xss=2</script> [click](javascript:window.__xss=3)"
// A Cube project of the importers' fixtures, imported on the connectors' page.
const cubeProject = new URL("../../../packages/core/test/fixtures/import/cube/model", import.meta.url).pathname
const rank = (outcome: string) => ["refused", "approximated", "imported"].indexOf(outcome)
const slowAnswer = Array.from({ length: 50 }, (_, i) => `word${i}`).join(" ") + " THE-END"

let browser: Browser
let server: Awaited<ReturnType<typeof serve>>
let provider: Provider.ScriptedProvider
let base: string
let adminLink: string
let adminKey: string

const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: join(Browsers.screenshotDir, `${name}.png`), fullPage: true })

/** A context whose every request must stay on this machine's server. */
const newContext = async (): Promise<{ context: BrowserContext; external: Array<string> }> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  const external: Array<string> = []
  context.on("request", (request) => {
    if (!request.url().startsWith(base) && !request.url().startsWith("data:")) external.push(request.url())
  })
  return { context, external }
}

const setPassword = async (page: Page, link: string) => {
  await page.goto(link)
  await page.getByLabel("New password").fill(password)
  await page.getByLabel("Repeat the password").fill(password)
  await page.getByRole("button", { name: "Set password and sign in" }).click()
  // Signed in (the main navigation), or refused: then the test fails with the page's own words.
  const nav = page.getByRole("navigation", { name: "Main" })
  await nav.or(page.getByRole("alert")).waitFor()
  if (!(await nav.isVisible())) {
    throw new Error(`setting the password failed: ${await page.getByRole("alert").textContent()}`)
  }
}

/** Signs the second admin in with the password form. */
const signIn = async (page: Page) => {
  await page.goto(base)
  await page.getByLabel("E-mail address").fill(opsEmail)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
}

/** A request to the API with the first admin's key. */
const api = async (method: string, path: string, json?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { body: JSON.stringify(json) })
  })
  return { status: response.status, body: await response.json().catch(() => undefined) as any }
}

const ask = async (page: Page, question: string, model?: string) => {
  if (model !== undefined) {
    await page.getByText("Connectors, tools and model").click()
    await page.getByLabel("Model").selectOption(model)
  }
  await page.getByLabel("Question").fill(question)
  await page.getByRole("button", { name: "Ask" }).click()
}

describe.skipIf(skipped !== undefined)("the web console in Chromium", () => {
  beforeAll(async () => {
    // `pnpm install` builds the console; this only rebuilds it when a source is newer.
    const built = spawnSync(process.execPath, ["packages/console/scripts/ensure-built.mjs"], {
      cwd: new URL("../../..", import.meta.url).pathname,
      stdio: "inherit"
    })
    if (built.status !== 0) throw new Error("the console did not build")
    provider = await Provider.start((request) =>
      JSON.stringify(request).includes("cancel me")
        ? { endless: true }
        : JSON.stringify(request.messages.at(-1)).includes("most money") && request.messages.at(-1).role === "user"
        // A model that answers with the DEMO model's metric (the fresh install's DEMO connector is 1).
        ? {
          toolCalls: [{
            name: "query_metrics",
            arguments: { connector_id: 1, metrics: ["revenue"], dimensions: ["channel"] }
          }]
        }
        : request.messages.at(-1).role === "tool"
        ? { text: "Web makes the most money." }
        : JSON.stringify(request.messages.at(-1)).includes("markdown please")
        ? { text: markdownAnswer }
        : { text: slowAnswer, delayMs: 60 }
    )
    server = await serve({
      SIGHTLINE_DATA_DIR: tempDir(),
      SIGHTLINE_SANDBOX_DIR: noSandboxes === undefined ? tempDir() : "off",
      SIGHTLINE_OPENAI_COMPATIBLE_URL: provider.url,
      SIGHTLINE_MODELS: JSON.stringify([
        { id: "offline", number: 1, provider: "offline", default: true },
        { id: "scripted", number: 5, provider: "openai-compatible" }
      ])
    })
    // `localhost`, as the printed link says: a secure origin, so the Secure refresh cookie is kept.
    base = server.base.replace("127.0.0.1", "localhost")
    adminLink = /set the admin's password \(one-time link, valid 7 days\): (\S+)/.exec(server.output.stdout)![1]!
      .replace(/^http:\/\/localhost:\d+/, base)
    adminKey = /Admin API key \(shown once, keep it\): (\S+)/.exec(server.output.stdout)![1]!
    // The other tests act as a second admin, so they do not depend on the first one's sign-in.
    const ops = await (await fetch(`${base}/v2/members/invite`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: opsEmail, role: "admin" })
    })).json() as any
    const set = await fetch(`${base}/v2/auth/password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: ops.sign_in_token, password })
    })
    if (set.status !== 200) throw new Error(`could not set the second admin's password: ${await set.text()}`)
    browser = await Browsers.launch()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await provider?.close()
  })

  it("a fresh visit, signed out, shows the sign-in form and logs no error", async () => {
    const { context, external } = await newContext()
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    const renewals: Array<number> = []
    page.on("response", (response) => {
      if (response.url().endsWith("/v2/auth/refresh")) renewals.push(response.status())
    })
    await page.goto(base)
    await page.getByRole("heading", { name: "Sign in to Sightline" }).waitFor()
    // The page asked to renew a session it does not have, and was told there is none, quietly.
    await expect.poll(() => renewals).toEqual([204])
    expect(errors).toEqual([])
    expect(external).toEqual([])
    await context.close()
  }, 60_000)

  it("signs in with the printed link, then with the password after signing out", async () => {
    const { context, external } = await newContext()
    const page = await context.newPage()
    await setPassword(page, adminLink)
    await expect(page.getByText("admin@sightline.local")).toBeTruthy()
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to Sightline" }).waitFor()
    await page.getByLabel("E-mail address").fill("admin@sightline.local")
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").filter({ hasText: "invalid e-mail address or password" }).waitFor()
    await screenshot(page, "sign-in")
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).waitFor()
    // The link was used: it does not work a second time.
    const again = await fetch(`${base}/v2/auth/password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: adminLink.split("/#/set-password/")[1], password })
    })
    expect(again.status).toBe(401)
    expect(external).toEqual([])
    await context.close()
  }, 60_000)

  it("asks the demo question and shows the streamed answer, its SQL, a table and a drawn chart", async () => {
    const { context, external } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await ask(page, "What were the top 5 products by revenue last year?")
    // The first question of a fresh install also builds the DEMO dataset (tens of thousands of rows).
    await page.locator(".answer-text").filter({ hasText: "offline model" }).waitFor({ timeout: 90_000 })
    // The first chart loads the chart library (about 300 kB gzipped) and draws: once, on a two-core
    // machine that was also building and packing every package, that took over 30 s.
    await page.locator(".chart-canvas svg").first().waitFor({ timeout: 90_000 })
    expect(await page.locator(".chart-canvas svg .mark-rect path, .chart-canvas svg .mark-rect rect").count())
      .toBeGreaterThan(0)
    const table = page.getByRole("region", { name: /^Table / }).first()
    expect(await table.locator("tbody tr").count()).toBe(5)
    // The chart keeps the ranking's order, its bars lying down with each name whole, its amounts
    // written short; the table's amounts are grouped as the text writes them.
    const ranked = await table.locator("tbody tr td:first-child").allTextContents()
    const axis = (name: string) =>
      page.locator(`.chart-canvas svg [aria-label^="${name}"] .role-axis-label text`).allTextContents()
    expect(await axis("Y-axis")).toEqual(ranked)
    expect((await axis("X-axis")).every((label) => /^\d+(\.\d+)?[kM]?$/.test(label))).toBe(true)
    expect(await table.locator("tbody tr td.num").first().textContent()).toMatch(/^\d{1,3}(,\d{3})+\.\d{2}$/)
    await expect(page.getByText("5 rows").first().isVisible()).resolves.toBe(true)
    await page.getByText("SQL", { exact: true }).first().click()
    expect(await page.locator(".source code").first().textContent()).toMatch(/^SELECT /)
    // The CSV download is a signed URL of the API.
    const csv = await page.getByRole("link", { name: /^Download .*\.csv$/ }).first().getAttribute("href")
    const downloaded = await fetch(`${base}/${csv}`)
    expect(downloaded.status).toBe(200)
    expect((await downloaded.text()).split("\n").length).toBeGreaterThan(5)
    await screenshot(page, "chat")
    // How it was answered: the model, the steps, the library commit and the definitions it read.
    const how = page.locator("details.provenance").last()
    await how.getByText("How this was answered").click()
    expect(await how.locator("dd").first().textContent()).toBe("offline (offline: offline)")
    expect(await how.textContent()).toMatch(/commit [0-9a-f]{12}/)
    expect(await how.textContent()).toContain("retail (semantic/demo.yaml) for connector")
    await screenshot(page, "provenance")
    expect(external).toEqual([])
    await context.close()
  }, 150_000)

  it(
    "holds a conversation: a follow-up says what it kept, and a clarification's choices are buttons that answer",
    async () => {
      const { context } = await newContext()
      const page = await context.newPage()
      await signIn(page)
      await ask(page, "Top 3 regions by revenue last year")
      await page.locator(".answer-text").filter({ hasText: "offline model" }).first().waitFor({ timeout: 90_000 })
      const regions = await page.getByRole("region", { name: /^Table / }).first().locator("tbody tr td:first-child")
        .allTextContents()
      expect(regions).toHaveLength(3)
      // "It" after three rows: the console shows the question's choices as buttons, one per row.
      await ask(page, "how many orders did it get last year?")
      const choices = page.getByRole("group", { name: "Which region do you mean by \"it\"?" })
      await choices.waitFor({ timeout: 60_000 })
      expect(await choices.getByRole("button").allTextContents()).toEqual(regions)
      await page.getByRole("button", { name: "Ask" }).waitFor()
      await screenshot(page, "clarification")
      await choices.getByRole("button", { name: regions[1]! }).click()
      // The chosen question is asked, and answered for that region.
      await page.locator(".bubble.user").filter({ hasText: "how many orders did the second one get last year?" })
        .waitFor({ timeout: 30_000 })
      const chosen = page.locator(".answer-text").filter({ hasText: `I took "second one" for "${regions[1]}"` })
      await chosen.waitFor({ timeout: 60_000 })
      // An answered clarification's buttons no longer choose.
      expect(await choices.getByRole("button").first().isDisabled()).toBe(true)
      // A follow-up says what it kept and what it changed.
      await ask(page, "and per channel?")
      await page.locator(".answer-text").filter({ hasText: "Keeping" }).filter({ hasText: "now by channel" })
        .waitFor({ timeout: 60_000 })
      // After a reload the stored conversation shows the choices again, answered.
      await page.reload()
      await page.getByRole("group", { name: "Which region do you mean by \"it\"?" }).waitFor({ timeout: 30_000 })
      expect(
        await page.getByRole("group", { name: "Which region do you mean by \"it\"?" }).getByRole("button").first()
          .isDisabled()
      ).toBe(true)
      await context.close()
    },
    240_000
  )

  it("shows an investigation's plan as a checklist that fills in as its steps finish", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    const year = new Date().getUTCFullYear() - 1
    await ask(page, `Why did revenue drop in March ${year}?`)
    await page.locator(".answer-text").filter({ hasText: "the data does not say why" }).waitFor({ timeout: 90_000 })
    const plan = page.getByRole("region", { name: `Plan: Revenue in February ${year} and March ${year}` })
    // The totals, the four drivers, and one level deeper, each done once its cell is.
    expect(await plan.getByRole("listitem").count()).toBe(6)
    expect(await plan.getByRole("listitem", { name: "By region, done" }).count()).toBe(1)
    expect(await plan.locator(".step-pending").count()).toBe(0)
    expect(await plan.locator(".step.level-2").count()).toBe(1)
    await screenshot(page, "investigation")
    // After a reload, the plan is read from the answer, in its place before the steps.
    await page.reload()
    const kept = page.getByRole("region", { name: `Plan: Revenue in February ${year} and March ${year}` })
    await kept.waitFor({ timeout: 30_000 })
    expect(await kept.getByRole("listitem").count()).toBe(6)
    expect(await kept.locator(".step-done").count()).toBe(6)
    await context.close()
  }, 120_000)

  it("shows a metric's reading and its trusted badge", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await ask(page, "Which sales channel makes us the most money?", "scripted")
    await page.locator(".answer-text").filter({ hasText: "Web makes the most money." }).waitFor({ timeout: 60_000 })
    const badge = page.locator(".badge.trusted")
    expect(await badge.textContent()).toBe("Trusted: metric revenue")
    expect(await badge.getAttribute("title")).toMatch(/^semantic\/demo\.yaml at [0-9a-f]{12}$/)
    expect(await page.locator(".reading").textContent()).toBe(
      "Revenue (sum of order line totals after discounts, cancelled orders excluded) by channel, over all time, highest first"
    )
    await screenshot(page, "trusted")
    await context.close()
  }, 90_000)

  it("renders an answer's Markdown, and HTML in it only as text", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await ask(page, "Some markdown please", "scripted")
    const answer = page.locator(".markdown").filter({ hasText: "leads." })
    await answer.locator("strong").filter({ hasText: "Web" }).waitFor({ timeout: 30_000 })
    await answer.getByText("click").waitFor()
    expect(await answer.locator("table td").allTextContents()).toEqual(["web", "10"])
    expect(await answer.locator("img, script").count()).toBe(0)
    expect(await answer.textContent()).toContain("<img src=x onerror=")
    expect(await answer.locator("a").getAttribute("href")).not.toMatch(/^javascript:/)
    expect(await page.evaluate("window.__xss")).toBeUndefined()
    await context.close()
  }, 60_000)

  it("reloading mid-answer resumes the stream, and the answer shows complete and once", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await ask(page, "Tell me a long story", "scripted")
    const answer = page.locator(".answer-text").last()
    await answer.filter({ hasText: "word5 " }).waitFor({ timeout: 30_000 })
    await page.waitForURL(/#\/chats\/[\w-]+$/)
    const beforeReload = await answer.textContent()
    expect(beforeReload).not.toContain("THE-END")
    await page.reload()
    await page.locator(".answer-text").filter({ hasText: "THE-END" }).waitFor({ timeout: 30_000 })
    const texts = await page.locator(".answer-text").allTextContents()
    expect(texts.filter((text) => text.includes("word0")).length).toBe(1)
    expect(texts.find((text) => text.includes("word0"))).toBe(slowAnswer)
    await screenshot(page, "resumed")
    await context.close()
  }, 90_000)

  it("cancels a running answer, and the provider's request is closed", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    const abortsBefore = provider.aborts.length
    await ask(page, "Please cancel me", "scripted")
    await page.locator(".answer-text").filter({ hasText: "…" }).waitFor({ timeout: 30_000 })
    await page.getByRole("button", { name: "Cancel" }).click()
    await page.getByRole("status").filter({ hasText: "Answer cancelled." }).waitFor({ timeout: 10_000 }).catch(
      async (error) => {
        await screenshot(page, "cancel-failed")
        throw error
      }
    )
    await page.getByRole("button", { name: "Ask" }).waitFor()
    expect(provider.aborts.length).toBeGreaterThan(abortsBefore)
    await context.close()
  }, 60_000)

  it("creates a playbook, previews its schedule, deploys it and runs it into a report", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await page.getByRole("link", { name: "Playbooks" }).click()
    await page.getByRole("button", { name: "New playbook" }).click()
    const editor = page.getByRole("region", { name: /^Playbook / })
    await editor.getByLabel("Name").fill("Weekly revenue")
    await editor.getByLabel("Prompt").fill("What was the revenue by month?")
    await editor.getByLabel("Demo retail").check()
    await editor.getByLabel(/^Schedule/).fill("0 9 * * 1")
    expect(await editor.locator(".firings li").count()).toBe(5)
    expect(await editor.locator(".firings li").first().textContent()).toMatch(/Mon/)
    await editor.getByLabel(/^Schedule/).fill("0 9 * *")
    await editor.getByRole("alert").filter({ hasText: "expected five fields" }).waitFor()
    await editor.getByLabel(/^Schedule/).fill("0 9 * * 1")
    await editor.getByRole("button", { name: "Save" }).click()
    await editor.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    await editor.getByRole("button", { name: "Deploy" }).click()
    await editor.getByRole("status").filter({ hasText: "Deployed." }).waitFor()
    await editor.getByRole("button", { name: "Run now" }).click()
    await editor.getByRole("status").filter({ hasText: "Report ready." }).waitFor({ timeout: 60_000 })
    await editor.locator("details.report").first().waitFor()
    await editor.locator("details.report summary").first().click()
    // The report is drawn from its blocks: its chart is the PNG its run rendered, served signed.
    const chart = editor.locator(".report-body img.report-image").first()
    await chart.waitFor({ timeout: 30_000 })
    // Loaded and decoded: a PNG the browser could not fetch or read has no natural width.
    const loaded = (img: unknown) => (img as { complete: boolean; naturalWidth: number }).naturalWidth > 0
    await expect.poll(() => chart.evaluate(loaded)).toBe(true)
    expect(await editor.locator(".report-body li").count()).toBeGreaterThan(3)
    await screenshot(page, "playbook")
    const listed = await (await fetch(`${base}/v2/playbooks`, { headers: { authorization: `Bearer ${adminKey}` } }))
      .json() as any
    expect(listed.playbooks.map((p: any) => [p.name, p.status])).toContainEqual(["Weekly revenue", "deployed"])
    await context.close()
  }, 120_000)

  it("mints a key shown once, which then works with fetch", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await page.getByRole("link", { name: "API keys" }).click()
    const form = page.getByRole("form", { name: "Mint a personal key" })
    await form.getByLabel("Name").fill("from the console")
    await form.getByLabel(/^Client metadata/).fill(`{"tenant_id":"42"}`)
    await form.getByRole("button", { name: "Mint key" }).click()
    const secret = await page.getByTestId("secret-value").textContent()
    expect(secret).toMatch(/^[A-Za-z0-9+/]{43}=$/)
    const chats = await fetch(`${base}/v2/chats`, { headers: { authorization: `Bearer ${secret}` } })
    expect(chats.status).toBe(200)
    await page.getByRole("cell", { name: `from the console · {"tenant_id":"42"}` }).waitFor()
    await screenshot(page, "keys")
    await context.close()
  }, 60_000)

  it("a member without organization:read sees no admin pages, and the API refuses them too", async () => {
    const invited = await (await fetch(`${base}/v2/members/invite`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "bob@example.test", role: "member" })
    })).json() as any
    const { context } = await newContext()
    const page = await context.newPage()
    // The page tries to renew a session on load (there is none here), and this member sets the
    // password before that renewal has given up: its late refusal must not sign the member out.
    // The load's renewal is refused slowly, twice (the page tries twice), as for a browser without a
    // session on a slow network.
    let refused = 0
    await page.route("**/v2/auth/refresh", async (route) => {
      if (refused >= 2) return route.continue()
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await route.fulfill({
        status: 401,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "unauthenticated", message: "Authentication required" } })
      })
      refused++
    })
    await setPassword(page, invited.sign_in_url.replace(/^http:\/\/[^/]+/, base))
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Chat" }).waitFor()
    await expect.poll(() => refused, { timeout: 10_000 }).toBe(2)
    await page.waitForTimeout(200)
    expect(await nav.isVisible()).toBe(true)
    expect(await nav.getByRole("link", { name: "Admin" }).count()).toBe(0)
    await page.goto(`${base}/#/admin`)
    await page.getByRole("heading", { name: "Not found" }).waitFor()
    await screenshot(page, "member")
    const session = await (await fetch(`${base}/v2/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bob@example.test", password })
    })).json() as any
    const audit = await fetch(`${base}/v2/audit-logs`, { headers: { authorization: `Bearer ${session.access_token}` } })
    expect(audit.status).toBe(403)
    const me = await (await fetch(`${base}/v2/members/me`, {
      headers: { authorization: `Bearer ${session.access_token}` }
    })).json() as any
    expect(me).toMatchObject({ email: "bob@example.test", is_admin: false, roles: ["member"] })
    expect(me.permissions).not.toContain("organization:read")
    await context.close()
  }, 60_000)

  it("shows the admin pages, the changes and the sandcastles to an admin", async () => {
    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Admin" }).click()
    await page.getByRole("cell", { name: "admin@sightline.local" }).waitFor()
    await page.getByRole("cell", { name: "member.invite" }).first().waitFor()
    // A role's model settings, edited here and read back through the API.
    const roleModels = async (choose: boolean) => {
      await page.getByText("Models of member", { exact: true }).click()
      const form = page.getByRole("form", { name: "Models of member" })
      await form.getByLabel("Members with this role may choose the model").setChecked(choose)
      await form.getByRole("button", { name: "Save models" }).click()
      await form.getByRole("status").filter({ hasText: "Saved." }).waitFor()
      const roles = await (await fetch(`${base}/v2/roles`, { headers: { authorization: `Bearer ${adminKey}` } }))
        .json() as any
      expect(roles.roles.find((r: any) => r.name === "member").allow_model_choice).toBe(choose)
    }
    await roleModels(false)
    await screenshot(page, "admin")
    await page.reload()
    await roleModels(true)
    await nav.getByRole("link", { name: "Changes" }).click()
    await page.getByRole("heading", { name: "Library changes" }).waitFor()
    await nav.getByRole("link", { name: "Sandcastles" }).click()
    await page.getByRole("heading", { name: "Sandcastles" }).waitFor()
    await nav.getByRole("link", { name: "Connectors" }).click()
    await page.getByRole("button", { name: "Demo retail" }).click()
    // This admin neither owns the DEMO connector nor holds a grant on it (object access has no admin
    // override): the page says why it cannot show the access, rather than drawing a default form
    // that shows the public connector as private.
    const access = page.getByRole("group", { name: "Access to Demo retail" })
    await access.getByRole("status").filter({ hasText: "permission denied: editor access required" }).waitFor()
    expect(await access.getByRole("checkbox").count()).toBe(0)
    await screenshot(page, "connectors")
    await context.close()
  }, 60_000)

  it.skipIf(noSandboxes !== undefined)(
    `imports Cube definitions on the connector's page: the report, then the model filed as a change${
      noSandboxes === undefined ? "" : ` (skipped: ${noSandboxes})`
    }`,
    async () => {
      const files = ["cubes/orders.yml", "cubes/customers.js", "views/sales.yml"].map((file) => join(cubeProject, file))
      // What the API reports for the same files: the page must show it, line for line.
      const expected = (await api("POST", "/v2/semantic/import", {
        format: "cube",
        connector_id: 1,
        name: "shop",
        files: files.map((file) => ({ path: basename(file), content: readFileSync(file, "utf8") }))
      })).body
      expect(expected.report.length).toBeGreaterThan(10)
      const { context, external } = await newContext()
      const page = await context.newPage()
      await signIn(page)
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Connectors" }).click()
      await page.getByRole("button", { name: "Demo retail" }).click()
      const form = page.getByRole("form", { name: "Import definitions into Demo retail" })
      await form.getByLabel("Format").selectOption("cube")
      await form.getByLabel("Definition files").setInputFiles(files)
      await form.getByLabel("Model name").fill("shop")
      await form.getByRole("button", { name: "Preview the import" }).click()
      const report = form.getByRole("region", { name: "Import report" })
      const { approximated, imported, refused } = expected.tally
      await report.getByRole("heading", {
        name: `semantic/shop.yaml: ${imported} imported, ${approximated} approximated, ${refused} refused`
      }).waitFor()
      expect(await report.locator("tbody tr").count()).toBe(expected.report.length)
      // What needs the reviewer's eye first.
      const outcomes = await report.locator("tbody tr td:first-child").allTextContents()
      expect(outcomes).toEqual([...outcomes].sort((a, b) => rank(a) - rank(b)))
      expect(outcomes.filter((o) => o === "approximated").length).toBe(approximated)
      // The report's wide table scrolls inside the form; the form stays in its card.
      expect(await form.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0)
      await screenshot(page, "import-definitions")

      await form.getByRole("button", { name: "File the change" }).click()
      const said = await form.getByRole("status").filter({ hasText: /^Change #\d+ filed/ }).textContent()
      const number = Number(/#(\d+)/.exec(said!)![1])
      const change = (await api("GET", "/v2/changes?page_size=100")).body.changes.find((c: any) => c.number === number)
      expect(change.title).toBe("Import cube definitions")
      const filed = (await api("GET", `/v2/changes/${change.id}`)).body
      expect(filed.diffs.map((d: any) => d.new_path)).toEqual(["semantic/shop.yaml"])
      // Denied, so the model does not join the DEMO connector's answers in the other tests.
      expect((await api("POST", `/v2/changes/${change.id}/deny`, { expected_git_ref: change.git_ref })).status)
        .toBe(200)
      expect(external).toEqual([])
      await context.close()
    },
    60_000
  )

  it.skipIf(noSandboxes !== undefined)(
    `shows a change's checks: a model edit the schema cannot run fails its check, and the page says so${
      noSandboxes === undefined ? "" : ` (skipped: ${noSandboxes})`
    }`,
    async () => {
      // The admin edits the DEMO model in a sandbox: revenue sums a column the table does not have.
      const sandbox = await api("POST", "/v2/sandcastles", {})
      expect(sandbox.status).toBe(201)
      const id = sandbox.body.sandbox_id
      const edited = await api("POST", `/v2/sandcastles/${id}/exec`, {
        command: "sed -i 's/^        expr: line_total$/        expr: no_such_column/' library/semantic/demo.yaml && " +
          "grep -c no_such_column library/semantic/demo.yaml"
      })
      expect(edited.body.stdout.trim()).toBe("1")
      const filed = await api("POST", `/v2/sandcastles/${id}/library/changes`, {
        title: "Revenue from a new column",
        description: "Sums a column the orders do not have."
      })
      expect(filed.status).toBe(201)
      await api("DELETE", `/v2/sandcastles/${id}`)
      // The evaluation check of the change runs on the worker; the page shows how it came out.
      let change = (await api("GET", `/v2/changes/${filed.body.change_id}`)).body
      for (let i = 0; i < 600 && ["queued", "running"].includes(change.evaluation?.status); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        change = (await api("GET", `/v2/changes/${filed.body.change_id}`)).body
      }
      expect(["passed", "failed"]).toContain(change.evaluation.status)
      const failed = change.checks.filter((check: { status: string }) => check.status === "failed")
      expect(failed.length).toBeGreaterThan(0)

      const { context } = await newContext()
      const page = await context.newPage()
      await signIn(page)
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Changes" }).click()
      const summary = page.locator("summary").filter({ hasText: "Revenue from a new column" })
      await summary.getByText("checks failed").waitFor()
      await summary.click()
      const checks = page.getByRole("list", { name: `Checks of change ${change.number}` })
      await checks.getByText(failed[0].name).waitFor()
      expect(await checks.locator(".badge.danger").count()).toBe(failed.length)
      const evaluation = page.getByRole("region", { name: `Evaluation of change ${change.number}` })
      await evaluation.getByText(`Evaluation of revision 1 with offline, for information`).waitFor()
      await evaluation.getByRole("cell", { name: "semantic/demo.yaml" }).waitFor()
      expect(await summary.getByText(`evaluation ${change.evaluation.status}`).count()).toBe(1)
      await screenshot(page, "change-checks")
      await context.close()
    },
    60_000
  )

  it("runs the DEMO evaluation set, compares two runs side by side, and promotes a rating", async () => {
    // A rated answer to list: asked and rated up with the first admin's key.
    const question = "How many orders were cancelled in 2025?"
    const asked = await api("POST", "/v2/chats", { question, connector_ids: [1] })
    expect(asked.status).toBe(200)
    const rated = await api("PUT", `/v2/chats/${asked.body.chat_id}/messages/${asked.body.id}/feedback`, {
      rating: "up",
      comment: "spot on"
    })
    expect(rated.status).toBe(200)

    const { context } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Quality" }).click()
    await page.getByRole("heading", { name: "Answer quality" }).waitFor()
    // Runs of earlier changes' checks are listed too: these two are the ones started here.
    const listed = async () => (await api("GET", "/v2/evals/runs?limit=50")).body.runs as Array<any>
    const before = new Set((await listed()).map((run) => run.id))
    const runButton = page.getByRole("button", { name: "Run", exact: true })
    await runButton.click()
    await until("the first run", async () => (await listed()).some((run) => !before.has(run.id)) || undefined)
    await runButton.click()
    const runs = await until("both runs completed", async () => {
      const mine = (await listed()).filter((run) => !before.has(run.id))
      return mine.length === 2 && mine.every((run) => run.status === "completed") ? mine : undefined
    }, 90_000)
    for (const run of runs) {
      const row = page.locator(".run-row").filter({ has: page.getByLabel(`Compare run ${run.id}`) })
      await row.locator("summary").filter({ hasText: "completed" }).waitFor()
      await page.getByLabel(`Compare run ${run.id}`).check()
    }
    await page.getByRole("button", { name: "Compare the two runs picked" }).click()
    const comparison = page.getByRole("table", { name: "Comparison" })
    await comparison.waitFor()
    expect(await comparison.locator("tbody tr").count()).toBe(runs[0].cases_total)

    const rating = page.locator("details.rating").filter({ hasText: question })
    await rating.locator("summary").click()
    await rating.getByText("“spot on”").waitFor()
    await rating.getByRole("button", { name: "Make it an evaluation case" }).click()
    await page.getByRole("status").filter({ hasText: "to evals/feedback.yaml" }).waitFor()
    await screenshot(page, "quality")
    await context.close()
  }, 150_000)

  it("shows the sheets of a dropped workbook as tables, and answers a question sent with it", async () => {
    const book = new ExcelJS.Workbook()
    const sheet = book.addWorksheet("Orders")
    sheet.addRow(["region", "revenue"])
    for (const [region, revenue] of [["North", 120.5], ["South", 80], ["North", 30], ["South", 19.5]] as const) {
      sheet.addRow([region, revenue])
    }
    const xlsx = Buffer.from(await book.xlsx.writeBuffer() as ArrayBuffer)
    const file = {
      name: "sales.xlsx",
      mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      buffer: xlsx
    }
    const { context, external } = await newContext()
    const page = await context.newPage()
    await signIn(page)
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Connectors" }).click()
    await page.getByLabel("Files to upload").setInputFiles(file)
    await page.getByRole("form", { name: "Upload files" }).getByRole("button", { name: "Upload", exact: true }).click()
    const tables = page.getByRole("region", { name: "Tables of sales.xlsx" })
    // The upload builds the connector's DuckDB database: seconds alone, longer beside another file's tests.
    await tables.waitFor({ timeout: 90_000 })
    expect(await tables.getByRole("heading", { name: /^sales / }).textContent()).toBe(
      "sales (4 rows, from sales.xlsx, sheet Orders)"
    )
    const preview = tables.getByRole("region", { name: "Table sales" })
    expect(await preview.locator("thead th").allTextContents()).toEqual(["region", "revenue"])
    expect(await preview.locator("tbody tr").count()).toBe(4)
    await screenshot(page, "files")

    // Asked in the chat with the workbook attached, over it alone.
    await nav.getByRole("link", { name: "Chat" }).click()
    await page.getByText("Connectors, tools and model").click()
    // Once the page has its connectors (it selects them all when they arrive), none of them.
    const choices = page.getByRole("group", { name: "Connectors" })
    await choices.getByRole("checkbox", { name: /sales\.xlsx/ }).waitFor()
    // Unchecked until none is (a box the page checks again as its list settles is unchecked again).
    await until("no connector chosen", async () => {
      for (const box of await choices.getByRole("checkbox").all()) {
        if (await box.isChecked()) await box.click()
      }
      const states = await Promise.all((await choices.getByRole("checkbox").all()).map((box) => box.isChecked()))
      return states.every((checked) => !checked) || undefined
    })
    await page.getByLabel("Model").selectOption("offline")
    await page.getByLabel("Attach files").setInputFiles(file)
    expect(await page.getByRole("list", { name: "Attached files" }).textContent()).toContain("sales.xlsx")
    await page.getByLabel("Question").fill("total revenue by region")
    await page.getByRole("button", { name: "Ask" }).click()
    // The question builds the attached workbook's database first: as long as the upload above may take,
    // and once, beside the release check's builds, more than 90 s on a 2-core machine.
    await page.locator(".answer-text").filter({ hasText: "150.5" }).waitFor({ timeout: 150_000 })
    expect(await page.locator(".answer-text").last().textContent()).toContain("99.5")
    await screenshot(page, "chat-files")
    expect(external).toEqual([])
    await context.close()
  }, 300_000)

  it(
    "pins a step of a chat to a dashboard, and draws the dashboard, its period changed, on a desktop and a phone",
    async () => {
      const year = new Date().getUTCFullYear() - 1
      const { context } = await newContext()
      const page = await context.newPage()
      await signIn(page)
      await ask(page, "Revenue by region last year")
      await page.locator(".answer-text").filter({ hasText: "offline model" }).waitFor({ timeout: 90_000 })
      const step = page.locator("section.cell").filter({ has: page.locator("details.pin") }).first()
      await step.locator("details.pin summary").click()
      await step.getByLabel("Dashboard").fill("regions")
      await step.getByRole("button", { name: "Pin to dashboard" }).click()
      const filed = await step.getByRole("status").textContent({ timeout: 30_000 })
      expect(filed).toMatch(/^Change #\d+ filed to add it to dashboards\/regions\.yaml/)
      const number = Number(/#(\d+)/.exec(filed!)![1])
      const change = (await api("GET", "/v2/changes?page_size=100")).body.changes.find((c: any) => c.number === number)
      expect((await api("POST", `/v2/changes/${change.id}/approve`, { expected_git_ref: change.git_ref })).body.merged)
        .toBe(true)

      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Dashboards" }).click()
      await page.getByRole("link", { name: "Regions", exact: true }).click()
      const tile = page.getByRole("region", { name: "Tile Revenue by region last year" })
      await tile.locator(".chart-canvas svg").waitFor({ timeout: 30_000 })
      // Bars lying down, one per region, each name whole.
      const names = () =>
        tile.locator(`.chart-canvas svg [aria-label^="Y-axis"] .role-axis-label text`).allTextContents()
      expect((await names()).sort()).toEqual(
        ["Asia Pacific", "Europe", "Latin America", "Middle East & Africa", "North America"]
      )
      expect(await tile.locator(".reading").textContent()).toContain(String(year))
      await screenshot(page, "dashboard")
      // Another period: the tile reads January alone.
      const filters = page.getByRole("form", { name: "Filters" })
      await filters.getByLabel("From").fill(`${year}-01-01`)
      await filters.getByLabel("Until").fill(`${year}-02-01`)
      await filters.getByRole("button", { name: "Apply" }).click()
      await tile.locator(".reading").filter({ hasText: "January" }).waitFor()
      // On a phone's width the tile takes the whole width and nothing overflows.
      await page.setViewportSize({ width: 390, height: 844 })
      const box = await tile.boundingBox()
      expect(box!.width).toBeGreaterThan(300)
      expect(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth") as number)
        .toBeLessThanOrEqual(0)
      await screenshot(page, "dashboard-phone")

      // Edited on the page: renamed and widened, filed as a change; the page says when it merged.
      await page.setViewportSize({ width: 1280, height: 860 })
      await page.getByRole("button", { name: "Edit layout" }).click()
      const editing = page.getByRole("group", { name: "Edit tile 1" })
      await editing.getByLabel("Title").fill("Revenue by region")
      await editing.getByRole("button", { name: "Wider" }).click()
      await page.getByRole("button", { name: "Save as a change" }).click()
      const said = page.getByRole("status").filter({ hasText: /^Change #\d+ filed: the edit shows once it merges\.$/ })
      const edit = Number(/#(\d+)/.exec((await said.textContent())!)![1])
      const editChange = (await api("GET", "/v2/changes?page_size=100")).body.changes.find((c: any) =>
        c.number === edit
      )
      expect(editChange.title).toBe("Edit dashboard regions")
      await api("POST", `/v2/changes/${editChange.id}/approve`, { expected_git_ref: editChange.git_ref })
      await page.getByRole("status").filter({ hasText: `Change #${edit} merged.` }).waitFor({ timeout: 15_000 })
      // Exactly: the old title starts with the new one.
      const renamed = page.getByRole("region", { name: "Tile Revenue by region", exact: true })
      await renamed.locator(".chart-canvas svg").waitFor()
      const definition = (await api("GET", "/v2/dashboards/regions")).body.definition
      expect(definition.tiles[0]).toMatchObject({ title: "Revenue by region", layout: { x: 0, y: 0, w: 7, h: 4 } })
      // "Open in chat" asks about the tile.
      await renamed.getByRole("link", { name: "Open in chat" }).click()
      expect(await page.getByLabel("Question").inputValue()).toBe("Revenue by region")

      // A playbook delivers the dashboard: picked on its form, which then asks for no prompt.
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Playbooks" }).click()
      await page.getByRole("button", { name: "New playbook" }).click()
      const editor = page.getByRole("region", { name: /^Playbook / })
      await editor.getByLabel("Name").fill("Regions on Mondays")
      await editor.getByLabel("Deliver").selectOption({ label: "the Regions dashboard" })
      expect(await editor.locator("textarea").count()).toBe(0)
      await editor.getByRole("button", { name: "Save" }).click()
      await editor.getByRole("status").filter({ hasText: "Saved." }).waitFor()
      await editor.getByRole("button", { name: "Run now" }).click()
      await editor.getByRole("status").filter({ hasText: "Report ready." }).waitFor({ timeout: 60_000 })
      await editor.locator("details.report summary").first().click()
      // The tile's chart, as the PNG the run drew.
      const drawn = editor.locator(".report-body img.report-image").first()
      await drawn.waitFor({ timeout: 30_000 })
      await expect.poll(() => drawn.evaluate((img) => (img as { naturalWidth: number }).naturalWidth > 0)).toBe(true)
      await screenshot(page, "playbook-dashboard")
      const saved = (await api("GET", "/v2/playbooks?limit=100")).body.playbooks.find((p: any) =>
        p.name === "Regions on Mondays"
      )
      expect(saved.dashboard).toBe("regions")
      await api("DELETE", `/v2/playbooks/${saved.id}`)
      await context.close()
    },
    120_000
  )

  it("fits a phone's width, and the menu opens from the keyboard", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    await page.goto(base)
    await page.getByLabel("E-mail address").fill(opsEmail)
    await page.getByLabel("Password").fill(password)
    await page.keyboard.press("Enter")
    await page.getByRole("button", { name: "Menu" }).focus()
    await page.keyboard.press("Enter")
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Playbooks" }).waitFor()
    await screenshot(page, "phone")
    // Runs in the page (the test itself is compiled without DOM types).
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth") as number
    expect(overflow).toBeLessThanOrEqual(0)
    await context.close()
  }, 60_000)
})
