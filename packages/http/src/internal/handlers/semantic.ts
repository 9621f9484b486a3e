import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Investigations from "@sightline/core/Investigations"
import * as SemanticLayer from "@sightline/core/SemanticLayer"
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Effect from "effect/Effect"
import { SightlineApi } from "../../Api.js"
import { Authentication } from "../../Authentication.js"
import { withPrincipal } from "../handler.js"
import { only } from "../only.js"

export const layer = HttpApiBuilder.group(SightlineApi, "semantic", (handlers) =>
  Effect.gen(function*() {
    const semantic = yield* SemanticLayer.SemanticLayer
    const investigations = yield* Investigations.Investigations
    return handlers
      .handle("query", ({ payload }) => withPrincipal((principal) => semantic.query(principal, payload)))
      .handle("verified", ({ payload }) => withPrincipal((principal) => semantic.runVerified(principal, payload)))
      .handle("investigate", ({ payload }) =>
        withPrincipal((principal) => investigations.investigate(principal, payload)))
      .handle("compile", ({ payload }) =>
        withPrincipal((principal) => semantic.compile(principal, payload)))
      .handle("model", ({ path }) =>
        withPrincipal((principal) =>
          Effect.map(semantic.modelFile(principal, path.id), ({ file, source }) =>
            `# ${
              source.kind === "library"
                ? `From the library: ${source.path} at ${source.commit}.`
                : "Derived from the connector's schema: refine it and file it as semantic/<name>.yaml."
            }\n${SemanticModel.stringify(file)}`)
        ))
  })).pipe(only(Authentication, SemanticLayer.SemanticLayer, Investigations.Investigations))
