/**
 * The command line of `pnpm bench:sql`.
 *
 * @internal
 */

/** The databases the benchmark can run on. */
export const databases = ["pglite", "postgres"] as const
export type Database = (typeof databases)[number]

/** What to run. */
export interface Options {
  /** Records per organization, ascending (`--sizes 1000,100000`). */
  readonly sizes: ReadonlyArray<number>
  /** `--db pglite,postgres`. */
  readonly databases: ReadonlyArray<Database>
  /** Timed calls per operation and size (`--iterations N`), unless the time budget cuts them short. */
  readonly iterations: number
  /** The PostgreSQL server (`SIGHTLINE_BENCH_DATABASE_URL`). */
  readonly postgresUrl: string
}

export const defaultPostgresUrl = "postgres://postgres@127.0.0.1:5432/test"

export const usage = `Usage: pnpm bench:sql [--sizes 1000,100000] [--db pglite,postgres] [--iterations 200]

Seeds each size of chats, executions and API keys into one organization (plus two noise
organizations of the same volume) under a fresh table prefix, then prints the median and p99
latency of list chats, list executions and verify an API key, through Sightline's ports.

  --sizes N[,N...]     records per organization (default 1000,100000)
  --db NAME[,NAME...]  pglite and/or postgres (default both; an unreachable PostgreSQL is skipped)
  --iterations N       timed calls per operation and size (default 200; an operation stops
                       after 30 s once it has 30)

PostgreSQL: SIGHTLINE_BENCH_DATABASE_URL (default ${defaultPostgresUrl}).`

/** A command line that cannot be run, with the reason. */
export class UsageError extends Error {}

const positiveInt = (flag: string, text: string): number => {
  const value = Number(text.replaceAll("_", ""))
  if (!Number.isSafeInteger(value) || value <= 0) throw new UsageError(`${flag}: "${text}" is not a positive integer`)
  return value
}

const list = (text: string): Array<string> => text.split(",").map((s) => s.trim()).filter((s) => s !== "")

/** Parses `argv` (without the node and script paths); throws a `UsageError`. */
export const parse = (argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Options | "help" => {
  let sizes: ReadonlyArray<number> = [1_000, 100_000]
  let dbs: ReadonlyArray<Database> = databases
  let iterations = 200
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === "--help" || arg === "-h") return "help"
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [
      arg,
      undefined
    ]
    const value = (): string => {
      if (inline !== undefined) return inline
      const next = argv[++i]
      if (next === undefined) throw new UsageError(`${flag} needs a value`)
      return next
    }
    switch (flag) {
      case "--sizes": {
        const parsed = list(value()).map((s) => positiveInt("--sizes", s))
        if (parsed.length === 0) throw new UsageError("--sizes needs at least one size")
        sizes = [...new Set(parsed)].sort((a, b) => a - b)
        break
      }
      case "--db": {
        const names = list(value())
        for (const name of names) {
          if (!(databases as ReadonlyArray<string>).includes(name)) {
            throw new UsageError(`--db: unknown database "${name}" (pglite, postgres)`)
          }
        }
        if (names.length === 0) throw new UsageError("--db needs at least one database")
        dbs = databases.filter((db) => names.includes(db))
        break
      }
      case "--iterations":
        iterations = positiveInt("--iterations", value())
        break
      default:
        throw new UsageError(`unknown argument "${arg}"`)
    }
  }
  return {
    sizes,
    databases: dbs,
    iterations,
    postgresUrl: env.SIGHTLINE_BENCH_DATABASE_URL ?? defaultPostgresUrl
  }
}

/** The URL without its password, for messages. */
export const displayUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(unparsable SIGHTLINE_BENCH_DATABASE_URL)"
  }
}
