import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Multipart from "@effect/platform/Multipart"
import { InvalidRequest } from "@sightline/core/Errors"
import * as Investigations from "@sightline/core/Investigations"
import * as SemanticImport from "@sightline/core/SemanticImport"
import * as SemanticImports from "@sightline/core/SemanticImports"
import * as SemanticLayer from "@sightline/core/SemanticLayer"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { type ImportFormFields, sourcesOf } from "../../SemanticImportForm.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

// A form's parts, read from where the platform stored them, as the JSON body's request.
const requestOfForm = (form: ImportFormFields) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const uploads = yield* Effect.forEach(
      form.files,
      (file) => Effect.map(Effect.orDie(fs.readFile(file.path)), (bytes) => ({ name: file.name, bytes }))
    )
    const files = yield* Either.mapLeft(sourcesOf(uploads), (message) => new InvalidRequest({ message }))
    return {
      format: form.format,
      connector_id: form.connector_id,
      name: form.name,
      schema: form.schema,
      file_change: form.file_change === "true",
      files
    } satisfies SemanticImports.ImportRequest
  })

export const layer = HttpApiBuilder.group(SightlineApi, "semantic", (handlers) =>
  Effect.gen(function*() {
    const semantic = yield* SemanticLayer.SemanticLayer
    const investigations = yield* Investigations.Investigations
    const imports = yield* SemanticImports.SemanticImports
    return handlers
      .handle("query", ({ payload }) => withPrincipal((principal) => semantic.query(principal, payload)))
      .handle("verified", ({ payload }) => withPrincipal((principal) => semantic.runVerified(principal, payload)))
      .handle("investigate", ({ payload }) =>
        withPrincipal((principal) => investigations.investigate(principal, payload)))
      .handle("compile", ({ payload }) =>
        withPrincipal((principal) => semantic.compile(principal, payload)))
      .handle("import", ({ payload }) =>
        withPrincipal((principal) =>
          Effect.flatMap(
            payload.files.some(Multipart.isPersistedFile)
              ? requestOfForm(payload as ImportFormFields)
              : Effect.succeed(payload as SemanticImports.ImportRequest),
            (request) => imports.importDefinitions(principal, request)
          )
        ))
      .handle("model", ({ path, urlParams }) =>
        withPrincipal((principal) =>
          Effect.map(semantic.modelFile(principal, path.id), ({ file, source }) =>
            `# ${
              source.kind === "library"
                ? `From the library: ${source.path} at ${source.commit}.`
                : "Derived from the connector's schema: refine it and file it as semantic/<name>.yaml."
            }\n${urlParams.format === "osi" ? SemanticImport.toOsi(file) : SemanticModel.stringify(file)}`)
        ))
  })).pipe(
    only(Authentication, SemanticLayer.SemanticLayer, Investigations.Investigations, SemanticImports.SemanticImports)
  )
