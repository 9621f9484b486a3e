/**
 * `pnpm bench:sandbox`: what a sandbox costs on this host, against a floor measured in the same run.
 *
 * - start: `SandboxRuntime.start` (workspace, library mount, isolated kernel ready) against spawning a
 *   bare `python3` that says it is ready (no isolation, no limits);
 * - execute `1 + 1` in the kernel against one JSON-lines round trip to a bare Python loop;
 * - exec `true` against spawning `/bin/true` directly;
 * - RSS of 10 idle sandboxes (every process of their trees), read from /proc.
 *
 * Options: `--rounds N` (default 30).
 */
import { OrganizationId, SandboxId } from "@sightline/core/Ids"
import { SandboxRuntime } from "@sightline/core/SandboxRuntime"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import { spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as NodePath from "node:path"
import * as BubblewrapRuntime from "../src/BubblewrapRuntime.js"

const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1] || 30) || 30

const unavailable = Option.getOrUndefined(BubblewrapRuntime.availability())
if (unavailable !== undefined) {
  console.error(`bench:sandbox needs sandboxes: ${unavailable}`)
  process.exit(1)
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const time = async (f: () => Promise<unknown>) => {
  const started = performance.now()
  await f()
  return performance.now() - started
}

// --- floors: the same work without isolation ---------------------------------------------------------

const floorStart = () =>
  new Promise<void>((resolve) => {
    const child = spawn("/usr/bin/python3", ["-u", "-c", "import json,sys; print(json.dumps({'ready': True}))"])
    child.stdout.once("data", () => resolve())
  })

const floorKernel = () => {
  const child = spawn("/usr/bin/python3", [
    "-u",
    "-c",
    "import json,sys\nfor line in sys.stdin:\n    r = json.loads(line)\n    print(json.dumps({'output': [repr(eval(r['code']))]}))"
  ])
  child.stdout.setEncoding("utf8")
  return {
    roundTrip: () =>
      new Promise<void>((resolve) => {
        child.stdout.once("data", () => resolve())
        child.stdin.write(`${JSON.stringify({ code: "1 + 1" })}\n`)
      }),
    close: () => child.kill()
  }
}

const floorExec = () =>
  new Promise<void>((resolve) => {
    spawn("/bin/true").on("close", () => resolve())
  })

// --- RSS of process trees --------------------------------------------------------------------------------

const children = (pid: number): Array<number> => {
  const found: Array<number> = []
  for (const task of fs.readdirSync(`/proc/${pid}/task`, { withFileTypes: true })) {
    const list = fs.readFileSync(`/proc/${pid}/task/${task.name}/children`, "utf8").trim()
    for (const child of list === "" ? [] : list.split(" ").map(Number)) found.push(child, ...children(child))
  }
  return found
}

const rssKiB = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
}

const main = Effect.gen(function*() {
  const runtime = yield* SandboxRuntime
  const library = HashMap.fromIterable(
    Array.from({ length: 20 }, (_, i) => [`queries/q${i}.sql`, new TextEncoder().encode(`SELECT ${i}`)] as const)
  )
  const newSandbox = () => ({
    sandboxId: SandboxId.make(randomUUID()),
    organizationId: OrganizationId.make(randomUUID()),
    libraryFiles: library
  })

  const starts: Array<number> = []
  const floorStarts: Array<number> = []
  const executes: Array<number> = []
  const floorExecutes: Array<number> = []
  const execs: Array<number> = []
  const floorExecs: Array<number> = []

  const floor = floorKernel()
  for (let round = 0; round < rounds; round++) {
    // Alternating, so drift on a noisy machine hits both sides alike.
    const sandbox = newSandbox()
    starts.push(yield* Effect.promise(() => time(() => Effect.runPromise(runtime.start(sandbox)))))
    floorStarts.push(yield* Effect.promise(() => time(floorStart)))
    executes.push(
      yield* Effect.promise(() => time(() => Effect.runPromise(runtime.execute(sandbox.sandboxId, "1 + 1"))))
    )
    floorExecutes.push(yield* Effect.promise(() => time(floor.roundTrip)))
    execs.push(
      yield* Effect.promise(() =>
        time(() => Effect.runPromise(runtime.exec(sandbox.sandboxId, { kind: "bash", command: "true" })))
      )
    )
    floorExecs.push(yield* Effect.promise(() => time(floorExec)))
    yield* runtime.stop(sandbox.sandboxId)
  }
  floor.close()

  const before = children(process.pid)
  const idle = Array.from({ length: 10 }, newSandbox)
  for (const sandbox of idle) yield* runtime.start(sandbox)
  yield* Effect.sleep("1 second")
  const trees = children(process.pid).filter((pid) => !before.includes(pid))
  const rss = trees.reduce((sum, pid) => sum + (fs.existsSync(`/proc/${pid}`) ? rssKiB(pid) : 0), 0)
  for (const sandbox of idle) yield* runtime.stop(sandbox.sandboxId)

  const row = (name: string, values: ReadonlyArray<number>, floorValues: ReadonlyArray<number>, goal: string) =>
    `| ${name} | ${percentile(values, 50).toFixed(1)} | ${percentile(values, 99).toFixed(1)} | ${
      percentile(floorValues, 50).toFixed(1)
    } | ${percentile(floorValues, 99).toFixed(1)} | ${goal} |`
  const startGoal = percentile(starts, 50) < 300 ? "< 300 ms: met" : "< 300 ms: NOT met"
  const executeGoal = percentile(executes, 50) < 20 ? "p50 < 20 ms: met" : "p50 < 20 ms: NOT met"
  console.log(
    `\nbench:sandbox, ${rounds} rounds, ${os.cpus().length} cores, ${
      spawnSync("bwrap", ["--version"]).stdout.toString().trim()
    }, run as ${process.getuid?.() === 0 ? "root (a user per sandbox)" : "a user"}\n`
  )
  console.log("| operation | p50 ms | p99 ms | floor p50 ms | floor p99 ms | goal |")
  console.log("|---|---:|---:|---:|---:|---|")
  console.log(row("start (kernel ready)", starts, floorStarts, startGoal))
  console.log(row("execute `1 + 1`", executes, floorExecutes, executeGoal))
  console.log(row("exec `true`", execs, floorExecs, ""))
  console.log(
    `\nRSS of 10 idle sandboxes: ${(rss / 1024).toFixed(1)} MiB over ${trees.length} processes (${
      (rss / 1024 / 10).toFixed(1)
    } MiB each)`
  )
})

const directory = fs.mkdtempSync(NodePath.join(os.tmpdir(), "sightline-bench-sandbox-"))
Effect.runPromise(
  Effect.scoped(main.pipe(Effect.provide(BubblewrapRuntime.layer({ directory }))))
).finally(() => fs.rmSync(directory, { recursive: true, force: true }))
