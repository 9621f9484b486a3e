/**
 * Entry point of `pnpm sightline …` (and `pnpm start`, which is `sightline serve`).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as NodeV8 from "node:v8"
import * as Cli from "./Cli.js"

// PGlite (the embedded store, and the DEMO connector's dataset) is PostgreSQL compiled to
// WebAssembly, the only WebAssembly this process runs. V8 compiles it with its baseline compiler
// only: optimizing its hot functions as well held 55 MB more resident memory after start (205 MB
// instead of 263 on reopening a data directory), for statements about 15% faster once warm and
// slower until then (measured in `pnpm bench:start` and `pnpm bench:http`). Set before PGlite's
// module is compiled; `SIGHTLINE_PGLITE_OPTIMIZE=1` keeps V8's default.
if (process.env.SIGHTLINE_PGLITE_OPTIMIZE !== "1") NodeV8.setFlagsFromString("--liftoff-only")

// The words of an error for one stderr line, down to the system error below a wrapper (the
// platform's ServeError carries the listen error as its cause and no message of its own).
const describe = (error: unknown): string => {
  const { cause, message } = (error ?? {}) as { readonly message?: unknown; readonly cause?: unknown }
  const system = (cause ?? {}) as { readonly code?: unknown; readonly address?: unknown; readonly port?: unknown }
  if (system.code === "EADDRINUSE") {
    return `cannot listen on ${String(system.address)}:${String(system.port)}: the port is in use by another process ` +
      "(stop it, or choose another port with SIGHTLINE_PORT)"
  }
  if (system.code === "EACCES") {
    return `cannot listen on ${String(system.address)}:${
      String(system.port)
    }: permission denied (choose a port above 1023)`
  }
  if (typeof message === "string" && message !== "") return message
  return cause !== undefined ? describe(cause) : String(error)
}

const program = Cli.run(process.argv.slice(2)).pipe(
  Effect.catchAllCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const failure = Cause.failureOption(cause)
    const error = failure._tag === "Some" ? failure.value : undefined
    if (error instanceof Cli.UsageError) {
      process.stderr.write(`${error.message}\n${Cli.usage}\n`)
      process.exitCode = 2
      return Effect.void
    }
    // A configuration error, a bad input or an unreachable store: one line, no stack trace.
    const message = error instanceof Cli.CliError
      ? error.message
      : ConfigError.isConfigError(error)
      ? `invalid configuration: ${String(error)}`
      : error !== undefined
      ? describe(error)
      : Cause.pretty(cause).split("\n")[0]
    process.stderr.write(`sightline: ${message}\n`)
    process.exitCode = 1
    return Effect.void
  }),
  Effect.provide(Cli.logger)
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
