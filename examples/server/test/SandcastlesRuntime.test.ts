/**
 * Sandcastles for real over the socket: bubblewrap sandboxes with a Python kernel, connector rows in
 * DataFrames, files, and the whole library change flow (stage with `exec`, file, two owners approve
 * with their own JWTs, deny and restore, concurrent approvals, OWNERS read authority on the mount).
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { MemberId, OrganizationId } from "@sightline/core/Ids"
import { Fixtures } from "@sightline/core/testing"
import * as BubblewrapRuntime from "@sightline/sandbox/BubblewrapRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Jose from "jose"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import { demoConnector } from "./utils/content.js"
import { newMember } from "./utils/members.js"
import * as Provider from "./utils/provider.js"
import { body, describeServers, type Org, type TestServer } from "./utils/server.js"
import { readEvents } from "./utils/sse.js"

const unavailable = Option.getOrUndefined(BubblewrapRuntime.availability())
if (unavailable !== undefined && process.env.CI === "true") {
  throw new Error(`sandboxes cannot run here (CI=true, so this fails): ${unavailable}`)
}

const jwtSecret = "sandcastles-test-secret-of-enough-length-for-hs256"

const tokenFor = (org: Org, memberId: string) =>
  new Jose.SignJWT({ organization_id: org.organizationId })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(memberId)
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(jwtSecret))

const post = (server: TestServer, key: string, path: string, json: unknown = {}) =>
  server.request(path, { method: "POST", key, json })

const start = async (server: TestServer, key: string) => {
  const response = await post(server, key, "/v2/sandcastles")
  expect(response.status).toBe(201)
  return (await body(response)).sandbox_id as string
}

const exec = async (server: TestServer, key: string, id: string, command: string) => {
  const response = await post(server, key, `/v2/sandcastles/${id}/exec`, { command })
  expect(response.status).toBe(200)
  return body(response)
}

const fileChange = async (server: TestServer, key: string, id: string, json: unknown) => {
  const response = await post(server, key, `/v2/sandcastles/${id}/library/changes`, json)
  return { status: response.status, body: await body(response) }
}

const sandboxDir = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-sandcastles-"))

describe.skipIf(unavailable !== undefined)(
  `sandcastles on bubblewrap${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    describeServers("sandcastles over HTTP", (server) => {
      it("a data scientist's session: query demo rows, plot them, download the PNG, and find every run recorded", async () => {
        const org = await server().newOrg()
        const connector = { id: await demoConnector(server(), org) }
        const id = await start(server(), org.key)

        const query = await post(server(), org.key, `/v2/sandcastles/${id}/query`, {
          connector_id: connector.id,
          query: "SELECT r.name AS region, count(*) AS orders FROM orders o JOIN customers c ON c.id = o.customer_id " +
            "JOIN regions r ON r.id = c.region_id GROUP BY r.name ORDER BY r.name",
          dataframe_name: "orders_by_region"
        })
        expect(query.status).toBe(200)
        const loaded = await body(query)
        expect(loaded).toMatchObject({ dataframe_name: "orders_by_region", num_cols: 2 })
        expect(loaded.num_rows).toBeGreaterThan(1)

        const plotted = await post(server(), org.key, `/v2/sandcastles/${id}/execute`, {
          code: "import matplotlib.pyplot as plt\n" +
            "orders_by_region.plot.bar(x='region', y='orders')\n" +
            "print(int(orders_by_region['orders'].sum()))"
        })
        expect(plotted.status).toBe(200)
        const result = await body(plotted)
        expect(result.error).toBeUndefined()
        expect(Number(result.output[0])).toBeGreaterThan(1000)
        expect(result.files).toEqual([
          { name: "figure-1.png", url: `/v2/sandcastles/${id}/files/figure-1.png`, mime_type: "image/png" }
        ])
        const png = await server().request(result.files[0].url, { key: org.key })
        expect(png.status).toBe(200)
        expect(png.headers.get("content-type")).toBe("image/png")
        const bytes = new Uint8Array(await png.arrayBuffer())
        expect(Array.from(bytes.slice(1, 4))).toEqual([0x50, 0x4e, 0x47])

        const status = await body(await server().request(`/v2/sandcastles/${id}`, { key: org.key }))
        expect(status.status).toBe("running")
        expect(status.memory_usage).toBeGreaterThan(0)
        expect(status.dataframes).toEqual([
          expect.objectContaining({ name: "orders_by_region", num_cols: 2, memory_usage_bytes: expect.any(Number) })
        ])

        const failed = await post(server(), org.key, `/v2/sandcastles/${id}/query`, {
          connector_id: connector.id,
          query: "DELETE FROM orders"
        })
        expect(failed.status).toBe(400)
        expect((await body(failed)).error.message).toMatch(/read-only/i)

        const runs = await body(await server().request(`/v2/sandcastles/${id}/executions`, { key: org.key }))
        expect(runs.executions.map((e: any) => [e.kind, e.source, e.error !== undefined])).toEqual([
          ["sql", "platform_api", true],
          ["python", "platform_api", false],
          ["sql", "platform_api", false]
        ])
        expect(runs.executions[1].input).toContain("orders_by_region.plot.bar")

        expect((await server().request(`/v2/sandcastles/${id}`, { method: "DELETE", key: org.key })).status).toBe(200)
        const afterStop = await post(server(), org.key, `/v2/sandcastles/${id}/execute`, { code: "1" })
        expect(afterStop.status).toBe(409)
        expect((await body(afterStop)).error.message).toContain("restart it")
        const restarted = await post(server(), org.key, "/v2/sandcastles", { sandbox_id: id })
        expect(restarted.status).toBe(201)
        const fresh = await body(await post(server(), org.key, `/v2/sandcastles/${id}/execute`, { code: "1 + 1" }))
        expect(fresh.output).toEqual(["2"])
        // Executions outlive the stop.
        const kept = await body(await server().request(`/v2/sandcastles/${id}/executions`, { key: org.key }))
        expect(kept.executions).toHaveLength(4)
      })

      it("a DEMO statement that sleeps or grows its memory holds up no other organization", async () => {
        const org = await server().newOrg()
        const other = await server().newOrg()
        const connector = await demoConnector(server(), org)
        const id = await start(server(), org.key)
        const run = (query: string) =>
          post(server(), org.key, `/v2/sandcastles/${id}/query`, { connector_id: connector, query })
        // Which database answers (its preview shows when its PostgreSQL started).
        const started = async () => {
          const preview = String((await body(await run("SELECT pg_postmaster_start_time()::text AS t"))).preview)
          expect(preview).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/)
          return preview
        }
        const before = await started()
        // The other organization's requests while each statement runs: on the event loop they waited
        // for the whole statement (3 s of sleep).
        const slowest = async (statement: Promise<Response>) => {
          let done = false
          const finished = statement.finally(() => {
            done = true
          })
          let worst = 0
          while (!done) {
            const at = performance.now()
            const [health, me] = await Promise.all([
              server().request("/healthz"),
              server().request("/v2/members/me", { key: other.key })
            ])
            expect([health.status, me.status]).toEqual([200, 200])
            worst = Math.max(worst, performance.now() - at)
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
          return { worst, response: await finished }
        }
        const sleep = await slowest(run("SELECT pg_sleep(3)"))
        expect(sleep.response.status).toBe(200)
        expect(sleep.worst).toBeLessThan(1_000)
        expect(await started()).toBe(before)
        // A huge repeat() is answered, and its database, grown past its bound, is let go after it.
        const grown = await slowest(run("SELECT length(repeat('x', 300000000)) AS n"))
        expect(grown.response.status).toBe(200)
        expect((await body(grown.response)).preview).toContain("300000000")
        expect(grown.worst).toBeLessThan(1_000)
        expect(await started()).not.toBe(before)
      })

      it("a key with a clientId writes no SQL on a connector that does not enforce it; saved queries still run", async () => {
        const org = await server().newOrg()
        const connector = await demoConnector(server(), org)
        await server().run(Fixtures.seedMain(OrganizationId.make(org.organizationId), MemberId.make(org.memberId), {
          "sales/count.sql": "-- How many orders\nSELECT count(*) AS orders FROM orders"
        }))
        const minted = await post(server(), org.key, "/v2/api-keys", {
          inheritAllRoles: true,
          clientId: "{\"region\":\"EU\"}"
        })
        const euKey = (await body(minted)).key as string
        const id = await start(server(), euKey)
        const raw = await post(server(), euKey, `/v2/sandcastles/${id}/query`, {
          connector_id: connector,
          query: "SELECT set_config('svc.client_attributes_json', '{}', true), count(*) FROM orders"
        })
        expect(raw.status).toBe(403)
        expect((await body(raw)).error.message).toMatch(
          new RegExp(`^permission denied: connector ${connector} does not enforce this key's client attributes`)
        )
        const saved = await post(server(), euKey, `/v2/sandcastles/${id}/query`, {
          connector_id: connector,
          library_path: "sales/count.sql"
        })
        expect(saved.status).toBe(200)
        expect((await body(saved)).num_rows).toBe(1)
        // The admin's key, without a clientId, writes what SQL it likes.
        const adminSandbox = await start(server(), org.key)
        const own = await post(server(), org.key, `/v2/sandcastles/${adminSandbox}/query`, {
          connector_id: connector,
          query: "SELECT count(*) FROM orders"
        })
        expect(own.status).toBe(200)
      })

      it("a sandbox started by an end user's key is its alone: another end user's key and the member's find none", async () => {
        const org = await server().newOrg()
        const keyFor = async (clientId: string) =>
          (await body(await post(server(), org.key, "/v2/api-keys", { inheritAllRoles: true, clientId }))).key as string
        const [east, west] = [await keyFor("{\"region\":\"East\"}"), await keyFor("{\"region\":\"West\"}")]
        const id = await start(server(), east)
        expect((await exec(server(), east, id, "echo east")).stdout).toContain("east")
        for (const key of [west, org.key]) {
          expect((await body(await server().request("/v2/sandcastles", { key }))).sandboxes).toEqual([])
          expect((await server().request(`/v2/sandcastles/${id}`, { key })).status).toBe(404)
          expect((await post(server(), key, `/v2/sandcastles/${id}/exec`, { command: "echo in" })).status).toBe(404)
          expect((await post(server(), key, "/v2/sandcastles", { sandbox_id: id })).status).toBe(404)
          expect((await server().request(`/v2/sandcastles/${id}`, { method: "DELETE", key })).status).toBe(404)
        }
        expect(
          (await body(await server().request("/v2/sandcastles", { key: east }))).sandboxes.map((s: any) => s.sandbox_id)
        )
          .toEqual([id])
        expect((await server().request(`/v2/sandcastles/${id}`, { method: "DELETE", key: east })).status).toBe(200)
      })

      it("a member may have three sandboxes running at once: the fourth is 409, until one stops", async () => {
        const org = await server().newOrg()
        const ids = [await start(server(), org.key), await start(server(), org.key), await start(server(), org.key)]
        const fourth = await post(server(), org.key, "/v2/sandcastles")
        expect(fourth.status).toBe(409)
        expect(await body(fourth)).toEqual({
          error: { code: "conflict", message: "you have 3 sandboxes running, the most a member may: stop one first" }
        })
        expect((await server().request(`/v2/sandcastles/${ids[0]}`, { method: "DELETE", key: org.key })).status)
          .toBe(200)
        await start(server(), org.key)
      })

      it("serves files: upload, list, download and delete; traversal, dotfiles, OWNERS and symlink escapes refused", async () => {
        const org = await server().newOrg()
        const other = await newMember(server(), org)
        const id = await start(server(), org.key)

        const form = new FormData()
        form.append("file", new Blob(["a,b\n1,2\n"], { type: "text/csv" }), "data.csv")
        form.append("path", "inputs/data.csv")
        const uploaded = await server().request(`/v2/sandcastles/${id}/files`, {
          method: "POST",
          key: org.key,
          body: form
        })
        expect(uploaded.status).toBe(200)
        expect(await body(uploaded)).toEqual({ filename: "inputs/data.csv", size_bytes: 8 })
        const read = await body(
          await post(server(), org.key, `/v2/sandcastles/${id}/execute`, {
            code: "import pandas as pd\nlen(pd.read_csv('inputs/data.csv'))"
          })
        )
        expect(read.output).toEqual(["1"])

        const listed = await body(await server().request(`/v2/sandcastles/${id}/files?path=inputs`, { key: org.key }))
        expect(listed.files).toEqual([expect.objectContaining({ name: "data.csv", size_bytes: 8, is_dir: false })])
        const download = await server().request(`/v2/sandcastles/${id}/files/inputs/data.csv`, { key: org.key })
        expect(await download.text()).toBe("a,b\n1,2\n")

        await exec(server(), org.key, id, "ln -s /etc/passwd passwd; ln -s / root; touch .hidden; printf x > OWNERS")
        const refused = await Promise.all(
          [
            "/files/passwd",
            "/files/root/etc/passwd",
            "/files/..%2F..%2Fetc%2Fpasswd",
            "/files/.hidden",
            "/files/OWNERS",
            "/files/inputs%2F..%2F..%2Fx"
          ].map(async (
            path
          ) => [path, (await server().request(`/v2/sandcastles/${id}${path}`, { key: org.key })).status])
        )
        expect(refused).toEqual([
          ["/files/passwd", 404],
          ["/files/root/etc/passwd", 404],
          ["/files/..%2F..%2Fetc%2Fpasswd", 400],
          ["/files/.hidden", 400],
          ["/files/OWNERS", 400],
          ["/files/inputs%2F..%2F..%2Fx", 400]
        ])
        const root = await body(await server().request(`/v2/sandcastles/${id}/files`, { key: org.key }))
        expect(root.files.map((f: any) => f.name)).toEqual(["inputs", "library"])

        const owners = new FormData()
        owners.append("file", new Blob(["owner: role:x"]), "OWNERS")
        const ownersUpload = await server().request(`/v2/sandcastles/${id}/files`, {
          method: "POST",
          key: org.key,
          body: owners
        })
        expect(ownersUpload.status).toBe(400)

        // Another member cannot see it at all.
        expect((await server().request(`/v2/sandcastles/${id}/files/inputs/data.csv`, { key: other.key })).status)
          .toBe(404)
        expect((await post(server(), other.key, `/v2/sandcastles/${id}/execute`, { code: "1" })).status).toBe(404)

        const deleted = await server().request(`/v2/sandcastles/${id}/files/inputs`, { method: "DELETE", key: org.key })
        expect(await body(deleted)).toEqual({ success: true })
        expect((await server().request(`/v2/sandcastles/${id}/files/inputs/data.csv`, { key: org.key })).status)
          .toBe(404)
        const nonZero = await body(await post(server(), org.key, `/v2/sandcastles/${id}/exec`, { command: "exit 4" }))
        expect(nonZero).toEqual({ stdout: "", stderr: "", exit_code: 4, error: null })
        // Output with NUL bytes (which PostgreSQL text cannot hold) is answered and recorded, NUL as U+FFFD.
        const nul = await body(
          await post(server(), org.key, `/v2/sandcastles/${id}/exec`, { command: "printf 'a\\0b'" })
        )
        expect(nul).toEqual({ stdout: "a\uFFFDb", stderr: "", exit_code: 0, error: null })
        const recorded = await body(
          await server().request(`/v2/sandcastles/${id}/executions?limit=1`, { key: org.key })
        )
        expect(recorded.executions[0].output_preview).toBe("a\uFFFDb")
      })

      it("the change flow: stage with exec, file, two owners approve with their JWTs, deny and restore, concurrent approvals merge once", async () => {
        const org = await server().newOrg()
        const alice = await newMember(server(), org)
        const bob = await newMember(server(), org)
        const carol = await newMember(server(), org)
        const dave = await newMember(server(), org)

        // The admin sets the library up: sales/ owned by alice and bob, needing two distinct approvals;
        // finance/ readable by the finance role only.
        const setup = await start(server(), org.key)
        await exec(
          server(),
          org.key,
          setup,
          "mkdir -p library/sales library/finance && " +
            `printf 'owner: member:${alice.memberId}, member:${bob.memberId}\\nrule: approvals=2 distinct\\n' > library/sales/OWNERS && ` +
            "printf 'SELECT 1\\n' > library/sales/revenue.sql && " +
            "printf 'reader: role:finance\\n' > library/finance/OWNERS && printf '# Plan\\n' > library/finance/plan.md"
        )
        const diff = await body(await server().request(`/v2/sandcastles/${setup}/library/diff`, { key: org.key }))
        expect(diff.has_changes).toBe(true)
        expect(diff.diffs.map((d: any) => d.new_path).sort()).toEqual(
          ["finance/OWNERS", "finance/plan.md", "sales/OWNERS", "sales/revenue.sql"]
        )
        const seed = await fileChange(server(), org.key, setup, { title: "Set up the library", description: "Owners." })
        expect(seed.status).toBe(201)
        expect(seed.body).toMatchObject({ status: "open", has_conflicts: false, auto_approved: false })
        const merged = await post(server(), org.key, `/v2/changes/${seed.body.change_id}/approve`, {
          expected_git_ref: seed.body.git_ref
        })
        expect(await body(merged)).toMatchObject({ merged: true })

        // Nothing staged is 400; a title over 50 characters is 400.
        const carolBox = await start(server(), carol.key)
        expect((await fileChange(server(), carol.key, carolBox, { title: "x", description: "y" })).status).toBe(400)
        expect((await fileChange(server(), carol.key, carolBox, { title: "x".repeat(51), description: "y" })).status)
          .toBe(400)

        // The mount: OWNERS files are never mounted; finance/ is not mounted for carol. The starter
        // library's DEMO model is there for everyone.
        const mounted = await exec(server(), carol.key, carolBox, "cd library && find . -type f | sort")
        expect(mounted.stdout).toBe("./sales/revenue.sql\n./semantic/demo.yaml\n")

        await exec(
          server(),
          carol.key,
          carolBox,
          "printf 'SELECT region, sum(total) FROM orders GROUP BY 1\\n' > library/sales/revenue.sql"
        )
        const filed = await fileChange(server(), carol.key, carolBox, {
          title: "Revenue by region",
          description: "By region."
        })
        expect(filed.status).toBe(201)
        expect(filed.body).toMatchObject({ status: "open", change_number: expect.any(Number) })
        const change = await body(await server().request(`/v2/changes/${filed.body.change_id}`, { key: carol.key }))
        expect(change).toMatchObject({ required_approvals: 2, approval_count: 0, author_id: carol.memberId })

        const aliceJwt = await tokenFor(org, alice.memberId)
        const bobJwt = await tokenFor(org, bob.memberId)
        const first = await post(server(), aliceJwt, `/v2/changes/${filed.body.change_id}/approve`, {
          expected_git_ref: filed.body.git_ref
        })
        expect(first.status).toBe(200)
        expect(await body(first)).toMatchObject({ merged: false, approval_count: 1, required_approvals: 2 })
        const stale = await post(server(), bobJwt, `/v2/changes/${filed.body.change_id}/approve`, {
          expected_git_ref: "0".repeat(40)
        })
        expect(stale.status).toBe(409)
        const second = await post(server(), bobJwt, `/v2/changes/${filed.body.change_id}/approve`, {
          expected_git_ref: filed.body.git_ref
        })
        expect(await body(second)).toMatchObject({ merged: true, approval_count: 2 })

        // Deny, then restore, a second change.
        await exec(server(), carol.key, carolBox, "printf '\\n-- a note\\n' >> library/sales/revenue.sql")
        const another = await fileChange(server(), carol.key, carolBox, { title: "A note", description: "Note." })
        expect(another.status).toBe(201)
        const ref = { expected_git_ref: another.body.git_ref }
        expect((await post(server(), aliceJwt, `/v2/changes/${another.body.change_id}/deny`, ref)).status).toBe(200)
        expect((await body(await server().request(`/v2/changes/${another.body.change_id}`, { key: carol.key }))).status)
          .toBe("denied")
        expect((await post(server(), carol.key, `/v2/changes/${another.body.change_id}/restore`, ref)).status).toBe(200)
        expect((await body(await server().request(`/v2/changes/${another.body.change_id}`, { key: carol.key }))).status)
          .toBe("open")

        // Twenty approvals at once, from both owners: it merges exactly once.
        const racing = await Promise.all(
          Array.from(
            { length: 20 },
            (_, i) =>
              post(server(), i % 2 === 0 ? aliceJwt : bobJwt, `/v2/changes/${another.body.change_id}/approve`, ref)
                .then(body)
          )
        )
        expect(racing.filter((r) => r.merged === true)).toHaveLength(1)
        expect((await body(await server().request(`/v2/changes/${another.body.change_id}`, { key: carol.key }))).status)
          .toBe("approved")

        // A new sandbox sees the merged library; one without read authority on finance/ does not see it.
        const daveBox = await start(server(), dave.key)
        const seen = await server().request(`/v2/sandcastles/${daveBox}/files/library/sales/revenue.sql`, {
          key: dave.key
        })
        expect(await seen.text()).toBe("SELECT region, sum(total) FROM orders GROUP BY 1\n\n-- a note\n")
        const daveLibrary = await body(
          await server().request(`/v2/sandcastles/${daveBox}/files?path=library`, { key: dave.key })
        )
        expect(daveLibrary.files.map((f: any) => f.name)).toEqual(["sales", "semantic"])
        const adminBox = await start(server(), org.key)
        const adminLibrary = await body(
          await server().request(`/v2/sandcastles/${adminBox}/files?path=library`, { key: org.key })
        )
        expect(adminLibrary.files.map((f: any) => f.name)).toEqual(["finance", "sales", "semantic"])
      })

      it("files a change with conflicts as reserved and re-materialises library/ with markers and .rej files", async () => {
        const org = await server().newOrg()
        const first = await start(server(), org.key)
        await exec(server(), org.key, first, "mkdir -p library/q && printf 'SELECT 1\\n' > library/q/a.sql")
        const seed = await fileChange(server(), org.key, first, { title: "Seed", description: "Seed." })
        await post(server(), org.key, `/v2/changes/${seed.body.change_id}/approve`, {
          expected_git_ref: seed.body.git_ref
        })

        const mine = await start(server(), org.key)
        const theirs = await start(server(), org.key)
        await exec(server(), org.key, theirs, "printf 'SELECT 2\\n' > library/q/a.sql")
        const landed = await fileChange(server(), org.key, theirs, { title: "Two", description: "Two." })
        await post(server(), org.key, `/v2/changes/${landed.body.change_id}/approve`, {
          expected_git_ref: landed.body.git_ref
        })

        await exec(server(), org.key, mine, "printf 'SELECT 3\\n' > library/q/a.sql")
        const conflicted = await fileChange(server(), org.key, mine, { title: "Three", description: "Three." })
        expect(conflicted.status).toBe(201)
        expect(conflicted.body).toMatchObject({ status: "reserved", has_conflicts: true })
        expect(conflicted.body.conflicts).toContain("q/a.sql")
        const files = await body(
          await server().request(`/v2/sandcastles/${mine}/files?path=library/q`, { key: org.key })
        )
        expect(files.files.map((f: any) => f.name)).toEqual(["a.sql", "a.sql.rej"])
        const marked = await (await server().request(`/v2/sandcastles/${mine}/files/library/q/a.sql`, { key: org.key }))
          .text()
        expect(marked).toContain("<<<<<<<")

        // Resolved and resubmitted under the same number: a new changeset, no conflicts.
        await exec(server(), org.key, mine, "printf 'SELECT 3\\n' > library/q/a.sql && rm library/q/a.sql.rej")
        const revised = await fileChange(server(), org.key, mine, { change_number: conflicted.body.change_number })
        expect(revised.body).toMatchObject({
          change_number: conflicted.body.change_number,
          status: "open",
          has_conflicts: false
        })
      })
    }, { jwt: { keys: { _tag: "Secret", secret: Redacted.make(jwtSecret) } }, sandboxes: { directory: sandboxDir } })
  }
)

// A provider whose every turn the current test scripts.
let script: (request: any, index: number) => Provider.Turn = () => ({ text: "unscripted" })
const provider = await Provider.start((request, index) => script(request, index))
afterAll(() => provider.close())

describe.skipIf(unavailable !== undefined)(
  `the agent's run_python${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    describeServers("run_python in a chat", (server) => {
      it("runs Python in the chat's sandbox on the last query's rows, and shows its figure as an image asset", async () => {
        const org = await server().newOrg()
        const connector = { id: await demoConnector(server(), org) }
        const seen = provider.requests.length
        script = (_, index) =>
          index === seen
            ? {
              toolCalls: [{
                name: "run_sql",
                arguments: {
                  connector_id: connector.id,
                  sql: "SELECT channel, count(*) AS orders FROM orders GROUP BY channel ORDER BY channel"
                }
              }]
            }
            : index === seen + 1
            ? {
              toolCalls: [{
                name: "run_python",
                arguments: {
                  code: "import matplotlib.pyplot as plt\ntotal = int(df['orders'].sum())\n" +
                    "df.plot.bar(x='channel', y='orders')\nprint(total)"
                }
              }]
            }
            : index === seen + 2
            ? { toolCalls: [{ name: "run_python", arguments: { code: "total > 0" } }] }
            : { text: "Orders by channel are plotted." }
        const response = await post(server(), org.key, "/v2/chats/stream", {
          question: "Plot orders by channel",
          connector_ids: [connector.id]
        })
        const events = await readEvents(response)
        expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
        expect(provider.requests[seen].tools.map((t: any) => t.function.name)).toContain("run_python")
        const cells = events.filter((e) => e.data.type === "cell").map((e) => e.data.cell)
        expect(cells.map((c) => [c.type, c.status])).toEqual([
          ["sql", "running"],
          ["sql", "completed"],
          ["python", "running"],
          ["python", "completed"],
          ["python", "running"],
          ["python", "completed"]
        ])
        expect(Number(cells[3].output[0])).toBeGreaterThan(1000)
        expect(cells[5].output).toEqual(["True"])
        const image = events.find((e) => e.data.type === "asset" && e.data.asset.type === "image")!.data.asset
        expect(image).toMatchObject({ name: "figure-1.png", type: "image" })
        const png = await fetch(`${server().baseUrl}${image.url}`)
        expect(png.status).toBe(200)
        expect(Array.from(new Uint8Array(await png.arrayBuffer()).slice(1, 4))).toEqual([0x50, 0x4e, 0x47])
        // The model saw the output, and the chat's sandbox is the asker's, with the chat's id.
        expect(provider.requests[seen + 2].messages.at(-1).content).toContain("figure-1.png")
        const metadata = events[0].data
        const listed = await body(await server().request("/v2/sandcastles", { key: org.key }))
        expect(listed.sandboxes).toEqual([expect.objectContaining({ chat_id: metadata.chat_id, status: "running" })])
        const runs = await body(
          await server().request(`/v2/sandcastles/${listed.sandboxes[0].sandbox_id}/executions`, { key: org.key })
        )
        expect(runs.executions.map((e: any) => [e.kind, e.source])).toEqual([["python", "chat"], ["python", "chat"]])
      })

      it("puts files sent with the question in the chat's sandbox and names them to the model", async () => {
        const org = await server().newOrg()
        const seen = provider.requests.length
        script = (_, index) =>
          index === seen
            ? {
              toolCalls: [{
                name: "run_python",
                arguments: { code: "import pandas as pd\nint(pd.read_csv('uploads/sales.csv')['amount'].sum())" }
              }]
            }
            : { text: "The amounts add up to 42." }
        const form = new FormData()
        form.set("question", "What do the amounts in my file add up to?")
        form.append("files", new Blob(["region,amount\nEU,40\nUS,2\n"], { type: "text/csv" }), "sales.csv")
        form.append("files", new Blob(["x"]), "../../OWNERS")
        const response = await server().request("/v2/chats/stream", { method: "POST", key: org.key, body: form })
        expect(response.status).toBe(200)
        const events = await readEvents(response)
        expect(events.at(-1)!.data).toEqual({ type: "done", status: "completed" })
        const system = provider.requests[seen].messages[0].content
        expect(system).toContain("- uploads/sales.csv (25 bytes)")
        expect(system).toContain("- uploads/upload (1 bytes)")
        const python = events.filter((e) => e.data.type === "cell").map((e) => e.data.cell).at(-1)
        expect(python).toMatchObject({ type: "python", status: "completed", output: ["42"] })

        const tooMany = new FormData()
        tooMany.set("question", "q")
        for (let i = 0; i < 11; i++) tooMany.append("files", new Blob(["x"]), `f${i}.txt`)
        const refused = await server().request("/v2/chats", { method: "POST", key: org.key, body: tooMany })
        expect(refused.status).toBe(400)
      })
    }, { models: { compatibleUrl: provider.url, models: Provider.catalogue }, sandboxes: { directory: sandboxDir } })
  }
)

describeServers("sandcastles without a sandbox runtime", (server) => {
  it("starting one says so, and nothing runs", async () => {
    const org = await server().newOrg()
    const response = await post(server(), org.key, "/v2/sandcastles")
    expect(response.status).toBe(409)
    expect((await body(response)).error.message).toBe("no sandbox runtime is configured on this server")
  })
})
