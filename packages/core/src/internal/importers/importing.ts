/**
 * What every importer reads and gives: source files in, a model file and a report out. Public as
 * `SemanticImport`'s; here so that the importers and that module do not import each other.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type * as SemanticModel from "../../SemanticModel.js"
import { monthNames } from "../../SemanticReading.js"
import type { Where } from "./located.js"

/**
 * What became of one construct of the source.
 */
export const Outcome = Schema.Literal("imported", "approximated", "refused")
export type Outcome = typeof Outcome.Type

/**
 * One construct of the source and what became of it.
 */
export const ReportLine = Schema.Struct({
  file: Schema.String,
  line: Schema.optional(Schema.Int),
  /** What kind of construct: `semantic model`, `entity`, `dimension`, `measure`, `metric`, `saved query`. */
  construct: Schema.String,
  name: Schema.String,
  outcome: Outcome,
  /** What differs (approximated), why (refused), or what it became (imported). */
  note: Schema.optional(Schema.String)
})
export type ReportLine = typeof ReportLine.Type

/**
 * A source file: its path in the project, and its text.
 */
export interface SourceFile {
  readonly path: string
  readonly text: string
}

/**
 * What an import gives.
 */
export interface Imported {
  readonly model: SemanticModel.SemanticModelFile
  readonly report: ReadonlyArray<ReportLine>
}

/**
 * How an import is named and placed.
 */
export interface Options {
  /** The model's name; the project's when absent. */
  readonly name?: string | undefined
  /** The connector the model describes, by name. */
  readonly connector?: string | undefined
  /** The schema its tables are in, over what the source says (a dbt target's schema). */
  readonly schema?: string | undefined
}

/** One construct's line of a report, where it was written. */
export const lineOf = (at: Where, construct: string, name: string, outcome: Outcome, note?: string): ReportLine => ({
  file: at.file,
  ...(at.line === undefined ? {} : { line: at.line }),
  construct,
  name,
  outcome,
  ...(note === undefined ? {} : { note })
})

/** A source's name as a model's: letters, digits and underscores, not starting with a digit. */
export const modelName = (name: string): string => name.replace(/\W+/g, "_").replace(/^(\d)/, "_$1")

/**
 * A custom granularity whose periods start `months` after January (a fiscal year offset, either
 * way): its first month, 1 to 12.
 */
export const startMonthAfter = (months: number): number => ((months % 12) + 12) % 12 + 1

/** What a custom granularity became, for its report line: "fiscal_year: years from April". */
export const granularityNote = (granularity: SemanticModel.CustomGranularity): string =>
  `${granularity.name}: ${granularity.grain}s from ${monthNames[granularity.start_month - 1]}`
