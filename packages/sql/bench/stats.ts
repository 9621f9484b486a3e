/**
 * Timing of one operation, and the table the benchmark prints.
 *
 * @internal
 */
import * as Effect from "effect/Effect"

/** How long to time an operation. */
export interface Plan {
  /** Untimed calls first (plans cached, pages in the buffer cache, JIT warm). */
  readonly warmup: number
  /** Timed calls, unless the budget runs out first. */
  readonly iterations: number
  /** Stop timing after this long (but only after `minIterations` calls). */
  readonly budgetMs: number
  readonly minIterations: number
}

/** Latencies of one operation, in milliseconds. */
export interface Timing {
  readonly samples: number
  readonly median: number
  readonly p99: number
}

/** The `q` quantile of sorted samples (nearest rank). */
export const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

/**
 * Times several operations (one per size) together: each is called `plan.warmup` times untimed,
 * then every round calls each once, timed, alternating the order between rounds. Rounds stop after
 * `plan.iterations`, or once `plan.budgetMs` have passed and `plan.minIterations` are done.
 */
export const timeInterleaved = <E, R>(
  operations: ReadonlyArray<Effect.Effect<unknown, E, R>>,
  plan: Plan
): Effect.Effect<ReadonlyArray<Timing>, E, R> =>
  Effect.gen(function*() {
    for (const operation of operations) {
      for (let i = 0; i < plan.warmup; i++) yield* operation
    }
    const samples = operations.map((): Array<number> => [])
    const started = performance.now()
    for (
      let round = 0;
      round < plan.iterations && (round < plan.minIterations || performance.now() - started < plan.budgetMs);
      round++
    ) {
      for (let k = 0; k < operations.length; k++) {
        const index = round % 2 === 0 ? k : operations.length - 1 - k
        const t0 = performance.now()
        yield* operations[index]!
        samples[index]!.push(performance.now() - t0)
      }
    }
    return samples.map((values) => {
      const sorted = [...values].sort((a, b) => a - b)
      return { samples: sorted.length, median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
    })
  })

/** One measured line of the table. */
export interface Row {
  readonly database: string
  readonly size: number
  readonly operation: string
  /** What exactly was asked (page, depth, matches). */
  readonly detail: string
  /** Keyset pages must stay flat across sizes. */
  readonly keyset: boolean
  readonly timing: Timing
}

/** The largest ratio of the biggest size's median to the smallest size's that still passes. */
export const flatLimit = 1.5

const ms = (value: number) => value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0)

/**
 * The rows as a Markdown table. On the rows of the largest size, the ratio of its median to the
 * smallest size's, with PASS/FAIL against `flatLimit` for the keyset pages.
 */
export const table = (rows: ReadonlyArray<Row>): string => {
  const sizes = [...new Set(rows.map((row) => row.size))].sort((a, b) => a - b)
  const smallest = sizes[0]
  const largest = sizes[sizes.length - 1]
  const ratioTitle = sizes.length > 1
    ? `${largest!.toLocaleString("en-US")}/${smallest!.toLocaleString("en-US")} median`
    : "ratio"
  const header = ["database", "size", "operation", "detail", "n", "median ms", "p99 ms", ratioTitle, "flat (≤1.5×)"]
  const lines = rows.map((row) => {
    const base = sizes.length > 1 && row.size === largest
      ? rows.find((other) =>
        other.database === row.database && other.operation === row.operation && other.size === smallest
      )
      : undefined
    const ratio = base === undefined ? undefined : row.timing.median / base.timing.median
    return [
      row.database,
      row.size.toLocaleString("en-US"),
      row.operation,
      row.detail,
      String(row.timing.samples),
      ms(row.timing.median),
      ms(row.timing.p99),
      ratio === undefined ? "" : `${ratio.toFixed(2)}×`,
      ratio === undefined || !row.keyset ? "" : ratio <= flatLimit ? "PASS" : "FAIL"
    ]
  })
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)))
  const numeric = new Set([1, 4, 5, 6, 7])
  const format = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((cell, i) => numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)).join(" | ")} |`
  const rule = `|${
    widths.map((width, i) => numeric.has(i) ? `${"-".repeat(width + 1)}:` : "-".repeat(width + 2)).join("|")
  }|`
  return [format(header), rule, ...lines.map(format)].join("\n")
}
