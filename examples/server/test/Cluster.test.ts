/**
 * Three server processes over one PostgreSQL behind a round-robin proxy, as an operator runs them
 * (`docs/deploy.md`): nginx with the guide's configuration where it is installed (`.ci/run`
 * installs it), else a small proxy of the test's own. Every request of the product's flows lands
 * on whichever process the proxy picks, and none of them answers 409 for a sandbox that another
 * process runs. Then one process is
 * killed mid-answer and mid-execution: every answer ends, the killed process's sandboxes say so,
 * and the others go on serving everything.
 */
import * as BubblewrapRuntime from "@sightline/sandbox/BubblewrapRuntime"
import * as Option from "effect/Option"
import * as Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Nginx from "./utils/nginx.js"
import { cli, serve, tempDir } from "./utils/process.js"
import * as Provider from "./utils/provider.js"
import { roundRobin } from "./utils/proxy.js"
import { dropPrefix, postgresProblem, postgresUrl, randomPrefix } from "./utils/server.js"
import { readEvents } from "./utils/sse.js"
import { until } from "./utils/wait.js"

const unavailable = Option.getOrUndefined(BubblewrapRuntime.availability())
const missing = postgresProblem !== undefined
  ? `PostgreSQL unreachable at ${postgresUrl}`
  : unavailable !== undefined
  ? `sandboxes cannot run here: ${unavailable}`
  : undefined
if (missing !== undefined && process.env.CI === "true") throw new Error(`cluster: ${missing} (CI=true, so this fails)`)
if (missing !== undefined) console.warn(`postgres: cluster: ${missing}: skipped`)
if (Nginx.unavailable !== undefined) {
  if (process.env.CI === "true") throw new Error(`cluster: ${Nginx.unavailable} (CI=true, so this fails)`)
  console.warn(`cluster: ${Nginx.unavailable}: a proxy of the test's own stands in for it`)
}

// The model: what each question asks for, by its words.
const provider = await Provider.start((request) => {
  const messages = request.messages as Array<{ role: string; content: string }>
  const question = messages.filter((m) => m.role === "user").at(-1)?.content ?? ""
  const afterTool = messages.at(-1)?.role === "tool"
  if (question.includes("Talk to me")) return { endless: true }
  // A playbook's run is offered `write_report`, and writes its report with it.
  if ((request.tools ?? []).some((t: any) => t.function?.name === "write_report") && !afterTool) {
    return {
      toolCalls: [{
        name: "write_report",
        arguments: { subject: "Weekly", summary: "All good", blocks: [{ type: "text", content: "Fine" }] }
      }]
    }
  }
  if (question.includes("Remember forty") && !afterTool) {
    return { toolCalls: [{ name: "run_python", arguments: { code: "x = 40\nprint('kept')" } }] }
  }
  if (question.includes("Add two") && !afterTool) {
    return { toolCalls: [{ name: "run_python", arguments: { code: "print(x + 2)" } }] }
  }
  return { text: "Done." }
})

const sql = (text: string) => {
  const client = new Pg.Client({ connectionString: postgresUrl })
  return client.connect().then(() => client.query(text)).finally(() => client.end())
}

describe.skipIf(missing !== undefined)("postgres: three processes behind a round-robin proxy", () => {
  const prefix = randomPrefix()
  const env: Record<string, string> = {
    DATABASE_URL: postgresUrl,
    SIGHTLINE_TABLE_PREFIX: prefix,
    SIGHTLINE_CLUSTER_SECRET: "the channel secret of this test deployment, long enough",
    SIGHTLINE_ASSET_SECRET: "the asset secret of this test deployment",
    SIGHTLINE_RUNNER_HEARTBEAT_SECONDS: "1",
    SIGHTLINE_RUN_STALE_SECONDS: "3",
    SIGHTLINE_SANDBOX_MAX_PER_MEMBER: "10",
    SIGHTLINE_OPENAI_COMPATIBLE_URL: provider.url,
    SIGHTLINE_MODELS: Provider.catalogue
  }
  let processes: Array<Awaited<ReturnType<typeof serve>>> = []
  let proxy: { readonly url: string; readonly close: () => Promise<void> }
  let key = ""
  let signInUrl = ""

  const api = (path: string, init: RequestInit & { readonly json?: unknown; readonly base?: string } = {}) => {
    const { base, json, ...rest } = init
    return fetch(`${base ?? proxy.url}${path}`, {
      ...rest,
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      headers: {
        authorization: `Bearer ${key}`,
        ...(json === undefined ? {} : { "content-type": "application/json" }),
        ...(rest.headers as Record<string, string> | undefined)
      }
    })
  }
  const ok = async (response: Response) => {
    const text = await response.text()
    if (response.status >= 300) throw new Error(`${response.url} answered ${response.status}: ${text}`)
    return text === "" ? undefined : JSON.parse(text)
  }
  const post = (path: string, json: unknown = {}) => api(path, { method: "POST", json })

  beforeAll(async () => {
    const created = await cli(
      ["org", "create", "--name", "Acme", "--admin-email", "admin@acme.test", "--json"],
      { ...env, SIGHTLINE_DATA_DIR: tempDir() }
    )
    if (created.code !== 0) throw new Error(`org create failed: ${created.stderr}`)
    const org = JSON.parse(created.stdout)
    key = org.api_key
    signInUrl = org.sign_in_url
    processes = await Promise.all([0, 1, 2].map(() =>
      serve({
        ...env,
        SIGHTLINE_DATA_DIR: tempDir(),
        SIGHTLINE_SANDBOX_DIR: tempDir()
      })
    ))
    const bases = processes.map((p) => p.base)
    proxy = Nginx.unavailable === undefined ? await Nginx.start(bases) : await roundRobin(bases)
  }, 120_000)

  afterAll(async () => {
    await proxy?.close()
    for (const p of processes) p.child.kill("SIGKILL")
    await provider.close()
    await dropPrefix(prefix)
  })

  /** How many sandcastle requests each process's access log shows. */
  const sandcastleRequests = () =>
    processes.map((p) => p.output.stderr.split("\n").filter((line) => line.includes(`"path":"/v2/sandcastles`)).length)

  it("a data scientist's sandcastle session goes to every process, and not one request is refused", async () => {
    const before = sandcastleRequests()
    const connector = await ok(
      await post("/v2/connectors", {
        config: { connector_type: "DEMO", name: "Demo retail", demo: {} }
      })
    )
    const { sandbox_id: id } = await ok(await post("/v2/sandcastles"))
    await ok(await post(`/v2/sandcastles/${id}/execute`, { code: "x = 41" }))
    // The kernel's variables are there whichever process serves the next request.
    expect((await ok(await post(`/v2/sandcastles/${id}/execute`, { code: "print(x + 1)" }))).output).toEqual(["42"])
    const loaded = await ok(
      await post(`/v2/sandcastles/${id}/query`, {
        connector_id: connector.id,
        query: "SELECT channel, count(*) AS orders FROM orders GROUP BY channel ORDER BY channel",
        dataframe_name: "by_channel"
      })
    )
    expect(loaded.num_rows).toBeGreaterThan(1)
    await ok(
      await post(`/v2/sandcastles/${id}/execute`, {
        code: "import matplotlib.pyplot as plt\nby_channel.plot.bar(x='channel', y='orders')\nplt.savefig('plot.png')"
      })
    )
    const listed = await ok(await api(`/v2/sandcastles/${id}/files`))
    expect(listed.files.map((f: any) => f.name)).toContain("plot.png")
    const png = await api(`/v2/sandcastles/${id}/files/plot.png`)
    expect(png.status).toBe(200)
    expect(Array.from(new Uint8Array(await png.arrayBuffer()).slice(1, 4))).toEqual([0x50, 0x4e, 0x47])
    const form = new FormData()
    form.append("file", new Blob(["# Orders by channel\nCounted from the demo data.\n"]), "channels.md")
    form.append("path", "library/notes/channels.md")
    await ok(await api(`/v2/sandcastles/${id}/files`, { method: "POST", body: form }))
    const diff = await ok(await api(`/v2/sandcastles/${id}/library/diff`))
    expect(diff.diffs.map((d: any) => d.new_path)).toEqual(["notes/channels.md"])
    const change = await ok(
      await post(`/v2/sandcastles/${id}/library/changes`, {
        title: "Notes on channels",
        description: "From a sandcastle session"
      })
    )
    expect(change.change_id ?? change.id).toBeDefined()
    const runs = await ok(await api(`/v2/sandcastles/${id}/executions`))
    expect(runs.executions.length).toBe(4)
    // The channel between the processes is not reachable from the outside (nginx closes it; a
    // request that reached a process would still need the channel's token).
    const channel = await fetch(`${proxy.url}/internal/sandboxes`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` }
    })
    expect(channel.status).toBe(Nginx.unavailable === undefined ? 404 : 401)
    // Every process served part of the session (its access log says so).
    const after = sandcastleRequests()
    for (const [i, count] of after.entries()) expect(count - before[i]!).toBeGreaterThan(2)
  }, 120_000)

  it("a chat's run_python keeps its variables over two questions asked of different processes", async () => {
    const first = await readEvents(await post("/v2/chats/stream", { question: "Remember forty" }))
    expect(first.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const chatId = first[0]!.data.chat_id
    const second = await readEvents(await post("/v2/chats/stream", { question: "Add two", chat_id: chatId }))
    expect(second.at(-1)!.data).toEqual({ type: "done", status: "completed" })
    const cell = second.filter((e) => e.data.type === "cell").map((e) => e.data.cell).at(-1)
    expect(cell).toMatchObject({ type: "python", status: "completed", output: ["42"] })
    const sandboxes = await ok(await api("/v2/sandcastles"))
    expect(sandboxes.sandboxes.filter((s: any) => s.chat_id === chatId)).toHaveLength(1)
  }, 120_000)

  it("an answer streams, resumes after a disconnect on another process, and is cancelled from a third", async () => {
    const response = await post("/v2/chats/stream", { question: "Talk to me" })
    const seen = await readEvents(response, (_, all) => all.filter((e) => e.data.type === "text").length === 2)
    const chatId = seen[0]!.data.chat_id
    const resumed = await readEvents(
      await api(`/v2/chats/${chatId}/stream`, { headers: { "last-event-id": seen.at(-1)!.id! } }),
      (_, all) => all.filter((e) => e.data.type === "text").length === 2
    )
    expect(Number(resumed[0]!.id)).toBeGreaterThan(Number(seen.at(-1)!.id))
    expect(await ok(await post(`/v2/chats/${chatId}/cancel`))).toEqual({ cancelled: true })
    const ended = await readEvents(await api(`/v2/chats/${chatId}/stream`))
    expect(ended.at(-1)!.data).toEqual({
      type: "done",
      status: "failed",
      error: "cancelled: the run was stopped on request"
    })
  }, 60_000)

  it("sign-in on one process and renewal on another", async () => {
    const token = signInUrl.split("/#/set-password/")[1]!
    const signedIn = await fetch(`${proxy.url}/v2/auth/password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, password: "a long enough password for the cluster" })
    })
    expect(signedIn.status).toBe(200)
    let cookie = signedIn.headers.get("set-cookie")!.split(";")[0]!
    for (let i = 0; i < 3; i++) {
      const renewed = await fetch(`${proxy.url}/v2/auth/refresh`, { method: "POST", headers: { cookie } })
      expect(renewed.status).toBe(200)
      cookie = renewed.headers.get("set-cookie")!.split(";")[0]!
      const access = ((await renewed.json()) as { access_token: string }).access_token
      expect((await fetch(`${proxy.url}/v2/chats`, { headers: { authorization: `Bearer ${access}` } })).status).toBe(
        200
      )
    }
  }, 60_000)

  it("an agent webhook run and a scheduled playbook each run exactly once", async () => {
    const agent = await ok(
      await post("/v2/agents", {
        name: "Hooked",
        prompt: "Say done",
        connector_ids: [],
        cron_strings: [],
        email_addresses: []
      })
    )
    const queued = await fetch(`${proxy.url}/v1/agents/webhook/trigger`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", authorization: `Bearer ${key}` },
      body: JSON.stringify({ triggerId: agent.webhook_trigger_id })
    })
    expect(await ok(queued)).toEqual({ status: "queued" })
    await until("the agent run to complete", async () => {
      const runs = await ok(await api(`/v2/agents/${agent.id}/runs`))
      return runs.runs?.length === 1 && runs.runs[0].status === "completed" ? true : undefined
    }, 60_000)

    const playbook = await ok(await post("/v2/playbooks"))
    await ok(
      await api(`/v2/playbooks/${playbook.id}`, {
        method: "PATCH",
        json: { prompt: "Weekly numbers", cron_string: "* * * * *" }
      })
    )
    await ok(await post(`/v2/playbooks/${playbook.id}/deploy`))
    // The next firing brought forward, as the minute turning would: every worker sees it due.
    await sql(`UPDATE ${prefix}playbooks SET next_run_at = now() - interval '1 second' WHERE id = '${playbook.id}'`)
    await until("the playbook to fire", async () => {
      const { rows } = await sql(
        `SELECT count(*)::int AS n FROM ${prefix}jobs WHERE dedupe_key LIKE 'playbook:${playbook.id}:%' AND status = 'completed'`
      )
      return rows[0].n >= 1 ? true : undefined
    }, 40_000)
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const { rows } = await sql(
      `SELECT dedupe_key, attempts FROM ${prefix}jobs WHERE dedupe_key LIKE 'playbook:${playbook.id}:%'`
    )
    expect(new Set(rows.map((r) => r.dedupe_key)).size).toBe(rows.length)
    expect(rows.every((r) => r.attempts === 1)).toBe(true)
    // One report per firing: no process ran a firing another ran too.
    const settled = await until("no firing in progress", async () => {
      const jobs = `FROM ${prefix}jobs WHERE dedupe_key LIKE 'playbook:${playbook.id}:%'`
      const { rows: counts } = await sql(
        `SELECT (SELECT count(*)::int ${jobs} AND status NOT IN ('completed', 'failed')) AS pending,
                (SELECT count(*)::int ${jobs} AND status = 'completed') AS completed,
                (SELECT count(*)::int FROM ${prefix}playbook_reports WHERE playbook_id = '${playbook.id}') AS reports`
      )
      return counts[0].pending === 0 ? counts[0] : undefined
    }, 30_000)
    expect(settled.reports).toBe(settled.completed)
  }, 120_000)

  it(
    "one process killed mid-answer and mid-execution: answers end, its sandboxes say so, the others serve on",
    async () => {
      const [survivor, , victim] = processes as [typeof processes[0], typeof processes[0], typeof processes[0]]
      // A sandbox on the victim's runner (placement spreads them; the store says where each went).
      let onVictim: string | undefined
      for (let i = 0; i < 6 && onVictim === undefined; i++) {
        const { sandbox_id } = await ok(await post("/v2/sandcastles"))
        const { rows } = await sql(
          `SELECT r.url FROM ${prefix}sandboxes s JOIN ${prefix}sandbox_runners r ON r.id = s.runner_id
         WHERE s.sandbox_id = '${sandbox_id}'`
        )
        if (rows[0]?.url === victim.base) onVictim = sandbox_id
      }
      expect(onVictim).toBeDefined()
      await ok(await post(`/v2/sandcastles/${onVictim}/execute`, { code: "y = 1" }))
      // An answer running on the victim, and an execution there asked of a survivor.
      const answer = await api("/v2/chats/stream", {
        base: victim.base,
        method: "POST",
        json: { question: "Talk to me" }
      })
      const seen = await readEvents(answer, (_, all) => all.filter((e) => e.data.type === "text").length === 2)
      const chatId = seen[0]!.data.chat_id
      const sleeping = api(`/v2/sandcastles/${onVictim}/execute`, {
        base: survivor.base,
        method: "POST",
        json: { code: "import time\ntime.sleep(60)" }
      })
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      victim.child.kill("SIGKILL")
      await victim.exited

      // The execution's caller is told at once that the sandbox's process cannot be reached.
      const cut = await sleeping
      expect(cut.status).toBe(409)
      expect(((await cut.json()) as { error: { message: string } }).error.message).toContain("cannot be reached")
      // The answer ends (failed: its process died), resumed through the proxy.
      const ended = await readEvents(await api(`/v2/chats/${chatId}/stream`))
      expect(ended.at(-1)!.data).toMatchObject({ type: "done", status: "failed" })
      // The sandbox is reported stopped, saying why, with its executions still listed.
      const stopped = await until("the sandbox to be reported stopped", async () => {
        const detail = await ok(await api(`/v2/sandcastles/${onVictim}`))
        return detail.status === "stopped" ? detail : undefined
      }, 20_000)
      expect(stopped.message).toMatch(/server process/)
      await until("the sandbox to be listed stopped with its reason", async () => {
        const listed = await ok(await api("/v2/sandcastles?status=all&limit=200"))
        const entry = listed.sandboxes.find((s: any) => s.sandbox_id === onVictim)
        return entry?.status === "stopped" && entry.stop_reason?.includes("server process") ? true : undefined
      }, 20_000)
      const runs = await ok(await api(`/v2/sandcastles/${onVictim}/executions`))
      expect(runs.executions.map((e: any) => e.input)).toContain("y = 1")
      // Its owner restarts it on a process that lives, and works in it.
      await ok(await post("/v2/sandcastles", { sandbox_id: onVictim }))
      expect((await ok(await post(`/v2/sandcastles/${onVictim}/execute`, { code: "print(2)" }))).output).toEqual(["2"])
      // The survivors serve everything.
      for (let i = 0; i < 12; i++) expect((await api("/v2/chats")).status).toBe(200)
      const { rows } = await sql(`SELECT count(*)::int AS n FROM ${prefix}chats WHERE status = 'running'`)
      expect(rows[0].n).toBe(0)
    },
    120_000
  )
})

describe.skipIf(missing !== undefined)("postgres: processes by role, and a runner that drains", () => {
  const prefix = randomPrefix()
  const env: Record<string, string> = {
    DATABASE_URL: postgresUrl,
    SIGHTLINE_TABLE_PREFIX: prefix,
    SIGHTLINE_CLUSTER_SECRET: "the channel secret of this other test deployment",
    SIGHTLINE_RUNNER_HEARTBEAT_SECONDS: "1"
  }
  let api: Awaited<ReturnType<typeof serve>>
  let runner: Awaited<ReturnType<typeof serve>>
  let key = ""

  beforeAll(async () => {
    const created = await cli(
      ["org", "create", "--name", "Acme", "--admin-email", "admin@acme.test", "--json"],
      { ...env, SIGHTLINE_DATA_DIR: tempDir() }
    )
    if (created.code !== 0) throw new Error(`org create failed: ${created.stderr}`)
    key = JSON.parse(created.stdout).api_key
    ;[api, runner] = await Promise.all([
      serve({ ...env, SIGHTLINE_DATA_DIR: tempDir(), SIGHTLINE_ROLES: "api,worker" }),
      serve({
        ...env,
        SIGHTLINE_DATA_DIR: tempDir(),
        SIGHTLINE_ROLES: "sandbox",
        SIGHTLINE_SANDBOX_DIR: tempDir()
      })
    ])
  }, 120_000)

  afterAll(async () => {
    api?.child.kill("SIGKILL")
    runner?.child.kill("SIGKILL")
    await dropPrefix(prefix)
  })

  const call = (base: string, path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(init.headers as object) }
    })

  it(
    "a sandbox-only process serves health and the channel, not the API; the API process runs none itself",
    async () => {
      const refused = await call(runner.base, "/v2/chats")
      expect(refused.status).toBe(404)
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
        "does not serve the API"
      )
      expect((await fetch(`${runner.base}/healthz`)).status).toBe(200)
      expect((await fetch(`${runner.base}/readyz`)).status).toBe(200)
      // The channel is there, for its token only.
      expect((await fetch(`${runner.base}/internal/sandboxes`, { method: "POST" })).status).toBe(401)
      // The API process has no channel of its own (it runs no sandboxes).
      expect((await call(api.base, "/internal/sandboxes", { method: "POST" })).status).toBe(404)

      const started = await call(api.base, "/v2/sandcastles", { method: "POST", body: "{}" })
      expect(started.status).toBe(201)
      const { sandbox_id } = (await started.json()) as { sandbox_id: string }
      const { rows } = await sql(
        `SELECT r.url FROM ${prefix}sandboxes s JOIN ${prefix}sandbox_runners r ON r.id = s.runner_id
       WHERE s.sandbox_id = '${sandbox_id}'`
      )
      expect(rows[0].url).toBe(runner.base)
      const executed = await call(api.base, `/v2/sandcastles/${sandbox_id}/execute`, {
        method: "POST",
        body: JSON.stringify({ code: "print(6 * 7)" })
      })
      expect(((await executed.json()) as { output: Array<string> }).output).toEqual(["42"])

      // SIGTERM: the runner drains. No new sandbox goes to it, and its sandboxes are stopped saying why.
      runner.child.kill("SIGTERM")
      expect(await runner.exited).toBe(0)
      const listed = await call(api.base, "/v2/sandcastles?status=all")
      const entry = ((await listed.json()) as { sandboxes: Array<any> }).sandboxes.find((s) =>
        s.sandbox_id === sandbox_id
      )
      expect(entry).toMatchObject({ status: "stopped" })
      expect(entry.stop_reason).toContain("was shut down")
      const none = await call(api.base, "/v2/sandcastles", { method: "POST", body: "{}" })
      expect(none.status).toBe(409)
      expect(((await none.json()) as { error: { message: string } }).error.message).toContain(
        "no server process runs sandboxes now"
      )
    },
    120_000
  )
})
