/**
 * The embeddable widget (`@sightline/embed`) in Chromium, as a host uses it: the host's page and
 * backend on one loopback origin, Sightline on another. The host's backend mints a session for the
 * signed-in end user with its key (`POST /v2/embed/sessions`), and its page, under a strict
 * Content-Security-Policy, holds `<sightline-chat>` and `<sightline-dashboard>` with a `getToken`
 * that asks the backend. Two end users with different client attributes each see only their rows.
 */
import * as Auth from "@sightline/core/Auth"
import * as ChatRuns from "@sightline/core/ChatRuns"
import { AssetId, CellId } from "@sightline/core/Ids"
import * as Policy from "@sightline/core/Policy"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { buildSync } from "esbuild"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Browsers from "./utils/browser.js"
import { embeddingOrg } from "./utils/embed.js"
import { body, type Org, startServer, type TestServer } from "./utils/server.js"

const root = new URL("../../..", import.meta.url).pathname
const widgetDir = join(root, "packages", "embed", "dist")
const axe = readFileSync(join(root, "examples", "server", "node_modules", "axe-core", "axe.min.js"), "utf8")

/** The end users of the host, by the name its page is opened with, and their client attributes. */
const people: Record<string, Record<string, string>> = { ana: { region: "EU" }, bo: { region: "NA" }, cy: {} }

interface Host {
  readonly origin: string
  readonly close: () => Promise<void>
  /** How many sessions the backend minted for each end user. */
  readonly minted: Map<string, number>
  /** The key the backend mints with (`short`: a new 3-second key for every session). */
  mode: { readonly key: string } | { readonly short: true }
}

/** A question's events without the renewals a short session may need on the way. */
const answered = (events: ReadonlyArray<any>) => events.filter((e) => e.name !== "token-expired")

/**
 * The host: its page (`/?user=ana`), its script, the widget's files, and `POST /token`, which mints
 * for the page's end user. Its page allows scripts, styles and connections only from itself and
 * Sightline: no inline script, no inline style, no `eval`.
 */
const startHost = async (sightline: TestServer, org: () => Org, connectorId: () => number): Promise<Host> => {
  const minted = new Map<string, number>()
  const host: Host = {
    origin: "",
    minted,
    mode: { short: true },
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
  const keyFor = async () => {
    if ("key" in host.mode) return host.mode.key
    const created = await body(
      await sightline.request("/v2/api-keys", {
        method: "POST",
        key: org().key,
        json: { inheritAllRoles: true, name: "host (short)", expirySeconds: 3 }
      })
    )
    return created.key as string
  }
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://host")
    const user = url.searchParams.get("user") ?? "ana"
    if (url.pathname === "/") {
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'self'; script-src 'self'; style-src 'self'; ` +
          `connect-src 'self' ${sightline.baseUrl}; img-src 'self' data: ${sightline.baseUrl}`
      })
      response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host app</title></head>
<body><main><h1>Host app for ${user}</h1>
<sightline-chat server="${sightline.baseUrl}"></sightline-chat>
<sightline-dashboard server="${sightline.baseUrl}" name="sales"></sightline-dashboard>
</main><script type="module" src="/app.js?user=${user}"></script></body></html>`)
      return
    }
    if (url.pathname === "/app.js") {
      response.writeHead(200, { "content-type": "text/javascript" })
      response.end(`import "/embed/index.js"
window.events = []
const getToken = async () => {
  const answer = await fetch("/token?user=${user}", { method: "POST" })
  if (!answer.ok) throw new Error("the host could not mint a session: " + answer.status)
  return answer.json()
}
for (const element of document.querySelectorAll("sightline-chat, sightline-dashboard")) {
  for (const name of ["answer", "error", "token-expired"]) {
    element.addEventListener(name, (event) => window.events.push({ name, detail: event.detail }))
  }
  element.getToken = getToken
}`)
      return
    }
    if (url.pathname === "/react") {
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'self'; script-src 'self'; style-src 'self'; ` +
          `connect-src 'self' ${sightline.baseUrl}`
      })
      response.end(`<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><title>React host</title></head>
<body><main><h1>React host</h1><div id="root"></div></main><script type="module" src="/react-app.js"></script></body></html>`)
      return
    }
    if (url.pathname === "/react-app.js") {
      response.writeHead(200, { "content-type": "text/javascript" })
      response.end(reactApp(sightline.baseUrl))
      return
    }
    if (url.pathname === "/favicon.ico") {
      response.writeHead(204).end()
      return
    }
    if (url.pathname === "/axe.js") {
      response.writeHead(200, { "content-type": "text/javascript" })
      response.end(axe)
      return
    }
    if (url.pathname.startsWith("/embed/")) {
      try {
        const file = readFileSync(join(widgetDir, url.pathname.slice("/embed/".length).replace(/\.\./g, "")))
        response.writeHead(200, { "content-type": "text/javascript" })
        response.end(file)
      } catch {
        response.writeHead(404).end()
      }
      return
    }
    if (url.pathname === "/token" && request.method === "POST") {
      void (async () => {
        minted.set(user, (minted.get(user) ?? 0) + 1)
        const answer = await sightline.request("/v2/embed/sessions", {
          method: "POST",
          key: await keyFor(),
          json: {
            external_user_id: user,
            client_attributes: people[user],
            connectors: [connectorId()],
            dashboards: ["sales"],
            allowed_origins: [host.origin]
          }
        })
        const text = await answer.text()
        response.writeHead(answer.status, { "content-type": "application/json" })
        // A short key's session is said to last an hour, as a host whose clock is wrong would say:
        // only the server's 401 tells the widget to renew.
        const session = JSON.parse(text)
        response.end(
          "short" in host.mode && answer.ok
            ? JSON.stringify({ ...session, expires_at: new Date(Date.now() + 3_600_000).toISOString() })
            : text
        )
      })()
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  ;(host as { origin: string }).origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return host
}

/**
 * A React host's script: `@sightline/embed/react`'s component, its events as props, bundled with
 * React as a host's own build would (esbuild, from the widget's package, which has React).
 */
const reactApp = (server: string) =>
  buildSync({
    stdin: {
      contents: `import { createElement } from "react"
import { createRoot } from "react-dom/client"
import { SightlineChat } from "@sightline/embed/react"
globalThis.events = []
const getToken = async () => (await fetch("/token?user=ana", { method: "POST" })).json()
createRoot(document.getElementById("root")).render(createElement(SightlineChat, {
  server: ${JSON.stringify(server)},
  getToken,
  onAnswer: (event) => globalThis.events.push({ name: "answer", detail: event.detail }),
  onError: (event) => globalThis.events.push({ name: "error", detail: event.detail })
}))`,
      resolveDir: join(root, "packages", "embed"),
      loader: "js"
    },
    bundle: true,
    format: "esm",
    write: false,
    define: { "process.env.NODE_ENV": "\"production\"" },
    logLevel: "error"
  }).outputFiles[0]!.text

/** Asks in the page's chat and waits for its answer (or its error). */
const ask = async (page: Page, question: string) => {
  const before = await page.evaluate(() => (globalThis as any).events.length)
  const input = page.locator("sightline-chat textarea")
  await input.fill(question)
  await input.press("Enter")
  await page.waitForFunction(
    (count) => (globalThis as any).events.slice(count).some((e: any) => e.name === "answer" || e.name === "error"),
    before,
    { timeout: 60_000 }
  )
  return page.evaluate((count) => (globalThis as any).events.slice(count), before)
}

/** The rows of the last answer's table, first column, as shown. */
const lastTable = (page: Page) =>
  page.locator("sightline-chat .answer").last().locator("tbody tr td:first-child").allTextContents()

/** The amounts of the last answer's table, second column, as numbers. */
const lastAmounts = async (page: Page) =>
  (await page.locator("sightline-chat .answer").last().locator("tbody tr td:nth-child(2)").allTextContents()).map(
    (text) => Number(text.replace(/,/g, ""))
  )

const unavailable = Browsers.unavailable()
if (unavailable !== undefined && process.env.CI === "true") throw new Error(`Chromium: ${unavailable}`)
if (unavailable !== undefined) console.warn(`the embed widget in Chromium: skipped (${unavailable})`)

describe.skipIf(unavailable !== undefined)("the embed widget in Chromium", () => {
  let sightline: TestServer & { readonly stop: () => Promise<void> }
  let host: Host
  let browser: Browser
  let org: Org
  let connectorId: number

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, "packages", "embed", "scripts", "build.mjs"), "--if-stale"], {
      stdio: "inherit"
    })
    sightline = await startServer("pglite", {})
    host = await startHost(sightline, () => org, () => connectorId)
    ;({ connectorId, org } = await embeddingOrg(sightline, [host.origin]))
    browser = await Browsers.launch()
  }, 180_000)
  afterAll(async () => {
    await browser?.close()
    await host?.close()
    await sightline?.stop()
  })

  const open = async (user: string) => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    const problems: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text())
    })
    page.on("pageerror", (error) => problems.push(error.message))
    await page.goto(`${host.origin}/?user=${user}`)
    return { page, problems }
  }

  it("two end users each see their own rows, follow up, rate, and view the dashboard", async () => {
    const key = await body(
      await sightline.request("/v2/api-keys", {
        method: "POST",
        key: org.key,
        json: { inheritAllRoles: true, name: "host", expirySeconds: 3600 }
      })
    )
    host.mode = { key: key.key }
    const ana = await open("ana")
    const bo = await open("bo")

    // The session's suggested questions, from the library's verified queries.
    await expect.poll(() => ana.page.locator("sightline-chat [part=suggestion]").count()).toBeGreaterThan(0)

    const question = "What was revenue by region last year?"
    const [anaEvents, boEvents] = await Promise.all([ask(ana.page, question), ask(bo.page, question)])
    expect(anaEvents.map((e: any) => e.name)).toEqual(["answer"])
    expect(boEvents.map((e: any) => e.name)).toEqual(["answer"])
    expect(await lastTable(ana.page)).toEqual(["Europe"])
    const [europe] = await lastAmounts(ana.page)
    expect(await lastTable(bo.page)).toEqual(["North America"])
    // How the question was read, in the answer.
    await expect.poll(() => ana.page.locator("sightline-chat .answer").first().textContent()).toMatch(
      /I read this as: Revenue/
    )

    // A follow-up continues the same chat.
    const followUp = await ask(ana.page, "and per channel?")
    expect(followUp.map((e: any) => e.name)).toEqual(["answer"])
    // Europe's revenue by channel: the channels add up to the region's total, not the world's.
    const perChannel = await lastAmounts(ana.page)
    expect(perChannel.length).toBeGreaterThan(1)
    expect(perChannel.reduce((sum, value) => sum + value, 0)).toBeCloseTo(europe, 0)
    expect(followUp[0].detail.chat_id).toBe(anaEvents[0].detail.chat_id)
    expect(await ana.page.locator("sightline-chat .answer").count()).toBe(2)
    await expect.poll(() => ana.page.locator("sightline-chat [part=chat-item]").count()).toBe(1)

    // A thumbs down, then a comment: each stored (the thanks shows only once both were taken).
    await ana.page.locator("sightline-chat [part=rate-down]").last().click()
    await ana.page.locator("sightline-chat .feedback input").fill("Show the margin too")
    await ana.page.locator("sightline-chat .feedback input").press("Enter")
    await expect.poll(() => ana.page.locator("sightline-chat .feedback [role=status]").count()).toBe(1)

    // The dashboard, with the end user's rows only.
    await expect.poll(() => ana.page.locator("sightline-dashboard [part=tile]").count()).toBe(1)
    await expect.poll(() => ana.page.locator("sightline-dashboard [part=tile]").textContent()).toContain(
      "Revenue by region"
    )
    await expect.poll(() => ana.page.locator("sightline-dashboard svg").count(), { timeout: 30_000 }).toBeGreaterThan(0)
    const tile = await ana.page.locator("sightline-dashboard [part=tile]").textContent()
    expect(tile).not.toContain("North America")

    // axe-core, inside the shadow roots: no serious or critical violation.
    await ana.page.addScriptTag({ url: "/axe.js" })
    const violations = await ana.page.evaluate(async () => {
      const result = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ["violations"] })
      return result.violations.filter((v: any) => v.impact === "serious" || v.impact === "critical")
        .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`)
    })
    expect(violations).toEqual([])

    await ana.page.screenshot({ path: join(Browsers.screenshotDir, "embed-ana.png"), fullPage: true })
    await bo.page.screenshot({ path: join(Browsers.screenshotDir, "embed-bo.png"), fullPage: true })
    // Nothing the page's Content-Security-Policy refused, and no error in either page.
    expect([...ana.problems, ...bo.problems]).toEqual([])

    // Revoking the host's key ends the sessions: the next question fails, saying so.
    await sightline.request(`/v2/api-keys/${key.api_key.id}`, { method: "DELETE", key: org.key })
    const after = await ask(bo.page, "and in 2023?")
    expect(after.some((e: any) => e.name === "error")).toBe(true)
    await ana.page.close()
    await bo.page.close()
  }, 240_000)

  it("renews a session that ended mid-conversation through getToken(), and the chat goes on", async () => {
    host.mode = { short: true }
    const { page, problems } = await open("ana")
    await expect.poll(() => page.locator("sightline-chat [part=suggestion]").count()).toBeGreaterThan(0)
    const first = await ask(page, "What was revenue by region last year?")
    expect(first.filter((e: any) => e.name === "error")).toEqual([])
    const mintedBefore = host.minted.get("ana") ?? 0
    // The 3-second key, and with it the session, ends; the host still says it lasts an hour.
    await new Promise((resolve) => setTimeout(resolve, 3_500))
    const second = await ask(page, "and per channel?")
    expect(second.map((e: any) => e.name)).toEqual(["token-expired", "answer"])
    expect(second[1].detail.chat_id).toBe(first.find((e: any) => e.name === "answer").detail.chat_id)
    expect(host.minted.get("ana")).toBeGreaterThan(mintedBefore)
    expect(await page.locator("sightline-chat .answer").count()).toBe(2)
    expect(problems.filter((p) => !/401/.test(p))).toEqual([])
    await page.close()
  }, 120_000)

  it("asks back when a follow-up is unclear, and answers the choice clicked", async () => {
    host.mode = { short: true }
    // cy's host gives no region: every region's rows.
    const { page, problems } = await open("cy")
    await ask(page, "Top 3 regions by revenue last year")
    const regions = await lastTable(page)
    expect(regions).toHaveLength(3)
    // The 3-second session may end on a busy machine between questions: the widget renews it
    // (`token-expired`, tested on its own above) and goes on; the answers are what is asserted here.
    const unclear = answered(await ask(page, "how many orders did it get last year?"))
    expect(unclear.map((e: any) => e.name)).toEqual(["answer"])
    const choices = page.locator("sightline-chat [part=clarification]")
    await choices.waitFor()
    expect(await choices.locator("p").textContent()).toBe("Which region do you mean by \"it\"?")
    expect(await choices.locator("button").allTextContents()).toEqual(regions)
    const before = await page.evaluate(() => (globalThis as any).events.length)
    await choices.locator("button", { hasText: regions[1]! }).click()
    await page.waitForFunction((count) => (globalThis as any).events.length > count, before, { timeout: 60_000 })
    await page.waitForFunction(
      (count) => (globalThis as any).events.slice(count).some((e: any) => e.name !== "token-expired"),
      before,
      { timeout: 60_000 }
    )
    const chosen = answered(await page.evaluate((count) => (globalThis as any).events.slice(count), before))
    expect(chosen.map((e: any) => e.name)).toEqual(["answer"])
    expect(chosen[0].detail.text).toContain(`I took "second one" for "${regions[1]}"`)
    expect(chosen[0].detail.chat_id).toBe(unclear[0].detail.chat_id)
    // Answered once: its buttons no longer choose.
    expect(await choices.locator("button").first().isDisabled()).toBe(true)
    expect(problems.filter((p) => !/401/.test(p))).toEqual([])
    await page.close()
  }, 120_000)

  it("works as a React component, in the page's language", async () => {
    host.mode = { short: true }
    const { page, problems } = await open("ana")
    await page.goto(`${host.origin}/react`)
    // French, from the page's lang.
    await expect.poll(() => page.locator("sightline-chat [part=ask]").textContent()).toBe("Demander")
    const events = answered(await ask(page, "What was revenue by region last year?"))
    expect(events.map((e: any) => e.name)).toEqual(["answer"])
    expect(await lastTable(page)).toEqual(["Europe"])
    expect(problems.filter((p) => !/401/.test(p))).toEqual([])
    await page.close()
  }, 120_000)

  it("renders what an answer or its data holds as text: markup and javascript: links stay inert", async () => {
    const hostile = "<img src=x onerror=\"window.pwned=1\">"
    // A stored answer of ana's whose text and table hold what hostile data could put there.
    await sightline.run(Effect.gen(function*() {
      const admin = yield* (yield* Auth.Auth).authenticateApiKey(org.key)
      const endUser: Policy.Principal = {
        ...admin,
        auth: Policy.ApiKey({
          ...(admin.auth as Policy.ApiKey),
          clientId: "{\"region\":\"EU\"}",
          endUser: { externalUserId: "ana", keyClientId: "", origins: [host.origin] }
        })
      }
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(endUser, { question: "Names?" })
      const cellId = CellId.make(crypto.randomUUID())
      yield* runs.appendCell(run, {
        id: cellId,
        type: "sql",
        status: "completed",
        created_at: yield* DateTime.now,
        query: "SELECT name FROM customers",
        output: []
      })
      yield* runs.addAsset(run, {
        cell_id: cellId,
        id: AssetId.make(crypto.randomUUID()),
        name: "names",
        type: "table",
        mime_type: "application/json",
        content: JSON.stringify({ columns: [{ name: "name" }], rows: [[hostile], ["plain"]] })
      })
      yield* runs.complete(run, `Here: ${hostile} and [a link](javascript:window.pwned=2) and **bold**`, [])
    }))
    host.mode = { short: true }
    const { page } = await open("ana")
    await expect.poll(() => page.locator("sightline-chat [part=chat-item]").count()).toBeGreaterThan(0)
    await page.locator("sightline-chat [part=chat-item]").first().click()
    await expect.poll(() => page.locator("sightline-chat .answer").count()).toBe(1)
    const answer = page.locator("sightline-chat .answer")
    expect(await answer.textContent()).toContain(hostile)
    expect(await answer.locator("img").count()).toBe(0)
    expect(await answer.locator("a").count()).toBe(0)
    expect(await answer.locator("strong").textContent()).toBe("bold")
    expect(await answer.locator("td").allTextContents()).toEqual([hostile, "plain"])
    expect(await page.evaluate(() => (globalThis as any).pwned)).toBeUndefined()
    await page.close()
  }, 120_000)
})
