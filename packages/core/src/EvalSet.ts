/**
 * An evaluation set: questions with their right answers, kept in the library (`evals/*.yaml`) and
 * reviewed like any change. Each case is a question with either the SQL whose result is the right
 * answer (run on the connector being evaluated) or the expected rows, and tags.
 *
 * ```yaml
 * name: revenue
 * description: What finance asks every week.
 * connector: Warehouse      # where a change's evaluation check asks it (optional)
 * cases:
 *   - question: Revenue by region last year
 *     sql: SELECT r.name, sum(i.line_total) FROM ... GROUP BY 1
 *     tags: [revenue]
 *   - question: How many regions do we sell in?
 *     expected: [[5]]
 * ```
 *
 * A semantic model is an evaluation set too: its verified queries whose parameters all have
 * defaults are its cases (their question, and their SQL with the defaults).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as YamlFile from "./internal/yamlFile.js"
import type * as SemanticModel from "./SemanticModel.js"

const Cell = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)

/**
 * One case of a set file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CaseFile = Schema.Struct({
  question: Schema.NonEmptyTrimmedString,
  /** SQL over the connector's tables whose result is the right answer; it runs read-only. */
  sql: Schema.optional(Schema.NonEmptyTrimmedString),
  /** The right answer's rows, when no SQL gives it. */
  expected: Schema.optional(Schema.Array(Schema.Array(Cell))),
  tags: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString))
})
export type CaseFile = typeof CaseFile.Type

/**
 * The format of `evals/*.yaml`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EvalSetFile = Schema.Struct({
  name: Schema.optional(Schema.NonEmptyTrimmedString),
  /** The name of the connector the set is asked on by the evaluation check of a change. */
  connector: Schema.optional(Schema.NonEmptyTrimmedString),
  description: Schema.optional(Schema.String),
  cases: Schema.NonEmptyArray(CaseFile)
})
export type EvalSetFile = typeof EvalSetFile.Type

/**
 * How a case's right answer is had.
 *
 * @since 0.1.0
 * @category models
 */
export type Expected =
  | { readonly kind: "sql"; readonly sql: string }
  | { readonly kind: "rows"; readonly rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null>> }
  | { readonly kind: "verified_query"; readonly name: string }

/**
 * A case as a run asks it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Case {
  readonly question: string
  readonly expected: Expected
  readonly tags: ReadonlyArray<string>
}

/**
 * A set as a run reads it.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvalSet {
  readonly path: string
  readonly name: string
  /** The connector named by the file, which the evaluation check of a change asks it on. */
  readonly connector?: string | undefined
  readonly cases: ReadonlyArray<Case>
}

/**
 * Whether a library path holds an evaluation set file.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSetPath = (path: string): boolean => /^evals\/[^/]+\.ya?ml$/.test(path)

/**
 * Reads a set file; a case needs exactly one of `sql` and `expected`.
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (path: string, text: string): Either.Either<EvalSet, ReadonlyArray<YamlFile.Problem>> =>
  Either.flatMap(YamlFile.decode(EvalSetFile, path, text), (file) => {
    const problems: Array<YamlFile.Problem> = []
    const cases = file.cases.map((c, i): Case => {
      if ((c.sql === undefined) === (c.expected === undefined)) {
        problems.push({
          path,
          message: `cases.${i}: give either sql or expected, not ${c.sql === undefined ? "neither" : "both"}`
        })
      }
      return {
        question: c.question,
        expected: c.sql !== undefined ? { kind: "sql", sql: c.sql } : { kind: "rows", rows: c.expected ?? [] },
        tags: c.tags ?? []
      }
    })
    return problems.length > 0
      ? Either.left(problems)
      : Either.right({
        path,
        name: file.name ?? path.replace(/^evals\//, "").replace(/\.ya?ml$/, ""),
        ...(file.connector === undefined ? {} : { connector: file.connector }),
        cases
      })
  })

/**
 * A semantic model's verified queries as a set: those whose parameters all have defaults.
 *
 * @since 0.1.0
 * @category utils
 */
export const ofModel = (model: SemanticModel.SemanticModel): EvalSet => ({
  path: model.path,
  name: `${model.file.name} (verified queries)`,
  cases: model.verifiedQueries
    .filter((query) => (query.parameters ?? []).every((p) => p.default !== undefined))
    .map((query) => ({
      question: query.question,
      expected: { kind: "verified_query", name: query.name },
      tags: ["verified_query"]
    }))
})
