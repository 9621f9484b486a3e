/**
 * The shell commands of the README and `docs/` that talk to the server run as written, against the
 * server `pnpm start` runs (the built bundle, `serve`, on a fresh data directory, with sandboxes).
 * Every `sh` block that calls `http://127.0.0.1:8787` with curl runs in bash with `set -euo pipefail`,
 * and curl fails on an HTTP error status, so a stale path, body or field fails here.
 *
 * What the reader fills in, the test gives: `KEY` (the admin key the first start printed; a line
 * `KEY=...` in a block is the reader's placeholder and is left out) and `CHAT` (a chat with an
 * answer). The blocks run in order, one file after another, as a reader would paste them.
 */
import * as BubblewrapRuntime from "@sightline/sandbox/BubblewrapRuntime"
import * as Option from "effect/Option"
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { removeDataDir, serve, tempDir } from "./utils/process.js"

const root = new URL("../../..", import.meta.url).pathname
const documented = "http://127.0.0.1:8787"

interface Block {
  readonly where: string
  readonly script: string
}

/** The `sh` blocks of a Markdown file that call the server with curl, with where each starts. */
const blocksOf = (file: string): ReadonlyArray<Block> => {
  const text = readFileSync(join(root, file), "utf8")
  const blocks: Array<Block> = []
  for (const match of text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const script = match[1]!
    if (!/\bcurl\b/.test(script) || !script.includes(documented)) continue
    blocks.push({ where: `${file}:${text.slice(0, match.index).split("\n").length}`, script })
  }
  return blocks
}

const files = [
  "README.md",
  ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)
]
const blocks = files.flatMap(blocksOf)

// The sandcastle session of docs/sandcastles.md needs bubblewrap and Python; CI has them.
const sandboxes = Option.getOrUndefined(BubblewrapRuntime.availability())
if (sandboxes !== undefined && process.env.CI === "true") {
  throw new Error(`sandboxes cannot run here (CI=true, so this fails): ${sandboxes}`)
}
const needsSandbox = (block: Block) => block.script.includes("/v2/sandcastles")

describe("the documented shell commands against a started server", () => {
  let server: Awaited<ReturnType<typeof serve>> | undefined
  let env: Record<string, string> = {}
  const work = mkdtempSync(join(tmpdir(), "sightline-docs-"))

  beforeAll(async () => {
    server = await serve({ SIGHTLINE_DATA_DIR: tempDir() })
    const key = /Admin API key \(shown once, keep it\): (\S+)/.exec(server.output.stdout)?.[1]
    if (key === undefined) throw new Error(`the first start printed no admin key: ${server.output.stdout}`)
    const answer = await fetch(`${server.base}/v2/chats`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ question: "revenue by region last year", connector_ids: [1] })
    })
    const chat = (await answer.json()) as { chat_id?: string }
    if (chat.chat_id === undefined) throw new Error(`no chat to follow: ${JSON.stringify(chat)}`)
    env = { KEY: key, CHAT: chat.chat_id }
  }, 120_000)

  afterAll(() => {
    server?.child.kill("SIGTERM")
    removeDataDir(work)
  })

  it("finds the blocks: the README's, and those of the docs that ask, query, run playbooks and sandcastles, and register webhooks", () => {
    const where = blocks.map((block) => block.where.split(":")[0])
    for (
      const file of [
        "README.md",
        "docs/asking.md",
        "docs/semantic.md",
        "docs/evaluations.md",
        "docs/files.md",
        "docs/mcp.md",
        "docs/sandcastles.md",
        "docs/webhooks.md"
      ]
    ) {
      expect(where).toContain(file)
    }
  })

  for (const block of blocks) {
    it.skipIf(needsSandbox(block) && sandboxes !== undefined)(`runs ${block.where}`, async () => {
      const script = [
        "set -euo pipefail",
        // An HTTP error fails the block, with the server's answer on stderr.
        "curl() { command curl --silent --show-error --fail-with-body --max-time 60 \"$@\"; }",
        block.script.split("\n").filter((line) => !/^KEY=\.\.\./.test(line)).join("\n")
          .replaceAll(documented, server!.base)
      ].join("\n")
      const run = await promisify(execFile)("bash", ["-c", script], {
        cwd: work,
        env: { ...process.env, ...env },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024
      }).catch((error: { code?: number; stdout?: string; stderr?: string }) => ({
        failed: `exit ${error.code}: ${error.stderr ?? ""}\n${(error.stdout ?? "").slice(-2000)}`
      }))
      expect("failed" in run ? run.failed : "").toBe("")
    }, 150_000)
  }
})
