// `pnpm check` and `pnpm test`'s first step: the type checks of every package (and, with `--lint`,
// eslint), run side by side on as many cores as the machine has. Each `tsc -p` also checks the
// sources of the packages it imports, so one after another they kept one core busy for minutes
// while the other idled. A failing step's output is printed whole, once it ends; the exit code is
// the first failure's.
import { spawn } from "node:child_process"
import { availableParallelism } from "node:os"

const projects = [
  "packages/console",
  "packages/console/web",
  "packages/core",
  "packages/sql",
  "packages/http",
  "packages/connectors",
  "packages/ai",
  "packages/delivery",
  "packages/sandbox",
  "packages/embed",
  "examples/server",
  "examples/embed"
]

const steps = [
  // eslint first: the longest step, so it is not the last one left running.
  ...(process.argv.includes("--lint") ? [["eslint", ["."]]] : []),
  ...projects.map((project) => ["tsc", ["-p", project]])
]

const run = ([command, args]) =>
  new Promise((resolve) => {
    const child = spawn("npx", ["--no-install", command, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.on("close", (code) => resolve({ name: `${command} ${args.join(" ")}`, code: code ?? 1, output }))
  })

const queue = [...steps]
const failures = []
await Promise.all(
  Array.from({ length: Math.max(1, Math.min(availableParallelism(), steps.length)) }, async () => {
    for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
      const result = await run(step)
      if (result.code !== 0) {
        failures.push(result)
        process.stdout.write(`${result.name} failed:\n${result.output}\n`)
      }
    }
  })
)
process.exit(failures.length === 0 ? 0 : failures[0].code)
