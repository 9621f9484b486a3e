/**
 * The ops CLI as operators run it: real processes (`node dist/bin.js …`, the bundle `pnpm start` runs) on a temporary
 * PGlite data directory, and once on PostgreSQL (`DATABASE_URL`).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import * as NodePath from "node:path"
import * as Yaml from "yaml"
import * as Cli from "../src/Cli.js"
import { cli, serve, tempDir } from "./utils/process.js"
import { dropPrefix, postgresUrl, randomPrefix } from "./utils/server.js"

const adminKeyIn = (stdout: string) => /Admin API key \(shown once, keep it\): (\S+)/.exec(stdout)?.[1]
const signInLinkIn = (stdout: string) =>
  /set the admin's password \(one-time link, valid 7 days\): (\S+)/.exec(stdout)?.[1]

/** Sets a password with a printed sign-in link's token, on `base`. */
const setPassword = (base: string, link: string) =>
  fetch(`${base}/v2/auth/password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: link.split("/#/set-password/")[1], password: "a long admin password" })
  })

describe("sightline CLI", () => {
  it("org create --json prints one JSON object whose key works against the served store", async () => {
    const dataDir = tempDir()
    const created = await cli(["org", "create", "--name", "Acme", "--admin-email", "ada@acme.test", "--json"], {
      SIGHTLINE_DATA_DIR: dataDir
    })
    expect(created.code).toBe(0)
    const lines = created.stdout.trim().split("\n")
    expect(lines).toHaveLength(1)
    const json = JSON.parse(lines[0]!)
    expect(Object.keys(json).sort()).toEqual(["api_key", "member_id", "organization_id", "sign_in_url"])
    // Without SIGHTLINE_PUBLIC_URL, links point at this machine's loopback name and the port.
    expect(json.sign_in_url).toMatch(/^http:\/\/localhost:8787\/#\/set-password\/[\w-]{43}$/)

    // The store already has an organization: serve prints no bootstrap key.
    const server = await serve({ SIGHTLINE_DATA_DIR: dataDir })
    expect(adminKeyIn(server.output.stdout)).toBeUndefined()
    const created2 = await fetch(`${server.base}/v2/playbooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${json.api_key}` }
    })
    expect(created2.status).toBe(201)
    // Whoever the key authenticates as owns what it creates: the admin member printed above.
    const me = await fetch(`${server.base}/rpc/public/svc.rpc.public.rbac.RBACService/WhoAmI`, {
      method: "POST",
      headers: { "svc_api_key": json.api_key, "connect-protocol-version": "1", "content-type": "application/json" },
      body: "{}"
    })
    expect(me.status).toBe(200)
    expect(JSON.stringify(await me.json())).toContain(json.member_id)
    // The printed link signs the admin in, once.
    const signedIn = await setPassword(server.base, json.sign_in_url)
    expect(signedIn.status).toBe(200)
    expect(((await signedIn.json()) as any).member_id).toBe(json.member_id)
    expect((await setPassword(server.base, json.sign_in_url)).status).toBe(401)
    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
  })

  it("serve bootstraps an empty store once, answers health checks, and drains on SIGTERM", async () => {
    const dataDir = tempDir()
    const first = await serve({ SIGHTLINE_DATA_DIR: dataDir })
    const key = adminKeyIn(first.output.stdout)
    expect(key).toBeDefined()
    const link = signInLinkIn(first.output.stdout)
    expect(link).toMatch(new RegExp(`^http://localhost:${new URL(first.base).port}/#/set-password/`))
    expect((await setPassword(first.base, link!)).status).toBe(200)
    expect((await fetch(`${first.base}/healthz`)).status).toBe(200)
    const authorized = { headers: { authorization: `Bearer ${key}` } }
    expect((await fetch(`${first.base}/v2/playbooks`, authorized)).status).toBe(200)

    // A request in flight when SIGTERM arrives (its body still arriving) is answered, then the
    // process exits cleanly.
    const playbook: any = await (await fetch(`${first.base}/v2/playbooks`, { method: "POST", ...authorized })).json()
    const payload = JSON.stringify({ name: "Finished after SIGTERM" })
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`${first.base}/v2/playbooks/${playbook.id}`, {
        method: "PATCH",
        headers: { ...authorized.headers, "content-type": "application/json", "content-length": payload.length }
      }, (response) => {
        let body = ""
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => resolve({ status: response.statusCode!, body }))
      })
      request.on("error", reject)
      request.write(payload.slice(0, 5))
      setTimeout(() => {
        first.child.kill("SIGTERM")
        setTimeout(() => request.end(payload.slice(5)), 300)
      }, 300)
    })
    const response = await answered
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body).name).toBe("Finished after SIGTERM")
    expect(await first.exited).toBe(0)
    // Structured logs on stderr carry the request id of each request.
    const logged = first.output.stderr.split("\n").filter((line) => line.includes("\"request\""))
    expect(logged.length).toBeGreaterThan(0)
    expect(JSON.parse(logged[0]!).annotations.requestId).toMatch(/^[0-9a-f-]{36}$/)

    // The data directory reopens cleanly; the key still works and no second key is printed.
    const second = await serve({ SIGHTLINE_DATA_DIR: dataDir })
    expect(adminKeyIn(second.output.stdout)).toBeUndefined()
    expect((await fetch(`${second.base}/v2/playbooks`, authorized)).status).toBe(200)
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
  })

  it("a second process on a running server's data directory stops at once and says why; so does a port in use", async () => {
    const dataDir = tempDir()
    const server = await serve({ SIGHTLINE_DATA_DIR: dataDir })
    const second = await cli(["org", "create", "--name", "Lost", "--admin-email", "x@lost.test", "--json"], {
      SIGHTLINE_DATA_DIR: dataDir
    })
    expect(second.code).toBe(1)
    expect(second.stdout).toBe("")
    expect(second.stderr.trim()).toMatch(
      new RegExp(
        `^sightline: the data directory .* is in use by process ${server.child.pid} \\(a running server\\?\\): stop it first, or set DATABASE_URL`
      )
    )
    const port = new URL(server.base).port
    const clash = await cli(["serve"], { SIGHTLINE_DATA_DIR: tempDir(), SIGHTLINE_PORT: port })
    expect(clash.code).toBe(1)
    expect(clash.stderr.trim()).toBe(
      `sightline: cannot listen on 127.0.0.1:${port}: the port is in use by another process (stop it, or choose another port with SIGHTLINE_PORT)`
    )
    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
    // Once the server is gone, the directory is free again and nothing was lost.
    const after = await cli(["org", "create", "--name", "Kept", "--admin-email", "y@kept.test", "--json"], {
      SIGHTLINE_DATA_DIR: dataDir
    })
    expect(after.code).toBe(0)
    expect(JSON.parse(after.stdout).organization_id).toEqual(expect.any(String))
  })

  it("migrate exits 0, and usage or input errors exit non-zero with one line", async () => {
    const dataDir = tempDir()
    const migrated = await cli(["migrate"], { SIGHTLINE_DATA_DIR: dataDir })
    expect(migrated.code).toBe(0)

    const unknown = await cli(["frobnicate"], { SIGHTLINE_DATA_DIR: dataDir })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("usage:")

    const missing = await cli(["org", "create", "--name", "Acme"], { SIGHTLINE_DATA_DIR: dataDir })
    expect(missing.code).toBe(2)

    const badEmail = await cli(["org", "create", "--name", "Acme", "--admin-email", "nope"], {
      SIGHTLINE_DATA_DIR: dataDir
    })
    expect(badEmail.code).toBe(1)
    expect(badEmail.stderr.trim().split("\n")).toHaveLength(1)
    expect(badEmail.stderr).toContain("e-mail")

    const badPort = await cli(["serve"], { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_PORT: "eighty" })
    expect(badPort.code).toBe(1)
    expect(badPort.stderr).toContain("SIGHTLINE_PORT")
    expect(badPort.stderr).not.toContain("    at ")

    const shortSecret = await cli(["serve"], { SIGHTLINE_DATA_DIR: dataDir, SIGHTLINE_JWT_SECRET: "too-short" })
    expect(shortSecret.code).toBe(1)
    expect(shortSecret.stderr).toContain("SIGHTLINE_JWT_SECRET")
    expect(shortSecret.stderr).toContain("at least 32 bytes")
    expect(shortSecret.stderr).not.toContain("too-short")
  })
})

describe("sightline semantic import", () => {
  const project = NodePath.join(__dirname, "..", "..", "..", "packages", "core", "test", "fixtures", "import", "dbt")

  it("reads a dbt project offline, writes its model where the library keeps it, and prints the report", async () => {
    const out = tempDir()
    const imported = await cli(
      [
        "semantic",
        "import",
        project,
        "--from",
        "dbt",
        "--connector",
        "Warehouse",
        "--schema",
        "analytics",
        "--out",
        out,
        "--json"
      ],
      {}
    )
    expect(imported.code, imported.stderr).toBe(0)
    const printed = JSON.parse(imported.stdout.trim())
    expect(printed.path).toBe(NodePath.join(out, "semantic", "shop_analytics.yaml"))
    expect(printed.tally).toEqual({ imported: printed.report.length - 1, approximated: 0, refused: 1 })
    const written = fs.readFileSync(printed.path, "utf8")
    expect(written).toContain("#   models/marts/orders.yml:76: metric revenue: imported")
    expect(written).toContain("connector: Warehouse")
    expect(written).toContain("schema: analytics")

    const text = await cli(
      ["semantic", "import", project, "--from", "dbt", "--connector", "Warehouse", "--out", out],
      {}
    )
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("models/marts/customers.yml:107: saved query weekly_by_hour: refused")
    expect(text.stdout.trim().split("\n").at(-1)).toMatch(
      /^wrote .*shop_analytics\.yaml: \d+ imported, 0 approximated, 1 refused$/
    )

    // The model, as an OSI document, reads back as the same model.
    const osiFile = NodePath.join(out, "shop.osi.yaml")
    const exported = await cli(["semantic", "export", printed.path, "--to", "osi", "--out", osiFile], {})
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stdout.trim()).toBe(`wrote ${osiFile}: OSI 0.1.1`)
    const back = await cli(
      [
        "semantic",
        "import",
        osiFile,
        "--from",
        "osi",
        "--connector",
        "Warehouse",
        "--out",
        NodePath.join(out, "back"),
        "--json"
      ],
      {}
    )
    expect(back.code, back.stderr).toBe(0)
    expect(Yaml.parse(fs.readFileSync(JSON.parse(back.stdout.trim()).path, "utf8"))).toEqual(
      Yaml.parse(fs.readFileSync(printed.path, "utf8"))
    )
    expect((await cli(["semantic", "export", printed.path, "--to", "cube"], {})).code).toBe(2)

    const usage = await cli(["semantic", "import", project, "--connector", "Warehouse"], {})
    expect(usage.code).toBe(2)
    const unknown = await cli(["semantic", "import", project, "--from", "tableau", "--connector", "W"], {})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("the formats are dbt, cube, lookml, osi")
    const scratch = tempDir()
    fs.mkdirSync(scratch, { recursive: true })
    const broken = NodePath.join(scratch, "broken.yml")
    fs.writeFileSync(broken, "semantic_models:\n  - name: x\n    model: [open\n")
    const failed = await cli(["semantic", "import", broken, "--from", "dbt", "--connector", "W", "--out", out], {})
    expect(failed.code).toBe(1)
    expect(failed.stderr.trim().split("\n")).toHaveLength(1)
    expect(failed.stderr).toContain("broken.yml:4:")
  })
})

describe("the draining server", () => {
  it.scoped("answers 503 with Retry-After while it listens but the app is not attached yet", () =>
    Effect.gen(function*() {
      const node = yield* Cli.drainingNodeServer({ host: "127.0.0.1", port: 0 })
      // The socket listens once the layer is built; nothing serves the app on it yet.
      const context = yield* Layer.build(node.http)
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      if (address._tag !== "TcpAddress") throw new Error("no TCP address")
      const response = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${address.port}/readyz`, { signal: AbortSignal.timeout(5_000) })
      )
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).toBe("1")
      expect(yield* Effect.promise(() => response.json())).toEqual({
        error: { code: "unavailable", message: "The server is starting: retry shortly" }
      })
    }))
})

describe("sightline CLI on PostgreSQL", () => {
  it("serves from DATABASE_URL under its own table prefix", async () => {
    const env = { DATABASE_URL: postgresUrl, SIGHTLINE_TABLE_PREFIX: randomPrefix(), SIGHTLINE_DATA_DIR: tempDir() }
    const created = await cli(["org", "create", "--name", "Pg", "--admin-email", "pg@acme.test", "--json"], env)
    if (created.code !== 0 && process.env.CI !== "true" && /ECONNREFUSED|connect/i.test(created.stderr)) {
      console.warn(`sightline CLI on PostgreSQL: PostgreSQL unreachable at ${postgresUrl}: skipped`)
      return
    }
    expect(created.code, created.stderr).toBe(0)
    const { api_key } = JSON.parse(created.stdout)
    const server = await serve(env)
    const response = await fetch(`${server.base}/v2/playbooks`, { headers: { authorization: `Bearer ${api_key}` } })
    expect(response.status).toBe(200)
    server.child.kill("SIGTERM")
    expect(await server.exited).toBe(0)
    await dropPrefix(env.SIGHTLINE_TABLE_PREFIX)
  })
})
