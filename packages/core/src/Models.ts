/**
 * The models use case (`GET /v2/models`): the organization's catalogue narrowed by the caller's
 * roles, with the model a new chat of this caller would get marked `default`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { enforce } from "./Decision.js"
import type { Unauthenticated } from "./Errors.js"
import * as Model from "./Model.js"
import { ModelCatalogue } from "./Model.js"
import * as Policy from "./Policy.js"
import * as Traced from "./Traced.js"

/**
 * The models use case.
 *
 * @since 0.1.0
 * @category services
 */
export class Models extends Context.Tag("@sightline/core/Models")<Models, Models.Service>() {}

export declare namespace Models {
  /** The operation of `GET /v2/models`. */
  export interface Service {
    /**
     * The catalogue models the caller may use (`Policy.allowedModels`), in catalogue order; the one
     * `Policy.defaultModel` picks is `default`. No permission beyond being a live caller: the list
     * only says what the caller's own chats may use. A caller allowed no model gets an empty list.
     */
    readonly list: (principal: Policy.Principal) => Effect.Effect<Model.ModelsResponse, Unauthenticated>
  }
}

/**
 * The policy engine's view of a catalogue (it knows models by number and id only).
 *
 * @since 0.1.0
 * @category utils
 */
export const toPolicyCatalogue = (catalogue: Model.Catalogue): Policy.Catalogue => ({
  models: catalogue.entries.map((entry) => ({ number: entry.number, id: entry.id, provider: entry.provider })),
  defaultModel: catalogue.defaultModel.number
})

/**
 * The response of `GET /v2/models` for a caller, given the organization's catalogue.
 *
 * @since 0.1.0
 * @category utils
 */
export const modelsFor = (principal: Policy.Principal, catalogue: Model.Catalogue): Model.ModelsResponse => {
  const policyCatalogue = toPolicyCatalogue(catalogue)
  const allowed = Policy.allowedModels(principal, policyCatalogue).map((model) => model.number)
  const fallback = Policy.defaultModel(principal, policyCatalogue)
  return {
    models: catalogue.entries
      .filter((entry) => allowed.includes(entry.number))
      .map((entry) => Model.toModel(entry, Option.exists(fallback, (model) => model.number === entry.number)))
  }
}

/**
 * Builds the models use case over the `ModelCatalogue` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const catalogues = yield* ModelCatalogue

  const list = Traced.fn("Models.list")(function*(principal: Policy.Principal) {
    yield* enforce(Policy.authenticated(principal))
    return modelsFor(principal, yield* catalogues.catalogue(principal.organizationId))
  })

  return Models.of({ list })
})

/**
 * The models use case over the `ModelCatalogue` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(Models, make)
