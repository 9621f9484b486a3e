/**
 * Importing metric definitions written for another semantic layer (dbt MetricFlow, Cube, LookML,
 * and Apache Ossie / OSI documents, which Sightline also writes: `toOsi`) into a Sightline semantic
 * model. An importer is a pure function from source files to a model file and a
 * **report**: every construct of the source is listed as imported, approximated (with what
 * differs) or refused (with why), with its file and line, so nothing is dropped unsaid.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Yaml from "yaml"
import { checked } from "./internal/importers/checked.js"
import * as Cube from "./internal/importers/cube.js"
import * as Dbt from "./internal/importers/dbt.js"
import * as Importing from "./internal/importers/importing.js"
import type * as Located from "./internal/importers/located.js"
import * as LookML from "./internal/importers/lookml.js"
import * as Osi from "./internal/importers/osi.js"
import * as SemanticModel from "./SemanticModel.js"

/**
 * The formats definitions are imported from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Format = Schema.Literal("dbt", "cube", "lookml", "osi")
export type Format = typeof Format.Type

/**
 * What became of one construct of the source.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Importing.Outcome
export type Outcome = Importing.Outcome

/**
 * One construct of the source and what became of it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReportLine = Importing.ReportLine
export type ReportLine = Importing.ReportLine

/**
 * A source file: its path in the project, and its text.
 *
 * @since 0.1.0
 * @category models
 */
export type SourceFile = Importing.SourceFile

/**
 * Why the source cannot be imported at all (a file that does not read), where.
 *
 * @since 0.1.0
 * @category errors
 */
export class ImportError extends Schema.TaggedError<ImportError>()("SemanticImportError", {
  file: Schema.String,
  line: Schema.optional(Schema.Int),
  message: Schema.String
}) {}

/**
 * What an import gives.
 *
 * @since 0.1.0
 * @category models
 */
export type Imported = Importing.Imported

/**
 * How an import is named and placed.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = Importing.Options

/**
 * Imports definitions. The model it gives is checked as any model file is: a source whose
 * constructs do not hold together in Sightline's terms is an error naming them.
 *
 * @since 0.1.0
 * @category utils
 */
export const importFiles = (
  format: Format,
  files: ReadonlyArray<SourceFile>,
  options: Options = {}
): Either.Either<Imported, ImportError> => {
  const imported: Either.Either<Imported, Located.Unreadable> = (() => {
    switch (format) {
      case "dbt":
        return Dbt.importProject(files, options)
      case "osi":
        return Osi.importDocuments(files, options)
      case "cube":
        return Cube.importModel(files, options)
      case "lookml":
        return LookML.importProject(files, options)
    }
  })()
  return Either.flatMap(
    Either.mapLeft(
      Either.map(imported, (result) => checked(result.model, result.report, files[0]?.path ?? "")),
      (unreadable) => new ImportError(unreadable)
    ),
    (result) =>
      Either.match(SemanticModel.validate(`semantic/${result.model.name}.yaml`, result.model), {
        onLeft: (problems) =>
          Either.left(
            new ImportError({
              file: files[0]?.path ?? "",
              message: `the imported model does not hold together: ${problems.map((p) => p.message).join("; ")}`
            })
          ),
        onRight: () => Either.right(result)
      })
  )
}

/**
 * How many constructs had each outcome.
 *
 * @since 0.1.0
 * @category utils
 */
export const tally = (report: ReadonlyArray<ReportLine>): Record<Outcome, number> => ({
  imported: report.filter((l) => l.outcome === "imported").length,
  approximated: report.filter((l) => l.outcome === "approximated").length,
  refused: report.filter((l) => l.outcome === "refused").length
})

/**
 * The report as lines of text, one per construct: `models/orders.yml:12: metric revenue: imported`.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatReport = (report: ReadonlyArray<ReportLine>): string =>
  report.map((l) =>
    `${l.file}${l.line === undefined ? "" : `:${l.line}`}: ${l.construct} ${l.name}: ${l.outcome}${
      l.note === undefined ? "" : ` (${l.note})`
    }`
  ).join("\n")

/**
 * An imported model as its library file: the model's YAML under a comment that lists the report, so
 * that whoever reviews the file sees what became of each construct.
 *
 * @since 0.1.0
 * @category utils
 */
export const fileText = (format: Format, imported: Imported): string =>
  `# Imported from ${format}. What became of each construct:\n${
    formatReport(imported.report).split("\n").map((line) => `#   ${line}`).join("\n")
  }\n${SemanticModel.stringify(imported.model)}`

/**
 * Where an imported model goes in the library.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathOf = (imported: Imported): string => `${SemanticModel.folder}/${imported.model.name}.yaml`

/**
 * The version of the OSI specification `toOsi` writes.
 *
 * @since 0.1.0
 * @category constants
 */
export const osiVersion = Osi.version

/**
 * A model as an Apache Ossie (OSI) document, in YAML: datasets, fields, relationships and metrics as
 * aggregate SQL for the tools that read OSI, and what OSI cannot say in `SIGHTLINE` custom
 * extensions, so that importing the document gives the same model back.
 *
 * @since 0.1.0
 * @category utils
 */
export const toOsi = (file: SemanticModel.SemanticModelFile): string =>
  Yaml.stringify(Osi.exportModel(file), { lineWidth: 0 })
