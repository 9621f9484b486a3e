/**
 * Whether an answer's rows are the right answer's. Column names are ignored, and an answer may add
 * columns (a customer's number beside the name): each expected row must be one answer row whose
 * cells hold every expected cell. Rows are compared without regard to order unless the expected
 * SQL orders them; numbers within a tolerance (relative, and absolute near zero); text without
 * regard to case, and a time by its day when the expected cell is a day.
 *
 * @since 0.1.0
 */

/**
 * Rows as a result gives them.
 *
 * @since 0.1.0
 * @category models
 */
export type Rows = ReadonlyArray<ReadonlyArray<unknown>>

/**
 * How a comparison went; `difference` says what differs when it failed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Comparison {
  readonly passed: boolean
  readonly difference?: string | undefined
}

/**
 * The relative tolerance of numbers (0.5%), and the absolute one near zero.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTolerance = 0.005

const numeric = (value: unknown): number | undefined =>
  typeof value === "number"
    ? value
    : typeof value === "bigint"
    ? Number(value)
    : typeof value === "string" && /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i.test(value.trim())
    ? Number(value)
    : undefined

/**
 * Whether an answer cell is an expected one.
 *
 * @since 0.1.0
 * @category utils
 */
export const sameCell = (expected: unknown, got: unknown, tolerance = defaultTolerance): boolean => {
  if (expected === null || expected === undefined) return got === null || got === undefined
  const a = numeric(expected)
  const b = numeric(got)
  if (a !== undefined) return b !== undefined && Math.abs(a - b) <= Math.max(tolerance * Math.abs(a), tolerance)
  if (got === null || got === undefined) return false
  const text = String(expected).trim().toLowerCase()
  const cell = String(got).trim().toLowerCase()
  // A day (2025-12-31) is the day of a time (2025-12-31T00:00:00.000Z).
  return cell === text || (/^\d{4}-\d{2}-\d{2}$/.test(text) && cell.startsWith(text))
}

/**
 * Whether an answer row holds every cell of an expected row, each in a cell of its own.
 *
 * @since 0.1.0
 * @category utils
 */
export const sameRow = (
  expected: ReadonlyArray<unknown>,
  got: ReadonlyArray<unknown>,
  tolerance = defaultTolerance
) => {
  const used = new Set<number>()
  return expected.every((cell) => {
    const at = got.findIndex((candidate, i) => !used.has(i) && sameCell(cell, candidate, tolerance))
    if (at < 0) return false
    used.add(at)
    return true
  })
}

/**
 * Whether SQL orders its result (an `ORDER BY` outside any parentheses).
 *
 * @since 0.1.0
 * @category utils
 */
export const orders = (sql: string): boolean => {
  let depth = 0
  const text = sql.replace(/'(?:[^']|'')*'/g, "''")
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "(") depth++
    else if (c === ")") depth--
    else if (depth === 0 && /^order\s+by\b/i.test(text.slice(i, i + 12)) && /\W/.test(text[i - 1] ?? " ")) return true
  }
  return false
}

const show = (row: ReadonlyArray<unknown>) => JSON.stringify(row)

/**
 * Compares an answer's rows (none: the answer gave no table) with the expected ones.
 *
 * @since 0.1.0
 * @category utils
 */
export const compare = (
  expected: Rows,
  got: Rows | undefined,
  options: { readonly ordered: boolean; readonly tolerance?: number | undefined }
): Comparison => {
  const tolerance = options.tolerance ?? defaultTolerance
  if (got === undefined) return { passed: false, difference: "the answer gave no table" }
  if (got.length !== expected.length) {
    const rows = (n: number) => `${n} ${n === 1 ? "row" : "rows"}`
    return { passed: false, difference: `expected ${rows(expected.length)}, got ${rows(got.length)}` }
  }
  if (options.ordered) {
    const at = expected.findIndex((row, i) => !sameRow(row, got[i]!, tolerance))
    return at < 0
      ? { passed: true }
      : { passed: false, difference: `row ${at + 1}: expected ${show(expected[at]!)}, got ${show(got[at]!)}` }
  }
  const used = new Set<number>()
  for (const row of expected) {
    const at = got.findIndex((candidate, i) => !used.has(i) && sameRow(row, candidate, tolerance))
    if (at < 0) return { passed: false, difference: `expected a row ${show(row)}; no row of the answer holds it` }
    used.add(at)
  }
  return { passed: true }
}
