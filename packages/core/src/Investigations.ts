/**
 * Investigations outside a chat (MCP's `investigate`): the plan of `Investigation` run through the
 * semantic layer, each step a semantic query with the caller's row-level security, as `query`
 * runs any other. A chat's answer runs the same plan with each step as a cell (`AnswerHandlers`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Connectors } from "./Connectors.js"
import { InvalidRequest, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as connectorUse from "./internal/connectorUse.js"
import * as Investigation from "./Investigation.js"
import type * as Policy from "./Policy.js"
import { SemanticLayer } from "./SemanticLayer.js"

/**
 * @since 0.1.0
 * @category tags
 */
export class Investigations
  extends Context.Tag("@sightline/core/Investigations")<Investigations, Investigations.Service>()
{}

/**
 * @since 0.1.0
 */
export declare namespace Investigations {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Where a metric changed between two periods, or where its total comes from: the steps' rows
     * read into what they found. A metric that would not add up, a driver it cannot reach, or a
     * connector the caller may not use is `InvalidRequest` with the reason.
     */
    readonly investigate: (
      principal: Policy.Principal,
      request: Investigation.InvestigationRequest
    ) => Effect.Effect<Investigation.Findings, InvalidRequest | PermissionDenied | Unauthenticated>
  }
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const semantic = yield* SemanticLayer
  const connectors = yield* Connectors
  return Investigations.of({
    investigate: (principal, request) =>
      Effect.gen(function*() {
        // A connector the caller may not use is the request's mistake, named, as a query's is.
        const [connector] = yield* Effect.catchTag(
          connectors.resolveForUse(principal, [request.connector_id]),
          "NotFound",
          () => new InvalidRequest({ message: connectorUse.unusableMessage("connector_id", [request.connector_id]) })
        )
        const governing = yield* semantic.modelFor(principal, connector!)
        const planned = Investigation.plan(governing.model, request)
        if (Either.isLeft(planned)) return yield* new InvalidRequest({ message: planned.left.message })
        const investigation = planned.right
        const ran = yield* Investigation.run(investigation, (step) =>
          Effect.map(
            semantic.query(principal, { connector_id: request.connector_id, ...step.query }),
            (result): Investigation.Ran => ({
              step,
              breakdown: Investigation.breakdown(investigation, step, result.columns, result.rows)
            })
          ))
        return Investigation.findings(investigation, ran)
      })
  })
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Investigations, never, SemanticLayer | Connectors> = Layer.effect(Investigations, make)
