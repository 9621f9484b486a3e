/**
 * Entry point of `pnpm sightline …` (and `pnpm start`, which is `sightline serve`).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.js"

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
      ? String((error as { message?: unknown }).message ?? error)
      : Cause.pretty(cause).split("\n")[0]
    process.stderr.write(`sightline: ${message}\n`)
    process.exitCode = 1
    return Effect.void
  }),
  Effect.provide(Cli.logger)
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
