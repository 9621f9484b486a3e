// `pnpm check` and `pnpm test`'s first step: the type checks of every package (and, with `--lint`,
// eslint), run side by side on as many cores as the machine has. A failing step's output is printed
// whole, once it ends; the exit code is the first failure's.
import { spawn } from "node:child_process"
import { availableParallelism } from "node:os"

// One program for the packages that share Node's types (`tsconfig.check.json`: 39 s, where their
// nine `tsc -p` took 153 s, each checking again the sources it imports), and one for each of the
// others. Longest first (seconds alone on a 2-core machine: the shared program 39, core 26, eslint
// 21), so that the last steps left running are short ones on both cores.
const projects = ["tsconfig.check.json", "packages/core", "packages/console/web", "packages/embed"]

const steps = [
  ...projects.slice(0, 2).map((project) => ["tsc", ["-p", project]]),
  ...(process.argv.includes("--lint") ? [["eslint", ["."]]] : []),
  ...projects.slice(2).map((project) => ["tsc", ["-p", project]])
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
