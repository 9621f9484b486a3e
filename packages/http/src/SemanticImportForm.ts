/**
 * The body of `POST /v2/semantic/import`: JSON (`SemanticImports.ImportRequest`, the files' text
 * inline), or `multipart/form-data` with the same fields and the source as `files` parts: the
 * project's files, or one zip of it. A zip's entries are read by their paths in it; what is not
 * text a format reads (YAML, JSON, JavaScript, LookML) is left out, and a zip that would unpack to
 * more than the import's limit is refused before it is unpacked.
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as Multipart from "@effect/platform/Multipart"
import { ConnectorId } from "@sightline/core/Ids"
import * as SemanticImport from "@sightline/core/SemanticImport"
import * as SemanticImports from "@sightline/core/SemanticImports"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { unzipSync } from "fflate"

const files = Multipart.FilesSchema.pipe(Schema.minItems(1), Schema.maxItems(SemanticImports.limits.files))
  .annotations({
    jsonSchema: {
      type: "array",
      items: { type: "string", format: "binary" },
      minItems: 1,
      maxItems: SemanticImports.limits.files
    },
    description: "The project's files (.yml, .yaml, .json, .js, .lkml), or one .zip of the project"
  })

/**
 * The form's fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImportFormFields = Schema.Struct({
  format: SemanticImport.Format,
  connector_id: Schema.compose(Schema.NumberFromString, ConnectorId),
  name: Schema.optional(SemanticImports.ModelName),
  schema: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))),
  file_change: Schema.optional(Schema.Literal("true", "false")),
  files
})
export type ImportFormFields = typeof ImportFormFields.Type

/**
 * The multipart body.
 *
 * @since 0.1.0
 * @category constants
 */
export const ImportForm = HttpApiSchema.Multipart(ImportFormFields, {
  maxParts: Option.some(SemanticImports.limits.files + 5),
  maxFieldSize: 64 * 1024,
  maxFileSize: Option.some(SemanticImports.limits.bytes)
})

/**
 * An import's body: multipart or JSON.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ImportRequestBody = Schema.Union(
  ImportForm,
  SemanticImports.ImportRequest.annotations({ parseOptions: { onExcessProperty: "error" } })
)

/**
 * The files a format reads: YAML and JSON (dbt, Cube, OSI), JavaScript (Cube) and LookML.
 *
 * @since 0.1.0
 * @category constants
 */
export const readable = /\.(ya?ml|json|js|cjs|mjs|lkml|lookml)$/i
const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * The source files of uploaded parts: each as it is, a zip as its entries. Why not, when a zip does
 * not open, unpacks too large, or a file is not UTF-8 text.
 *
 * @since 0.1.0
 * @category utils
 */
export const sourcesOf = (
  uploads: ReadonlyArray<{ readonly name: string; readonly bytes: Uint8Array }>
): Either.Either<Array<typeof SemanticImports.SourceFile.Type>, string> => {
  const out: Array<typeof SemanticImports.SourceFile.Type> = []
  let total = 0
  const add = (path: string, bytes: Uint8Array) => {
    total += bytes.length
    if (total > SemanticImports.limits.bytes) throw new RangeError("too large")
    out.push({ path, content: decoder.decode(bytes) })
  }
  try {
    for (const upload of uploads) {
      if (!/\.zip$/i.test(upload.name)) {
        add(upload.name, upload.bytes)
        continue
      }
      let unpacked = 0
      const entries = unzipSync(upload.bytes, {
        // Sizes are checked from the zip's directory, before anything is inflated.
        filter: (entry) => {
          if (!readable.test(entry.name) || entry.name.startsWith("__MACOSX/")) return false
          unpacked += entry.originalSize
          if (unpacked > SemanticImports.limits.bytes) throw new RangeError("too large")
          return true
        }
      })
      for (const [path, bytes] of Object.entries(entries)) add(path, bytes)
    }
  } catch (error) {
    if (error instanceof RangeError) {
      return Either.left(`the files hold more than ${SemanticImports.limits.bytes / 1024 / 1024} MB`)
    }
    if (error instanceof TypeError) return Either.left("a file is not UTF-8 text")
    return Either.left(`a zip does not open: ${(error as Error).message}`)
  }
  if (out.length === 0) {
    return Either.left("no file of the upload is one a format reads (.yml, .yaml, .json, .js, .lkml)")
  }
  if (out.length > SemanticImports.limits.files) {
    return Either.left(`more than ${SemanticImports.limits.files} files`)
  }
  return Either.right(out)
}
