/**
 * `POST /v2/semantic/import`: a team's metric definitions written for another semantic layer (dbt
 * MetricFlow, Cube, LookML, OSI) imported as the semantic model of one of its connectors. The answer is the model's
 * YAML and the report of every construct; with `file_change`, the model is filed as a library
 * change at `semantic/<name>.yaml`, under OWNERS review, whose checks compile and probe every
 * metric on the connector and run its verified queries as an evaluation before anyone merges it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Change from "./Change.js"
import { Changes } from "./Changes.js"
import { Connectors } from "./Connectors.js"
import type { Conflict, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import { InvalidRequest } from "./Errors.js"
import { ConnectorId } from "./Ids.js"
import { Library } from "./Library.js"
import type * as Policy from "./Policy.js"
import * as SemanticImport from "./SemanticImport.js"
import * as Traced from "./Traced.js"

/**
 * The most source files one import reads, and the most text all of them hold.
 *
 * @since 0.1.0
 * @category constants
 */
export const limits = { files: 500, bytes: 20 * 1024 * 1024 } as const

/**
 * One source file of an import.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SourceFile = Schema.Struct({
  path: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  content: Schema.String
})

/**
 * The name of an imported model (and its file, `semantic/<name>.yaml`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelName = Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: () => "a name is letters, digits and underscores, not starting with a digit"
}))

/**
 * The body of `POST /v2/semantic/import` (its JSON form; the multipart form sends files or a zip).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImportRequest = Schema.Struct({
  format: SemanticImport.Format,
  connector_id: ConnectorId,
  /** The model's name (and file, `semantic/<name>.yaml`); the project's when absent. */
  name: Schema.optional(ModelName),
  /** The schema the tables are in, over what the source says. */
  schema: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))),
  /** File the model as a library change under OWNERS review. */
  file_change: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  files: Schema.Array(SourceFile).pipe(Schema.minItems(1), Schema.maxItems(limits.files))
})
export type ImportRequest = typeof ImportRequest.Type

/**
 * What an import gives.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImportResult = Schema.Struct({
  /** Where the model goes in the library. */
  path: Schema.String,
  /** The model, as the library file. */
  yaml: Schema.String,
  report: Schema.Array(SemanticImport.ReportLine),
  tally: Schema.Struct({ imported: Schema.Int, approximated: Schema.Int, refused: Schema.Int }),
  /** The library change filed, with `file_change`. */
  change: Schema.optional(Change.LibraryChangeResult)
})
export type ImportResult = typeof ImportResult.Type

/**
 * @since 0.1.0
 * @category tags
 */
export class SemanticImports extends Context.Tag("@sightline/core/SemanticImports")<
  SemanticImports,
  SemanticImports.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace SemanticImports {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Imports the files for a connector the caller may use (another is `NotFound`); a source that
     * does not read is `InvalidRequest` naming its file and line. Filing the change is the caller's
     * to do as for any change.
     */
    readonly importDefinitions: (
      principal: Policy.Principal,
      request: ImportRequest
    ) => Effect.Effect<
      ImportResult,
      InvalidRequest | PermissionDenied | NotFound | Conflict | Unauthenticated
    >
  }
}

const encoder = new TextEncoder()

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const connectors = yield* Connectors
  const changes = yield* Changes
  const library = yield* Library

  const importDefinitions = Traced.fn("SemanticImports.importDefinitions")(function*(
    principal: Policy.Principal,
    request: ImportRequest
  ) {
    const [connector] = yield* connectors.resolveForUse(principal, [request.connector_id])
    if (request.files.reduce((sum, f) => sum + f.content.length, 0) > limits.bytes) {
      return yield* new InvalidRequest({ message: `the files hold more than ${limits.bytes / 1024 / 1024} MB of text` })
    }
    const imported = yield* Either.mapLeft(
      SemanticImport.importFiles(
        request.format,
        request.files.map((f) => ({ path: f.path, text: f.content })),
        { name: request.name, schema: request.schema, connector: connector!.config.name }
      ),
      (error) =>
        new InvalidRequest({
          message: `${error.file}${error.line === undefined ? "" : `:${error.line}`}: ${error.message}`
        })
    )
    const path = SemanticImport.pathOf(imported)
    const yaml = SemanticImport.fileText(request.format, imported)
    const tally = SemanticImport.tally(imported.report)
    if (!request.file_change) return { path, yaml, report: imported.report, tally }
    const main = yield* library.main(principal.organizationId)
    const change = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({
        title: `Import ${request.format} definitions`.slice(0, 50),
        description: `Imports ${imported.model.name} from ${request.format} for connector ${
          connector!.config.name
        }: ${tally.imported} constructs imported, ${tally.approximated} approximated, ${tally.refused} refused.`
      }),
      baseRef: main.head,
      edits: HashMap.make([path, Option.some(encoder.encode(yaml))])
    })
    return { path, yaml, report: imported.report, tally, change }
  })

  return SemanticImports.of({ importDefinitions })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SemanticImports, never, Connectors | Changes | Library> = Layer.effect(
  SemanticImports,
  make
)
