/**
 * A host application that gives its signed-in users Sightline's chat and a dashboard in its own page,
 * with `@sightline/embed`, beside a standalone Sightline server (another origin).
 *
 * Its backend holds the host's API key and never gives it out: for the signed-in user, `POST /token`
 * mints an end user's session (`POST /v2/embed/sessions`) with that user's client attributes, and the
 * page's `getToken` asks for it. Its page allows scripts, styles and connections only from itself
 * and Sightline: the widget needs no inline script, no inline style and no `eval`.
 *
 * Sign-in is pretended (`/sign-in?user=ana` sets a cookie): a real host has its own.
 */
import { readFileSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { join, normalize } from "node:path"
import { fileURLToPath } from "node:url"

/** What the host is started with. */
export interface Options {
  /** The standalone Sightline server's base URL (`http://127.0.0.1:8787`). */
  readonly sightlineUrl: string
  /** The host's API key, kept in its backend. */
  readonly apiKey: string
  /** The host's users and the client attributes each one's rows are kept to (`{"region": "EU"}`). */
  readonly users: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  /** The dashboard the page shows, which each session names. */
  readonly dashboard?: string | undefined
  readonly port?: number | undefined
  /** Where the widget's built files are (`@sightline/embed`'s `dist`). */
  readonly widgetDir?: string | undefined
}

/** A running host. */
export interface WidgetHost {
  /** The host's origin: add it to the organization's `embed_origins`. */
  readonly url: string
  readonly close: () => Promise<void>
}

const defaultWidgetDir = fileURLToPath(new URL("../node_modules/@sightline/embed/dist/", import.meta.url))

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const userOf = (request: http.IncomingMessage): string | undefined =>
  /(?:^|;\s*)host_user=([^;]+)/.exec(request.headers.cookie ?? "")?.[1]

/** Starts the host on `port` (0: any free port). */
export const start = async (options: Options): Promise<WidgetHost> => {
  const widgetDir = options.widgetDir ?? defaultWidgetDir
  const sightline = options.sightlineUrl.replace(/\/$/, "")
  const dashboard = options.dashboard
  let origin = ""

  const page = (user: string) =>
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Host app</title></head>
<body><main>
<h1>Signed in as ${escape(user)}</h1>
<sightline-chat server="${escape(sightline)}"></sightline-chat>
${
      dashboard === undefined
        ? ""
        : `<sightline-dashboard server="${escape(sightline)}" name="${escape(dashboard)}"></sightline-dashboard>`
    }
</main><script type="module" src="/app.js"></script></body></html>`

  // The page's script: the widget, and where its tokens come from.
  const script = `import "/embed/index.js"
const getToken = async () => {
  const answer = await fetch("/token", { method: "POST" })
  if (!answer.ok) throw new Error("no Sightline session: " + answer.status)
  return answer.json()
}
for (const element of document.querySelectorAll("sightline-chat, sightline-dashboard")) element.getToken = getToken
`

  const mint = async (user: string): Promise<{ status: number; body: string }> => {
    const answer = await fetch(`${sightline}/v2/embed/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        external_user_id: user,
        client_attributes: options.users[user],
        ...(dashboard === undefined ? {} : { dashboards: [dashboard] }),
        allowed_origins: [origin]
      })
    })
    return { status: answer.status, body: await answer.text() }
  }

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://host")
    const user = userOf(request)
    if (url.pathname === "/sign-in") {
      const name = url.searchParams.get("user") ?? ""
      if (!(name in options.users)) return void response.writeHead(400).end("no such user")
      response.writeHead(303, { location: "/", "set-cookie": `host_user=${name}; Path=/; HttpOnly; SameSite=Lax` })
        .end()
      return
    }
    if (url.pathname === "/") {
      if (user === undefined || !(user in options.users)) {
        const links = Object.keys(options.users).map((name) =>
          `<li><a href="/sign-in?user=${escape(name)}">${escape(name)}</a></li>`
        )
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body><main><h1>Sign in as</h1><ul>${
            links.join("")
          }</ul></main></body></html>`
        )
        return
      }
      response.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": `default-src 'self'; script-src 'self'; style-src 'self'; ` +
          `connect-src 'self' ${sightline}; img-src 'self' data: ${sightline}`
      })
      response.end(page(user))
      return
    }
    if (url.pathname === "/app.js") {
      response.writeHead(200, { "content-type": "text/javascript" }).end(script)
      return
    }
    if (url.pathname.startsWith("/embed/")) {
      const file = normalize(url.pathname.slice("/embed/".length))
      try {
        if (file.startsWith("..")) throw new Error("outside the widget")
        response.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(join(widgetDir, file)))
      } catch {
        response.writeHead(404).end()
      }
      return
    }
    if (url.pathname === "/token" && request.method === "POST") {
      // Only for the signed-in user, with that user's attributes: the browser chooses neither.
      if (user === undefined || !(user in options.users)) return void response.writeHead(401).end()
      mint(user).then(
        ({ body, status }) => response.writeHead(status, { "content-type": "application/json" }).end(body),
        (error: unknown) => response.writeHead(502).end(String(error))
      )
      return
    }
    response.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url: origin, close: () => new Promise((resolve) => server.close(() => resolve())) }
}
